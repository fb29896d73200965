"""Reading what the page shows as a person reads it (shared by the kernel tests)."""

from __future__ import annotations

import html
import re


def visible_text(value: str) -> str:
    """What a person reads in a piece of HTML: tags dropped, entities decoded."""
    return html.unescape(re.sub(r"<[^>]*>", "", value))


_BLOCK_END = re.compile(r"</(?:p|li|tr|div|pre|h[1-6]|blockquote|table|summary)>|<br>")


def shown_text(record_html: str) -> str:
    """The text a record's HTML shows: tags dropped (a block's end is a line break), entities
    decoded, surrounding space stripped (what its size is measured against)."""
    return visible_text(_BLOCK_END.sub("\n", record_html)).strip()
