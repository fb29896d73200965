"""Running the notebook's cells for the agent (``notebook_run``): the cells named as the person
sees them (position and first line), asked for in the kernel when ``kernel_code`` is ``ask``
(rules and policies first), then run by the page as Shift+Enter would; a No is an outcome the
model reads, not a failure.

:func:`run_cells` does the work once :mod:`~atomic_jupyter.notebook.notebook_tools` found the
page the prompt came from.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from atomic_jupyter.notebook.notebook_text import run_text
from atomic_jupyter.notebook.page_link import Page, PageError, PageLink
from atomic_jupyter.notebook.tool_futures import guarded
from atomic_jupyter.protocol.messages import ConfirmRequest, UIResponse
from atomic_jupyter.session.kernel_tools import CallInfo, ToolReply

if TYPE_CHECKING:
    from atomic_jupyter.session.dialogs import Dialog

__all__ = ["MODEL_IMAGES", "PROMPT_MAGIC", "RUN_LINE_MAX", "RUN_TITLE", "run_cells"]

#: The confirm's title before cells run (a rule or ``%atomic_agent policy --title`` matches it).
RUN_TITLE = "Run cells of the notebook in the kernel?"
#: Images given to the model from a run of cells.
MODEL_IMAGES = 6
#: How a cell that prompts the agent starts (never run for it).
PROMPT_MAGIC = ("%%atomic_agent", "%atomic_agent")


def run_cells(
    ids: list[str], info: CallInfo, link: PageLink, page: Page, prompt_cell: str | None
) -> Future[ToolReply]:
    """Run the cells ``ids`` of ``page`` for the call ``info`` (never ``prompt_cell``, the
    cell the prompt came from, nor a cell that prompts the agent); the answer for the model."""
    result: Future[ToolReply] = Future()

    def run(named: list[dict[str, Any]]) -> None:
        ran = link.request(page, "run", owner=info.run, cell_ids=ids)
        ran.add_done_callback(
            guarded(result, lambda settled: result.set_result(_ran(settled, page.label, named)))
        )

    def checked(done: Future[dict[str, Any]]) -> None:
        try:
            listed = [c for c in done.result().get("cells") or [] if isinstance(c, dict)]
        except PageError as exc:
            result.set_result(ToolReply(error=str(exc)))
            return
        cells = {c.get("id"): c for c in listed}
        for cid in ids:
            cell = cells.get(cid)
            if cell is None:
                result.set_result(ToolReply(error=f"no cell {cid} in the notebook: read it again"))
                return
            source = str(cell.get("source") or "").lstrip()
            if cid == prompt_cell or source.startswith(PROMPT_MAGIC):
                result.set_result(
                    ToolReply(
                        error=f"cell {cid} prompts the agent (%%atomic_agent): running it would "
                        "prompt you from your own run. Nothing ran."
                    )
                )
                return
        named = _named_cells(listed, ids)
        if info.mode != "ask":  # allow (off offers no tool)
            run(named)
            return
        _ask_to_run(info, page.label, named, result, run)

    link.request(page, "read", owner=info.run).add_done_callback(guarded(result, checked))
    return result


def _named_cells(listed: list[dict[str, Any]], ids: list[str]) -> list[dict[str, Any]]:
    """The cells ``ids`` as a person sees them: ``{"cell_id", "index", "cell_type",
    "first_line"}`` (``index`` 0-based, in the page's order)."""
    position = {c.get("id"): i for i, c in enumerate(listed)}
    named = []
    for cid in ids:
        cell = listed[position[cid]]
        lines = [line for line in str(cell.get("source") or "").splitlines() if line.strip()]
        named.append(
            {
                "cell_id": cid,
                "index": position[cid],
                "cell_type": str(cell.get("type") or "code"),
                "first_line": lines[0][:RUN_LINE_MAX] if lines else "",
            }
        )
    return named


#: The longest first line of a cell an approval quotes.
RUN_LINE_MAX = 80


def _run_question(named: list[dict[str, Any]], notebook: str) -> str:
    """The approval's message: each cell by its position and first line."""
    lines = [f"cell {cell['index'] + 1}: {cell['first_line'] or '(empty)'}" for cell in named]
    count = len(named)
    head = (
        f"Run {count} cell{'s' * (count != 1)} of {notebook} in its kernel, as Shift+Enter would:"
    )
    return "\n".join([head, *lines])


def _ask_to_run(
    info: CallInfo,
    notebook: str,
    named: list[dict[str, Any]],
    result: Future[ToolReply],
    run: Callable[[list[dict[str, Any]]], None],
) -> None:
    """Ask the person (policies and rules first) before cells run; the cells named as they
    see them. A refusal is an outcome the model reads, not a failure."""
    if info.preview is not None:
        info.preview({"cells": named, "decision": "pending"})
    if info.open_dialog is None:
        result.set_result(ToolReply(error="Nothing ran: there was nobody to ask."))
        return
    settled = threading.Lock()
    done: list[bool] = []

    def once() -> bool:
        with settled:
            if done:
                return False
            done.append(True)
            return True

    def answered(response: UIResponse) -> None:
        if not once():
            return
        if response.confirmed is True:
            run(named)
        elif response.cancelled:
            result.set_result(ToolReply(error="Nothing ran: the question was cancelled."))
        else:
            which = ", ".join(str(cell["index"] + 1) for cell in named)
            result.set_result(
                ToolReply(
                    text=f"The person declined to run cell{'s' * (len(named) != 1)} {which}; "
                    "nothing ran.",
                    details={"cells": named, "decision": "declined"},
                )
            )

    def gone(dialog: Dialog) -> None:
        if dialog.state in ("closed", "expired") and once():
            result.set_result(ToolReply(error=f"Nothing ran: the question was {dialog.state}."))

    call = info.call_id or f"call-{id(named)}"
    request = ConfirmRequest(
        id=f"notebook-run-{call}", title=RUN_TITLE, message=_run_question(named, notebook)
    )
    dialog = info.open_dialog(request, answered)
    dialog.observe(gone)
    gone(dialog)  # closed before it was observed


def _ran(
    done: Future[dict[str, Any]], notebook: str, named: list[dict[str, Any]] | None = None
) -> ToolReply:
    try:
        cells = done.result().get("cells") or []
    except PageError as exc:
        return ToolReply(error=str(exc))
    images: list[tuple[str, str]] = []
    text, failed, outputs = run_text(cells, images, MODEL_IMAGES)
    count = len(cells)
    if failed:
        return ToolReply(
            error=f"A cell failed in {notebook} (the cells after it did not run):\n{text}"
        )
    head = f"Ran {count} cell{'s' * (count != 1)} of {notebook}:"
    details: dict[str, Any] = {"outputs": outputs, "kernel": True}
    if named is not None:
        details["cells"] = named
    return ToolReply(text=f"{head}\n{text}", images=tuple(images), details=details)
