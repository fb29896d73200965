"""The offline demo model working on the open notebook (when the agent offers the notebook
tools): it reads the notebook, then proposes one change or runs one cell, then says what came
of it. Pure, like the rest of the script.

The prompts it understands (cells by their position, as the notebook shows them; a backquoted
source may hold ``\\n`` for a line break):

- ``change cell N to `SOURCE```: replace cell N's source;
- ``add a markdown cell after cell N: `SOURCE``` (or ``a code cell``; ``at the top``,
  ``at the end`` instead of ``after cell N``): insert a cell;
- ``explain cell N``: insert a Markdown cell after cell N that says what its code does (first
  lines and names it defines, read from its source);
- ``delete cell N``: delete it;
- ``run cell N``: run it (``notebook_run``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from atomic_jupyter.addons.model_server import ChatRequest, Text, Thinking, ToolCall, Turn

__all__ = ["NOTEBOOK_PROMPTS", "notebook_intent", "notebook_turn"]

#: Example prompts, for notebooks and the fallback answer.
NOTEBOOK_PROMPTS: dict[str, str] = {
    "explain": "explain cell 2",
    "change": "change cell 2 to `x = 2`",
    "add": "add a markdown cell after cell 1: `# Setup`",
    "delete cell": "delete cell 3",
    "run cell": "run cell 2",
}

_CELL = r"cell\s+(\d+)"
_SOURCE = r"`((?:[^`\\]|\\.)*)`"
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (
        "change",
        re.compile(rf"\b(?:change|replace|fix)\s+{_CELL}\s*(?:to|with|:)\s*{_SOURCE}", re.I),
    ),
    (
        "add",
        re.compile(
            rf"\badd\s+an?\s+(markdown|code)\s+cell\s+(?:after\s+{_CELL}|(at the top)|(at the end))"
            rf"\s*:?\s*{_SOURCE}",
            re.I,
        ),
    ),
    ("explain", re.compile(rf"\bexplain\s+{_CELL}", re.I)),
    ("delete", re.compile(rf"\b(?:delete|remove)\s+{_CELL}", re.I)),
    ("run", re.compile(rf"\brun\s+{_CELL}", re.I)),
]
_LISTED = re.compile(r"^--- cell (\d+) · id (\S+) · (\w+)", re.M)
_NAME = re.compile(r"^(?:def|class)\s+(\w+)|^(\w+)\s*=", re.M)


def notebook_intent(request: ChatRequest) -> tuple[str, re.Match[str]] | None:
    """The notebook prompt the last user message is, when the agent offers the notebook
    tools."""
    if "notebook_edit" not in request.tool_names:
        return None
    prompt = request.last_user_text
    for intent, pattern in _PATTERNS:
        match = pattern.search(prompt)
        if match is not None:
            return intent, match
    return None


def _unescape(source: str) -> str:
    return source.replace("\\n", "\n").replace("\\`", "`")


def _cells(listing: str) -> dict[int, tuple[str, str, str]]:
    """Position -> (id, type, source) from a ``notebook_read`` result."""
    found: dict[int, tuple[str, str, str]] = {}
    heads = list(_LISTED.finditer(listing))
    for k, head in enumerate(heads):
        end = heads[k + 1].start() if k + 1 < len(heads) else len(listing)
        line_end = listing.find("\n", head.end())
        body = listing[line_end + 1 : end] if 0 <= line_end < end else ""
        source = body.split("\n[outputs]\n", 1)[0].rstrip("\n")
        source = "" if source == "(empty)" else source
        found[int(head[1])] = (head[2], head[3], source)
    return found


def _explanation(position: int, source: str) -> str:
    lines = [line for line in source.splitlines() if line.strip()]
    names = [m[1] or m[2] for m in _NAME.finditer(source)]
    said = f"**Cell {position}**"
    if not lines:
        return f"{said} is empty."
    said += f" has {len(lines)} line{'s' * (len(lines) != 1)} of code"
    if names:
        said += " and defines " + ", ".join(f"`{n}`" for n in names[:6])
    first = lines[0].strip().replace("`", "'")
    return f"{said}. It starts with `{first[:80]}`.\n\n(Written by the offline demo model.)"


def notebook_turn(
    request: ChatRequest,
    intent: str,
    match: re.Match[str],
    turn: Callable[[ChatRequest, Sequence[Text | Thinking | ToolCall]], Turn],
    text: Callable[[str], Text],
    results: list[str],
) -> Turn:
    """The demo model's turn for a notebook prompt: read, then act, then report."""
    step = request.turn_index
    if step == 0:
        return turn(
            request, [text("Let me read the notebook first."), ToolCall("notebook_read", {})]
        )
    if step == 1:
        cells = _cells(results[0] if results else "")
        call = _action(intent, match, cells)
        if isinstance(call, str):
            return turn(request, [text(call)])
        words = {"run": "Running", "delete": "Proposing to delete"}.get(intent, "Proposing")
        return turn(request, [text(f"{words} it now."), call])
    outcome = results[-1] if results else ""
    first = next((line for line in outcome.splitlines() if line.strip()), "(nothing)")
    if "rejected" in outcome:
        said = f"You rejected the change, so I left the notebook as it was. {first[:300]}"
    elif outcome.startswith(("Applied", "Ran ")):
        said = f"Done: {first[:300]}"
    else:
        said = f"That did not work: {first[:300]}"
    return turn(request, [text(said + " (I am the offline demo model.)")])


def _action(
    intent: str, match: re.Match[str], cells: dict[int, tuple[str, str, str]]
) -> ToolCall | str:
    """The call for the prompt, or what is wrong (no such cell)."""

    def cell(position: str | None) -> tuple[str, str, str] | str:
        found = cells.get(int(position)) if position else None
        return found if found is not None else f"The notebook has no cell {position}."

    if intent == "add":
        kind, position, top, _end, source = match.groups()
        operation: dict[str, Any] = {
            "op": "insert",
            "cell_type": kind.lower(),
            "source": _unescape(source),
        }
        if top:
            operation["after"] = "start"
        elif position:
            found = cell(position)
            if isinstance(found, str):
                return found
            operation["after"] = found[0]
        return ToolCall("notebook_edit", {"operations": [operation]})
    found = cell(match[1])
    if isinstance(found, str):
        return found
    cell_id, _kind, source = found
    if intent == "change":
        operation = {"op": "replace", "cell_id": cell_id, "source": _unescape(match[2])}
    elif intent == "delete":
        operation = {"op": "delete", "cell_id": cell_id}
    elif intent == "explain":
        operation = {
            "op": "insert",
            "after": cell_id,
            "cell_type": "markdown",
            "source": _explanation(int(match[1]), source),
        }
    else:
        return ToolCall("notebook_run", {"cell_ids": [cell_id]})
    return ToolCall("notebook_edit", {"operations": [operation]})
