"""Reading widget state as a person sees it in the browser (shared by the kernel tests)."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from typing import Any


def has_class(name: str) -> Callable[[Any], bool]:
    """A state filter: the widget carries the CSS class ``name``."""
    return lambda classes: name in (classes or [])


def visible_text(value: str) -> str:
    """What a person reads in an HTML widget's value: tags dropped, entities decoded."""
    return html.unescape(re.sub(r"<[^>]*>", "", value))


_BLOCK_END = re.compile(r"</(?:p|li|tr|div|pre|h[1-6]|blockquote|table|summary)>|<br>")


def shown_text(record_html: str) -> str:
    """The text a record's HTML shows: tags dropped (a block's end is a line break), entities
    decoded, surrounding space stripped (what its size is measured against)."""
    return visible_text(_BLOCK_END.sub("\n", record_html)).strip()


def text(ref: Any) -> str:
    """The visible text of a widget (an HTML widget's value, tags dropped)."""
    return visible_text(ref.state.get("value", ""))


def shows(expected: str | Callable[[str], bool]) -> Callable[[Any], bool]:
    """A filter on an HTML widget's ``value``: its visible text equals ``expected`` (or passes it)."""
    if callable(expected):
        return lambda value: isinstance(value, str) and expected(visible_text(value))
    return lambda value: isinstance(value, str) and visible_text(value) == expected
