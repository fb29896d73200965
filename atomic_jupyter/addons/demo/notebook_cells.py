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

What it says is true to what the tools answered: a read that failed (a prompt sent with
``--wait`` while the page's answers wait for the cell) is relayed as the tool's own words,
never taken for a notebook without that cell; a change or run that was done, rejected,
declined or failed is said as such, in a sentence of its own.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from atomic_jupyter.addons.demo.cited import inline
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
#: The first line of a ``notebook_read`` that read the notebook: its name and its cell count.
_READ_HEAD = re.compile(r"^Notebook (.+?): (\d+) cells?[.;]")
#: A heading line of a ``notebook_run`` result (a cell's, or an output's), not an output.
_RUN_HEADING = re.compile(r"--- cell id .*|\[(?:stdout|stderr|value|display|error)\b[^\]]*\]")
#: The last sentences of a tool's error that speak to the model, not to the person.
_TO_THE_MODEL = re.compile(r"\s*Tell the person\b.*", re.S)
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
        read = results[0] if results else ""
        head = _READ_HEAD.match(read)
        if head is None:  # the read failed: why, in the tool's words (not "no such cell")
            return turn(request, [text(_unread(read))])
        call = _action(intent, match, _cells(read), int(head[2]))
        if isinstance(call, str):
            return turn(request, [text(call)])
        words = {"run": "Running", "delete": "Proposing to delete"}.get(intent, "Proposing")
        return turn(request, [text(f"{words} it now."), call])
    outcome = results[-1] if len(results) > 1 else ""
    return turn(request, [text(_report(intent, match, outcome))])


def _quoted(said: str, limit: int = 600) -> str:
    """A tool's words as a Markdown quote on one paragraph, cut at ``limit``."""
    said = " ".join(said.split())
    if len(said) > limit:
        said = said[: limit - 1] + "…"
    return "> " + (said or "(nothing)")


def _unread(error: str) -> str:
    """What the demo says when ``notebook_read`` answered with an error: that it could not
    read the notebook, and why (:func:`_relayed`)."""
    said = "I could not read the notebook, so I changed nothing. "
    return said + _relayed("notebook_read", error)


def _relayed(tool: str, error: str, limit: int = 600) -> str:
    """A tool's error, quoted, less what it asks the model to tell the person, which the demo
    then says in its own words (send the prompt again without ``--wait``)."""
    said = f"The `{tool}` tool said:\n\n" + _quoted(_TO_THE_MODEL.sub("", error), limit)
    if "--wait" in error:
        said += (
            "\n\nSend the prompt again without `--wait` (the cell then ends at once and the "
            "page can answer), and I can work on the notebook."
        )
    return said


def _report(intent: str, match: re.Match[str], outcome: str) -> str:
    """The last answer: what came of the change or the run, in a plain sentence."""
    lines = [line.strip() for line in outcome.splitlines() if line.strip()] or ["(nothing)"]
    if intent == "run" and "declined" in outcome:
        return f"You declined to run cell {match[1]}, so nothing ran."
    if "rejected" in outcome:
        return "You rejected the change, so I left the notebook as it was."
    if outcome.startswith("Applied"):
        return _done(intent, match)
    if outcome.startswith("Ran "):
        shown = [line for line in lines[1:] if not _RUN_HEADING.fullmatch(line)]
        said = f"Done: I ran cell {match[1]}."
        if shown:
            said += f" Its first line of output is {inline(shown[0], 120)}."
        else:
            said += " It showed no output."
        return said
    if intent == "run" and outcome.startswith("A cell failed"):
        return f"Cell {match[1]} failed when it ran. Its last line is {inline(lines[-1], 200)}."
    tool = "notebook_run" if intent == "run" else "notebook_edit"
    return "That did not work. " + _relayed(tool, outcome, 300)


def _done(intent: str, match: re.Match[str]) -> str:
    """The change the prompt asked for, said as done (the tool answered "Applied")."""
    if intent == "change":
        source = _unescape(match[2])
        if "\n" not in source.strip():
            return f"Done: cell {match[1]} now reads {inline(source, 120)}."
        first = next(line for line in source.splitlines() if line.strip())
        return f"Done: I changed cell {match[1]}; it now starts with {inline(first, 120)}."
    if intent == "delete":
        return f"Done: I deleted cell {match[1]}."
    if intent == "explain":
        return f"Done: I added a Markdown cell after cell {match[1]} that explains it."
    kind, position, top, _end, _source = match.groups()
    kind = "Markdown" if kind.lower() == "markdown" else "code"
    where = f"after cell {position}" if position else "at the top" if top else "at the end"
    return f"Done: I added a {kind} cell {where}{'' if position else ' of the notebook'}."


def _action(
    intent: str, match: re.Match[str], cells: dict[int, tuple[str, str, str]], total: int
) -> ToolCall | str:
    """The call for the prompt, or what is wrong (no such cell, of the ``total`` the read
    counted)."""

    def cell(position: str | None) -> tuple[str, str, str] | str:
        found = cells.get(int(position)) if position else None
        if found is not None:
            return found
        if position and 1 <= int(position) <= total:  # a long notebook: not in what was read
            return f"Cell {position} was not in what I read of the notebook, so I changed nothing."
        cells_said = f"{total} cell{'s' * (total != 1)}"
        return f"The notebook has no cell {position}: it has {cells_said}."

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
