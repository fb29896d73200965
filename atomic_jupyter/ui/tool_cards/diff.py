"""Diffs: the agent's diff text or old/new text pairs read as rows, and shown in colour.

A row is ``(kind, line number or None, text)``; the kind is ``"+"`` (added), ``"-"``
(removed), ``" "`` (context) or ``"…"`` (lines skipped).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from atomic_jupyter.ui.highlight import line_html
from atomic_jupyter.ui.tool_cards.limits import DIFF_FOLD, MAX_CHARS, MAX_LINES
from atomic_jupyter.ui.tool_cards.lines import fold_split, split_lines
from atomic_jupyter.ui.tool_cards.markup import beside_numbers, details, div, note, pre
from atomic_jupyter.ui.tool_cards.styles import (
    ADDED_LINE,
    ADDED_MARK,
    BOX_STYLE,
    CODE_PRE_STYLE,
    DIFF_TEXT_STYLE,
    REMOVED_LINE,
    REMOVED_MARK,
    SKIP_STYLE,
)
from atomic_jupyter.ui.tool_cards.values import plural
from atomic_jupyter.ui.tool_cards.views import code_lines

__all__ = ["DiffRow", "diff_view", "pair_rows", "parse_diff"]

#: ``(kind, line number or None, text)``.
DiffRow = tuple[str, str | None, str]

_DIFF_LINE = re.compile(r"([ +\-])( *)(\d*) (.*)", re.DOTALL)
#: Pairs with more lines or characters than this are shown as all removed, then all added.
_PAIR_DIFF_MAX_LINES = 600
_PAIR_DIFF_MAX_CHARS = 60_000


def parse_diff(diff: str) -> list[DiffRow]:
    """The rows of the agent's diff text (lines such as ``+12 text``, ``    ...``)."""
    rows: list[DiffRow] = []
    lines = diff.split("\n")
    for line in lines[: MAX_LINES + 1]:
        # A carriage return inside a line would start a new line when highlighted, and the
        # marks would then sit on the wrong lines: show it as a symbol.
        line = line.removesuffix("\r").replace("\r", "␍")
        match = _DIFF_LINE.fullmatch(line)
        if match is None:
            rows.append((" ", None, line))
            continue
        kind, _pad, number, text = match.groups()
        if kind == " " and not number and text.strip() == "...":
            rows.append(("…", None, ""))
        else:
            rows.append((kind, number or None, text))
    if len(lines) > MAX_LINES + 1:
        rows.append(("…", None, ""))
    return rows


def pair_rows(pairs: list[tuple[str, str]]) -> list[DiffRow]:
    """Old/new text pairs as diff rows (a line diff of each pair when small enough)."""
    rows: list[DiffRow] = []
    for index, (old, new) in enumerate(pairs):
        if index:
            rows.append(("…", None, ""))
        old_lines = split_lines(old) if old else []
        new_lines = split_lines(new) if new else []
        too_many = len(old_lines) + len(new_lines) > _PAIR_DIFF_MAX_LINES
        if too_many or len(old) + len(new) > _PAIR_DIFF_MAX_CHARS:
            rows += [("-", None, line) for line in old_lines]
            rows += [("+", None, line) for line in new_lines]
            continue
        matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                rows += [(" ", None, line) for line in old_lines[i1:i2]]
            else:
                rows += [("-", None, line) for line in old_lines[i1:i2]]
                rows += [("+", None, line) for line in new_lines[j1:j2]]
        if len(rows) > MAX_LINES:
            break
    return rows


def _diff_line(kind: str, code_html: str) -> str:
    """One line of the diff's text column (context lines carry no markup of their own).

    A changed line is a block, so its background spans the line, and it also ends in its line
    break: a break that ends a block adds no line, and a saved record, whose short style keeps
    the background alone (an inline span), still breaks its lines.
    """
    if kind == "+":
        return f'<span class="aj-diff-add" style="{ADDED_LINE}"><span style="{ADDED_MARK}">+ </span>{code_html}\n</span>'
    if kind == "-":
        return f'<span class="aj-diff-del" style="{REMOVED_LINE}"><span style="{REMOVED_MARK}">− </span>{code_html}\n</span>'
    if kind == "…":
        return f'<span class="aj-diff-skip" style="{SKIP_STYLE}">  ⋯</span>\n'
    return f"  {code_html}\n"


def _diff_chunk(rows: Sequence[DiffRow], digits: int | None) -> str:
    """Rows of (kind, line number, text HTML): the numbers beside the lines, in two columns."""
    lines = [_diff_line(kind, code_html) for kind, _n, code_html in rows]
    code = f'<span style="{DIFF_TEXT_STYLE}">{"".join(lines)}</span>'
    if digits is None:
        return pre(code, CODE_PRE_STYLE)
    return beside_numbers([(number or "").rjust(digits) for _k, number, _t in rows], code)


def diff_view(rows: list[DiffRow], filename: str | None) -> str:
    """Rows as a coloured diff, highlighted for ``filename``'s language, numbered, folded."""
    left = f"… {plural(len(rows) - MAX_LINES, 'more diff line')} not shown"
    left = left if len(rows) > MAX_LINES else ""
    rows = rows[:MAX_LINES]
    texts = [text for kind, _n, text in rows if kind != "…"]
    size = 0
    for index, text in enumerate(texts):
        size += len(text) + 1
        if size > MAX_CHARS:
            texts = texts[:index]
            left = "… the rest of the diff is not shown"
            break
    html_lines = iter(code_lines("\n".join(texts), filename, None) if texts else ())
    shown: list[DiffRow] = []
    for kind, number, _ in rows:
        if kind == "…":
            shown.append(("…", None, ""))
            continue
        line = next(html_lines, None)
        if line is None:
            break
        usable = number is not None and number.isdigit() and len(number) <= 9
        shown.append((kind, number if usable else None, line_html(line)))
    numbers = [len(n) for _k, n, _t in shown if n]
    digits = max(numbers) if numbers else None
    split = fold_split(len(shown), DIFF_FOLD)
    if split is None:
        inner = _diff_chunk(shown, digits)
    else:
        label = f"Show all {plural(len(shown), 'diff line')}"
        inner = _diff_chunk(shown[:split], digits) + details(
            label, _diff_chunk(shown[split:], digits)
        )
    return div(BOX_STYLE, inner, "aj-tool-diff") + (note(left) if left else "")
