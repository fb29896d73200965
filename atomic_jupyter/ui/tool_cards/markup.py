"""The cards' HTML building blocks: every tag a card holds is written here.

Agent text goes in through :func:`esc` (or :func:`~atomic_jupyter.ui.ansi.ansi_to_html`, or the
highlighter), always into element content, never into an attribute; attributes hold this
package's constants and integers only, and a notebook cell's id once it is checked to be of
nbformat's form (letters, digits, ``-`` and ``_``: :func:`cell_link`).
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence
from typing import Any

from atomic_jupyter.ui.ansi import ansi_to_html, strip_ansi
from atomic_jupyter.ui.tool_cards.lines import fold_split
from atomic_jupyter.ui.tool_cards.styles import (
    CELL_LINK_STYLE,
    CODE_PRE_STYLE,
    CODE_STYLE,
    ERROR_STYLE,
    GUTTER_PRE_STYLE,
    KV_KEY_STYLE,
    KV_TABLE_STYLE,
    KV_VALUE_STYLE,
    LINE_STYLE,
    NOTE_STYLE,
    NUMBERED_STYLE,
    PATH_EXTRA_STYLE,
    PATH_STYLE,
    PRE_STYLE,
    ROOT_STYLE,
    STATUS_STYLE,
    SUMMARY_STYLE,
    gutter_style,
)
from atomic_jupyter.ui.tool_cards.values import compact_json, plural

#: The most arguments a table shows, and the longest value (characters).
_KV_MAX_ROWS = 200
_KV_MAX_CHARS = 20_000


def esc(text: str) -> str:
    """Agent text as element content: control sequences removed, everything escaped."""
    return html.escape(strip_ansi(text), quote=True)


def div(style: str, inner: str, cls: str = "") -> str:
    """A ``<div>`` with our style and class (``cls`` is ours)."""
    klass = f' class="{cls}"' if cls else ""
    return f'<div{klass} style="{style}">{inner}</div>'


def pre(inner: str, style: str = PRE_STYLE) -> str:
    """A ``<pre>`` around HTML whose text may start with a line break."""
    # A newline right after <pre> is dropped by HTML parsers: an empty span keeps it.
    lead = "<span></span>" if inner.startswith("\n") else ""
    return f'<pre style="{style}">{lead}{inner}</pre>'


def note(text: str) -> str:
    """A muted note (agent text or ours)."""
    return div(NOTE_STYLE, esc(text), "aj-tool-note")


def error(text: str) -> str:
    """An error message with its terminal colours."""
    return div(ERROR_STYLE, ansi_to_html(text) or "(error)", "aj-tool-error")


def outcome(text: str) -> str:
    """A decided outcome that is not a failure (a change rejected), in bold."""
    return div(STATUS_STYLE, esc(text), "aj-tool-outcome")


#: A cell id as nbformat writes them (4.5: 1 to 64 of these characters).
_CELL_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: How long a cell id is shown (nbformat makes 8 characters; JupyterLab's new cells a UUID).
CELL_ID_SHOWN = 8


def short_cell_id(cell_id: str) -> str:
    """A cell id as a person reads it: its first :data:`CELL_ID_SHOWN` characters."""
    return cell_id if len(cell_id) <= CELL_ID_SHOWN else cell_id[:CELL_ID_SHOWN] + "…"


def cell_link(label: str, cell_id: Any) -> str:
    """``label`` (ours or agent text) as a link to the notebook's cell ``cell_id``: the
    notebook extension scrolls to that cell when it is clicked or Enter is pressed on it
    (elsewhere, nbconvert's HTML, it is text). Just ``label`` when the id is not of
    nbformat's form."""
    if not isinstance(cell_id, str) or _CELL_ID.fullmatch(cell_id) is None:
        return esc(label)
    return (
        f'<a class="aj-cell-link" data-aj-cell="{cell_id}" role="link" tabindex="0" '
        f'title="Show this cell in the notebook" style="{CELL_LINK_STYLE}">{esc(label)}</a>'
    )


def root(inner: str) -> str:
    """A card's outer element (``""`` when there is nothing inside)."""
    return div(ROOT_STYLE, inner, "aj-tool-card") if inner else ""


def details(label: str, inner: str) -> str:
    """``inner`` folded behind a ``<details>`` labelled ``label``."""
    summary = f'<summary style="{SUMMARY_STYLE}">{html.escape(label)}</summary>'
    return f'<details class="aj-fold">{summary}{inner}</details>'


def fold_head(blocks: Sequence[str], keep: int, label: str, wrap: Callable[[str], str]) -> str:
    """The first ``keep`` blocks, the rest behind a ``<details>`` labelled ``label``."""
    split = fold_split(len(blocks), keep)
    if split is None:
        return wrap("".join(blocks))
    return wrap("".join(blocks[:split])) + details(label, wrap("".join(blocks[split:])))


def plain_blocks(html_lines: list[str]) -> list[str]:
    """Lines for a ``<pre>`` without numbers: each ends in a newline but the last."""
    blocks = [line + "\n" for line in html_lines]
    if blocks:
        blocks[-1] = blocks[-1][:-1]
    return blocks


def numbered_line(code_html: str, number: str, digits: int) -> str:
    """One numbered line that wraps (``number`` is ours: digits, or ``""`` for none).

    The line is a flex row (a wrapped line keeps to the right of its number). It also reads
    as plain lines without that layout, as a saved record's short styles show it: the number
    is right-aligned in its own text, a space parts it from the code, and the code ends in
    its line break. In the row neither shows: a space between flex items is not rendered,
    and a line break that ends a block adds no line.
    """
    shown = (number or " ").rjust(digits)
    return (
        f'<span style="{LINE_STYLE}"><span style="{gutter_style(digits)}">{shown}</span> '
        f'<span style="{CODE_STYLE}">{code_html}\n</span></span>'
    )


def beside_numbers(numbers: Sequence[str], code_html: str) -> str:
    """Lines of code beside their numbers: two columns, so no line carries markup of its own.

    ``numbers`` are ours (digits and spaces), one a line of ``code_html``.
    """
    column = "\n".join(numbers)
    return (
        f'<div style="{NUMBERED_STYLE}"><pre style="{GUTTER_PRE_STYLE}">{column}</pre>'
        f"{pre(code_html, CODE_PRE_STYLE)}</div>"
    )


def kv_table(args: Any, skip: Sequence[str] = ()) -> str:
    """Arguments as key/value rows: strings as text, other values as compact JSON."""
    if not isinstance(args, dict):
        if args is None:
            return ""
        return div(KV_VALUE_STYLE, esc(compact_json(args)), "aj-tool-args")
    rows = []
    items = [(k, v) for k, v in args.items() if k not in skip]
    for key, value in items[:_KV_MAX_ROWS]:
        shown = value if isinstance(value, str) else compact_json(value)
        if len(shown) > _KV_MAX_CHARS:
            shown = shown[:_KV_MAX_CHARS] + f"… ({len(shown) - _KV_MAX_CHARS} more characters)"
        rows.append(
            f'<tr><td style="{KV_KEY_STYLE}">{esc(str(key)[:200])}</td>'
            f'<td style="{KV_VALUE_STYLE}">{esc(shown)}</td></tr>'
        )
    if not rows:
        return ""
    left = len(items) - _KV_MAX_ROWS
    more = note(f"… {plural(left, 'more argument')}") if left > 0 else ""
    return f'<table class="aj-tool-args" style="{KV_TABLE_STYLE}">{"".join(rows)}</table>{more}'


def path_header(path: str, extra: str = "") -> str:
    """A file's path in bold, then ``extra`` muted."""
    more = f'<span style="{PATH_EXTRA_STYLE}">{esc(extra)}</span>' if extra else ""
    return div(PATH_STYLE, esc(path) + more, "aj-tool-path")
