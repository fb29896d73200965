"""Python functions of the kernel as the agent's tools (``session.expose(fn)``).

The channel back to the kernel is the agent's own stdio, not a socket: a tool of atomic-
jupyter's kernel-tools extension (``addons/kernel_tools``) asks for an ``editor`` dialog whose
title is ``atomic-kernel-call <secret>``, with the call as JSON in its prefill, and the session
answers it itself, with the result as JSON. Nothing but the agent the session started can
write to that stdio, no port is opened, and the channel ends with the process. The secret is
made for each launch and handed to the extension in a private file it deletes once read, so
an extension loaded later cannot make calls by replaying a title; a call whose title has the
prefix but not the secret is refused. Only exposed functions run: any other name is an error
given to the model.

A call runs on the kernel's main thread, never on the reader thread, through the
presentation's main-thread queue: at once when the kernel is idle, from the wait loop while a
cell blocks in ``--wait`` or ``session.wait()``, and after the running cell when another cell
computes (the tool's card says "waiting for the kernel…" meanwhile).

Besides the exposed functions, every session offers the built-in tools the notebook layer
registers (:func:`use_builtin_tools`): ``python`` (the agent's code, run in the kernel, with
approval unless the session's ``kernel_code`` setting says ``allow``; not offered when it
says ``off``), ``notebook_variables`` and ``notebook_cells``, and, while a notebook page
is linked to the kernel, the notebook tools (reading, editing and running its cells; governed
by the ``notebook_edits`` setting). A built-in's answer may carry images (content the model
sees) and details (what its card shows), :class:`ToolReply`; a built-in that waits for the page
or for a person returns a :class:`~concurrent.futures.Future` of it, and the call is answered
when it is done (the kernel's main thread is free meanwhile).
"""

from __future__ import annotations

import json
import reprlib
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Protocol

from atomic_jupyter.errors import AtomicAgentError
from atomic_jupyter.protocol.messages import DialogRequest, EditorRequest, UIResponse
from atomic_jupyter.session.dialogs import Dialog
from atomic_jupyter.session.tool_schema import ToolSpec, coerce_arguments, tool_spec

__all__ = [
    "CALL_PREFIX",
    "KERNEL_CODE_MODES",
    "BuiltinTool",
    "CallInfo",
    "ExposedTool",
    "KernelTools",
    "ToolChannel",
    "ToolReply",
    "kernel_tools_for",
    "use_builtin_tools",
    "use_value_summary",
]

#: The title of a kernel call starts with this, then the launch's secret.
CALL_PREFIX = "atomic-kernel-call "
#: The longest error text given back to the model.
ERROR_LIMIT = 4000

#: ``kernel_code`` settings: ask before each call of ``python``, run it without asking, or
#: do not offer it.
KERNEL_CODE_MODES = ("ask", "allow", "off")
#: The settings that govern built-in tools (each one of :data:`KERNEL_CODE_MODES`).
TOOL_SETTINGS = ("kernel_code", "notebook_edits")
#: Seconds between two updates of a running built-in's card ("running in the kernel… N s").
PROGRESS_EVERY = 1.0
#: Seconds a call may wait for the kernel's main thread before its card says what it waits for
#: (an idle kernel, or a blocking wait that runs its queue, starts it within milliseconds).
WAITING_SAID_AFTER = 0.5

_summary: list[Callable[[object], str]] = []


@dataclass(frozen=True)
class ToolReply:
    """A built-in tool's answer.

    Attributes
    ----------
    text:
        What the model reads.
    images:
        ``(mime, base64)`` images the model sees too.
    details:
        What the tool's card shows (JSON; it goes through the agent as the result's details).
    error:
        The error given to the model instead (the call failed).
    """

    text: str = ""
    images: tuple[tuple[str, str], ...] = ()
    details: dict[str, Any] | None = None
    error: str | None = None


@dataclass(frozen=True)
class CallInfo:
    """Where a built-in tool's call comes from.

    Attributes
    ----------
    call_id:
        The agent's id of the tool call.
    session:
        The session's name.
    run_number:
        Which of the session's prompts raised it (1 for the first; None when unknown).
    prompt:
        That prompt, as written.
    run:
        That run (a :class:`~atomic_jupyter.session.runs.PromptRun`; None when unknown).
    mode:
        The value of the setting that governs the tool (``"ask"``, ``"allow"``; ``""`` for
        none).
    open_dialog:
        ``open_dialog(request, answer) -> Dialog``: ask the person something in the call's card
        (policies and rules decide it first); the answer goes to ``answer``, not to the agent.
    preview:
        ``preview(details)``: what the card shows of the call while it runs.
    on_main:
        ``on_main(work)``: run ``work`` on the kernel's main thread (from another thread).
    """

    call_id: str
    session: str
    run_number: int | None = None
    prompt: str = ""
    run: Any = None
    mode: str = ""
    open_dialog: Callable[[DialogRequest, Callable[[UIResponse], Any]], Dialog] | None = None
    preview: Callable[[dict[str, Any]], None] | None = None
    on_main: Callable[[Callable[[], None]], None] | None = None


@dataclass(frozen=True)
class BuiltinTool:
    """A tool every session offers, run on the kernel's main thread.

    Attributes
    ----------
    name, description, parameters:
        As the agent registers it (``parameters``: a JSON Schema object).
    run:
        ``run(arguments, info) -> ToolReply``, or a future of it when the answer comes later
        (on the main thread; may raise ``KeyboardInterrupt``, which is answered as an error).
    runs_code:
        Whether it runs the agent's code in this thread: governed by ``kernel_code`` and asked
        for first (``setting`` and ``asks_first``), and its card counts the seconds while it
        runs.
    approval_title, approval_message:
        The approval dialog's title and message (``asks_first``).
    setting:
        The session setting that governs it (:data:`TOOL_SETTINGS`): not offered when that
        setting is ``"off"``; None: always offered.
    asks_first:
        Whether the agent asks the person before each call (a confirm) when ``asks_by`` (by
        default ``setting``) is ``"ask"``.
    asks_by:
        The setting whose ``"ask"`` makes the agent ask first (running cells: ``kernel_code``),
        and whose value a call's :attr:`CallInfo.mode` carries (a tool that asks in the kernel
        itself reads it there).
    also_needs:
        Another setting that must not be ``"off"`` for the tool to be offered.
    available:
        Whether it can be offered now (the notebook tools: while a notebook page is linked);
        a call when it is not is refused in words.
    changes:
        Whether it can change files or the kernel (code it runs, cells it edits or runs): off
        while another extension has made the agent read-only (``edit`` and ``write`` off),
        unless the ``kernel_code_when_read_only`` setting keeps it on.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    run: Callable[[dict[str, Any], CallInfo], ToolReply | Future[ToolReply]] = field(repr=False)
    runs_code: bool = False
    approval_title: str = ""
    approval_message: str = ""
    setting: str | None = None
    asks_first: bool = False
    asks_by: str | None = None
    also_needs: str | None = None
    available: Callable[[], str | None] = field(default=lambda: None, repr=False)
    changes: bool = False

    @property
    def governed_by(self) -> str | None:
        """The setting that governs the tool (``kernel_code`` for code it runs)."""
        return "kernel_code" if self.runs_code else self.setting

    def to_json(self, mode: str, when_read_only: bool = False) -> dict[str, Any]:
        """What the extension registers, for the value of its setting, ``mode``
        (``when_read_only``: the ``kernel_code_when_read_only`` setting)."""
        asks = self.runs_code or self.asks_first
        spec: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
            "approval": asks and mode == "ask",
            "builtin": True,
        }
        if self.approval_title:
            spec["approvalTitle"] = self.approval_title
        if self.approval_message:
            spec["approvalMessage"] = self.approval_message
        if (self.changes or self.runs_code) and not when_read_only:
            spec["followsWrite"] = True
        return spec


_builtins: list[BuiltinTool] = []


def use_builtin_tools(tools: Sequence[BuiltinTool]) -> None:
    """Offer ``tools`` in every session made from now on (the notebook registers its own)."""
    _builtins[:] = list(tools)


def use_value_summary(summarize: Callable[[object], str] | None) -> None:
    """Give results to the model as ``summarize(value)`` (the notebook registers its bounded
    summaries; without one, a shortened ``repr``)."""
    _summary[:] = [summarize] if summarize is not None else []


def _summarize(value: object) -> str:
    if _summary:
        return _summary[0](value)
    if isinstance(value, str):
        return value if len(value) <= ERROR_LIMIT else value[:ERROR_LIMIT] + " …"
    shorter = reprlib.Repr()
    shorter.maxstring = shorter.maxother = ERROR_LIMIT
    return shorter.repr(value)


class ToolChannel(Protocol):
    """What the kernel-tools addon gives the session: the launch's secret, and a way to tell
    the agent which tools there are."""

    @property
    def secret(self) -> str | None:
        """The current launch's secret (None before a launch)."""

    def publish(self, specs: list[dict[str, Any]]) -> None:
        """Make exactly these tools the agent's (now if it runs, else at its next start)."""


@dataclass(frozen=True)
class ExposedTool:
    """A function the agent may call.

    Attributes
    ----------
    function:
        The Python function.
    spec:
        Its name, description and JSON schema.
    approval:
        Whether each call waits for the person's yes (a confirm dialog in the tool's card).
    """

    function: Callable[..., Any]
    spec: ToolSpec
    approval: bool

    def to_json(self) -> dict[str, Any]:
        """What the extension registers."""
        return {**self.spec.to_json(), "approval": self.approval}


class KernelTools:
    """The functions exposed to the agent, and their calls (a part of the session).

    Parameters
    ----------
    channel:
        Gives the kernel-tools addon (None when the addon is not there).
    answer:
        Sends an answer to the agent.
    run_on_main:
        Runs work on the kernel's main thread (None: there is no kernel, calls are refused).
    wake:
        Wakes a blocking wait so that it runs queued work.
    diagnose:
        Says why a call was refused.
    kernel_code:
        The ``kernel_code`` mode (:data:`KERNEL_CODE_MODES`).
    notebook_edits:
        The ``notebook_edits`` mode (:data:`KERNEL_CODE_MODES`).
    when_read_only:
        The ``kernel_code_when_read_only`` setting: keep the tools that change files or the
        kernel on while the agent is read-only.
    open_dialog, preview:
        As :class:`CallInfo` has them, by the call's id.
    call_info:
        Where a call comes from, by its tool call id.
    accepting:
        Whether the session takes calls now (not while it stops or after it stopped).
    progress:
        ``progress(call_id, text)`` shows what a running call does in its card.
    while_running:
        ``while_running(tick)`` calls ``tick`` every :data:`PROGRESS_EVERY` seconds from another
        thread and renders what is shown, until the function it returns is called (None: no
        view to keep current).
    waiting_for:
        What a call that has not started :data:`WAITING_SAID_AFTER` seconds after it came
        waits for, in words for its card ("waiting for cell [7] to finish").
    """

    def __init__(
        self,
        *,
        channel: Callable[[], ToolChannel | None],
        answer: Callable[[UIResponse], Any],
        run_on_main: Callable[[], Callable[[Callable[[], None]], None] | None],
        wake: Callable[[], None],
        diagnose: Callable[[str], None],
        kernel_code: str = "ask",
        notebook_edits: str = "ask",
        when_read_only: bool = False,
        call_info: Callable[[str], CallInfo] | None = None,
        accepting: Callable[[], bool] = lambda: True,
        progress: Callable[[str, str], None] = lambda _id, _text: None,
        while_running: Callable[[Callable[[], None]], Callable[[], None]] | None = None,
        waiting_for: Callable[[], str] = lambda: "waiting for the kernel…",
    ) -> None:
        modes = {"kernel_code": kernel_code, "notebook_edits": notebook_edits}
        for setting, mode in modes.items():
            if mode not in KERNEL_CODE_MODES:
                raise ValueError(f"{setting} must be one of {', '.join(KERNEL_CODE_MODES)}")
        self._channel = channel
        self._answer = answer
        self._run_on_main = run_on_main
        self._waiting_for = waiting_for
        self._wake = wake
        self._diagnose = diagnose
        self._lock = threading.Lock()
        self._tools: dict[str, ExposedTool] = {}
        self.kernel_code = kernel_code
        self.notebook_edits = notebook_edits
        self.when_read_only = when_read_only
        self._modes = modes
        self._builtins = {
            tool.name: tool
            for tool in _builtins
            if self.mode_of(tool) != "off"
            and (tool.also_needs is None or modes.get(tool.also_needs) != "off")
        }
        self._call_info = call_info or (lambda call_id: CallInfo(call_id, ""))
        self._accepting = accepting
        self._progress = progress
        self._while_running = while_running

    def mode_of(self, tool: BuiltinTool) -> str:
        """The value of the setting that governs ``tool`` (``""`` for none)."""
        setting = tool.governed_by
        return self._modes.get(setting, "ask") if setting is not None else ""

    def unavailable(self) -> dict[str, str]:
        """The built-in tools this session would offer but cannot now, and why."""
        found = {name: tool.available() for name, tool in self._builtins.items()}
        return {name: why for name, why in found.items() if why is not None}

    # ------------------------------------------------------------------ exposing

    @property
    def exposed(self) -> dict[str, ExposedTool]:
        """The exposed tools, by name."""
        with self._lock:
            return dict(self._tools)

    def expose(
        self,
        function: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        side_effects: bool = False,
        approval: bool | None = None,
    ) -> None:
        """Make ``function`` a tool of the agent, now and after every restart.

        Parameters
        ----------
        function:
            A function with a type hint on every parameter (they make the tool's JSON
            schema); its docstring's first paragraph describes the tool.
        name, description:
            Instead of the function's own.
        side_effects:
            Whether the function changes anything (files, the kernel's state, the world).
            Such a function asks the person before each call; a pure one does not.
        approval:
            Ask (True) or not (False) whatever ``side_effects`` says.

        Raises
        ------
        TypeError
            When a parameter has no type hint or one a JSON schema cannot say.
        ValueError
            When the name is not a tool name, or is a built-in tool's.
        """
        spec = tool_spec(function, name=name, description=description)
        if spec.name in self._builtins:
            raise ValueError(f"{spec.name!r} is a built-in tool of every session: use another name")
        tool = ExposedTool(function, spec, side_effects if approval is None else approval)
        with self._lock:
            self._tools[spec.name] = tool
        self._publish()

    def specs(self) -> list[dict[str, Any]]:
        """Every tool offered, as the extension registers them: built-ins first."""
        builtins = [
            tool.to_json(
                self._modes.get(tool.asks_by, "ask") if tool.asks_by else self.mode_of(tool),
                self.when_read_only,
            )
            for tool in self._builtins.values()
            if tool.available() is None
        ]
        return builtins + [tool.to_json() for tool in self.exposed.values()]

    def offer_again(self) -> None:
        """Tell the agent the tools offered now (a built-in became available or went)."""
        if self._builtins and self._channel() is not None:
            self._publish()

    def offer_builtins(self) -> None:
        """Write the tools for the agent's next start (no agent runs yet; nothing to do
        without the kernel-tools addon or with no built-in tools)."""
        if self._builtins and self._channel() is not None:
            self._publish()

    def unexpose(self, name: str) -> None:
        """Take the tool ``name`` away from the agent.

        Raises
        ------
        KeyError
            When no tool of that name is exposed.
        """
        with self._lock:
            if name not in self._tools:
                raise KeyError(f"no kernel tool {name!r} is exposed")
            del self._tools[name]
        self._publish()

    def _publish(self) -> None:
        channel = self._channel()
        if channel is None:
            raise AtomicAgentError("kernel tools need atomic-jupyter's kernel-tools addon")
        channel.publish(self.specs())

    # ------------------------------------------------------------------ calls

    def claims(self, request: DialogRequest) -> bool:
        """Whether ``request`` is a kernel call (then it is handled here, on the reader
        thread: the call is queued for the main thread; a forged one is refused)."""
        if not isinstance(request, EditorRequest) or not request.title.startswith(CALL_PREFIX):
            return False
        channel = self._channel()
        secret = channel.secret if channel is not None else None
        if not secret or request.title != CALL_PREFIX + secret:
            self._diagnose("refused a kernel call that does not carry this session's secret")
            self._reply(request.id, error="refused: the call does not carry the session's secret")
            return True
        try:
            call = json.loads(request.prefill or "")
            name, arguments = call["tool"], call.get("args") or {}
            if not isinstance(name, str) or not isinstance(arguments, dict):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            self._reply(request.id, error="refused: the call is not {tool, args} as JSON")
            return True
        builtin = self._builtins.get(name)
        tool = self.exposed.get(name)
        if tool is None and builtin is None:
            self._reply(request.id, error=f"{name!r} is not a function the notebook exposed")
            return True
        schedule = self._run_on_main()
        if schedule is None:
            self._reply(request.id, error="there is no notebook kernel to run it in")
            return True
        if not self._accepting():
            self._reply(request.id, error="refused: the session is stopping; nothing ran")
            return True
        why = builtin.available() if builtin is not None else None
        if why is not None:
            self._reply(request.id, error=f"{name} cannot be used now: {why}")
            return True
        call_id = str(call.get("id") or "")
        started = threading.Event()
        work: Callable[[], None]
        if builtin is not None:
            info = self._call_info(call_id)
            mode = self._modes.get(builtin.asks_by, "ask") if builtin.asks_by else None
            info = replace(info, mode=mode or self.mode_of(builtin), on_main=schedule)
            work = partial(self._run_builtin, request.id, builtin, arguments, info)
        else:
            assert tool is not None
            work = partial(self._run, request.id, tool, arguments)

        def start() -> None:
            started.set()
            work()

        schedule(start)
        self._say_waiting(started, call_id)
        self._wake()
        return True

    def _say_waiting(self, started: threading.Event, call_id: str) -> None:
        """If the call has not started :data:`WAITING_SAID_AFTER` seconds from now (a person's
        cell holds the main thread), its card says what it waits for."""
        if started.is_set() or not call_id:
            return

        def say() -> None:
            if not started.is_set():
                self._progress(call_id, self._waiting_for())

        timer = threading.Timer(WAITING_SAID_AFTER, say)
        timer.name = "atomic-kernel-call-waiting"
        timer.daemon = True
        timer.start()

    def _run_builtin(
        self, request_id: str, tool: BuiltinTool, arguments: dict[str, Any], info: CallInfo
    ) -> None:
        """On the main thread: run a built-in tool and answer with what came of it."""
        if not self._accepting():  # stopped while the call waited for the kernel
            self._reply(request_id, error="refused: the session is stopping; nothing ran")
            return
        stop = self._show_running(tool, info.call_id)
        try:
            reply = tool.run(arguments, info)
        except KeyboardInterrupt:
            reply = ToolReply(error="KeyboardInterrupt: the kernel was interrupted")
        except Exception as exc:  # a bug of ours: the model is told, the kernel goes on
            reply = ToolReply(error=f"{tool.name} failed: {type(exc).__name__}: {exc}")
        finally:
            stop()
        if isinstance(reply, Future):  # answered when it is done (the page, a person)
            reply.add_done_callback(lambda done: self._answer_later(request_id, tool, done))
            return
        self._answer_builtin(request_id, reply)

    def _answer_later(self, request_id: str, tool: BuiltinTool, done: Future[ToolReply]) -> None:
        try:
            reply = done.result()
        except Exception as exc:  # a bug of ours, or the call was given up
            reply = ToolReply(error=f"{tool.name} failed: {type(exc).__name__}: {exc}")
        self._answer_builtin(request_id, reply)

    def _answer_builtin(self, request_id: str, reply: ToolReply) -> None:
        if reply.error is not None:
            self._reply(request_id, error=reply.error[-ERROR_LIMIT * 4 :])
            return
        body: dict[str, Any] = {"ok": True, "text": reply.text}
        if reply.images:
            body["images"] = [{"mimeType": m, "data": d} for m, d in reply.images]
        if reply.details is not None:
            body["details"] = reply.details
        self._send(request_id, body)

    def _show_running(self, tool: BuiltinTool, call_id: str) -> Callable[[], None]:
        """Say in the card that the code runs, and count the seconds from another thread."""
        if not tool.runs_code or not call_id:
            return lambda: None
        started = time.monotonic()
        self._progress(call_id, "running in the kernel…")
        if self._while_running is None:
            return lambda: None

        def tick() -> None:
            seconds = int(time.monotonic() - started)
            self._progress(call_id, f"running in the kernel… {seconds} s")

        return self._while_running(tick)

    def _run(self, request_id: str, tool: ExposedTool, arguments: dict[str, Any]) -> None:
        """On the main thread: call the function and answer with its result or its error."""
        try:
            kwargs = coerce_arguments(tool.spec, tool.function, arguments)
        except (ValueError, TypeError) as exc:
            self._reply(request_id, error=f"bad arguments for {tool.spec.name}: {exc}")
            return
        try:
            result = tool.function(**kwargs)
        except BaseException as exc:  # the tool's error, for the model; the kernel goes on
            frames = exc.__traceback__.tb_next if exc.__traceback__ is not None else None
            lines = traceback.format_exception(type(exc), exc, frames)  # not this frame
            text = "".join(lines)
            self._reply(request_id, error=text[-ERROR_LIMIT:])
            if not isinstance(exc, Exception):
                raise  # an interrupt of the kernel: answered, then let through
            return
        try:
            summary = _summarize(result)
        except Exception as exc:
            summary = f"<the result could not be summarised: {type(exc).__name__}: {exc}>"
        self._reply(request_id, text=summary)

    def _reply(self, request_id: str, *, text: str | None = None, error: str | None = None) -> None:
        body = {"ok": True, "text": text} if error is None else {"ok": False, "error": error}
        self._send(request_id, body)

    def _send(self, request_id: str, body: dict[str, Any]) -> None:
        try:
            self._answer(UIResponse.value_of(request_id, json.dumps(body)))
        except AtomicAgentError as exc:  # the agent is gone: nothing to answer
            self._diagnose(f"could not give a kernel call its answer: {exc}")


def kernel_tools_for(session: Any) -> KernelTools:
    """The kernel tools of ``session`` (an :class:`~atomic_jupyter.session.session.
    AgentSession`), wired to its addon, its commands, its presentation, its runs and its wait;
    the built-in tools are written for its first start."""

    def run_on_main() -> Callable[[Callable[[], None]], None] | None:
        presentation = session._presentation  # never made here: this runs on the reader thread
        return presentation.run_on_main if presentation is not None else None

    def run_of(call_id: str) -> Any:
        for run in reversed(session.tracker.runs):
            if run.transcript.has_tool(call_id):
                return run
        return None

    def open_dialog(request: DialogRequest, answer: Callable[[UIResponse], Any]) -> Dialog:
        dialog: Dialog = session._inbox.dialog(request, answer)
        return dialog

    def preview(call_id: str, details: dict[str, Any]) -> None:
        run = run_of(call_id)
        if run is not None and run.transcript.show_details(call_id, details):
            session.tracker.changed.emit(run, "now")

    def call_info(call_id: str) -> CallInfo:
        run = run_of(call_id) if call_id else None
        shown = (lambda details: preview(call_id, details)) if call_id else None
        if run is None:
            return CallInfo(call_id, session.name, open_dialog=open_dialog, preview=shown)
        return CallInfo(
            call_id,
            session.name,
            run.number or None,
            run.message,
            run=run,
            open_dialog=open_dialog,
            preview=shown,
        )

    def progress(call_id: str, text: str) -> None:
        run = run_of(call_id)
        if run is not None and run.transcript.show_progress(call_id, text):
            session.tracker.changed.emit(run, "stream")

    def waiting_for() -> str:
        presentation = session._presentation  # never made here: this runs on a timer's thread
        if presentation is None:
            return "waiting for the kernel…"
        text: str = presentation.waiting_for()
        return text

    def while_running(tick: Callable[[], None]) -> Callable[[], None]:
        presentation = session._presentation
        if presentation is None:
            return lambda: None
        result: Callable[[], None] = presentation.while_running(tick, PROGRESS_EVERY)
        return result

    mode = session.spec.kernel_code or getattr(session.config, "kernel_code", None) or "ask"
    edits = session.spec.notebook_edits or getattr(session.config, "notebook_edits", None) or "ask"
    tools = KernelTools(
        channel=lambda: session.addon("kernel-tools"),
        answer=session._commands.answer,
        run_on_main=run_on_main,
        wake=session._wake.ping,
        diagnose=session.extension_ui.diagnose,
        kernel_code=mode,
        notebook_edits=edits,
        when_read_only=bool(getattr(session.config, "kernel_code_when_read_only", False)),
        call_info=call_info,
        accepting=lambda: session._commands.accepting() and not session._lifecycle.stop_requested,
        progress=progress,
        while_running=while_running,
        waiting_for=waiting_for,
    )
    tools.offer_builtins()
    return tools
