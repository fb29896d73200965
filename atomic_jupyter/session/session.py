"""AgentSession: one running agent, as a small facade over the parts that do the work.

* :class:`~atomic_jupyter.transport.client.AgentClient`: the process, commands and answers;
* :class:`~atomic_jupyter.session.extension_ui.ExtensionUiState`: title, status, widget
  blocks, editor text, notifications, diagnostics;
* :class:`~atomic_jupyter.session.dialog_registry.DialogRegistry` and
  :class:`~atomic_jupyter.session.policies.PolicyBook`: dialogs, their expiry, their policies;
* :class:`~atomic_jupyter.session.run_tracker.RunTracker`: prompt runs and their transcripts;
* addons (demo model, prototyping) and a presentation (the notebook's views), plugged in
  through :mod:`atomic_jupyter.session.plugins`.

It holds no widgets: views observe the parts through listeners that can be removed.
"""

from __future__ import annotations

import os
import shlex
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import suppress
from typing import Any, ClassVar, cast

from atomic_jupyter.errors import (
    AgentNotRunningError,
    AgentStartError,
    AtomicAgentError,
    CommandError,
    CommandTimeoutError,
)
from atomic_jupyter.protocol.agent_line import AgentLine
from atomic_jupyter.protocol.messages import (
    AgentEvent,
    Response,
    UIResponse,
)
from atomic_jupyter.session.conversation import ConversationMethods
from atomic_jupyter.session.dialog_registry import DialogRegistry
from atomic_jupyter.session.event_log import EventLog
from atomic_jupyter.session.extension_ui import ExtensionUiState
from atomic_jupyter.session.inbox import Inbox
from atomic_jupyter.session.launch_env import exit_reason, how_it_ended, plan_launch, start_failure
from atomic_jupyter.session.observers import Listeners, WakeSignal
from atomic_jupyter.session.plugins import Addon, Presentation
from atomic_jupyter.session.policies import PolicyBook
from atomic_jupyter.session.prototyping import PrototypeMethods
from atomic_jupyter.session.run_tracker import RunTracker, state_probe
from atomic_jupyter.session.runs import PromptRun
from atomic_jupyter.session.settings import SessionSettings, Settings
from atomic_jupyter.session.waiting import WaitResult
from atomic_jupyter.transport.agent_package import PreparedAgent
from atomic_jupyter.transport.client import AgentClient, PendingCommand
from atomic_jupyter.transport.launch import LaunchSpec, build_argv, resolve_command
from atomic_jupyter.transport.process import Delivery
from atomic_jupyter.transport.secrets import Redactor

__all__ = ["AgentSession", "WaitResult"]

#: How many agent events a session keeps (the newest; streaming updates are not kept).
EVENTS_KEPT = 200
_NOT_KEPT = frozenset({"message_update", "tool_execution_update", "bash_execution_update"})


class AgentSession(ConversationMethods, PrototypeMethods):
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
        Settings (:class:`~atomic_jupyter.AtomicAgent`, or any object with the same
        attributes); defaults when None.

    Attributes
    ----------
    name, argv, state:
        The name, the agent's full command line, and ``"new"``, ``"starting"``, ``"idle"``,
        ``"working"``, ``"exited"`` or ``"stopped"``.
    agent, agent_install:
        Which agent runs (an :class:`~atomic_jupyter.protocol.agent_line.AgentLine`: name,
        version, Node.js, what its line does) and how it was found (its npm package).
    events:
        The newest agent events (an :class:`~atomic_jupyter.session.event_log.EventLog`,
        bounded in count and bytes; streaming updates are not kept).
    extension_ui, dialog_registry, tracker, client:
        The parts (observe ``extension_ui.changed``, ``dialog_registry.added``/``ticked``,
        each dialog's ``changed`` and ``tracker.changed``).
    """

    #: Called with each new session; each gives an addon, or None (see :meth:`register_addon`).
    addon_factories: ClassVar[list[Callable[[AgentSession], Addon | None]]] = []
    #: Makes the presentation of a session (see :meth:`use_presentation`).
    presentation_factory: ClassVar[Callable[[AgentSession], Presentation] | None] = None

    @classmethod
    def register_addon(cls, factory: Callable[[AgentSession], Addon | None]) -> None:
        """Make ``factory(session)`` (an addon, or None for none) part of every new session."""
        if factory not in cls.addon_factories:
            cls.addon_factories.append(factory)

    @classmethod
    def use_presentation(cls, factory: Callable[[AgentSession], Presentation] | None) -> None:
        """Show sessions with ``factory(session)`` (None: sessions are not shown)."""
        cls.presentation_factory = factory

    def __init__(
        self,
        name: str = "default",
        spec: LaunchSpec | None = None,
        *,
        config: Settings | None = None,
    ) -> None:
        self.name = name
        self.spec = spec or LaunchSpec()
        self.config: Settings = config or SessionSettings()
        resolved = resolve_command(self.spec.command, self.config.command or None)
        self.command_source = resolved.source
        self._base_argv = build_argv(resolved.argv, self.spec)
        self.argv = list(self._base_argv)
        self.state = "new"
        self.agent, self.agent_install = AgentLine(), cast("PreparedAgent | None", None)
        self._lock = threading.RLock()
        self._exit_code: int | None = None
        self._stop_requested = False
        self._wake = WakeSignal()  # pinged on every change a blocking wait may care about
        self.extension_ui = ExtensionUiState(Redactor.for_launch(self.spec.env, os.environ))
        self.dialog_registry = DialogRegistry(name)
        self.dialog_registry.added.add(self._wake.ping)
        self._policies = PolicyBook(self._diagnose)
        self.client = AgentClient()
        self.tracker = RunTracker(state_probe(self.client), self.client.busy)
        self.tracker.changed.add(self._run_changed)
        self.client.on_message = Inbox(
            ui=self.extension_ui,
            dialogs=self.dialog_registry,
            policies=self._policies,
            tracker=self.tracker,
            on_event=self._on_event,
            answer=self._send_answer,
            accepting=lambda: self.alive or self.state == "starting",
        )
        self.events = EventLog(EVENTS_KEPT)
        self.event_listeners: Listeners[Callable[[AgentEvent], None]] = Listeners(self._diagnose)
        self._addons = [a for a in (f(self) for f in self.addon_factories) if a is not None]
        self._presentation: Presentation | None = None

    def __repr__(self) -> str:
        return f"<AgentSession {self.name!r} {self.state} pid={self.pid}>"

    # ------------------------------------------------------------------ public state

    title = property(lambda self: self.extension_ui.title, doc="The title (``setTitle``).")
    status = property(lambda self: self.extension_ui.status, doc="Status key -> text.")
    widgets = property(
        lambda self: self.extension_ui.widgets,
        doc='Widget blocks: key -> ``{"lines": [...], "placement": ...}``.',
    )
    editor_text = property(lambda self: self.extension_ui.editor_text, doc="The editor's text.")
    notifications = property(
        lambda self: self.extension_ui.notifications,
        doc='Notifications, oldest first: ``{"message": ..., "type": ...}``.',
    )
    diagnostics = property(
        lambda self: self.extension_ui.diagnostics, doc="Why messages were ignored (newest last)."
    )
    diagnostic_count = property(
        lambda self: self.extension_ui.diagnostic_count, doc="How many messages were ignored."
    )
    dialogs = property(
        lambda self: self.dialog_registry.all(), doc="Every dialog kept, oldest first."
    )
    pending_dialogs = property(
        lambda self: self.dialog_registry.pending(), doc="Dialogs waiting for an answer."
    )
    runs = property(lambda self: list(self.tracker.runs), doc="Prompts sent (the newest 100).")
    policies = property(lambda self: self._policies.list(), doc="The answer policies, in order.")
    returncode = property(lambda self: self._exit_code, doc="The agent's exit code, once exited.")

    @property
    def alive(self) -> bool:
        """Whether the agent process is running."""
        process = self.client.process
        return process is not None and process.alive and self.state not in ("exited", "stopped")

    @property
    def pid(self) -> int | None:
        """The agent's process id."""
        return self.client.process.pid if self.client.process else None

    @property
    def stderr_tail(self) -> str:
        """The last part of what the agent wrote on stderr (secrets redacted)."""
        process = self.client.process
        return self.extension_ui.redact(process.stderr_tail()) if process else ""

    @property
    def command_line(self) -> str:
        """The agent's command line, quoted for a shell."""
        return self.extension_ui.redact(shlex.join(self.argv))

    @property
    def presentation(self) -> Presentation | None:
        """What shows this session (created on first use), or None when nothing can."""
        factory = type(self).presentation_factory
        if self._presentation is None and factory is not None:
            self._presentation = factory(self)
        return self._presentation

    @property
    def panel(self) -> Any:
        """The session's panel widget (title, status, widget lines, editor, notifications)."""
        presentation = self.presentation
        if presentation is None:
            raise AtomicAgentError("no presentation layer is loaded to show a panel")
        return presentation.panel

    def addon(self, name: str) -> Any:
        """The addon called ``name`` (``"prototypes"``, ``"demo"``), or None."""
        return next((a for a in self._addons if a.name == name), None)

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
        try:
            launch = plan_launch(self._base_argv, self.spec, self._addons, os.environ)
        except BaseException:
            self._addons_exited()
            raise
        self.argv = launch.argv
        redactor = self.extension_ui.redact = Redactor.for_launch(
            self.spec.env, os.environ, launch.argv
        )
        self.agent, self.agent_install = launch.line, launch.prepared
        self.tracker.line = launch.line
        with self._lock:
            self._set_state("starting")
            self._exit_code = None
            self._stop_requested = False
            self.tracker.reset()
        self.extension_ui.reset()
        try:
            argv, cwd, env = launch.argv, launch.cwd, launch.env
            self.client.launch(argv, cwd=cwd, env=env, on_exit=self._on_exit, scrubber=redactor)
        except AgentStartError:
            self._set_state("exited")
            self.client.process = None
            self._addons_exited()
            raise
        timeout = self.config.startup_timeout if timeout is None else timeout
        try:
            self.request({"type": "get_state"}, timeout=timeout)
        except (AgentNotRunningError, CommandTimeoutError, CommandError) as exc:
            self._end_process(requested=False)
            tail, timed_out = self.stderr_tail, isinstance(exc, CommandTimeoutError)
            raise start_failure(self.command_line, self._exit_code, exc, tail, timed_out) from None
        except BaseException:  # an interrupt during start-up must not leave an orphan agent
            self._end_process()
            raise
        with self._lock:
            if self.state == "starting":
                self._set_state("idle")
        with suppress(AtomicAgentError):  # which /name prompts are extension commands
            self.tracker.learn_commands(self.request({"type": "get_commands"}, timeout=10).data)
        return self

    def _end_process(self, timeout: float = 5.0, *, requested: bool = True) -> int | None:
        process = self.client.process
        if process is None:
            return None
        with self._lock:
            self._stop_requested = self._stop_requested or requested
        process.stop()
        process.wait_exit(timeout)
        return self._exit_code

    def stop(self, timeout: float = 5.0) -> int | None:
        """End the agent and its whole process tree (its tools too) and close the session's
        addons (their servers, folders and threads); return the agent's exit code."""
        code = self._end_process(timeout)
        for addon in self._addons:
            addon.close()
        return code

    def restart(self, timeout: float | None = None) -> AgentSession:
        """Stop the agent if it runs, then start it again with the same options (prototype
        extensions defined in cells are kept)."""
        self._end_process()
        return self.start(timeout=timeout)

    def _run_changed(self, _run: PromptRun, how: str) -> None:
        if how != "stream":  # a streaming update changes nothing a wait looks at
            self._wake.ping()

    def _set_state(self, state: str) -> None:
        with self._lock:
            self.state = state
        self._wake.ping()
        self.extension_ui.changed.emit("state")

    def _addons_exited(self) -> None:
        for addon in self._addons:
            addon.agent_exited()

    def _on_exit(self, code: int) -> None:
        self._addons_exited()  # the demo model goes with its agent
        with self._lock:
            self._exit_code = code
            stopped = self._stop_requested
            self.state = "stopped" if stopped else "exited"
        reason, known = exit_reason(code, stopped, self.stderr_tail)
        if known:  # a crash whose cause is known: say it in the panel too
            self._diagnose(f"{reason[0].upper()}{reason[1:]}.")
        process = self.client.process
        if process is not None and process.closed_output:
            reason = "the agent closed its output while still running, so it was stopped"
            self._diagnose(reason)
        self.client.fail_pending(reason)
        self.dialog_registry.close_pending(reason)
        self.dialog_registry.report_undelivered()
        self.tracker.exited(reason, "info" if stopped else "error")
        self._set_state(self.state)

    # ------------------------------------------------------------------ commands

    def _not_running_error(self) -> AgentNotRunningError:
        what = how_it_ended(self.state, self._exit_code)
        flag = "" if self.name == "default" else " --name " + self.name
        return AgentNotRunningError(
            f"the agent of session {self.name!r} {what}; restart it with "
            f"`%atomic_agent restart{flag}` or session.restart()"
        )

    def _check_running(self) -> None:
        if self.client.process is None or not self.alive and self.state != "starting":
            raise self._not_running_error()

    def _send(self, command: Mapping[str, Any]) -> PendingCommand:
        """Write a command; an agent that is not running is the session's own error."""
        self._check_running()
        try:
            return self.client.request(command)
        except AgentNotRunningError:
            raise self._not_running_error() from None

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
            self.tracker.injected(command["message"])
        pending = self._send(command)
        try:
            response: Response = pending.result(timeout)
        except FutureTimeout:
            self.client.abandon(pending)
            raise CommandTimeoutError(
                f"the agent did not answer {pending.command!r} within {timeout:g} s "
                "(a dialog waiting for an answer can hold it up)"
            ) from None
        except AgentNotRunningError:
            raise self._not_running_error() from None
        if not response.success:
            redact = self.extension_ui.redact
            raise CommandError(pending.command, redact(response.error or "no reason given"))
        return response

    # ------------------------------------------------------------------ incoming

    def on_event(self, callback: Callable[[AgentEvent], None]) -> Any:
        """Call ``callback(event)`` on the reader thread for every agent event; return a
        subscription whose ``remove()`` stops it."""
        return self.event_listeners.add(callback)

    def _diagnose(self, text: str) -> None:
        self.extension_ui.diagnose(text)

    def _send_answer(self, response: UIResponse) -> Delivery:
        process = self.client.process
        # exited() looks at the process itself: the exit watcher may not have run yet.
        if process is None or not self.alive or process.exited():
            raise self._not_running_error()
        return self.client.send_answer(response)

    def _on_event(self, event: AgentEvent) -> None:
        if event.type not in _NOT_KEPT:
            self.events.append(event)
        self.tracker.on_event(event)
        if event.type == "agent_start" and self.state in ("idle", "starting"):
            self._set_state("working")
        elif event.type == self.tracker.idle_after and self.state == "working":
            self._set_state("idle")
        elif event.type == "extension_error":
            self.extension_ui.extension_error(event)
        self.event_listeners.emit(event)
        self._wake.ping()

    # ------------------------------------------------------------------ panel actions

    def set_editor_text(self, text: str) -> None:
        """Replace the editor's text (as typing in the panel does)."""
        self.extension_ui.set_editor_text(text)

    def send_editor(self) -> PromptRun | None:
        """Send the editor's text as a prompt and clear the editor; None when it is empty."""
        text = self.extension_ui.editor_text
        if not text.strip():
            return None
        run = self.prompt(text, display=False, shown=True)  # the panel shows its area
        self.extension_ui.set_editor_text("", announce=True)
        return run
