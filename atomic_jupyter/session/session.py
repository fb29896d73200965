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
import shlex
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any

from atomic_jupyter.addons.prototype import PrototypeError, PrototypeManager, PrototypeResult
from atomic_jupyter.errors import (
    AgentNotRunningError,
    AgentStartError,
    AtomicAgentError,
    CommandError,
    CommandTimeoutError,
)
from atomic_jupyter.notebook.config import AtomicAgent
from atomic_jupyter.protocol.decode import MessageDecoder
from atomic_jupyter.protocol.framing import Diagnostic
from atomic_jupyter.protocol.messages import (
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
from atomic_jupyter.session.commands import AgentCommands
from atomic_jupyter.session.dialogs import Dialog
from atomic_jupyter.session.images import image_contents
from atomic_jupyter.session.policies import CANCEL, Policy, decide
from atomic_jupyter.session.run_tracker import RunTracker
from atomic_jupyter.session.runs import PromptRun
from atomic_jupyter.transport.launch import LaunchSpec, build_argv, resolve_command
from atomic_jupyter.transport.process import AgentProcess, Delivery
from atomic_jupyter.transport.secrets import Redactor
from atomic_jupyter.ui.dispatch import UiDispatcher

if TYPE_CHECKING:
    from atomic_jupyter.addons.demo.runtime import DemoBackend
    from atomic_jupyter.ui.session_view import SessionView

__all__ = ["AgentSession"]

#: How many notifications, diagnostics and events a session keeps (the newest).
NOTIFICATIONS_KEPT = 500
DIAGNOSTICS_KEPT = 100
EVENTS_KEPT = 200
#: Dialogs kept besides the pending ones (the newest).
DIALOGS_KEPT = 1000
#: Dialog ids remembered to spot a repeated one.
DIALOG_IDS_KEPT = 5000
#: Seconds between two renders of a streaming transcript (at most 20 a second).
TRANSCRIPT_INTERVAL = 0.05
#: Panel parts that can change thousands of times a second, and their update interval.
THROTTLED_PARTS = frozenset({"status", "widgets", "notifications", "diagnostics"})
PANEL_INTERVAL = 0.05
#: How often a blocking wait looks at its run when nothing wakes it.
WAIT_TICK = 0.05


@dataclass(frozen=True)
class WaitResult:
    """Why :meth:`AgentSession.wait` returned: ``"finished"``, ``"dialog"`` or ``"exited"``."""

    reason: str
    run: PromptRun | None = None
    dialog: Dialog | None = None

    def __bool__(self) -> bool:
        return self.reason == "finished"


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


class AgentSession(AgentCommands):
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
        self._base_argv = build_argv(resolved.argv, self.spec)
        self.argv = list(self._base_argv)
        self._demo: DemoBackend | None = None
        #: Extensions defined in notebook cells (None when AtomicAgent.prototyping is off).
        self.prototypes: PrototypeManager | None = None
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
        # Ids of recent dialogs, to ignore a repeated one (an ordered set, trimmed).
        self._dialog_ids: dict[str, None] = {}
        self._feed_decoder: MessageDecoder | None = None
        self._redact = Redactor.for_launch(self.spec.env, os.environ)
        self._tracker = RunTracker(self._probe_state, self._render_run, self._changed_set)
        self.diagnostics: deque[str] = deque(maxlen=DIAGNOSTICS_KEPT)
        self.diagnostic_count = 0
        self.events: deque[AgentEvent] = deque(maxlen=EVENTS_KEPT)
        self._event_listeners: list[Callable[[AgentEvent], None]] = []
        self._policies: list[Policy] = []
        self._changed = threading.Event()

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
        """Prompts sent in this session, oldest first (the newest hundred)."""
        return list(self._tracker.runs)

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
        return self._redact(self._process.stderr_tail()) if self._process else ""

    @property
    def panel(self) -> Any:
        """The session's panel widget (title, status, widget lines, editor, notifications)."""
        return self._ensure_view().panel

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
        self._redact = Redactor.for_launch(self.spec.env, os.environ)
        argv = list(self._base_argv)
        if self.config.prototyping:
            if self.prototypes is None:
                self.prototypes = PrototypeManager(self)
            env.update(self.prototypes.env())
            argv += self.prototypes.args()
        if self.spec.demo:
            from atomic_jupyter.addons.demo.runtime import DemoBackend

            if self._demo is not None:
                self._demo.stop()
            self._demo = DemoBackend().start()
            env.update(self._demo.env())
            argv += self._demo.args()
        self.argv = argv
        with self._lock:
            self.state = "starting"
            self._exit_code = None
            self._stop_requested = False
            self._reset_ui_state()
            self._tracker.reset()
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
            self._stop_demo()
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
        except BaseException:  # an interrupt during start-up must not leave an orphan agent
            with self._lock:
                self._stop_requested = True
            self._process.stop()
            raise
        with self._lock:
            if self.state == "starting":
                self.state = "idle"
        self._refresh("state")
        self._learn_extension_commands()
        return self

    def _learn_extension_commands(self) -> None:
        """Remember which ``/name`` prompts are extension commands (they run at once)."""
        try:
            data = self.request({"type": "get_commands"}, timeout=10).data
        except AtomicAgentError:
            return
        commands = data.get("commands", []) if isinstance(data, dict) else []
        self._tracker.extension_commands = {
            str(c.get("name"))
            for c in commands
            if isinstance(c, dict) and c.get("source") == "extension"
        }

    @property
    def command_line(self) -> str:
        """The agent's command line, quoted for a shell."""

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
        if command.get("type") in ("steer", "follow_up") and isinstance(
            command.get("message"), str
        ):
            self._tracker.injected(command["message"])
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
            raise CommandError(
                pending.command, self._redact(pending.response.error or "no reason given")
            )
        return pending.response

    def prompt(
        self,
        text: str,
        *,
        images: Any = None,
        streaming_behavior: str | None = None,
        display: bool = True,
        _shown: bool | None = None,
        **fields: Any,
    ) -> PromptRun:
        """Send a prompt (or an extension command such as ``"/name"``) and return at once.

        The run's transcript (streamed text, tool calls, dialogs) is shown in the returned
        run's output area, displayed in the current cell when ``display`` is true and IPython
        runs. Use :meth:`wait` to block until the run ends.

        Parameters
        ----------
        text:
            The prompt.
        images:
            Images sent with it: paths, bytes or PIL images (one, or a list).
        streaming_behavior:
            ``"steer"`` or ``"followUp"``: how to queue the prompt while a run is going.
        fields:
            More fields for the ``prompt`` command.
        """
        if not isinstance(text, str):
            raise TypeError(f"a prompt is a str, not {type(text).__name__}")
        if streaming_behavior not in (None, "steer", "followUp"):
            raise ValueError('streaming_behavior is "steer" or "followUp"')
        self._ui.capture_loop()
        command = {"type": "prompt", "message": text, **fields}
        if images is not None:
            command["images"] = image_contents(images)
        if streaming_behavior is not None:
            command["streamingBehavior"] = streaming_behavior
        run = PromptRun("", text)
        run.shown = _shown if _shown is not None else display and _in_ipython()
        self._attach_run_widget(run)

        if run.shown:
            _ = run.widget  # built before the prompt goes out, so no early event can miss it

        def settle(response: Response | None, error: str | None) -> None:
            if response is not None and response.error:
                response = replace(response, error=self._redact(response.error))
            self._tracker.answered(run, response, error)

        with self._lock:  # the answer is handled on the reader thread, after this block
            cid, _ = self._send_command(command, on_response=settle)
            run.id = cid
            self._tracker.sent(run)
        if display:
            _display_if_ipython(run.widget)
        return run

    # ------------------------------------------------------------------ incoming

    def on_event(self, callback: Callable[[AgentEvent], None]) -> None:
        """Call ``callback(event)`` on the reader thread for every agent event."""
        self._event_listeners.append(callback)

    def feed(self, data: bytes) -> None:
        """Handle bytes as if the agent had written them (tests and benchmarks).

        The bytes go through the same framing, decoding and dispatch as the agent's stdout.
        """
        if self._feed_decoder is None:
            self._feed_decoder = MessageDecoder()
        for item in self._feed_decoder.feed(data):
            if isinstance(item, Diagnostic):
                self._on_diagnostic(item)
            else:
                self._on_message(item)

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
            f"ignored a line that is {diagnostic.reason} ({diagnostic.length} bytes): {diagnostic.excerpt}"
        )

    def _diagnose(self, text: str) -> None:
        text = self._redact(text)
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
                    {"message": self._redact(request.message), "type": request.notify_type}
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
        raw = request.raw if request.raw is not None else request.to_dict()
        dialog = Dialog(request, raw, self._send_ui_response)
        dialog._set_widget_factory(lambda d: self._ensure_view().build_dialog(d))
        with self._lock:
            duplicate = request.id in self._dialog_ids
            self._dialog_ids[request.id] = None
            if len(self._dialog_ids) > DIALOG_IDS_KEPT:
                for old in list(self._dialog_ids)[: len(self._dialog_ids) - DIALOG_IDS_KEPT]:
                    del self._dialog_ids[old]
        if duplicate:
            self._diagnose(
                f"ignored a second {request.method} dialog with the same id {request.id!r}"
            )
            return
        if not self.alive and self.state != "starting":
            dialog.close("the agent is not running")
        else:
            # Before the dialog is published, so a wait never stops for one a policy answers.
            self._apply_policy(dialog)
        host = self._tracker.dialog_host()
        with self._lock:
            self._dialogs.append(dialog)
            self._trim_dialogs()
        dialog.observe(self._on_dialog_change)
        dialog.host = host
        if host is not None:
            host.transcript.add_dialog(dialog)
            self._render_run(host, now=True)  # a dialog is shown at once, not throttled
        if host is not None and not host.shown and self._view is not None:
            # The prompt's area was never shown (prompt(display=False)): use the panel.
            view = self._view
            self._ui.call(lambda: view.add_dialog(dialog))
        elif host is None and self._view is not None:
            view = self._view
            self._ui.call(lambda: view.add_dialog(dialog))
        if dialog.deadline is not None and dialog.pending:
            self._ensure_ticker()
        self._changed.set()

    # ------------------------------------------------------------------ answer policies

    @property
    def policies(self) -> list[Policy]:
        """The answer policies, tried in order for every new dialog."""
        with self._lock:
            return list(self._policies)

    def answer_with(
        self, answer: Any, *, method: str | None = None, title: str | None = None
    ) -> Policy:
        """Answer future dialogs without a human.

        Parameters
        ----------
        answer:
            A value (str for select, input and editor; bool for confirm), ``"cancel"`` or
            :data:`~atomic_jupyter.policies.CANCEL`, or a callable that gets the request dict
            and returns one of those, or None to leave the dialog to a person.
        method:
            Only dialogs of this method (``"select"``, ``"confirm"``, ``"input"``, ``"editor"``).
        title:
            Only dialogs whose title matches this regular expression (``re.search``).

        Returns
        -------
        Policy
            The policy added (remove it with :meth:`remove_policy`). Dialogs already
            pending that it covers are answered at once.
        """
        policy = Policy(CANCEL if answer == "cancel" else answer, method=method, title=title)
        with self._lock:
            self._policies.append(policy)
        for dialog in self.pending_dialogs:
            if policy.matches(dialog.method, dialog.title):
                self._apply_policy(dialog)
        return policy

    def remove_policy(self, policy: Policy | None = None) -> None:
        """Remove one policy, or all of them when ``policy`` is None."""
        with self._lock:
            if policy is None:
                self._policies.clear()
            elif policy in self._policies:
                self._policies.remove(policy)

    def _apply_policy(self, dialog: Dialog) -> None:
        try:
            decision = decide(self.policies, dialog.method, dialog.title, dialog.request)
        except Exception as exc:  # a policy's own code failed: leave the dialog to a person
            self._diagnose(
                f"an answer policy failed on the dialog {dialog.title!r}: {type(exc).__name__}: {exc}"
            )
            return
        if decision is None:
            return
        try:
            if decision.cancel:
                dialog.cancel(by="policy")
            else:
                assert decision.value is not None
                dialog.respond(decision.value, by="policy")
        except (TypeError, ValueError) as exc:
            self._diagnose(
                f"the policy {decision.policy.describe()} does not fit the dialog "
                f"{dialog.title!r}: {exc}"
            )
        except AtomicAgentError:
            pass  # already answered, or the agent is gone: nothing to do

    def _trim_dialogs(self) -> None:
        if len(self._dialogs) > DIALOGS_KEPT:
            keep = [d for d in self._dialogs[:-DIALOGS_KEPT] if d.pending]
            self._dialogs = keep + self._dialogs[-DIALOGS_KEPT:]

    def _send_ui_response(self, response: UIResponse) -> Delivery:
        process = self._process
        # exited() looks at the process itself: the exit watcher may not have run yet.
        if process is None or not self.alive or process.exited():
            raise self._not_running_error()
        return process.send(response.to_dict())

    def _on_dialog_change(self, dialog: Dialog) -> None:
        view = self._view
        if view is not None:
            self._ui.call(lambda: view.refresh_dialog(dialog), key=("dialog", dialog.id))

    def _on_event(self, event: AgentEvent) -> None:
        if event.type not in ("message_update", "tool_execution_update"):  # large and frequent
            self.events.append(event)
        self._tracker.on_event(event)
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
            if self.prototypes is not None:
                self.prototypes.extension_error(str(event.get("error", "")))
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
        self._changed.set()

    # ------------------------------------------------------------------ runs

    def _render_run(self, run: PromptRun, final: bool = False, now: bool = False) -> None:
        """Show the run's transcript: throttled while it streams, at once when final."""
        view = self._view
        with run._build_lock:  # a build in progress finishes first (it may have missed this)
            built = run._widget is not None
        if view is None or not built:
            return  # built later, from the transcript as it then is
        render = partial(view.render_run, run)
        key = ("transcript", id(run))
        if final:
            self._ui.finish(render, key=key)
        elif now:
            self._ui.call(render, key=("now", key))
        else:
            self._ui.call_throttled(render, key=key, interval=TRANSCRIPT_INTERVAL)

    def _changed_set(self) -> None:
        self._changed.set()

    def _probe_state(self, callback: Callable[[dict[str, Any] | None], None]) -> None:
        """Send ``get_state`` and hand its data (None without an answer) to ``callback``."""

        def settle(response: Response | None, error: str | None) -> None:
            callback(response.data if response is not None and response.success else None)

        try:
            self._send_command({"type": "get_state"}, on_response=settle)
        except AtomicAgentError:
            callback(None)

    def abort(self, timeout: float | None = None) -> Any:
        """Abort the current run; its pending dialogs are cancelled first.

        The agent's abort waits for an extension's open dialog, so the dialogs go first.
        """
        for dialog in self.pending_dialogs:
            try:
                dialog.cancel(by="abort")
            except AtomicAgentError:
                pass
        return super().abort(timeout)

    def stop_run(self, run: PromptRun | None = None) -> None:
        """Abort without waiting (the Stop button): cancel the run's dialogs, send ``abort``."""
        for dialog in self.pending_dialogs:
            if run is None or dialog.host is run or dialog.host is None:
                try:
                    dialog.cancel(by="stop")
                except AtomicAgentError:
                    pass

        def settle(response: Response | None, error: str | None) -> None:
            if run is not None and (error or (response is not None and not response.success)):
                run.transcript.note(f"could not stop the run: {error or response.error}", "error")  # type: ignore[union-attr]
                self._render_run(run)

        self._send_command({"type": "abort"}, on_response=settle)

    def wait(
        self, timeout: float | None = None, *, run: PromptRun | None = None, quiet: bool = False
    ) -> WaitResult:
        """Block until the latest run ends; keep its transcript updating meanwhile.

        A running cell keeps the kernel from delivering clicks, so the wait also ends early
        when a dialog needs an answer that no policy gives, and says so: answer it where it
        is shown, then wait again. Use it for "Run All", nbval and papermill.

        Parameters
        ----------
        timeout:
            Seconds to wait at most (None: no limit).
        run:
            The run to wait for (the latest by default).
        quiet:
            Do not print why the wait ended early (a dialog waiting for a person is a
            notice on stdout; an agent that exited, an error on stderr).

        Returns
        -------
        WaitResult
            ``reason`` is ``"finished"``, ``"dialog"`` (with the ``dialog``), or ``"exited"``;
            it is true only when the run finished.

        Raises
        ------
        CommandTimeoutError
            When the run is still going after ``timeout`` seconds.
        """
        run = run or (self.runs[-1] if self.runs else None)
        deadline = None if timeout is None else time.monotonic() + timeout
        self._ui.capture_loop()
        while True:
            self._changed.clear()
            self._ui.pump()
            waiting = self.pending_dialogs
            if run is None or run.wait_done(0):
                result = WaitResult("exited" if run is not None and run.exited else "finished", run)
                break
            if waiting:
                result = WaitResult("dialog", run, waiting[0])
                break
            if not self.alive:
                result = WaitResult("exited", run)
                break
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise CommandTimeoutError(
                    f"the agent is still working after {timeout:g} s; "
                    "wait again, or stop it with session.abort()"
                )
            self._changed.wait(WAIT_TICK if left is None else min(WAIT_TICK, left))
        self._ui.pump()
        if not quiet and result.reason == "dialog":
            assert result.dialog is not None
            print(
                f"A {result.dialog.method} dialog needs your answer: {result.dialog.title!r}. "
                "Answer it where it is shown, then wait again (or give an answer policy).",
            )
        elif not quiet and result.reason == "exited":
            print(
                f"The agent exited with code {self.returncode} before the run ended.",
                file=sys.stderr,  # this one is an error
            )
        return result

    def _stop_demo(self) -> None:
        demo, self._demo = self._demo, None
        if demo is not None:
            demo.stop()

    def _on_exit(self, code: int) -> None:
        self._stop_demo()  # the demo model goes with its agent
        with self._lock:
            self._exit_code = code
            self.state = "stopped" if self._stop_requested else "exited"
            pending = list(self._pending.values())
            self._pending.clear()
            dialogs = [d for d in self._dialogs if d.pending]
        reason = (
            "session stopped" if self.state == "stopped" else f"the agent exited with code {code}"
        )
        if self._process is not None and self._process.closed_output:
            reason = "the agent closed its output while still running, so it was stopped"
            self._diagnose(reason)
        for command in pending:
            command.settle(None, reason)
        for dialog in dialogs:
            dialog.close(reason)
        with self._lock:
            answered = [d for d in self._dialogs if d.delivery is not None]
        deadline = time.monotonic() + 1.0  # the writer settles what it still holds
        for dialog in answered:  # answers still queued when the agent went away
            done = dialog.delivery.done.wait(max(0.0, deadline - time.monotonic()))
            if not done or not dialog.delivery.delivered:
                dialog.mark_undelivered(dialog.delivery.error or "the agent did not read it")
        self._tracker.exited(reason, "error" if self.state == "exited" else "info")
        self._ticker_wake.set()
        self._changed.set()
        self._refresh("state")

    # ------------------------------------------------------------------ timed dialogs

    def _ensure_ticker(self) -> None:
        with self._lock:
            if self._ticker is not None:  # running; it clears this under the lock as it ends
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
                    self._ticker = None
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
                from atomic_jupyter.ui.session_view import SessionView

                # Set before populating: building a pending dialog's widget comes back here.
                self._view = SessionView(self)
                self._view.populate()
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
            if part in THROTTLED_PARTS:  # floods of setStatus/setWidget/notify
                self._ui.call_throttled(
                    partial(view.refresh, part), key=part, interval=PANEL_INTERVAL
                )
            else:
                self._ui.call(partial(view.refresh, part), key=part)

    # ------------------------------------------------------------------ prototype extensions

    def _prototypes(self) -> PrototypeManager:
        if self.prototypes is None:
            raise PrototypeError("prototyping is off for this session (AtomicAgent.prototyping)")
        return self.prototypes

    def define_extension(self, name: str, source: str) -> PrototypeResult:
        """Load ``source`` as the extension ``name``, replacing its earlier version.

        The code is type-checked and test-loaded first; errors come back in the result, each
        with the extension's file name and line, and leave the earlier version loaded.
        """
        return self._prototypes().define(name, source)

    def remove_extension(self, name: str) -> None:
        """Unload the prototype extension ``name``."""
        self._prototypes().remove(name)

    def extensions(self) -> list[str]:
        """The prototype extensions defined in this session."""
        return self._prototypes().names()

    def extension_source(self, name: str) -> str:
        """The code of the prototype extension ``name``, as loaded."""
        return self._prototypes().source(name)

    # ------------------------------------------------------------------ panel actions

    def set_editor_text(self, text: str) -> None:
        """Replace the editor's text (as typing in the panel does)."""
        self._editor_text = text

    def send_editor(self) -> PromptRun | None:
        """Send the editor's text as a prompt and clear the editor; None when it is empty."""
        text = self._editor_text
        if not text.strip():
            return None
        run = self.prompt(text, display=False, _shown=True)  # the panel shows its area
        self._editor_text = ""
        self._refresh("editor")
        return run


def _in_ipython() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency
        return False
    return get_ipython() is not None


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
