"""AgentSession: one running agent, as a small facade over the parts that do the work.

The facade holds its parts and gives their methods one public face: the launcher
(:mod:`~atomic_jupyter.session.launcher`), the session's state machine
(:mod:`~atomic_jupyter.session.lifecycle`), the one part that sends commands
(:mod:`~atomic_jupyter.session.commands`), prompts and the runs they make
(:mod:`~atomic_jupyter.session.prompts`), the inbox, the extension UI state, dialogs and
answer policies (:mod:`~atomic_jupyter.session.policies`), the run tracker, kernel tools,
addons (prototypes among them) and a presentation. Each public method is the part's, with
the part's docstring. No widgets here: views observe the parts through listeners that can
be removed.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, ClassVar

from atomic_jupyter.errors import AtomicAgentError, PrototypeError
from atomic_jupyter.protocol.agent_line import AgentLine
from atomic_jupyter.protocol.messages import AgentEvent
from atomic_jupyter.session.commands import CommandChannel
from atomic_jupyter.session.dialog_registry import DialogRegistry
from atomic_jupyter.session.dialogs import Dialog
from atomic_jupyter.session.extension_ui import ExtensionUiState
from atomic_jupyter.session.idle import IdleWatch
from atomic_jupyter.session.inbox import Inbox
from atomic_jupyter.session.kernel_tools import KernelTools, kernel_tools_for
from atomic_jupyter.session.launcher import Launcher
from atomic_jupyter.session.lifecycle import Lifecycle
from atomic_jupyter.session.observers import Listeners, Subscription, WakeSignal
from atomic_jupyter.session.plugins import Addon, Presentation, wire
from atomic_jupyter.session.policies import Policy, PolicyBook
from atomic_jupyter.session.prompts import Prompts
from atomic_jupyter.session.run_tracker import RunTracker, state_probe
from atomic_jupyter.session.runs import PromptRun
from atomic_jupyter.session.session_account import SessionAccount
from atomic_jupyter.session.session_commands import SessionCommands, documented_as
from atomic_jupyter.session.settings import SessionSettings, Settings
from atomic_jupyter.session.waiting import WaitResult
from atomic_jupyter.transport.agent_package import PreparedAgent
from atomic_jupyter.transport.client import AgentClient
from atomic_jupyter.transport.launch import LaunchSpec
from atomic_jupyter.transport.secrets import Redactor

__all__ = ["AgentSession", "WaitResult"]


class AgentSession(SessionCommands, SessionAccount):
    """One agent process and everything the notebook knows about it.

    Made by :func:`atomic_jupyter.start` or ``%atomic_agent start`` (else call :meth:`start`).

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
        spec = spec or LaunchSpec()
        self.config: Settings = config or SessionSettings()
        self._lifecycle = life = Lifecycle()
        self._wake = WakeSignal()  # pinged on every change a blocking wait may care about
        self.extension_ui = ui = ExtensionUiState(Redactor.for_launch(spec.env, os.environ))
        self.dialog_registry = dialogs = DialogRegistry(name)
        dialogs.added.add(self._wake.ping)
        self._policies = PolicyBook(ui.diagnose, dialogs.pending)
        # The client hands the agent's messages to the inbox, and the inbox and the tracker
        # reach the agent through the client and the command channel, made after them: these
        # closures close that loop (none of them goes through the facade).
        self.tracker = tracker = RunTracker(
            state_probe(lambda command: client.request(command)),
            lambda: client.busy(),
            lifecycle=life,
            state_changed=self._state_changed,
        )
        tracker.changed.add(self._run_changed)
        inbox = Inbox(
            ui=ui,
            dialogs=dialogs,
            policies=self._policies,
            tracker=tracker,
            wake=self._wake,
            answer=lambda response: commands.answer(response),
            accepting=lambda: commands.accepting(),
            claim=lambda request: self._kernel_tools.claims(request),
        )
        self.client = client = AgentClient(on_message=inbox)
        self._inbox, self.events, self.event_listeners = inbox, inbox.events, inbox.listeners
        commands = CommandChannel(
            client, life, name=name, settings=self.config, redact=ui.redact, tracker=tracker
        )
        prompts = Prompts(
            commands,
            life,
            tracker,
            dialogs,
            self._wake,
            inbox.listeners,
            presentation=lambda: self.presentation,
            redact=ui.redact,
            wake_note=lambda: self._launcher.take_wake_note(),
        )
        SessionCommands.__init__(self, commands, prompts)
        self._addons: list[Addon] = []
        self._idle = IdleWatch(
            minutes=self._idle_minutes,
            busy=lambda: (
                life.state in ("starting", "working") or bool(dialogs.pending()) or client.busy()
            ),
            sleep=lambda: self._launcher.sleep(),
        )
        self._launcher = Launcher(
            name,
            spec,
            self.config,
            client=client,
            lifecycle=life,
            commands=commands,
            tracker=tracker,
            ui=ui,
            dialogs=dialogs,
            idle=self._idle,
            addons=self._addons,
            state_changed=self._state_changed,
        )
        commands.before_command = self._launcher.wake_if_asleep
        SessionAccount.__init__(
            self, client, commands, tracker, lambda: life.agent,
            lambda: self.spec, self._launcher.relaunch_with, lambda: ui.changed.emit("key"),
        )  # fmt: skip
        self._addons += [a for a in (f(self) for f in self.addon_factories) if a is not None]
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
    runs = property(lambda self: self.tracker.runs, doc="Prompts kept (RunTracker.runs).")
    kernel_tools = property(lambda self: self._kernel_tools.exposed, doc="Exposed functions.")
    policies = property(lambda self: self._policies.list(), doc="The answer policies, in order.")
    returncode = property(lambda self: self._lifecycle.exit_code, doc="The agent's exit code.")
    prototypes = property(
        lambda self: self.addon("prototypes"),
        doc="Extensions defined in notebook cells (None when ``AtomicAgent.prototyping`` is off).",
    )
    argv = property(lambda self: self._launcher.argv, doc="The agent's full command line.")
    spec = property(lambda self: self._launcher.spec, doc="How the agent is launched.")
    resolved = property(lambda self: self._launcher.resolved, doc="How the command was found.")
    stderr_tail = property(
        lambda self: self._launcher.stderr_tail,
        doc="The last part of what the agent wrote on stderr (secrets redacted).",
    )
    command_line = property(
        lambda self: self._launcher.command_line,
        doc="The agent's command line, quoted for a shell.",
    )

    @property
    def alive(self) -> bool:
        """Whether the agent process is running."""
        return self._commands.alive

    @property
    def policy_changes(self) -> Listeners[Callable[[], None]]:
        """Listeners called after an answer policy (or rule) is added or removed."""
        return self._policies.changed

    @property
    def state(self) -> str:
        """``"new"``, ``"starting"``, ``"idle"``, ``"working"``, ``"exited"``, ``"stopped"`` or
        ``"asleep"`` (stopped after ``AtomicAgent.idle_sleep_minutes`` idle: the next command
        starts it again). Setting it forces it: a test feeding a session that never started."""
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

    @documented_as(Launcher.start)
    def start(self, timeout: float | None = None) -> AgentSession:
        self._launcher.start(timeout)
        return self

    def stop(self, timeout: float = 5.0) -> int | None:
        """End the agent and its whole process tree (its tools too) and close the session's
        addons (their servers, folders and threads); return the agent's exit code."""
        return self._launcher.stop(timeout)

    def restart(self, timeout: float | None = None) -> AgentSession:
        """Stop the agent if it runs, then start it again with the same options (prototype
        extensions defined in cells are kept)."""
        self._launcher.end_process()
        return self.start(timeout=timeout)

    def _idle_minutes(self) -> float:
        """Minutes of idleness before the agent sleeps: the setting's, but never (0) when no
        addon keeps the conversation (``--no-save``): a sleep would lose it."""
        if not any(getattr(addon, "keeps_conversation", False) for addon in self._addons):
            return 0.0
        return float(getattr(self.config, "idle_sleep_minutes", 0) or 0)

    def _run_changed(self, _run: PromptRun, how: str) -> None:
        if how != "stream":  # a streaming update changes nothing a wait looks at
            self._wake.ping()

    def _state_changed(self) -> None:
        self.standing.follow_state(self._lifecycle.state)
        self._wake.ping()
        self.extension_ui.changed.emit("state")

    def on_event(self, callback: Callable[[AgentEvent], None]) -> Subscription:
        """Call ``callback(event)`` on the reader thread for every agent event; return a
        subscription whose ``remove()`` stops it."""
        return self.event_listeners.add(callback)

    # ------------------------------------------------------------------ prompts and runs

    @documented_as(Prompts.prompt)
    def prompt(
        self,
        /,
        text: str,
        *,
        images: Any = None,
        streaming_behavior: str | None = None,
        display: bool = True,
        shown: bool | None = None,
        **fields: Any,
    ) -> PromptRun:
        return self._prompts.prompt(
            text,
            images=images,
            streaming_behavior=streaming_behavior,
            display=display,
            shown=shown,
            **fields,
        )

    @documented_as(Prompts.wait)
    def wait(
        self, timeout: float | None = None, *, run: PromptRun | None = None, quiet: bool = False
    ) -> WaitResult:
        return self._prompts.wait(timeout, run=run, quiet=quiet)

    @documented_as(Prompts.stop_run)
    def stop_run(self, run: PromptRun | None = None) -> None:
        self._prompts.stop_run(run)

    # ------------------------------------------------------------------ answers, tools

    @documented_as(PolicyBook.answer_with)
    def answer_with(
        self, answer: Any, *, method: str | None = None, title: str | None = None
    ) -> Policy:
        return self._policies.answer_with(answer, method=method, title=title)

    @documented_as(PolicyBook.make_rule)
    def make_rule(self, dialog: Dialog) -> Policy:
        return self._policies.make_rule(dialog)

    @documented_as(PolicyBook.remove_policy)
    def remove_policy(self, policy: Policy | None = None) -> None:
        self._policies.remove_policy(policy)

    @documented_as(KernelTools.expose)
    def expose(
        self,
        function: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        side_effects: bool = False,
        approval: bool | None = None,
    ) -> None:
        self._kernel_tools.expose(
            function,
            name=name,
            description=description,
            side_effects=side_effects,
            approval=approval,
        )

    @documented_as(KernelTools.unexpose)
    def unexpose(self, name: str) -> None:
        self._kernel_tools.unexpose(name)

    def offer_tools_again(self) -> None:
        """Tell a running agent the tools it has now (a built-in tool became available or
        went: a notebook page was linked or closed). Failures are diagnostics, not errors."""
        if not self.alive:
            return
        try:
            self._kernel_tools.offer_again()
        except AtomicAgentError as exc:
            self.extension_ui.diagnose(f"could not offer the notebook's tools again: {exc}")

    @property
    def unavailable_tools(self) -> dict[str, str]:
        """The built-in tools this session would offer but cannot now, and why (the
        notebook tools where no notebook page is linked)."""
        return self._kernel_tools.unavailable()

    # ------------------------------------------------------------------ prototypes

    def _prototyping(self) -> Any:
        manager = self.addon("prototypes")
        if manager is None:
            raise PrototypeError("prototyping is off for this session (AtomicAgent.prototyping)")
        return manager

    def define_extension(self, name: str, source: str) -> Any:
        """Load ``source`` as the extension ``name``, replacing its earlier version.

        The code is type-checked and test-loaded first; errors come back in the result, each
        with the extension's file name and line, and leave the earlier version loaded.
        """
        return self._prototyping().define(name, source)

    def remove_extension(self, name: str) -> None:
        """Unload the prototype extension ``name``."""
        self._prototyping().remove(name)

    def extensions(self) -> list[str]:
        """The prototype extensions defined in this session."""
        return list(self._prototyping().names())

    def extension_source(self, name: str) -> str:
        """The code of the prototype extension ``name``, as loaded."""
        return str(self._prototyping().source(name))

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
