"""Cutting a text into the lines a view shows: capped, and where to fold them."""

from __future__ import annotations

from atomic_jupyter.ui.tool_cards.limits import FOLD_SLACK, MAX_CHARS, MAX_LINES
from atomic_jupyter.ui.tool_cards.values import plural


def split_lines(text: str) -> list[str]:
    """The lines of ``text``; a final newline does not start another line."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if text.endswith("\n"):
        text = text[:-1]
    return text.split("\n")


def count_lines(text: str) -> int:
    """How many lines :func:`split_lines` finds (0 for no text)."""
    return 0 if not text else len(split_lines(text))


def cap_head(lines: list[str], max_lines: int = MAX_LINES) -> tuple[list[str], str]:
    """At most ``max_lines`` lines and :data:`MAX_CHARS` characters, from the start, and a
    note saying what was left out (``""`` if nothing was)."""
    kept: list[str] = []
    size = 0
    note = ""
    for line in lines[:max_lines]:
        room = MAX_CHARS - size
        if len(line) + 1 > room:
            kept.append(line[: max(0, room)])
            note = f"… the rest of line {len(kept)} is not shown"
            break
        kept.append(line)
        size += len(line) + 1
    left = len(lines) - len(kept)
    if left > 0:
        note = f"… {plural(left, 'more line')} not shown"
    return kept, note


def cap_tail(lines: list[str]) -> tuple[list[str], str]:
    """At most :data:`MAX_LINES` lines and :data:`MAX_CHARS` characters, from the end, and a
    note saying what was left out (``""`` if nothing was)."""
    kept: list[str] = []
    size = 0
    note = ""
    for line in reversed(lines[-MAX_LINES:]):
        if size + len(line) + 1 > MAX_CHARS:
            kept.append("…" + line[len(line) - max(0, MAX_CHARS - size) :])
            note = "… the start of the first line shown is not shown"
            break
        kept.append(line)
        size += len(line) + 1
    kept.reverse()
    left = len(lines) - len(kept)
    if left > 0:
        note = f"… {plural(left, 'earlier line')} not shown"
    return kept, note


def fold_split(count: int, keep: int | None) -> int | None:
    """Where to fold ``count`` lines that keep ``keep`` in view (``None``: do not fold)."""
    if keep is None or count <= keep + FOLD_SLACK:
        return None
    return keep
