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
from atomic_jupyter.ui.tool_cards.markup import details, div, error, esc, note, root
from atomic_jupyter.ui.tool_cards.python import render_python
from atomic_jupyter.ui.tool_cards.styles import LABEL_STYLE
from atomic_jupyter.ui.tool_cards.values import as_dict, as_str, one_line, plural, text_of
from atomic_jupyter.ui.tool_cards.views import output_view

__all__ = ["render_notebook_edit", "render_notebook_read", "render_notebook_run"]

_WORDS = {"replace": "change", "insert": "new", "delete": "delete"}
_DONE = {"replace": "changed", "insert": "inserted", "delete": "deleted"}
_MAX_CHANGES = 50


def _where(change: dict[str, Any]) -> str:
    """``cell 3 (code, id 1a2b)``: where a change goes, as the person sees the notebook."""
    index = change.get("index")
    position = f"cell {index + 1}" if type(index) is int and 0 <= index < 10**6 else "a cell"
    kind = as_str(change.get("cell_type")) or "code"
    cell_id = as_str(change.get("cell_id"))
    return f"{position} ({kind}{', id ' + cell_id if cell_id else ''})"


def _change_html(change: dict[str, Any]) -> str:
    op = as_str(change.get("op")) or "replace"
    old = text_of(change.get("old"))
    new = text_of(change.get("new"))
    language = "python" if (as_str(change.get("cell_type")) or "code") == "code" else None
    filename = "cell.py" if language else "cell.md"
    if op == "insert":
        label = f"new {as_str(change.get('cell_type')) or 'code'} cell at {_where(change)}"
        rows = pair_rows([("", new)])
    elif op == "delete":
        label = f"delete {_where(change)}"
        rows = pair_rows([(old, "")])
    else:
        label = f"change {_where(change)}"
        rows = pair_rows([(old, new)])
    head = div(LABEL_STYLE, esc(label), "aj-notebook-change")
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
    summary = ", ".join(f"{plural(n, 'cell')} {_DONE.get(op, op)}" for op, n in counts.items())
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
    else:
        body = output_view(text_of(call.result), tail=False)
    return ToolCard(summary, command_html=root(command), body_html=root(body))


def render_notebook_run(call: ToolCall) -> ToolCard:
    """The card of cells run: each cell's outputs, as ``python``'s card shows them."""
    ids = as_dict(call.args).get("cell_ids")
    names = [str(i) for i in ids] if isinstance(ids, list) else []
    card = render_python(ToolCall("python", {}, call.output, call.result, call.details,
                                  call.images, call.is_error, call.done))  # fmt: skip
    summary = (
        f"run {plural(len(names), 'cell')}: {one_line(', '.join(names), 80)}"
        if names
        else "cells of the notebook"
    )
    return ToolCard(summary, body_html=card.body_html)


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
