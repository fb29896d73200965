"""Untrusted HTML tables (a kernel's rich display, e.g. a DataFrame) made safe for ``innerHTML``.

A display's ``text/html`` passes through the agent, so it is treated as hostile, like the
Markdown of :mod:`atomic_jupyter.ui.markdown`, with an nh3 (ammonia) allow-list of its own:
only table markup (``table``, ``caption``, ``thead``, ``tbody``, ``tfoot``, ``tr``, ``th``,
``td``) and plain text tags survive. No attribute survives but ``colspan`` and ``rowspan`` of
a cell, as a small number: no ``style``, ``class``, ``id``, event handler or URL, so no link
and no image. What ``script``, ``style``, ``iframe``, ``svg``, ``math`` and the like hold is
dropped with them; any other tag is dropped and its text kept. Comments go. The output's text
holds no raw ``<`` or ``>`` (the serialiser escapes them), so every ``<`` in it opens a tag.
"""

from __future__ import annotations

import nh3

__all__ = ["TABLE_TAGS", "sanitize_table_html"]

#: The table tags kept.
TABLE_TAGS = frozenset({"table", "caption", "thead", "tbody", "tfoot", "tr", "th", "td"})
#: The text tags kept (no attributes).
_TEXT_TAGS = frozenset(
    {"b", "strong", "i", "em", "u", "s", "code", "br", "sub", "sup", "small", "span", "p"}
)
#: Tags dropped with everything inside them.
_DROPPED_WHOLE = {
    "script", "style", "iframe", "frame", "noscript", "template", "object", "embed", "svg",
    "math", "textarea", "select", "title", "head", "canvas", "video", "audio",
}  # fmt: skip
_SPANS = {"colspan", "rowspan"}


def _attribute_filter(tag: str, attr: str, value: str) -> str | None:
    """A cell's span as a number of at most 3 digits; nothing else."""
    if attr in _SPANS and tag in ("th", "td"):
        return value if value.isascii() and value.isdigit() and 0 < len(value) <= 3 else None
    return None


_CLEANER = nh3.Cleaner(
    tags=set(TABLE_TAGS | _TEXT_TAGS),
    clean_content_tags=_DROPPED_WHOLE,
    attributes={"th": _SPANS, "td": _SPANS},
    attribute_filter=_attribute_filter,
    strip_comments=True,
    link_rel=None,
    url_schemes=set(),
    url_relative="deny",
)


def sanitize_table_html(markup: str) -> str:
    """``markup`` (untrusted HTML) with only its tables and text left.

    Parameters
    ----------
    markup:
        HTML from a kernel's rich display, as the agent sent it.

    Returns
    -------
    str
        An HTML fragment safe for ``innerHTML``: table and text tags without attributes
        (bar a cell's ``colspan``/``rowspan``), every text escaped; ``""`` for a value that
        is not a string.
    """
    if not isinstance(markup, str):
        return ""
    return _CLEANER.clean(markup)
