"""Showing untrusted text. Every string from the agent goes through here or into a text trait.

ipywidgets' ``Label``, ``Button`` descriptions, ``Text``/``Textarea`` values and
placeholders and ``Dropdown`` option labels are rendered as text by the frontend. Where a
block needs layout that only HTML gives (pre-formatted lines, colours), the text is
escaped here first, and only markup written by this package surrounds it.
"""

from __future__ import annotations

import html
from collections.abc import Iterable

import ipywidgets as w

__all__ = ["escape", "pre_block", "text_label"]

_PRE_STYLE = "margin:0;white-space:pre-wrap;word-break:break-word;font-family:var(--jp-code-font-family,monospace);font-size:12px"


def escape(text: str) -> str:
    """HTML-escape ``text`` (``<``, ``>``, ``&`` and both quotes)."""
    return html.escape(text, quote=True)


def pre_html(lines: Iterable[str], color: str | None = None) -> str:
    """Escaped lines in a ``<pre>`` block, optionally coloured (the colour is ours, not the agent's)."""
    style = _PRE_STYLE + (f";color:{color}" if color else "")
    return f'<pre style="{style}">' + "\n".join(escape(line) for line in lines) + "</pre>"


def pre_block(lines: Iterable[str], color: str | None = None, **kwargs: object) -> w.HTML:
    """An ``HTML`` widget showing escaped lines verbatim."""
    return w.HTML(value=pre_html(lines, color), **kwargs)


def text_label(text: str, *, bold: bool = False, **kwargs: object) -> w.Label:
    """A ``Label`` (rendered as text by the frontend)."""
    label = w.Label(value=text, **kwargs)
    if bold:
        label.style.font_weight = "bold"
    return label
