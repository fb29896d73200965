"""The notebook tools' cards: ``notebook_edit`` (each change a diff, with where it goes and what
became of it), ``notebook_run`` (each cell's outputs, as ``python``'s card shows them) and
``notebook_read`` (which cells were read).

``notebook_edit``'s ``details`` (from the kernel, while the change waits and once decided):
``{"notebook", "changes": [{"op", "cell_id", "index", "cell_type", "old", "new"}],
"decision", "applied"}``. Every field is untrusted and may be missing or of another type.
"""

from __future__ import annotations

from typing import Any

from atomic_jupyter.ui.tool_cards.card import ToolCall, ToolCard
from atomic_jupyter.ui.tool_cards.diff import diff_view, pair_rows
from atomic_jupyter.ui.tool_cards.generic import render_generic
from atomic_jupyter.ui.tool_cards.markup import (
    cell_link,
    details,
    div,
    error,
    esc,
    note,
    outcome,
    root,
    short_cell_id,
)
from atomic_jupyter.ui.tool_cards.python import render_python
from atomic_jupyter.ui.tool_cards.styles import LABEL_STYLE
from atomic_jupyter.ui.tool_cards.values import as_dict, as_str, one_line, plural, text_of
from atomic_jupyter.ui.tool_cards.views import output_view

__all__ = ["render_notebook_edit", "render_notebook_read", "render_notebook_run"]

_WORDS = {"replace": "change", "insert": "new", "delete": "delete"}
_DONE = {"replace": "changed", "insert": "inserted", "delete": "deleted"}
#: What a change proposes, before (and unless) it is accepted.
_PROPOSED = {"replace": "to change", "insert": "to insert", "delete": "to delete"}
_MAX_CHANGES = 50


def _position(index: Any) -> str:
    """``cell 3`` from a 0-based index; ``a cell`` when there is none."""
    return f"cell {index + 1}" if type(index) is int and 0 <= index < 10**6 else "a cell"


def _cell_html(index: Any, cell_id: Any, kind: str = "") -> str:
    """``cell 3`` (a link to the cell) ``(code, id 1a2b3c4d)``: a cell as the person sees the
    notebook, its id shortened to 8 characters."""
    shown = as_str(cell_id)
    said = ", ".join(p for p in (kind, f"id {short_cell_id(shown)}" if shown else "") if p)
    return cell_link(_position(index), cell_id) + (esc(f" ({said})") if said else "")


def _change_html(change: dict[str, Any]) -> str:
    op = as_str(change.get("op")) or "replace"
    old = text_of(change.get("old"))
    new = text_of(change.get("new"))
    kind = as_str(change.get("cell_type")) or "code"
    language = "python" if kind == "code" else None
    filename = "cell.py" if language else "cell.md"
    where = _cell_html(change.get("index"), change.get("cell_id"), kind)
    if op == "insert":
        label = f"{esc('new ' + kind + ' cell, at ')}{_cell_html(change.get('index'), change.get('cell_id'))}"
        rows = pair_rows([("", new)])
    elif op == "delete":
        label = f"{esc('delete ')}{where}"
        rows = pair_rows([(old, "")])
    else:
        label = f"{esc('change ')}{where}"
        rows = pair_rows([(old, new)])
    head = div(LABEL_STYLE, label, "aj-notebook-change")
    return head + (diff_view(rows, filename) if rows else note("(empty cell)"))


def _changes(args: Any) -> list[dict[str, Any]]:
    """The proposed operations from the arguments (before the kernel's diff arrives)."""
    found = []
    for raw in as_dict(args).get("operations") or []:
        operation = as_dict(raw)
        op = as_str(operation.get("op"))
        if op in _WORDS:
            found.append(
                {
                    "op": op,
                    "cell_id": operation.get("cell_id"),
                    "cell_type": operation.get("cell_type") or "code",
                    "old": "",
                    "new": operation.get("source") if op != "delete" else "",
                }
            )
    return found


def render_notebook_edit(call: ToolCall) -> ToolCard:
    """The card of a change to the notebook: a diff per cell it touches (the kernel's, once
    the page checked it; before that, what the arguments say), then what became of it."""
    details = as_dict(call.details)
    raw = details.get("changes")
    changes = [as_dict(c) for c in raw] if isinstance(raw, list) else _changes(call.args)
    if not changes:
        return render_generic(call)
    counts: dict[str, int] = {}
    for change in changes:
        op = as_str(change.get("op")) or "replace"
        counts[op] = counts.get(op, 0) + 1
    decision = details.get("decision")
    accepted = decision == "accepted" or (call.done and not call.is_error and decision is None)
    words = _DONE if accepted else _PROPOSED
    summary = ", ".join(f"{plural(n, 'cell')} {words.get(op, op)}" for op, n in counts.items())
    notebook = as_str(details.get("notebook"))
    if notebook:
        summary += f" · {one_line(notebook, 60)}"
    shown = changes[:_MAX_CHANGES]
    command = "".join(_change_html(c) for c in shown)
    if len(changes) > len(shown):
        command += note(f"… {plural(len(changes) - len(shown), 'more change')} not shown")
    if not call.done:
        status = text_of(call.output).strip()
        if details.get("decision") == "pending":
            status = "waiting for a decision: here, or in the notebook's cells"
        body = note(status[:500]) if status else ""
    elif call.is_error:
        body = error(text_of(call.result)[:4000])
    elif decision == "rejected":
        reason = (as_str(details.get("reason")) or "").strip()
        said = (
            f"Rejected: nothing was changed. The reason: {reason}"
            if reason
            else ("Rejected: nothing was changed (no reason given).")
        )
        body = outcome(said[:4000])
    else:
        body = output_view(text_of(call.result), tail=False)
    state = "rejected" if call.done and not call.is_error and decision == "rejected" else ""
    return ToolCard(summary, command_html=root(command), body_html=root(body), state=state)


def _named(details: dict[str, Any]) -> list[dict[str, Any]]:
    """The cells a run names (``details["cells"]``: ``cell_id``, ``index``, ``first_line``)."""
    raw = details.get("cells")
    return [as_dict(c) for c in raw[:_MAX_CHANGES]] if isinstance(raw, list) else []


def render_notebook_run(call: ToolCall) -> ToolCard:
    """The card of cells run: which cells, as the person sees them (position, first line, a
    link to each), then each cell's outputs, as ``python``'s card shows them."""
    ids = as_dict(call.args).get("cell_ids")
    names = [short_cell_id(str(i)) for i in ids] if isinstance(ids, list) else []
    info = as_dict(call.details)
    named = _named(info)
    card = render_python(ToolCall("python", {}, call.output, call.result, call.details,
                                  call.images, call.is_error, call.done))  # fmt: skip
    if named:
        positions = ", ".join(
            str(c["index"] + 1) for c in named if type(c.get("index")) is int and c["index"] >= 0
        )
        summary = f"run {'cells' if len(named) != 1 else 'cell'} {positions}"
        rows = [
            div(
                LABEL_STYLE,
                _cell_html(c.get("index"), c.get("cell_id"))
                + esc(f": {one_line(as_str(c.get('first_line')) or '', 80) or '(empty)'}"),
                "aj-notebook-run-cell",
            )
            for c in named
        ]
        command = root("".join(rows))
    elif names:
        summary = f"run {plural(len(names), 'cell')}: {one_line(', '.join(names), 80)}"
        command = ""
    else:
        summary, command = "cells of the notebook", ""
    body = card.body_html
    state = ""
    if call.done and not call.is_error and info.get("decision") == "declined":
        body, state = root(outcome("Declined: nothing ran.")), "declined"
    return ToolCard(summary, command_html=command, body_html=body, state=state)


def render_notebook_read(call: ToolCall) -> ToolCard:
    """The card of a read of the notebook: what was asked for, then the listing, folded."""
    args = as_dict(call.args)
    cell_id = as_str(args.get("cell_id"))
    start, end = args.get("start"), args.get("end")
    if cell_id:
        summary = f"cell {one_line(cell_id, 40)}"
    elif start is not None or end is not None:
        summary = f"cells {start or 1}–{end or 'end'}"
    else:
        summary = "the whole notebook"
    if not call.done:
        return ToolCard(summary)
    text = text_of(call.result)
    if call.is_error:
        return ToolCard(summary, body_html=root(error(text[:4000])))
    head, _, rest = text.partition("\n")
    lines = rest.count("\n") + 1 if rest else 0
    body = output_view(head, tail=False)
    if rest:
        body += details(
            f"What the agent read ({plural(lines, 'line')})", output_view(rest, tail=False)
        )
    return ToolCard(summary, body_html=root(body))
