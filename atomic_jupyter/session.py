"""AgentSession: one running agent, its commands, its dialogs and its extension UI state.

The session owns an :class:`~atomic_jupyter.process.AgentProcess` and turns its messages
into state: command responses matched to requests by id, :class:`~atomic_jupyter.dialogs.Dialog`
objects for dialog requests, and plain attributes for what the fire-and-forget methods set
(title, status, widgets, editor text, notifications). It holds no widgets itself: when a
view is attached (the panel, a prompt's output area), each change is handed to the view on
the kernel's event loop through a :class:`~atomic_jupyter.dispatch.UiDispatcher`.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from .config import AtomicAgent
from .dialogs import Dialog
from .dispatch import UiDispatcher
from .errors import (
    AgentNotRunningError,
    AgentStartError,
    CommandError,
    CommandTimeoutError,
)
from .framing import Diagnostic
from .launch import LaunchSpec, build_argv, resolve_command
from .messages import (
    AgentEvent,
    DialogRequest,
    Message,
    NotifyRequest,
    Response,
    SetEditorTextRequest,
    SetStatusRequest,
    SetTitleRequest,
    SetWidgetRequest,
    UIRequest,
    UIResponse,
    UnknownMessage,
    UnknownUIRequest,
)
from .process import AgentProcess
from .runs import PromptRun

if TYPE_CHECKING:
    from .widgets.panel import SessionView

__all__ = ["AgentSession"]

#: How many notifications, diagnostics and events a session keeps (the newest).
NOTIFICATIONS_KEPT = 500
DIAGNOSTICS_KEPT = 100
EVENTS_KEPT = 200
#: Dialogs kept besides the pending ones (the newest).
DIALOGS_KEPT = 1000


def _now() -> float:
    return time.monotonic()


class _PendingCommand:
    def __init__(
        self, command: str, on_response: Callable[[Response | None, str | None], None] | None
    ) -> None:
        self.command = command
        self.response: Response | None = None
        self.error: str | None = None
        self.done = threading.Event()
        self.on_response = on_response

    def settle(self, response: Response | None, error: str | None) -> None:
        self.response, self.error = response, error
        self.done.set()
        if self.on_response is not None:
            self.on_response(response, error)


class AgentSession:
    """One agent process and everything the notebook knows about it.

    Create sessions with :func:`atomic_jupyter.start` or ``%atomic_agent start``; a session
    made directly is started with :meth:`start`.

    Parameters
    ----------
    name:
        The session's name (``"default"`` unless given).
    spec:
        How to launch the agent.
    config:
        Settings (:class:`~atomic_jupyter.config.AtomicAgent`); defaults when None.

    Attributes
    ----------
    name:
        The session's name.
    argv:
        The agent's full command line.
    state:
        ``"new"``, ``"starting"``, ``"idle"``, ``"working"``, ``"exited"`` or ``"stopped"``.
    """

    def __init__(
        self,
        name: str = "default",
        spec: LaunchSpec | None = None,
        *,
        config: AtomicAgent | None = None,
    ) -> None:
        self.name = name
        self.spec = spec or LaunchSpec()
        self.config = config or AtomicAgent()
        resolved = resolve_command(self.spec.command, self.config.command or None)
        self.command_source = resolved.source
        self.argv = build_argv(resolved.argv, self.spec)
        self.state = "new"
        self._lock = threading.RLock()
        self._ui = UiDispatcher()
        self._view: SessionView | None = None
        self._process: AgentProcess | None = None
        self._ids = itertools.count(1)
        self._pending: dict[str, _PendingCommand] = {}
        self._abandoned: deque[str] = deque(maxlen=100)
        self._exit_code: int | None = None
        self._stop_requested = False
        self._ticker: threading.Thread | None = None
        self._ticker_wake = threading.Event()
        self._reset_ui_state()
        self._notifications: list[dict[str, str]] = []
        self._notification_total = 0
        self._dialogs: list[Dialog] = []
        self._dialog_ids: set[str] = set()
        self._runs: list[PromptRun] = []
        self._dialog_host: PromptRun | None = None
        self.diagnostics: deque[str] = deque(maxlen=DIAGNOSTICS_KEPT)
        self.diagnostic_count = 0
        self.events: deque[AgentEvent] = deque(maxlen=EVENTS_KEPT)
        self._event_listeners: list[Callable[[AgentEvent], None]] = []

    def _reset_ui_state(self) -> None:
        self._title = ""
        self._status: dict[str, str] = {}
        self._widgets: dict[str, dict[str, Any]] = {}
        self._editor_text = ""

    def __repr__(self) -> str:
        return f"<AgentSession {self.name!r} {self.state} pid={self.pid}>"

    # ------------------------------------------------------------------ public state

    @property
    def title(self) -> str:
        """The title the extensions set (``setTitle``)."""
        return self._title

    @property
    def status(self) -> dict[str, str]:
        """The status bar: status key -> text (``setStatus``)."""
        with self._lock:
            return dict(self._status)

    @property
    def widgets(self) -> dict[str, dict[str, Any]]:
        """Widget blocks: key -> ``{"lines": [...], "placement": "aboveEditor" | "belowEditor"}``."""
        with self._lock:
            return {
                k: {"lines": list(v["lines"]), "placement": v["placement"]}
                for k, v in self._widgets.items()
            }

    @property
    def editor_text(self) -> str:
        """The text of the session's editor (``set_editor_text``, or typed in the panel)."""
        return self._editor_text

    @property
    def notifications(self) -> list[dict[str, str]]:
        """Notifications, oldest first: ``{"message": ..., "type": "info" | "warning" | "error"}``."""
        with self._lock:
            return [dict(n) for n in self._notifications]

    def _notifications_since(self, seen: int) -> tuple[int, list[dict[str, str]]]:
        """The total count of notifications, and those after the first ``seen`` (as kept)."""
        with self._lock:
            new = self._notification_total - seen
            return self._notification_total, [
                dict(n) for n in self._notifications[-new:]
            ] if new > 0 else []

    @property
    def dialogs(self) -> list[Dialog]:
        """Every dialog seen (the newest thousand and all pending ones), oldest first."""
        with self._lock:
            return list(self._dialogs)

    @property
    def pending_dialogs(self) -> list[Dialog]:
        """The dialogs still waiting for an answer, oldest first."""
        with self._lock:
            return [d for d in self._dialogs if d.pending]

    @property
    def runs(self) -> list[PromptRun]:
        """Prompts sent in this session, oldest first."""
        with self._lock:
            return list(self._runs)

    @property
    def alive(self) -> bool:
        """Whether the agent process is running."""
        return (
            self._process is not None
            and self._process.alive
            and self.state not in ("exited", "stopped")
        )

    @property
    def returncode(self) -> int | None:
        """The agent's exit code once it has exited, else None."""
        return self._exit_code

    @property
    def pid(self) -> int | None:
        """The agent's process id."""
        return self._process.pid if self._process else None

    @property
    def stderr_tail(self) -> str:
        """The last part of what the agent wrote on stderr."""
        return self._process.stderr_tail() if self._process else ""

    @property
    def panel(self) -> Any:
        """The session's panel widget (title, status, widget lines, editor, notifications)."""
        return self._ensure_view().panel

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.panel)

    # ------------------------------------------------------------------ lifecycle

    def start(self, timeout: float | None = None) -> AgentSession:
        """Start the agent and wait until it answers its first command.

        Raises
        ------
        AgentStartError
            When the executable is missing, or the agent exits or stays silent at start-up;
            the message names the command and shows the agent's stderr.
        """
        if self.alive:
            raise AgentStartError(f"session {self.name!r} is already running (pid {self.pid})")
        self._ui.capture_loop()
        cwd = self.spec.cwd
        if cwd is not None:
            cwd = os.path.abspath(os.path.expanduser(cwd))
            if not os.path.isdir(cwd):
                raise AgentStartError(f"the working directory {cwd!r} does not exist")
        env = dict(os.environ)
        env.update({str(k): str(v) for k, v in self.spec.env.items()})
        with self._lock:
            self.state = "starting"
            self._exit_code = None
            self._stop_requested = False
            self._reset_ui_state()
            self._dialog_host = None
        process = AgentProcess(
            self.argv,
            on_message=self._on_message,
            on_diagnostic=self._on_diagnostic,
            on_exit=self._on_exit,
            cwd=cwd,
            env=env,
        )
        self._process = process
        self._refresh("title", "status", "widgets", "editor", "state")
        try:
            process.start()
        except AgentStartError:
            with self._lock:
                self.state = "exited"
            self._process = None
            self._refresh("state")
            raise
        timeout = self.config.startup_timeout if timeout is None else timeout
        try:
            self.request({"type": "get_state"}, timeout=timeout)
        except (AgentNotRunningError, CommandTimeoutError, CommandError) as exc:
            self._process.stop()
            reason = (
                f"exited during start-up with code {self._exit_code}"
                if self._exit_code is not None and not isinstance(exc, CommandTimeoutError)
                else f"did not become ready: {exc}"
            )
            tail = self.stderr_tail.strip()
            raise AgentStartError(
                f"the agent {reason}.\nCommand: {self.command_line}\n"
                + (f"Its stderr:\n{tail}" if tail else "It wrote nothing on stderr.")
            ) from None
        with self._lock:
            if self.state == "starting":
                self.state = "idle"
        self._refresh("state")
        return self

    @property
    def command_line(self) -> str:
        """The agent's command line, quoted for a shell."""
        import shlex

        return shlex.join(self.argv)

    def stop(self, timeout: float = 5.0) -> int | None:
        """End the agent (stdin closed, then SIGTERM, then SIGKILL); return its exit code."""
        process = self._process
        if process is None:
            return None
        with self._lock:
            self._stop_requested = True
        process.stop()
        process.wait_exit(timeout)
        return self._exit_code

    def restart(self, timeout: float | None = None) -> AgentSession:
        """Stop the agent if it runs, then start it again with the same options."""
        self.stop()
        return self.start(timeout=timeout)

    # ------------------------------------------------------------------ commands

    def _next_id(self) -> str:
        return f"aj-{next(self._ids)}"

    def _not_running_error(self) -> AgentNotRunningError:
        if self.state == "stopped":
            what = "was stopped"
        elif self._exit_code is not None:
            what = f"exited with code {self._exit_code}"
        else:
            what = "is not running"
        return AgentNotRunningError(
            f"the agent of session {self.name!r} {what}; restart it with "
            f"`%atomic_agent restart{'' if self.name == 'default' else ' --name ' + self.name}` "
            "or session.restart()"
        )

    def _send_command(
        self,
        command: Mapping[str, Any],
        on_response: Callable[[Response | None, str | None], None] | None = None,
    ) -> tuple[str, _PendingCommand]:
        if not isinstance(command, Mapping) or not isinstance(command.get("type"), str):
            raise TypeError(
                'a command is a dict with a string "type", such as {"type": "get_state"}'
            )
        process = self._process
        if process is None or not self.alive and self.state != "starting":
            raise self._not_running_error()
        payload = dict(command)
        cid = str(payload.get("id") or self._next_id())
        payload["id"] = cid
        pending = _PendingCommand(payload["type"], on_response)
        with self._lock:
            if cid in self._pending:
                raise ValueError(f"a command with id {cid!r} is already waiting for its answer")
            self._pending[cid] = pending
        try:
            process.send(payload)
        except AgentNotRunningError:
            with self._lock:
                self._pending.pop(cid, None)
            raise self._not_running_error() from None
        return cid, pending

    def request(
        self, command: Mapping[str, Any] | str, timeout: float | None = None, **fields: Any
    ) -> Response:
        """Send a command and wait for the agent's response.

        Parameters
        ----------
        command:
            The command as a dict (``{"type": "get_state"}``), or just its type with the
            other fields as keyword arguments (``request("set_session_name", name="x")``).
        timeout:
            Seconds to wait (``AtomicAgent.request_timeout`` when None).

        Returns
        -------
        Response
            The response; its ``data`` holds the result.

        Raises
        ------
        CommandError
            When the agent answers ``success: false`` (carries the agent's ``error``).
        CommandTimeoutError
            When no answer comes in time.
        AgentNotRunningError
            When the agent is not running, or exits before answering.
        """
        if isinstance(command, str):
            command = {"type": command, **fields}
        elif fields:
            command = {**command, **fields}
        timeout = self.config.request_timeout if timeout is None else timeout
        cid, pending = self._send_command(command)
        if not pending.done.wait(timeout):
            with self._lock:
                self._pending.pop(cid, None)
                self._abandoned.append(cid)
            raise CommandTimeoutError(
                f"the agent did not answer {pending.command!r} within {timeout:g} s "
                "(a dialog waiting for an answer can hold it up)"
            )
        if pending.response is None:
            raise self._not_running_error()
        if not pending.response.success:
            raise CommandError(pending.command, pending.response.error or "no reason given")
        return pending.response

    def prompt(self, text: str, *, display: bool = True, **fields: Any) -> PromptRun:
        """Send a prompt (or an extension command such as ``"/name"``) and return at once.

        Dialogs the agent raises from now on appear in the returned run's output area,
        which is displayed in the current cell when ``display`` is true and IPython runs.
        Extra ``fields`` go into the ``prompt`` command (e.g. ``streamingBehavior``).
        """
        if not isinstance(text, str):
            raise TypeError(f"a prompt is a str, not {type(text).__name__}")
        self._ui.capture_loop()
        run = PromptRun("", text)
        self._attach_run_widget(run)

        def settle(response: Response | None, error: str | None) -> None:
            if response is not None and not response.success:
                error = f"the agent refused the prompt: {response.error or 'no reason given'}"
            run._settle(response, error)
            self._refresh(("run", run.id))

        with self._lock:
            cid, _ = self._send_command(
                {"type": "prompt", "message": text, **fields}, on_response=settle
            )
            run.id = cid
            self._runs.append(run)
            del self._runs[:-100]
            self._dialog_host = run
        if display:
            _display_if_ipython(run.widget)
        return run

    # ------------------------------------------------------------------ incoming

    def on_event(self, callback: Callable[[AgentEvent], None]) -> None:
        """Call ``callback(event)`` on the reader thread for every agent event."""
        self._event_listeners.append(callback)

    def _on_message(self, message: Message) -> None:
        if isinstance(message, Response):
            self._on_response(message)
        elif isinstance(message, UIRequest):
            self._on_ui_request(message)
        elif isinstance(message, AgentEvent):
            self._on_event(message)
        elif isinstance(message, UnknownMessage):
            self._diagnose(
                f"ignored a message that is not an object with a type: {_excerpt(message.value)}"
            )

    def _on_diagnostic(self, diagnostic: Diagnostic) -> None:
        self._diagnose(
            f"ignored a line that is {diagnostic.reason}: {diagnostic.excerpt!r} ({diagnostic.length} bytes)"
        )

    def _diagnose(self, text: str) -> None:
        with self._lock:
            self.diagnostics.append(text)
            self.diagnostic_count += 1
        self._refresh("diagnostics")

    def _on_response(self, response: Response) -> None:
        with self._lock:
            if response.id is not None:
                pending = self._pending.pop(response.id, None)
            else:
                pending = self._pop_unidentified(response)
            abandoned = response.id in self._abandoned
        if pending is not None:
            pending.settle(response, None)
        elif abandoned:
            self._diagnose(
                f"a late answer to {response.command!r} (id {response.id}) came after its timeout"
            )
        else:
            self._diagnose(
                f"a response nobody asked for: {response.command!r} id={response.id!r} "
                f"success={response.success}"
                + (f" error={response.error!r}" if response.error else "")
            )

    def _pop_unidentified(self, response: Response) -> _PendingCommand | None:
        """The command a response without ``id`` answers, if one can be told.

        The agent drops the id when it cannot read a command: an unknown ``type`` is answered
        with ``command`` set to that type, a line it cannot parse with ``command: "parse"``.
        Such a failure goes to the oldest command waiting of that type (or, for ``parse``, the
        oldest command waiting), so the caller gets the agent's error instead of a timeout.
        """
        if response.success:
            return None
        for cid, pending in self._pending.items():
            if response.command in (pending.command, "parse"):
                return self._pending.pop(cid)
        return None

    def _on_ui_request(self, request: UIRequest) -> None:
        if isinstance(request, DialogRequest):
            self._on_dialog_request(request)
            return
        with self._lock:
            if isinstance(request, NotifyRequest):
                self._notifications.append(
                    {"message": request.message, "type": request.notify_type}
                )
                self._notification_total += 1
                del self._notifications[:-NOTIFICATIONS_KEPT]
                part = "notifications"
            elif isinstance(request, SetStatusRequest):
                if request.text is None:
                    self._status.pop(request.key, None)
                else:
                    self._status[request.key] = request.text
                part = "status"
            elif isinstance(request, SetWidgetRequest):
                if request.lines is None:
                    self._widgets.pop(request.key, None)
                else:
                    self._widgets[request.key] = {
                        "lines": list(request.lines),
                        "placement": request.placement,
                    }
                part = "widgets"
            elif isinstance(request, SetTitleRequest):
                self._title = request.title
                part = "title"
            elif isinstance(request, SetEditorTextRequest):
                self._editor_text = request.text
                part = "editor"
            else:
                assert isinstance(request, UnknownUIRequest)
                part = ""
        if part:
            self._refresh(part)
        else:
            self._diagnose(
                f"ignored an extension UI request with an unknown method {request.to_dict()['method']!r}"
            )

    def _on_dialog_request(self, request: DialogRequest) -> None:
        dialog = Dialog(request, request.to_dict(), self._send_ui_response)
        dialog._set_widget_factory(lambda d: self._ensure_view().build_dialog(d))
        with self._lock:
            if request.id in self._dialog_ids:
                duplicate = True
            else:
                duplicate = False
                self._dialog_ids.add(request.id)
                self._dialogs.append(dialog)
                self._trim_dialogs()
                host = self._dialog_host
                exited = not self.alive and self.state != "starting"
        if duplicate:
            self._diagnose(
                f"ignored a second {request.method} dialog with the same id {request.id!r}"
            )
            return
        if exited:
            dialog.close("the agent is not running")
        dialog.observe(self._on_dialog_change)
        if self._view is not None:
            view = self._view
            self._ui.call(lambda: view.add_dialog(dialog, host))
        if dialog.deadline is not None:
            self._ensure_ticker()

    def _trim_dialogs(self) -> None:
        if len(self._dialogs) > DIALOGS_KEPT:
            keep = [d for d in self._dialogs[:-DIALOGS_KEPT] if d.pending]
            self._dialogs = keep + self._dialogs[-DIALOGS_KEPT:]

    def _send_ui_response(self, response: UIResponse) -> None:
        process = self._process
        if process is None or not self.alive:
            raise self._not_running_error()
        process.send(response.to_dict())

    def _on_dialog_change(self, dialog: Dialog) -> None:
        view = self._view
        if view is not None:
            self._ui.call(lambda: view.refresh_dialog(dialog), key=("dialog", dialog.id))

    def _on_event(self, event: AgentEvent) -> None:
        self.events.append(event)
        if event.type == "agent_start":
            with self._lock:
                if self.state in ("idle", "starting"):
                    self.state = "working"
            self._refresh("state")
        elif event.type == "agent_end":
            with self._lock:
                if self.state == "working":
                    self.state = "idle"
            self._refresh("state")
        elif event.type == "extension_error":
            where = os.path.basename(str(event.get("extensionPath", "") or "")) or "an extension"
            self._on_ui_request(
                NotifyRequest(
                    "",
                    message=f"extension error in {where} ({event.get('event', '?')}): {event.get('error', '')}",
                    notify_type="error",
                )
            )
        for callback in list(self._event_listeners):
            try:
                callback(event)
            except Exception as exc:
                self._diagnose(f"an event listener failed: {type(exc).__name__}: {exc}")

    def _on_exit(self, code: int) -> None:
        with self._lock:
            self._exit_code = code
            self.state = "stopped" if self._stop_requested else "exited"
            pending = list(self._pending.values())
            self._pending.clear()
            dialogs = [d for d in self._dialogs if d.pending]
        reason = (
            "session stopped" if self.state == "stopped" else f"the agent exited with code {code}"
        )
        for command in pending:
            command.settle(None, reason)
        for dialog in dialogs:
            dialog.close(reason)
        self._ticker_wake.set()
        self._refresh("state")

    # ------------------------------------------------------------------ timed dialogs

    def _ensure_ticker(self) -> None:
        with self._lock:
            if self._ticker is not None and self._ticker.is_alive():
                self._ticker_wake.set()
                return
            self._ticker = threading.Thread(
                target=self._tick, name=f"atomic-agent-ticker-{self.name}", daemon=True
            )
            self._ticker.start()

    def _tick(self) -> None:
        """Expire timed dialogs on time and refresh their countdowns once a second."""
        while True:
            with self._lock:
                timed = [d for d in self._dialogs if d.pending and d.deadline is not None]
            if not timed:
                return
            now = _now()
            for dialog in timed:
                assert dialog.deadline is not None
                if dialog.deadline <= now:
                    dialog.expire()
                elif self._view is not None:
                    self._ui.call(
                        partial(self._view.refresh_countdown, dialog), key=("countdown", dialog.id)
                    )
            deadlines = [d.deadline for d in timed if d.pending and d.deadline is not None]
            wait = 1.0 if not deadlines else min(1.0, max(0.01, min(deadlines) - _now()))
            self._ticker_wake.wait(wait)
            self._ticker_wake.clear()

    # ------------------------------------------------------------------ views

    def _ensure_view(self) -> SessionView:
        with self._lock:
            if self._view is None:
                from .widgets.panel import SessionView

                self._view = SessionView(self)
            return self._view

    def _attach_run_widget(self, run: PromptRun) -> None:
        def build(r: PromptRun) -> Any:
            return self._ensure_view().build_run_area(r)

        run._set_widget_factory(build)

    def _refresh(self, *parts: Any) -> None:
        view = self._view
        if view is None:
            return
        for part in parts:
            self._ui.call(partial(view.refresh, part), key=part)

    # ------------------------------------------------------------------ panel actions

    def set_editor_text(self, text: str) -> None:
        """Replace the editor's text (as typing in the panel does)."""
        self._editor_text = text

    def send_editor(self) -> PromptRun | None:
        """Send the editor's text as a prompt and clear the editor; None when it is empty."""
        text = self._editor_text
        if not text.strip():
            return None
        run = self.prompt(text, display=False)
        self._editor_text = ""
        self._refresh("editor")
        return run


def _display_if_ipython(obj: Any) -> None:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency
        return
    if get_ipython() is None:
        return
    from IPython.display import display

    display(obj)


def _excerpt(value: Any, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
