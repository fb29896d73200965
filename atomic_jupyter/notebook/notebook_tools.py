"""The agent's tools for the open notebook: ``notebook_read``, ``notebook_edit`` and
``notebook_run``, offered while a notebook page is linked to the kernel
(:mod:`~atomic_jupyter.notebook.page_link`) and the session's ``notebook_edits`` setting is not
``off``.

- ``notebook_read``: the cells in order, each with its id, type, source, outputs' summary,
  execution count, whether it was edited since it ran, and which cell the prompt came from
  (bounded: :mod:`~atomic_jupyter.notebook.notebook_text`).
- ``notebook_edit``: operations (replace a cell's source, insert a cell, delete a cell) that
  make one change. The page checks it against the notebook (a cell edited since the agent read
  it is refused) and shows it as a diff in the cells; the card shows the same diff and a
  confirm, :data:`EDIT_TITLE`, decided there, in a cell, by a rule or a policy (``ask``), or at
  once (``allow``). Accepted, the page applies it as one edit; rejected, the model gets the
  person's reason.
- ``notebook_run``: code cells run as a person's Shift+Enter would (outputs and execution
  counts in the cells), what came out given to the model as ``python``'s result is. Governed
  by ``kernel_code`` (asked for first unless ``allow``).

Every call needs the page's answer, which reaches the kernel only while no cell runs: a call
made while a cell blocks (a prompt sent with ``--wait``, ``session.wait()``, Run All) is
refused in words instead of waiting forever. Everything here runs on the kernel's main thread.
"""

from __future__ import annotations

import sys
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from atomic_jupyter.notebook.link_protocol import Decision
from atomic_jupyter.notebook.notebook_run import RUN_LINE_MAX, run_cells
from atomic_jupyter.notebook.notebook_text import (
    EDIT_TOOL,
    OPERATIONS_MAX,
    READ_TOOL,
    RUN_MAX,
    RUN_TOOL,
    cell_listing,
)
from atomic_jupyter.notebook.page_link import (
    Origin,
    Page,
    PageError,
    PageLink,
    current_message_type,
    current_origin,
    link_of,
)
from atomic_jupyter.notebook.tool_futures import guarded, then
from atomic_jupyter.protocol.messages import ConfirmRequest, SetStatusRequest, UIResponse
from atomic_jupyter.session.kernel_tools import BuiltinTool, CallInfo, ToolReply

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from atomic_jupyter.session.dialogs import Dialog

__all__ = [
    "EDIT_TITLE",
    "attach_kernel",
    "linked_pages",
    "notebook_tools",
    "record_origin",
    "run_ended",
    "running_cell",
    "show_link",
    "why_unavailable",
]

#: The confirm's title for a change (a rule or ``%atomic_agent policy --title`` matches it).
EDIT_TITLE = "Apply the agent's change to the notebook?"
#: The longest source a cell may be given.
SOURCE_MAX = 5_000_000

# --------------------------------------------------------------------------- kernel state


@dataclass
class _Waiting:
    """A change shown in the page, waiting for its decision (decided once, under its lock:
    the answer may come on a kernel subshell's thread, the agent's exit on its own)."""

    page: Page
    call: str
    dialog: Dialog | None = None
    reason: str = ""
    decided: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass
class _KernelState:
    """What the notebook tools keep per kernel."""

    cell_running: bool = False
    #: The execution count of the cell running on the main thread (None: none, or unknown).
    cell_number: int | None = None
    #: (session, page client) -> cell id -> the source the agent last read in full.
    read: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    waiting: dict[str, _Waiting] = field(default_factory=dict)
    origins: weakref.WeakKeyDictionary[Any, Origin] = field(
        default_factory=weakref.WeakKeyDictionary
    )


_STATES: weakref.WeakKeyDictionary[Any, _KernelState] = weakref.WeakKeyDictionary()


def _shell() -> InteractiveShell | None:
    """The running IPython (None when IPython was never imported: the command line)."""
    ipython = sys.modules.get("IPython")
    shell: InteractiveShell | None = getattr(ipython, "get_ipython", lambda: None)()
    return shell


def _state(shell: InteractiveShell) -> _KernelState:
    """The kernel's state, made on first use (on the main thread): the link opened, the
    cells' runs followed."""
    state = _STATES.get(shell)
    if state is not None:
        return state
    # Made in the middle of a cell (%load_ext, a start): that cell's pre_run_cell came before.
    state = _STATES[shell] = _KernelState(
        cell_running=current_message_type(shell) == "execute_request"
    )

    def before(info: Any = None, *_args: Any) -> None:
        if threading.current_thread() is threading.main_thread():  # not a subshell's cell
            state.cell_running = True
            # IPython counts the cell before pre_run_cell: the cell's own number is one less
            # (when it is stored in the history, as a person's cells are).
            count = getattr(shell, "execution_count", None)
            stored = bool(getattr(info, "store_history", True))
            state.cell_number = count - 1 if isinstance(count, int) and stored else None

    def after(*_args: Any) -> None:
        if threading.current_thread() is threading.main_thread():
            state.cell_running = False
            state.cell_number = None

    shell.events.register("pre_run_cell", before)
    shell.events.register("post_run_cell", after)
    link = link_of(shell)
    if link is not None:
        link.decisions.add(lambda page, data: _decided_in_page(state, page, data))
        link.changed.add(lambda: _pages_changed(state, link))
        link.changed.add(_offer_again)
    return state


def attach_kernel() -> None:
    """Open the kernel's side of the notebook link (on the main thread; nothing outside a
    Jupyter kernel), so that the pages link before the first prompt."""
    shell = _shell()
    if shell is not None and getattr(shell, "kernel", None) is not None:
        _state(shell)


def _offer_again() -> None:
    """A page was linked or went: every running session offers the tools it can now."""
    from atomic_jupyter.notebook import registry

    for session in registry.all_sessions():
        session.offer_tools_again()
        show_link(session)


#: The panel's status entry that says the open notebook is not linked, and what it says.
LINK_STATUS = "atomic-notebook"
#: True whenever it shows: a page's link waits for the kernel's main thread, so during Run All
#: (or any cell) a JupyterLab page links only once no cell runs; nbclient and VS Code never do.
NOT_LINKED = (
    "notebook: not linked (yet), so the agent cannot edit it: a page with atomic-jupyter's "
    "extension links once no cell runs (%atomic_agent doctor says more)"
)


def show_link(session: Any) -> None:
    """Say in the session's panel when the agent cannot work on the open notebook (no page
    linked: nbclient, VS Code, a page still loading, or waiting for the cells of Run All);
    nothing once a page is linked, when the session's ``notebook_edits`` setting is ``off``,
    or once the agent stopped (a stopped agent edits nothing: its saved panel says nothing
    of the link it had, which a page may make a moment later)."""
    shell = _shell()
    if shell is None or getattr(shell, "kernel", None) is None:
        return  # no notebook here (a terminal, a script): nothing to say
    stopped = getattr(session, "alive", True) is False
    text = NOT_LINKED if not stopped and EDIT_TOOL["name"] in session.unavailable_tools else None
    session.extension_ui.apply(SetStatusRequest(id=LINK_STATUS, key=LINK_STATUS, text=text))


def record_origin(run: Any) -> None:
    """Remember which page and cell ``run``'s prompt came from (on the main thread, as the
    prompt is sent: the kernel's current message is the cell's or the Send click's)."""
    shell = _shell()
    if shell is None or getattr(shell, "kernel", None) is None:
        return
    state = _state(shell)
    state.origins[run] = current_origin(shell)
    link = link_of(shell)
    if link is not None:
        link.announce()


def linked_pages() -> list[str]:
    """The notebook pages linked to this kernel now, by name."""
    shell = _shell()
    link = link_of(shell, make=False) if shell is not None else None
    return [page.label for page in link.pages] if link is not None else []


def why_unavailable() -> str | None:
    """Why the notebook tools cannot be offered now (None: they can)."""
    shell = _shell()
    if shell is None or getattr(shell, "kernel", None) is None:
        return "no Jupyter kernel runs here"
    link = link_of(shell, make=False)  # asked on the reader thread too: never made here
    if link is None:
        return "atomic-jupyter's side of the notebook link is not open in this kernel"
    if not link.pages:
        if link.refused:
            return link.refused
        return (
            "no notebook page with atomic-jupyter's extension is linked to this kernel "
            "(JupyterLab 4 or Notebook 7 with atomic-jupyter installed in the server's "
            "environment; nbclient, papermill, VS Code and classic Notebook have none)"
        )
    return None


# --------------------------------------------------------------------------- helpers


#: Why a notebook tool cannot work while a cell blocks the kernel and the page's messages wait
#: for it (no kernel subshell carries them).
_BLOCKED = (
    "The notebook cannot be read or changed while a cell runs and blocks the kernel "
    "(the prompt was sent with --wait, session.wait() or Run All): the page's answer "
    "cannot reach the kernel until that cell ends. Nothing was done. Tell the person "
    "to send the prompt without --wait to let you work on the notebook; the python "
    "and notebook_cells tools still work."
)
#: Why cells cannot be run while a cell blocks the kernel, wherever the page's messages go.
_BLOCKED_RUN = (
    "Cells cannot be run while a cell runs and blocks the kernel (the prompt was sent with "
    "--wait, session.wait() or Run All): they would wait for that cell, and it waits for this "
    "run. Nothing was run. Tell the person to run the cells, or to send the prompt without "
    "--wait; reading and changing the notebook still work."
)


def run_ended(run: Any) -> None:
    """``run`` is over (stopped, failed or done): a request of its tools still waiting for the
    page is given up, in words (a reply that comes later is ignored)."""
    shell = _shell()
    link = link_of(shell, make=False) if shell is not None else None
    if link is not None:
        link.cancel(run, "the run was stopped before the notebook answered; nothing more is done")


def running_cell() -> int | None:
    """The execution count of the cell the kernel's main thread runs now, from any thread
    (None: no cell runs, the kernel's state was never made, or it is not known)."""
    shell = _shell()
    state = _STATES.get(shell) if shell is not None else None
    return state.cell_number if state is not None and state.cell_running else None


def _target(
    info: CallInfo, runs_cells: bool = False
) -> tuple[InteractiveShell, _KernelState, PageLink, Page] | ToolReply:
    """The kernel, its state, its link and the page the call's prompt came from; or the error
    for the model.

    While a cell blocks the kernel (``--wait``), a page whose messages come over a kernel
    subshell still answers (its replies and decisions are handled beside the cell); one whose
    messages go to the main shell cannot, and cells to run (``runs_cells``) never can."""
    shell = _shell()
    link = link_of(shell) if shell is not None else None
    if shell is None or link is None:
        return ToolReply(error="no Jupyter kernel runs here: the notebook cannot be reached")
    state = _state(shell)
    origin = state.origins.get(info.run) if info.run is not None else None
    page = link.page_for(origin.client if origin is not None else None)
    if state.cell_running:
        if runs_cells:
            return ToolReply(error=_BLOCKED_RUN)
        if page is None or page.subshell is None:
            return ToolReply(error=_BLOCKED)
    if page is None:
        why = why_unavailable()
        if why is None:  # several pages, none of them the prompt's
            why = (
                "several notebooks share this kernel and the prompt came from none of them: "
                "send it from the notebook to work on"
            )
        return ToolReply(error=f"The notebook cannot be reached: {why}.")
    return shell, state, link, page


def _history(shell: InteractiveShell) -> list[str]:
    manager = getattr(shell, "history_manager", None)
    raw = getattr(manager, "input_hist_raw", None)
    return list(raw) if isinstance(raw, list) else []


# --------------------------------------------------------------------------- read


def _read(arguments: dict[str, Any], info: CallInfo) -> ToolReply | Future[ToolReply]:
    found = _target(info)
    if isinstance(found, ToolReply):
        return found
    shell, state, link, page = found

    def ints(name: str) -> int | None:
        value = arguments.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    cell_id = arguments.get("cell_id")
    origin = state.origins.get(info.run) if info.run is not None else None

    def listed(reply: dict[str, Any]) -> ToolReply:
        listing = cell_listing(
            reply,
            start=ints("start"),
            end=ints("end"),
            cell_id=cell_id if isinstance(cell_id, str) else None,
            origin_cell=origin.cell_id if origin is not None else None,
            history=_history(shell),
            page=page.label,
        )
        state.read.setdefault((info.session, page.client), {}).update(listing.read)
        return ToolReply(text=listing.text)

    return then(link.request(page, "read", owner=info.run), listed)


# --------------------------------------------------------------------------- edit


def _operations(arguments: dict[str, Any]) -> list[dict[str, Any]] | str:
    """The operations, checked for shape and size; or what is wrong with them."""
    operations = arguments.get("operations")
    if not isinstance(operations, list) or not operations:
        return 'notebook_edit needs {"operations": [...]}: no operation was given'
    if len(operations) > OPERATIONS_MAX:
        return f"at most {OPERATIONS_MAX} operations make one change"
    checked: list[dict[str, Any]] = []
    for index, operation in enumerate(operations, 1):
        where = f"operation {index}"
        if not isinstance(operation, dict) or operation.get("op") not in (
            "replace",
            "insert",
            "delete",
        ):
            return f"{where}: op is replace, insert or delete"
        op = operation["op"]
        source = operation.get("source")
        if op in ("replace", "insert") and not isinstance(source, str):
            return f"{where}: {op} needs a source"
        if isinstance(source, str) and len(source) > SOURCE_MAX:
            return f"{where}: a cell's source is at most {SOURCE_MAX:,} characters ({len(source):,} given)"
        if op in ("replace", "delete") and not isinstance(operation.get("cell_id"), str):
            return f"{where}: {op} needs the cell_id of the cell"
        kept = {
            k: operation[k]
            for k in ("op", "cell_id", "source", "after", "cell_type")
            if k in operation
        }
        checked.append(kept)
    return checked


def _touches_prompt_cell(
    operations: list[dict[str, Any]], state: _KernelState, info: CallInfo
) -> str | None:
    """Why the change is refused when it replaces or deletes the cell the running prompt came
    from (its source and live output are the run's record); None when it does not."""
    origin = state.origins.get(info.run) if info.run is not None else None
    if origin is None or origin.cell_id is None:
        return None
    for index, operation in enumerate(operations, 1):
        if operation["op"] in ("replace", "delete") and operation.get("cell_id") == origin.cell_id:
            verb = "replaced" if operation["op"] == "replace" else "deleted"
            return (
                f"operation {index}: cell {origin.cell_id} holds the prompt of this run "
                f"(%%atomic_agent): its source and live output are the record of the run, so it "
                f"cannot be {verb} while the run works. Nothing was changed. Insert a new cell "
                "after it instead, or tell the person what to change."
            )
    return None


def _op_counts(changes: list[Any]) -> dict[str, int]:
    """How many changes of each op (``replace``, ``insert``, ``delete``), in their order."""
    counts: dict[str, int] = {}
    for change in changes:
        op = change.get("op") if isinstance(change, dict) else None
        counts[str(op)] = counts.get(str(op), 0) + 1
    return counts


def _summary(changes: list[Any]) -> str:
    """``1 cell changed, 2 cells inserted``: what an applied change did."""
    words = {"replace": "changed", "insert": "inserted", "delete": "deleted"}
    said = [
        f"{n} cell{'s' * (n != 1)} {words.get(op, op)}" for op, n in _op_counts(changes).items()
    ]
    return ", ".join(said)


def _change_lines(changes: list[Any]) -> list[str]:
    """Each change as the person sees the notebook: ``change cell 2: x = 1`` (its position
    and the first line of its source), at most :data:`CHANGE_LINES_MAX` of them."""
    lines = []
    for change in changes[:CHANGE_LINES_MAX]:
        if not isinstance(change, dict):
            continue
        index = change.get("index")
        where = f"cell {index + 1}" if type(index) is int and index >= 0 else "a cell"
        op = change.get("op")
        source = str(change.get("new") if op == "insert" else change.get("old") or "")
        first = next((line for line in source.splitlines() if line.strip()), "")[:RUN_LINE_MAX]
        kind = str(change.get("cell_type") or "code")
        if op == "insert":
            lines.append(f"new {kind} cell, at {where}: {first or '(empty)'}")
        else:
            verb = "delete" if op == "delete" else "change"
            lines.append(f"{verb} {where}: {first or '(empty)'}")
    if len(changes) > CHANGE_LINES_MAX:
        lines.append(f"… and {len(changes) - CHANGE_LINES_MAX} more")
    return lines


#: The most changes an approval names one by one.
CHANGE_LINES_MAX = 10


def _proposed(changes: list[Any]) -> str:
    """``change 1 cell, insert 2 cells``: what a change proposes, before anyone decides."""
    words = {"replace": "change", "insert": "insert", "delete": "delete"}
    said = [
        f"{words.get(op, op)} {n} cell{'s' * (n != 1)}" for op, n in _op_counts(changes).items()
    ]
    return ", ".join(said)


def _edit(arguments: dict[str, Any], info: CallInfo) -> ToolReply | Future[ToolReply]:
    operations = _operations(arguments)
    if isinstance(operations, str):
        return ToolReply(error=operations)
    found = _target(info)
    if isinstance(found, ToolReply):
        return found
    _shell_, state, link, page = found
    refused = _touches_prompt_cell(operations, state, info)
    if refused is not None:
        return ToolReply(error=refused)
    read = state.read.get((info.session, page.client), {})
    expected: dict[str, str] = {}
    for index, operation in enumerate(operations, 1):
        cell = operation.get("cell_id")
        if operation["op"] != "insert" and isinstance(cell, str):
            if cell not in read:
                return ToolReply(
                    error=f"operation {index}: read cell {cell} (notebook_read) before changing it"
                )
            expected[cell] = read[cell]
    ask = info.mode != "allow"
    call = info.call_id or f"call-{id(arguments)}"
    result: Future[ToolReply] = Future()
    proposed = link.request(
        page,
        "propose",
        owner=info.run,
        call=call,
        operations=operations,
        expected=expected,
        ask=ask,
    )

    def shown(done: Future[dict[str, Any]]) -> None:
        try:
            changes = done.result().get("changes") or []
        except PageError as exc:
            result.set_result(
                ToolReply(error=f"The change was refused: {exc}. Nothing was changed.")
            )
            return
        details = {"notebook": page.label, "changes": changes, "decision": "pending"}
        if info.preview is not None:
            info.preview(details)
        waiting = state.waiting[call] = _Waiting(page, call)
        decide = _decider(state, link, waiting, details, read, result)
        if info.run is not None and getattr(info.run, "finished", False):
            decide(False, "the run ended before the change was shown")  # stopped meanwhile
            return
        if not ask:
            decide(True, "applied without asking (notebook_edits is allow)")
            return
        if info.open_dialog is None:  # no session to ask in: nothing is applied unasked
            decide(False, "there was nobody to ask")
            return
        message = "\n".join(
            [
                f"The agent proposes to {_proposed(changes)} in {page.label} (the diff is above "
                "and in the notebook's cells):",
                *_change_lines(changes),
            ]
        )
        request = ConfirmRequest(id=f"notebook-change-{call}", title=EDIT_TITLE, message=message)

        def answered(response: UIResponse) -> None:
            # On the thread that answered (a click over a subshell while a cell runs): the
            # page is asked at once; nothing here needs the main thread.
            if response.cancelled:  # Cancel, or the notebook closed: nobody decided
                decide(False, "the question was cancelled")
                return
            accept = response.confirmed is True
            decide(accept, "accepted" if accept else _REJECTED)

        waiting.dialog = info.open_dialog(request, answered)
        waiting.dialog.observe(lambda d: _gone_dialog(d, decide))
        _gone_dialog(waiting.dialog, decide)  # closed before it was observed

    proposed.add_done_callback(guarded(result, shown))
    return result


def _gone_dialog(dialog: Dialog, decide: Callable[[bool, str], None]) -> None:
    """The confirm closed or expired without an answer (the agent went): drop the change."""
    if dialog.state in ("closed", "expired"):
        decide(False, f"the question was {dialog.state}")


def _decider(
    state: _KernelState,
    link: PageLink,
    waiting: _Waiting,
    details: dict[str, Any],
    read: dict[str, str],
    result: Future[ToolReply],
) -> Callable[[bool, str], None]:
    """What settles a change: the page applies or drops it, and the call is answered."""

    def decide(accept: bool, how: str) -> None:
        with waiting.lock:
            if waiting.decided:
                return
            waiting.decided = True
        state.waiting.pop(waiting.call, None)
        asked = link.request(waiting.page, "decide", call=waiting.call, accept=accept)

        def settled(done: Future[dict[str, Any]]) -> None:
            try:
                applied = done.result().get("applied") or []
            except PageError as exc:
                if accept:
                    text = f"The change was accepted but not applied: {exc}. Nothing was changed."
                    result.set_result(ToolReply(error=text))
                else:
                    result.set_result(_not_applied(details, how, waiting.reason, str(exc)))
                return
            if not accept:
                result.set_result(_not_applied(details, how, waiting.reason))
                return
            for change in details["changes"]:  # what the agent knows of the notebook now
                if isinstance(change, dict) and isinstance(change.get("cell_id"), str):
                    if change.get("op") == "delete":
                        read.pop(change["cell_id"], None)
                    else:
                        read[change["cell_id"]] = str(change.get("new") or "")
            for entry in applied:
                if isinstance(entry, dict) and entry.get("op") == "insert":
                    source = _inserted_source(details["changes"], applied, entry)
                    if source is not None:
                        read[str(entry.get("cell_id"))] = source
            lines = [f"Applied to {waiting.page.label} ({how}): {_summary(details['changes'])}."]
            for entry in applied:
                if isinstance(entry, dict):
                    index = entry.get("index")
                    where = (
                        f"now cell {index + 1}"
                        if type(index) is int and index >= 0
                        else "no longer in the notebook"
                    )
                    lines.append(f"- {entry.get('op')}: cell id {entry.get('cell_id')}, {where}")
            lines.append("The cells did not run; use notebook_run to run code cells.")
            final = {**details, "decision": "accepted", "applied": applied}
            result.set_result(ToolReply(text="\n".join(lines), details=final))

        asked.add_done_callback(guarded(result, settled))

    return decide


#: How a change was declined by a person (or by their rule): an outcome, not a failure.
_REJECTED = "rejected"


def _not_applied(details: dict[str, Any], how: str, reason: str, page_said: str = "") -> ToolReply:
    """The answer for a change that was not applied: a person's rejection is an outcome (the
    model reads it with their reason; the card shows it as decided, not failed); a change
    dropped for another reason (the run ended, the question was closed) is an error."""
    also = f" ({page_said})" if page_said else ""
    if how != _REJECTED:
        return ToolReply(error=f"The change was not applied: {how}{also}. Nothing was changed.")
    reason = reason.strip()
    said = f" Their reason: {reason}" if reason else " They gave no reason."
    text = f"The person rejected the change to the notebook{also}; nothing was changed.{said}"
    return ToolReply(text=text, details={**details, "decision": "rejected", "reason": reason})


def _inserted_source(changes: list[Any], applied: list[Any], entry: dict[str, Any]) -> str | None:
    """The source of an inserted cell (the k-th insert applied is the k-th insert proposed)."""
    inserts = [c for c in changes if isinstance(c, dict) and c.get("op") == "insert"]
    done = [a for a in applied if isinstance(a, dict) and a.get("op") == "insert"]
    k = done.index(entry) if entry in done else -1
    return str(inserts[k].get("new") or "") if 0 <= k < len(inserts) else None


def _decided_in_page(state: _KernelState, page: Page, decision: Decision) -> None:
    """A person clicked Accept or Reject in a cell: the change's confirm is answered."""
    waiting = state.waiting.get(decision.call)
    if waiting is None or waiting.page is not page or waiting.dialog is None:
        return
    waiting.reason = decision.reason[:2000]
    if waiting.dialog.pending:
        waiting.dialog.respond(decision.accept, by="clicked", how="clicked in the notebook")


def _pages_changed(state: _KernelState, link: PageLink) -> None:
    """A page went: a change waiting in it is cancelled (nothing was applied)."""
    linked = {id(page) for page in link.pages}
    for waiting in list(state.waiting.values()):
        if id(waiting.page) not in linked and waiting.dialog is not None and waiting.dialog.pending:
            waiting.dialog.cancel(how=f"the notebook {waiting.page.label} was closed")


# --------------------------------------------------------------------------- run


def _run(arguments: dict[str, Any], info: CallInfo) -> ToolReply | Future[ToolReply]:
    ids = arguments.get("cell_ids")
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
        return ToolReply(error='notebook_run needs {"cell_ids": ["<id>", ...]}')
    if len(ids) > RUN_MAX:
        return ToolReply(error=f"at most {RUN_MAX} cells in one call")
    found = _target(info, runs_cells=True)
    if isinstance(found, ToolReply):
        return found
    _shell_, state, link, page = found
    origin = state.origins.get(info.run) if info.run is not None else None
    return run_cells(ids, info, link, page, origin.cell_id if origin is not None else None)


# --------------------------------------------------------------------------- the tools


def _tool(spec: dict[str, Any], run: Any, **options: Any) -> BuiltinTool:
    """A notebook tool of ``spec`` (name, description, parameters), offered while a page is
    linked."""
    return BuiltinTool(
        spec["name"], spec["description"], spec["parameters"], run, available=why_unavailable,
        **options,
    )  # fmt: skip


def notebook_tools() -> list[BuiltinTool]:
    """``notebook_read``, ``notebook_edit`` and ``notebook_run``: offered while a page is
    linked (:func:`why_unavailable`)."""
    return [
        _tool(READ_TOOL, _read, setting="notebook_edits"),
        _tool(EDIT_TOOL, _edit, setting="notebook_edits", changes=True),
        _tool(
            RUN_TOOL,
            _run,
            setting="notebook_edits",
            also_needs="kernel_code",
            # It asks in the kernel (_ask_to_run), where the cells can be named as the person
            # sees them: kernel_code's value is the call's mode.
            asks_by="kernel_code",
            changes=True,
        ),
    ]
