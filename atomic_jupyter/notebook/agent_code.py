"""The agent working in the kernel: its built-in tools (``python``, ``notebook_variables``,
``notebook_cells``), the history of the code it ran, and that code left behind as cells.

Every call of ``python`` runs through :func:`~atomic_jupyter.notebook.code_runner.run_code`
and is kept in the kernel's :class:`AgentHistory` as ``Agent[n]`` (numbered from 1 per
kernel, apart from the person's ``In[n]``): ``$`Agent[n]``` cites it, ``$`Err``` means the
agent's failed call when it failed after the person's last failed cell, and
``%atomic_agent cells`` puts a run's code into a new cell below.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from atomic_jupyter.errors import CitationError
from atomic_jupyter.notebook.code_runner import CodeOutput, CodeResult, run_code
from atomic_jupyter.notebook.kernel_context import (
    CELLS_TOOL,
    VARIABLES_TOOL,
    notebook_cells,
    notebook_variables,
)
from atomic_jupyter.notebook.kernel_values import (
    SUMMARY_LIMIT,
    _fenced,
    cite,
    install_error_log,
    summarize,
)
from atomic_jupyter.notebook.page_link import current_request_is_unattended
from atomic_jupyter.session.kernel_tools import BuiltinTool, CallInfo, ToolReply

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

__all__ = [
    "APPROVAL_TITLE",
    "AgentCall",
    "AgentHistory",
    "builtin_tools",
    "cite_with_agent",
    "history_of",
    "insert_cells",
]

#: The approval dialog's title (a rule or ``%atomic_agent policy --title`` matches it).
APPROVAL_TITLE = "Run the agent's Python in the kernel?"
APPROVAL_MESSAGE = (
    "The code above runs in this notebook's kernel, with every variable of the notebook: "
    "it can do anything you can."
)
PYTHON_DESCRIPTION = (
    "Run Python code in the person's live Jupyter kernel, in the notebook's own namespace: "
    "the variables the notebook defined (data frames, models, ...) are there, and what the "
    "code defines stays for the notebook's next cells and your next calls. You get stdout "
    "and stderr, every display as text, the value of the last expression, and figures "
    "(matplotlib) as images. The person sees each call and may have to approve it. Work in "
    "small steps; print or end with an expression to see results; never call input(). Use "
    "notebook_variables to find the notebook's data first."
)
PYTHON_TOOL = {
    "type": "object",
    "properties": {"code": {"type": "string", "description": "Python source to run"}},
    "required": ["code"],
    "additionalProperties": False,
}
#: Images given to the model (and shown in the card) per call; the rest are counted.
MODEL_IMAGES = 6
#: Characters of one stream's text, and of all the text, the model gets.
STREAM_LIMIT, TEXT_LIMIT = 4_000, 3 * SUMMARY_LIMIT
#: Calls a kernel's history keeps (the newest), and the characters kept of one's code.
KEEP_CALLS, CODE_CHARS = 500, 100_000


@dataclass(frozen=True)
class AgentCall:
    """One call of ``python``, as the kernel's history keeps it.

    Attributes
    ----------
    number:
        ``n`` of ``Agent[n]``.
    session, run_number, prompt:
        The session, which of its prompts, and that prompt.
    code:
        The code as the agent sent it.
    text:
        What the model got (or the error).
    failed:
        Whether it raised (or did not parse, or was interrupted).
    after_cell:
        The kernel's execution count when it ran (``Err`` compares it with the person's).
    """

    number: int
    session: str
    run_number: int | None
    prompt: str
    code: str
    text: str
    failed: bool
    after_cell: int


class AgentHistory:
    """The agent's calls of ``python`` in one kernel, oldest first (the newest
    :data:`KEEP_CALLS`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: list[AgentCall] = []
        self._count = 0

    def next_number(self) -> int:
        """The number the next call gets."""
        with self._lock:
            self._count += 1
            return self._count

    def add(self, call: AgentCall) -> None:
        """Keep a call."""
        with self._lock:
            self._calls.append(call)
            del self._calls[:-KEEP_CALLS]

    def get(self, number: int) -> AgentCall | None:
        """``Agent[number]``, if kept."""
        with self._lock:
            return next((c for c in self._calls if c.number == number), None)

    def calls(self, session: str | None = None) -> list[AgentCall]:
        """The calls kept (of one session), oldest first."""
        with self._lock:
            return [c for c in self._calls if session is None or c.session == session]

    def last_failure(self) -> AgentCall | None:
        """The newest call that failed."""
        with self._lock:
            return next((c for c in reversed(self._calls) if c.failed), None)


_HISTORIES: weakref.WeakKeyDictionary[Any, AgentHistory] = weakref.WeakKeyDictionary()


def history_of(shell: InteractiveShell) -> AgentHistory:
    """The kernel's history of the agent's code (made on first use)."""
    history = _HISTORIES.get(shell)
    if history is None:
        history = _HISTORIES[shell] = AgentHistory()
    return history


def _shell() -> InteractiveShell:
    shell = _shell_or_none()
    if shell is None:
        raise RuntimeError("no IPython kernel runs here")
    return shell


def _cut(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters: its start and its end, with what was left out."""
    if len(text) <= limit:
        return text
    head, tail = limit * 2 // 3, limit // 3
    return f"{text[:head]}\n… ({len(text) - head - tail:,} characters left out) …\n{text[-tail:]}"


def _for_model(result: CodeResult, images: list[tuple[str, str]]) -> list[str]:
    """What the code showed, as the model reads it; images go to ``images`` (bounded)."""
    parts: list[str] = []
    displays = 0
    for output in result.outputs:
        if output.kind == "stream":
            parts.append(f"[{output.name}]\n{_cut(output.text, STREAM_LIMIT)}")
        elif output.kind == "note":
            parts.append(f"[{output.text}]")
        else:
            label = "value" if output.kind == "value" else f"display {(displays := displays + 1)}"
            if output.image is not None and len(images) < MODEL_IMAGES:
                images.append(output.image)
                label += f", image {len(images)} attached"
            elif output.image is not None:
                label += ", an image not attached (too many)"
            text = summarize(result.value) if output.kind == "value" else output.text
            parts.append(f"[{label}]\n{_cut(text, STREAM_LIMIT)}".rstrip())
    return parts


def _details(result: CodeResult, images: list[tuple[str, str]], number: int) -> dict[str, Any]:
    """What the card shows: the outputs in order, images by their index in ``images``."""
    outputs: list[dict[str, Any]] = []
    for output in result.outputs:
        if output.kind == "stream":
            outputs.append({"type": "stream", "name": output.name, "text": output.text})
        elif output.kind == "note":
            outputs.append({"type": "note", "text": output.text})
        else:
            outputs.append(_shown(output, images))
    return {"agent_cell": number, "duration_ms": result.duration * 1000, "outputs": outputs}


def _shown(output: CodeOutput, images: list[tuple[str, str]]) -> dict[str, Any]:
    index = images.index(output.image) if output.image in images else None
    return {"type": output.kind, "text": output.text, "html": output.html, "image": index}


def run_python(arguments: dict[str, Any], info: CallInfo) -> ToolReply:
    """The ``python`` tool: run the code in the kernel, keep it in the history, answer."""
    code = arguments.get("code")
    if not isinstance(code, str) or not code.strip():
        return ToolReply(error='python needs {"code": "<Python source>"}: no code was given')
    shell = _shell()
    history = history_of(shell)
    number = history.next_number()
    result = run_code(shell, code, filename=f"<Agent[{number}]>")
    images: list[tuple[str, str]] = []
    parts = _for_model(result, images)
    took = f"{result.duration:.2f} s"
    if result.error is not None:
        earlier = "\n".join(parts)
        text = f"Agent[{number}] failed after {took}.\n"
        text += f"What it showed first:\n{_cut(earlier, TEXT_LIMIT // 2)}\n" if earlier else ""
        text += result.error.rstrip()
    else:
        body = "\n".join(parts) or "(no output, and no value)"
        text = f"Agent[{number}] ran in {took}.\n{_cut(body, TEXT_LIMIT)}"
    history.add(
        AgentCall(
            number=number,
            session=info.session,
            run_number=info.run_number,
            prompt=info.prompt,
            code=code[:CODE_CHARS],
            text=text[: 4 * SUMMARY_LIMIT],
            failed=result.error is not None,
            after_cell=int(getattr(shell, "execution_count", 0) or 0),
        )
    )
    if result.error is not None:
        return ToolReply(error=text)
    return ToolReply(text=text, images=tuple(images), details=_details(result, images, number))


def _variables(arguments: dict[str, Any], _info: CallInfo) -> ToolReply:
    return ToolReply(text=notebook_variables(_shell()))


def _cells(arguments: dict[str, Any], _info: CallInfo) -> ToolReply:
    last = arguments.get("last", 10)
    last = last if isinstance(last, int) and not isinstance(last, bool) else 10
    return ToolReply(text=notebook_cells(_shell(), last=last))


def builtin_tools() -> list[BuiltinTool]:
    """The tools every session offers: ``python`` (the agent's code, in the kernel) and the
    two read-only ones, ``notebook_variables`` and ``notebook_cells``."""
    return [
        BuiltinTool(
            "python",
            PYTHON_DESCRIPTION,
            PYTHON_TOOL,
            run_python,
            runs_code=True,
            approval_title=APPROVAL_TITLE,
            approval_message=APPROVAL_MESSAGE,
        ),
        BuiltinTool(
            VARIABLES_TOOL["name"],
            VARIABLES_TOOL["description"],
            VARIABLES_TOOL["parameters"],
            _variables,
        ),  # fmt: skip
        BuiltinTool(
            CELLS_TOOL["name"], CELLS_TOOL["description"], CELLS_TOOL["parameters"], _cells
        ),
    ]


# --------------------------------------------------------------------------- citing


def _call_text(call: AgentCall, limit: int) -> str:
    where = f" during run {call.run_number}" if call.run_number else ""
    code = _cut(call.code.rstrip("\n"), max(limit // 2, 200))
    said = _cut(call.text, max(limit - len(code) - 200, 200))
    verb = "failed" if call.failed else "ran"
    return (
        f"Agent[{call.number}]: code the agent {verb} in the kernel{where}.\n"
        f"Its source:\n{_fenced(code, 'python')}\nWhat came of it:\n{_fenced(said)}"
    )


def cite_with_agent(
    expression: str, shell: InteractiveShell | None = None, limit: int = SUMMARY_LIMIT
) -> str:
    """:func:`~atomic_jupyter.notebook.kernel_values.cite`, and ``Agent[n]`` (the agent's call
    ``n``); ``Err`` is the agent's failed call when it failed after the person's last failed
    cell (else the person's)."""
    shell = shell if shell is not None else _shell_or_none()
    text = expression.strip()
    if shell is not None and text.startswith("Agent") and "Agent" not in shell.user_ns:
        inside = text[len("Agent") :].strip()
        if inside.startswith("[") and inside.endswith("]") and inside[1:-1].strip().isdigit():
            call = history_of(shell).get(int(inside[1:-1]))
            if call is None:
                raise CitationError(f"the agent has run no code {text} in this kernel")
            return _call_text(call, limit)
    if shell is not None and text == "Err" and "Err" not in shell.user_ns:
        failed = history_of(shell).last_failure()
        person = install_error_log(shell).last()
        if failed is not None and (person is None or failed.after_cell > person.count):
            return _call_text(failed, limit)
    return cite(expression, shell, limit)


def _shell_or_none() -> InteractiveShell | None:
    from IPython import get_ipython

    shell: InteractiveShell | None = get_ipython()
    return shell


# --------------------------------------------------------------------------- cells


def cell_source_of(calls: list[AgentCall]) -> str:
    """One cell holding ``calls``' code in order, each headed by a comment naming it."""
    parts = []
    for index, call in enumerate(calls, 1):
        run = f"run {call.run_number}" if call.run_number else "a run"
        head = f"# Agent[{call.number}]: {run}, call {index} of {len(calls)}"
        if call.failed:
            head += " (it failed)"
        parts.append(f"{head}\n{call.code.rstrip()}\n")
    return "\n".join(parts).rstrip("\n")  # a cell's last line is its code's


def insert_cells(
    shell: InteractiveShell,
    session: str = "default",
    run: int | None = None,
    *,
    print_only: bool = False,
) -> str | None:
    """Put the code the agent ran during a run of ``session`` (the last run that ran any, or
    run ``run``) into a new cell below the current one (IPython's ``set_next_input``), and
    say so; ``print_only``: print the code instead. Return the cell's text (None: nothing)."""
    calls = history_of(shell).calls(session)
    if not calls:
        print(f"The agent has run no code in this kernel (session {session!r}).")
        return None
    number = run if run is not None else calls[-1].run_number
    chosen = [c for c in calls if c.run_number == number]
    if not chosen:
        runs = sorted({c.run_number for c in calls if c.run_number})
        listed = ", ".join(str(n) for n in runs) or "none"
        print(f"Run {number} ran no code in this kernel. Runs that did: {listed}.")
        return None
    text = cell_source_of(chosen)
    if print_only:
        print(text)
        return text
    shell.set_next_input(text, replace=False)
    what = f"run {number}" if number else "the last run"
    span = f"Agent[{chosen[0].number}]" + (
        f" to Agent[{chosen[-1].number}]" if len(chosen) > 1 else ""
    )
    said = f"The code of {what} ({len(chosen)} call{'s' * (len(chosen) != 1)}, {span})"
    if current_request_is_unattended(shell):
        # nbconvert, papermill: no cell is inserted, so the code goes where it can be read.
        print(f"{said}, to copy into a cell (this run inserts no cells):\n\n{text}")
    else:
        print(f"{said} is in a new cell below.")
    return text
