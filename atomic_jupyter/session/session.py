"""AgentSession: one running agent, as a small facade over the parts that do the work.

The facade starts and stops the agent and holds its parts (the client, the command channel,
the lifecycle, the extension UI state, dialogs and answer policies, the run tracker, the
conversation, the agent's commands, prototypes, addons and a presentation); a part's own
methods are :class:`~atomic_jupyter.session.delegation.Delegated`. No widgets here: views
observe the parts through listeners that can be removed.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable
from contextlib import suppress
from typing import Any, ClassVar

from atomic_jupyter.errors import (
    AgentNotRunningError,
    AgentStartError,
    AtomicAgentError,
    CommandError,
    CommandTimeoutError,
)
from atomic_jupyter.protocol.agent_line import AgentLine
from atomic_jupyter.protocol.messages import AgentEvent
from atomic_jupyter.session.answers import AnswerPolicies
from atomic_jupyter.session.channel import CommandChannel
from atomic_jupyter.session.commands import AgentCommands
from atomic_jupyter.session.delegation import Delegated
from atomic_jupyter.session.dialog_registry import DialogRegistry
from atomic_jupyter.session.event_log import EventLog
from atomic_jupyter.session.extension_ui import ExtensionUiState
from atomic_jupyter.session.inbox import Inbox
from atomic_jupyter.session.kernel_tools import KernelTools, kernel_tools_for
from atomic_jupyter.session.launch_env import exit_reason, plan_launch, start_failure
from atomic_jupyter.session.lifecycle import Lifecycle
from atomic_jupyter.session.observers import Listeners, Subscription, WakeSignal
from atomic_jupyter.session.plugins import Addon, Presentation, wire
from atomic_jupyter.session.policies import PolicyBook
from atomic_jupyter.session.prompts import Prompts
from atomic_jupyter.session.prototyping import Prototypes
from atomic_jupyter.session.run_tracker import RunTracker, state_probe
from atomic_jupyter.session.runs import PromptRun
from atomic_jupyter.session.settings import SessionSettings, Settings
from atomic_jupyter.session.transcript import custom_entry
from atomic_jupyter.session.waiting import WaitResult
from atomic_jupyter.transport.agent_package import PreparedAgent
from atomic_jupyter.transport.client import AgentClient
from atomic_jupyter.transport.launch import LaunchSpec, build_argv, resolve_command
from atomic_jupyter.transport.secrets import Redactor

__all__ = ["AgentSession", "WaitResult"]

#: How many agent events a session keeps (the newest; streaming updates are not kept).
EVENTS_KEPT = 200
_NOT_KEPT = frozenset({"message_update", "tool_execution_update", "bash_execution_update"})


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
        Settings (:class:`~atomic_jupyter.AtomicAgent`, or any object with the same
        attributes); defaults when None.

    Attributes
    ----------
    name, argv:
        The name, and the agent's full command line.
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
        wire()  # the first session imports the wiring: addons, presentation, built-in tools
        self.name = name
        self.spec = spec or LaunchSpec()
        self.config: Settings = config or SessionSettings()
        self.resolved = resolve_command(
            self.spec.command, self.config.command or None, agent_home=self.config.agent_home
        )
        self.argv = build_argv(self.resolved.argv, self.spec)
        self._lifecycle = Lifecycle()
        self._wake = WakeSignal()  # pinged on every change a blocking wait may care about
        self.extension_ui = ui = ExtensionUiState(Redactor.for_launch(self.spec.env, os.environ))
        self.dialog_registry = DialogRegistry(name)
        self.dialog_registry.added.add(self._wake.ping)
        self._policies = PolicyBook(ui.diagnose)
        # The client hands the agent's messages to the inbox, and the inbox and the tracker
        # reach the agent through the client: these late-bound calls close that loop.
        self.tracker = RunTracker(
            state_probe(lambda command: self.client.request(command)), lambda: self.client.busy()
        )
        self.tracker.changed.add(self._run_changed)
        inbox = Inbox(
            ui=ui,
            dialogs=self.dialog_registry,
            policies=self._policies,
            tracker=self.tracker,
            on_event=self._on_event,
            answer=lambda response: self._channel.answer(response),
            accepting=lambda: self._channel.accepting(),
            claim=lambda request: self._kernel_tools.claims(request),
        )
        self.client = AgentClient(on_message=inbox)
        self._channel = CommandChannel(
            self.client,
            self._lifecycle,
            name=name,
            settings=self.config,
            redact=ui.redact,
            tracker=self.tracker,
        )
        self._prompts = Prompts(
            self._channel,
            self._lifecycle,
            self.tracker,
            self.dialog_registry,
            self._wake,
            presentation=lambda: self.presentation,
            redact=ui.redact,
        )
        self._answers = AnswerPolicies(self._policies, self.dialog_registry.pending)
        self._commands = AgentCommands(self)  # through request(): a wrapper of it sees all
        self.events = EventLog(EVENTS_KEPT)
        self.event_listeners: Listeners[Callable[[AgentEvent], None]] = Listeners(ui.diagnose)
        self._addons = [a for a in (f(self) for f in self.addon_factories) if a is not None]
        self._prototypes = Prototypes(self.addon("prototypes"))
        self._kernel_tools = kernel_tools_for(self)
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
    entries = property(lambda self: self.extension_ui.entries, doc="Custom entries of no run.")
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
    dialogs = property(lambda self: self.dialog_registry.all(), doc="Every dialog, oldest first.")
    pending_dialogs = property(
        lambda self: self.dialog_registry.pending(), doc="Unanswered dialogs."
    )
    runs = property(lambda self: self.tracker.runs, doc="Prompts sent (the newest 100).")
    kernel_tools = property(lambda self: self._kernel_tools.exposed, doc="Exposed functions.")
    policies = property(lambda self: self._answers.list(), doc="The answer policies, in order.")
    returncode = property(lambda self: self._lifecycle.exit_code, doc="The agent's exit code.")
    prototypes = property(
        lambda self: self._prototypes.manager,
        doc="Extensions defined in notebook cells (None when ``AtomicAgent.prototyping`` is off).",
    )

    @property
    def alive(self) -> bool:
        """Whether the agent process is running."""
        return self._channel.alive

    @property
    def policy_changes(self) -> Listeners[Callable[[], None]]:
        """Listeners called after an answer policy (or rule) is added or removed."""
        return self._answers.policy_changes

    @property
    def state(self) -> str:
        """``"new"``, ``"starting"``, ``"idle"``, ``"working"``, ``"exited"`` or ``"stopped"``
        (setting it forces it: a test feeding a session that never started)."""
        return self._lifecycle.state

    @state.setter
    def state(self, state: str) -> None:
        self._lifecycle.force(state)

    @property
    def agent(self) -> AgentLine:
        """Which agent runs: name, version, Node.js, what its line does."""
        return self._lifecycle.agent

    @property
    def agent_install(self) -> PreparedAgent | None:
        """How the running agent was found (its npm package)."""
        return self._lifecycle.install

    @property
    def pid(self) -> int | None:
        """The agent's process id."""
        process = self.client.process
        return process.pid if process else None

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
            launch = plan_launch(self.resolved, self.spec, self._addons, os.environ)
        except BaseException:
            self._addons_exited()
            raise
        self.argv = launch.argv
        redactor = Redactor.for_launch(self.spec.env, os.environ, launch.argv)
        self.extension_ui.use_redactor(redactor)
        self.tracker.use_line(launch.line)
        self.tracker.reset()
        self._lifecycle.begin(launch.line, launch.prepared)
        self._state_changed()
        self.extension_ui.reset()
        try:
            argv, cwd, env = launch.argv, launch.cwd, launch.env
            self.client.launch(argv, cwd=cwd, env=env, on_exit=self._on_exit, scrubber=redactor)
        except AgentStartError:
            if self._lifecycle.launch_failed():
                self._state_changed()
            self._addons_exited()
            raise
        timeout = self.config.startup_timeout if timeout is None else timeout
        try:
            self.request({"type": "get_state"}, timeout=timeout)
        except (AgentNotRunningError, CommandTimeoutError, CommandError) as exc:
            self._end_process(requested=False)
            tail, timed_out = self.stderr_tail, isinstance(exc, CommandTimeoutError)
            raise start_failure(self.command_line, self.returncode, exc, tail, timed_out) from None
        except BaseException:  # an interrupt during start-up must not leave an orphan agent
            self._end_process()
            raise
        if self._lifecycle.started():
            self._state_changed()
        with suppress(AtomicAgentError):  # which /name prompts are extension commands
            self.tracker.learn_commands(self.request({"type": "get_commands"}, timeout=10).data)
        return self

    def _end_process(self, timeout: float = 5.0, *, requested: bool = True) -> int | None:
        process = self.client.process
        if process is None:
            return None
        if requested:
            self._lifecycle.request_stop()
        process.stop()
        process.wait_exit(timeout)
        return self._lifecycle.exit_code

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

    def _state_changed(self) -> None:
        self._wake.ping()
        self.extension_ui.changed.emit("state")

    def _addons_exited(self) -> None:
        for addon in self._addons:
            addon.agent_exited()

    def _on_exit(self, code: int) -> None:
        self._addons_exited()  # the demo model goes with its agent
        stopped = self._lifecycle.exited(code)
        reason, known = exit_reason(code, stopped, self.stderr_tail)
        if known:  # a crash whose cause is known: say it in the panel too
            self.extension_ui.diagnose(f"{reason[0].upper()}{reason[1:]}.")
        process = self.client.process
        if process is not None and process.closed_output:
            reason = "the agent closed its output while still running, so it was stopped"
            self.extension_ui.diagnose(reason)
        self.client.fail_pending(reason)
        self.dialog_registry.close_pending(reason)
        self.dialog_registry.report_undelivered()
        self.tracker.exited(reason, "info" if stopped else "error")
        self._state_changed()

    # ------------------------------------------------------------------ incoming

    def on_event(self, callback: Callable[[AgentEvent], None]) -> Subscription:
        """Call ``callback(event)`` on the reader thread for every agent event; return a
        subscription whose ``remove()`` stops it."""
        return self.event_listeners.add(callback)

    def _on_event(self, event: AgentEvent) -> None:
        if event.type not in _NOT_KEPT:
            self.events.append(event)
        taken = self.tracker.on_event(event)
        changed, entry = False, None if taken else custom_entry(event)
        if entry is not None:  # appended while no run goes: the panel shows it
            self.extension_ui.add_entry(*entry)
        elif event.type == "agent_start":
            changed = self._lifecycle.run_started()
        elif event.type == self.tracker.idle_after:
            changed = self._lifecycle.run_ended()
        elif event.type == "extension_error":
            self.extension_ui.extension_error(event)
        if changed:
            self._state_changed()
        self.event_listeners.emit(event)
        self._wake.ping()

    # ------------------------------------------------------------------ the parts' methods

    request = Delegated("_channel", CommandChannel.request)
    prompt = Delegated("_prompts", Prompts.prompt)
    expose = Delegated("_kernel_tools", KernelTools.expose)
    unexpose = Delegated("_kernel_tools", KernelTools.unexpose)
    command = Delegated("_prompts", Prompts.command)
    stop_run = Delegated("_prompts", Prompts.stop_run)
    wait = Delegated("_prompts", Prompts.wait)
    answer_with = Delegated("_answers", AnswerPolicies.answer_with)
    make_rule = Delegated("_answers", AnswerPolicies.make_rule)
    remove_policy = Delegated("_answers", AnswerPolicies.remove_policy)

    def abort(self, timeout: float | None = None) -> Any:
        """Abort the current run; its pending dialogs are cancelled first.

        The agent's abort waits for an extension's open dialog, so the dialogs go first.
        """
        self._prompts.cancel_dialogs(None, "abort")
        return self._commands.abort(timeout)

    steer = Delegated("_commands", AgentCommands.steer)
    follow_up = Delegated("_commands", AgentCommands.follow_up)
    clear_queue = Delegated("_commands", AgentCommands.clear_queue)
    new_session = Delegated("_commands", AgentCommands.new_session)
    switch_session = Delegated("_commands", AgentCommands.switch_session)
    fork = Delegated("_commands", AgentCommands.fork)
    clone = Delegated("_commands", AgentCommands.clone)
    get_state = Delegated("_commands", AgentCommands.get_state)
    get_messages = Delegated("_commands", AgentCommands.get_messages)
    get_session_stats = Delegated("_commands", AgentCommands.get_session_stats)
    set_session_name = Delegated("_commands", AgentCommands.set_session_name)
    export_html = Delegated("_commands", AgentCommands.export_html)
    get_entries = Delegated("_commands", AgentCommands.get_entries)
    get_tree = Delegated("_commands", AgentCommands.get_tree)
    get_commands = Delegated("_commands", AgentCommands.get_commands)
    compact = Delegated("_commands", AgentCommands.compact)
    bash = Delegated("_commands", AgentCommands.bash)
    set_model = Delegated("_commands", AgentCommands.set_model)
    cycle_model = Delegated("_commands", AgentCommands.cycle_model)
    get_available_models = Delegated("_commands", AgentCommands.get_available_models)
    set_thinking_level = Delegated("_commands", AgentCommands.set_thinking_level)
    thinking_levels = Delegated("_commands", AgentCommands.thinking_levels)
    cycle_thinking_level = Delegated("_commands", AgentCommands.cycle_thinking_level)

    define_extension = Delegated("_prototypes", Prototypes.define_extension)
    remove_extension = Delegated("_prototypes", Prototypes.remove_extension)
    extensions = Delegated("_prototypes", Prototypes.extensions)
    extension_source = Delegated("_prototypes", Prototypes.extension_source)

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
