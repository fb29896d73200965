"""What a run weighs in the kernel's memory: the characters its transcript holds. No I/O.

The weight counts what can be big: the texts of answers and thinking, tool arguments,
outputs, results, details and images, notes, custom entries. It is an estimate in
characters (one character of ASCII is one byte in CPython's strings), cheap to take, and
what the session's memory bounds are written in (``RunTracker``'s ``RUN_BYTES_KEPT``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from atomic_jupyter.session.transcript import (
    AssistantBlock,
    Block,
    EntryBlock,
    NoteBlock,
    ToolBlock,
    Transcript,
    UserBlock,
)

__all__ = ["block_weight", "newest_within", "transcript_weight", "value_weight"]

_T = TypeVar("_T")

#: What a value of no text (a number, None, a boolean) counts for.
SCALAR_WEIGHT = 8


def value_weight(value: Any) -> int:
    """The characters of the strings in ``value`` (a JSON-like value), keys included.

    Parameters
    ----------
    value:
        A string, a number, or a dict, list or tuple of such values, as decoded JSON is.

    Returns
    -------
    int
        The weight; other values count :data:`SCALAR_WEIGHT`.
    """
    total = 0
    todo = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, Mapping):
            total += sum(len(key) if isinstance(key, str) else SCALAR_WEIGHT for key in item)
            todo.extend(item.values())
        elif isinstance(item, (list, tuple)):
            todo.extend(item)
        else:
            total += SCALAR_WEIGHT
    return total


def block_weight(block: Block) -> int:
    """The weight of one transcript block (a tool call's calls within it included)."""
    if isinstance(block, AssistantBlock):
        deltas = sum(len(piece) for _, pieces in block.deltas.values() for piece in pieces)
        return value_weight(block.message.get("content")) + deltas
    if isinstance(block, ToolBlock):
        own = (
            len(block.output)
            + len(block.result or "")
            + value_weight(block.args)
            + value_weight(block.details)
            + sum(len(data) for _, data in block.images)
        )
        return own + sum(block_weight(child) for child in block.children)
    if isinstance(block, (NoteBlock, UserBlock)):
        return len(block.text)
    if isinstance(block, EntryBlock):
        return value_weight(block.data)
    return SCALAR_WEIGHT


def transcript_weight(transcript: Transcript) -> int:
    """The weight of every block of ``transcript`` and of its prompt."""
    with transcript.lock:
        return len(transcript.prompt) + sum(block_weight(b) for b in transcript.blocks)


def newest_within(
    items: Sequence[_T],
    weight: Callable[[_T], int | None],
    budget: int,
    *,
    always_newest: bool = False,
) -> list[_T]:
    """Of ``items`` (oldest first), the newest whose weights add up to at most ``budget``,
    and every item of no weight yet (``weight`` gives None: it is still changing).

    Parameters
    ----------
    items:
        Oldest first.
    weight:
        An item's weight, or None.
    budget:
        How much the items kept may weigh together.
    always_newest:
        Keep the newest item however heavy.

    Returns
    -------
    list
        The items kept, oldest first.
    """
    kept: list[_T] = []
    for index, item in enumerate(reversed(items)):
        weighs = weight(item)
        if weighs is not None:
            budget -= weighs
            if budget < 0 and not (always_newest and index == 0):
                continue
        kept.append(item)
    return kept[::-1]
