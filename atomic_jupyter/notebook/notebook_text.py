"""The open notebook as the model reads it: the notebook tools' descriptions, its cells
(bounded) and what a run of cells showed.

Pure functions over what the page sent (:mod:`~atomic_jupyter.notebook.page_link`): no I/O, no
kernel. A 500-cell notebook does not flood the model: a listing keeps to
:data:`LISTING_LIMIT` characters and says which cells it left out and how to ask for them,
and a long source or output is cut (its start and end kept) with what was left out named.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CELL_LIMIT",
    "EDIT_TOOL",
    "READ_TOOL",
    "RUN_TOOL",
    "LISTING_LIMIT",
    "Listing",
    "cell_listing",
    "changed_since_run",
    "run_text",
]

#: Characters of one listing (every cell's part together).
LISTING_LIMIT = 24_000
#: Characters of one cell's source in a listing of several; a cell read alone gets
#: :data:`CELL_LIMIT`.
SOURCE_LIMIT = 3_000
CELL_LIMIT = 60_000
#: Characters of a cell's outputs' summary in a listing, and of one output in a run's text.
OUTPUTS_LIMIT, RUN_OUTPUT_LIMIT = 600, 4_000
#: The most operations in one change, and the most cells one call runs.
OPERATIONS_MAX, RUN_MAX = 50, 20

READ_TOOL: dict[str, Any] = {
    "name": "notebook_read",
    "description": (
        "Read the person's open Jupyter notebook as it is on screen: every cell in order with "
        "its id, type (code, markdown, raw), source, a summary of its outputs, its execution "
        "count, whether it was edited since it ran, and which cell the prompt came from. "
        "Long notebooks come in ranges (start, end: 1-based positions); cell_id reads one cell "
        "in full. Read a cell before you change it with notebook_edit."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "start": {"type": "integer", "minimum": 1, "description": "first cell (1-based)"},
            "end": {"type": "integer", "minimum": 1, "description": "last cell (1-based)"},
            "cell_id": {"type": "string", "description": "read this cell alone, in full"},
        },
        "additionalProperties": False,
    },
}
EDIT_TOOL: dict[str, Any] = {
    "name": "notebook_edit",
    "description": (
        "Change the person's open notebook: replace a cell's whole source, insert a code or "
        "markdown cell (after a cell, 'start' for the top, or at the end), delete a cell. All "
        "operations of one call are one change: it is shown to the person as a diff in the "
        "cells and applied only if they accept it (a rejection comes back as an error with "
        "their reason). Cells are named by the ids notebook_read gives; read a cell before "
        "changing it (a cell edited since you read it is refused: read it again). Editing does "
        "not run anything: use notebook_run for that."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "operations": {
                "type": "array",
                "minItems": 1,
                "maxItems": OPERATIONS_MAX,
                "items": {
                    "type": "object",
                    "properties": {
                        "op": {"type": "string", "enum": ["replace", "insert", "delete"]},
                        "cell_id": {"type": "string", "description": "replace, delete"},
                        "source": {"type": "string", "description": "replace, insert"},
                        "after": {
                            "type": "string",
                            "description": "insert: the cell id it goes after, or 'start'; "
                            "leave out for the end",
                        },
                        "cell_type": {"type": "string", "enum": ["code", "markdown"]},
                    },
                    "required": ["op"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["operations"],
        "additionalProperties": False,
    },
}
RUN_TOOL: dict[str, Any] = {
    "name": "notebook_run",
    "description": (
        "Run code cells of the person's open notebook, in order, as Shift+Enter would: the "
        "outputs and execution counts go into the cells, and you get what they printed, "
        "displayed or raised (figures as images). Stops at the first cell that fails. Name "
        "cells by the ids notebook_read gives. The person may have to approve each call."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "cell_ids": {
                "type": "array",
                "items": {"type": "string"},
                "minItems": 1,
                "maxItems": RUN_MAX,
            }
        },
        "required": ["cell_ids"],
        "additionalProperties": False,
    },
}

_WIDGET = "application/vnd.jupyter.widget-view+json"
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


def _cut(text: str, limit: int) -> tuple[str, bool]:
    """``text`` within ``limit`` characters (its start and end), and whether it was cut."""
    if len(text) <= limit:
        return text, False
    head, tail = limit * 2 // 3, limit // 3
    left = len(text) - head - tail
    return f"{text[:head]}\n… ({left:,} characters left out) …\n{text[-tail:]}", True


def _outputs_line(outputs: Sequence[Any], limit: int) -> str:
    """A cell's outputs as a few short lines."""
    parts: list[str] = []
    for raw in outputs:
        output = raw if isinstance(raw, dict) else {}
        kind = str(output.get("type") or "output")
        text = _ANSI.sub("", str(output.get("text") or "")).strip()
        if kind == "stream":
            parts.append(f"[{output.get('name') or 'stdout'}] {text}")
        elif kind == "error":
            parts.append(f"[error] {text}")
        else:
            mimes = [m for m in output.get("mimes") or [] if isinstance(m, str)]
            if _WIDGET in mimes:  # a live widget (ours too): its text says nothing
                parts.append("[widget]")
                continue
            rich = [m for m in mimes if m != "text/plain"]
            label = "result" if kind == "execute_result" else "display"
            extra = f" ({', '.join(rich)})" if rich else ""
            parts.append(f"[{label}{extra}] {text}".rstrip())
    return _cut("\n".join(parts), limit)[0]


def changed_since_run(source: str, count: Any, history: Sequence[str]) -> str:
    """Whether a code cell's source is what ran as ``[count]`` in this kernel (``history``:
    the raw inputs, index = execution count): ``""`` when it is, else a few words."""
    if not isinstance(count, int) or isinstance(count, bool) or count <= 0:
        return ""
    if count >= len(history):
        return "ran before this kernel started"
    if history[count].rstrip("\n") != source.rstrip("\n"):
        return "edited since it ran"
    return ""


@dataclass(frozen=True)
class Listing:
    """A listing for the model, and the cells whose whole source it showed (cell id ->
    source): the only ones the agent may then change."""

    text: str
    read: dict[str, str]


def _cell_part(
    position: int,
    cell: dict[str, Any],
    limit: int,
    origin_cell: str | None,
    history: Sequence[str],
) -> tuple[str, bool]:
    cid = str(cell.get("id") or "")
    kind = str(cell.get("type") or "code")
    source = str(cell.get("source") or "")
    facts = [f"cell {position}", f"id {cid}", kind]
    count = cell.get("execution_count")
    if kind == "code":
        facts.append(f"ran as [{count}]" if isinstance(count, int) else "not run")
        change = changed_since_run(source, count, history)
        if change:
            facts.append(change)
    if cell.get("running"):
        facts.append("running now")
    if origin_cell is not None and cid == origin_cell:
        facts.append("the prompt came from this cell")
    shown, cut = _cut(source, limit)
    if cut:
        facts.append(f"{len(source):,} characters, cut: read it alone by its id to change it")
    part = f"--- {' · '.join(facts)}\n{shown}" if shown else f"--- {' · '.join(facts)}\n(empty)"
    outputs = cell.get("outputs") or []
    if kind == "code" and outputs:
        part += f"\n[outputs]\n{_outputs_line(outputs, OUTPUTS_LIMIT)}"
    return part, cut


def cell_listing(
    reply: dict[str, Any],
    *,
    start: int | None = None,
    end: int | None = None,
    cell_id: str | None = None,
    origin_cell: str | None = None,
    history: Sequence[str] = (),
    page: str = "the notebook",
) -> Listing:
    """The cells the page sent (``reply["cells"]``) as the model reads them.

    Parameters
    ----------
    reply:
        The page's answer to ``read``.
    start, end:
        1-based positions of the first and last cell to show (default: from the first, as
        many as fit in :data:`LISTING_LIMIT`).
    cell_id:
        Show this cell alone (with up to :data:`CELL_LIMIT` characters of its source).
    origin_cell:
        The id of the cell the prompt came from.
    history:
        The kernel's raw inputs (to tell a cell edited since it ran).
    page:
        The notebook's name, for the heading.
    """
    cells = [c for c in reply.get("cells") or [] if isinstance(c, dict)]
    total = len(cells)
    read: dict[str, str] = {}
    origin_at = next((k for k, c in enumerate(cells, 1) if c.get("id") == origin_cell), None)
    head = f"Notebook {page}: {total} cell{'s' * (total != 1)}"
    head += f"; the prompt came from cell {origin_at} (id {origin_cell})." if origin_at else "."
    if cell_id is not None:
        found = next((k for k, c in enumerate(cells, 1) if c.get("id") == cell_id), None)
        if found is None:
            ids = ", ".join(str(c.get("id")) for c in cells[:20])
            more = " …" if total > 20 else ""
            return Listing(f"{head}\nNo cell has the id {cell_id!r}. Ids: {ids}{more}", {})
        part, cut = _cell_part(found, cells[found - 1], CELL_LIMIT, origin_cell, history)
        if not cut:
            read[cell_id] = str(cells[found - 1].get("source") or "")
        return Listing(f"{head}\n{part}", read)
    first = max(1, start or 1)
    last = min(total, end if end is not None else total)
    parts: list[str] = []
    size = 0
    shown_last = first - 1
    for position in range(first, last + 1):
        cell = cells[position - 1]
        part, cut = _cell_part(position, cell, SOURCE_LIMIT, origin_cell, history)
        if parts and size + len(part) > LISTING_LIMIT:
            break
        parts.append(part)
        size += len(part)
        shown_last = position
        if not cut:
            read[str(cell.get("id") or "")] = str(cell.get("source") or "")
    if total == 0:
        return Listing(f"{head}\n(The notebook has no cells.)", read)
    if first > total:
        return Listing(f"{head}\nThere is no cell {first}: the last is cell {total}.", read)
    notes = []
    if first > 1:
        notes.append(f"cells 1–{first - 1} not shown (ask with start=1)")
    if shown_last < total:
        notes.append(
            f"cells {shown_last + 1}–{total} not shown (ask with start={shown_last + 1}"
            + (")" if shown_last < last else f", end={total})")
        )
    tail = f"\n({'; '.join(notes)}.)" if notes else ""
    return Listing(f"{head} Showing cells {first}–{shown_last}.\n" + "\n".join(parts) + tail, read)


def run_text(
    cells: Sequence[Any], images: list[tuple[str, str]], max_images: int
) -> tuple[str, bool, list[dict[str, Any]]]:
    """What a run of cells showed, as the model reads it; PNG images go to ``images`` (at most
    ``max_images``). Returns the text, whether a cell failed, and the card's outputs (the
    ``python`` card's form, a note heading each cell)."""
    parts: list[str] = []
    shown: list[dict[str, Any]] = []
    failed = False
    for raw in cells:
        cell = raw if isinstance(raw, dict) else {}
        count = cell.get("execution_count")
        status = str(cell.get("status") or "")
        ran = f"[{count}]" if isinstance(count, int) else "[ ]"
        line = f"--- cell id {cell.get('id')} ran as {ran}"
        if status != "ok":
            line += f": {status}"
            failed = True
        parts.append(line)
        shown.append({"type": "note", "text": line.removeprefix("--- ")})
        for raw_output in cell.get("outputs") or []:
            output = raw_output if isinstance(raw_output, dict) else {}
            kind = str(output.get("type") or "")
            text = _ANSI.sub("", str(output.get("text") or ""))
            if kind == "stream":
                name = "stderr" if output.get("name") == "stderr" else "stdout"
                parts.append(f"[{name}]\n{_cut(text, RUN_OUTPUT_LIMIT)[0]}")
                shown.append({"type": "stream", "name": name, "text": text})
            elif kind == "error":
                failed = True
                trace = _ANSI.sub("", str(output.get("traceback") or ""))
                parts.append(f"[error]\n{_cut(trace or text, RUN_OUTPUT_LIMIT)[0]}")
                shown.append({"type": "stream", "name": "stderr", "text": trace or text})
            else:
                label = "value" if kind == "execute_result" else "display"
                png = output.get("png")
                image = None
                if isinstance(png, str) and png and len(images) < max_images:
                    images.append(("image/png", png))
                    image = len(images) - 1
                    label += f", image {len(images)} attached"
                parts.append(f"[{label}]\n{_cut(text, RUN_OUTPUT_LIMIT)[0]}".rstrip())
                shown.append({"type": label.split(",")[0], "text": text, "image": image})
    return "\n".join(parts), failed, shown
