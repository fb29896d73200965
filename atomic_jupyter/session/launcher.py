"""Starting a session's agent, waiting for its first answer, ending it with its whole process
tree, and following its exit: the launcher part of a session (:class:`Launcher`).

What a launch needs besides its command is planned by :mod:`~atomic_jupyter.session.
launch_env`; the state each step leads to is the session's
:class:`~atomic_jupyter.session.lifecycle.Lifecycle`.
"""

from __future__ import annotations

import os
import shlex
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from typing import Any

from atomic_jupyter.errors import (
    AgentNotRunningError,
    AgentStartError,
    AtomicAgentError,
    CommandError,
    CommandTimeoutError,
)
from atomic_jupyter.session.commands import CommandChannel
from atomic_jupyter.session.dialog_registry import DialogRegistry
from atomic_jupyter.session.extension_ui import ExtensionUiState
from atomic_jupyter.session.idle import IdleWatch
from atomic_jupyter.session.launch_env import exit_reason, plan_launch, start_failure
from atomic_jupyter.session.lifecycle import Lifecycle, Phase, Step
from atomic_jupyter.session.plugins import Addon
from atomic_jupyter.session.run_tracker import RunTracker
from atomic_jupyter.session.settings import Settings
from atomic_jupyter.transport.client import AgentClient
from atomic_jupyter.transport.launch import LaunchSpec, build_argv, resolve_command
from atomic_jupyter.transport.secrets import Redactor

__all__ = ["Launcher", "extension_commands"]


def extension_commands(data: Any) -> set[str]:
    """The names of the commands the agent's extensions registered (``get_commands`` data)."""
    commands = data.get("commands", []) if isinstance(data, dict) else []
    return {
        str(c.get("name"))
        for c in commands
        if isinstance(c, dict) and c.get("source") == "extension"
    }


class Launcher:
    """``start``, ``stop`` and the agent's exit.

    Parameters
    ----------
    name, spec, config:
        The session's name, how to launch its agent, and its settings.
    client, lifecycle, commands, tracker, ui, dialogs, idle:
        The session's parts: each launch and exit reaches them all.
    addons:
        The session's addons (filled once the session has made them).
    state_changed:
        Called after a step of the launch or the exit changed the session's state.
    """

    def __init__(
        self,
        name: str,
        spec: LaunchSpec,
        config: Settings,
        *,
        client: AgentClient,
        lifecycle: Lifecycle,
        commands: CommandChannel,
        tracker: RunTracker,
        ui: ExtensionUiState,
        dialogs: DialogRegistry,
        idle: IdleWatch,
        addons: list[Addon],
        state_changed: Callable[[], None],
    ) -> None:
        self._name, self._spec, self._config = name, spec, config
        self.resolved = resolve_command(
            spec.command, config.command or None, agent_home=config.agent_home
        )
        #: The agent's full command line (the addons' arguments added at each start).
        self.argv = build_argv(self.resolved.argv, spec)
        self._client = client
        self._lifecycle = lifecycle
        self._commands = commands
        self._tracker = tracker
        self._ui = ui
        self._dialogs = dialogs
        self._idle = idle
        self._addons = addons
        self._state_changed = state_changed
        self._waking = threading.RLock()
        self._wake_note: str | None = None

    @property
    def stderr_tail(self) -> str:
        """The last part of what the agent wrote on stderr (secrets redacted)."""
        process = self._client.process
        return self._ui.redact(process.stderr_tail()) if process else ""

    @property
    def command_line(self) -> str:
        """The agent's command line, quoted for a shell."""
        return self._ui.redact(shlex.join(self.argv))

    def start(self, timeout: float | None = None) -> None:
        """Start the agent and wait until it answers its first command.

        Raises
        ------
        AgentStartError
            When the executable is missing, or the agent exits or stays silent at start-up;
            the message names the command and shows the agent's stderr.
        """
        if self._commands.alive:
            pid = self._client.process.pid if self._client.process else None
            raise AgentStartError(f"session {self._name!r} is already running (pid {pid})")
        try:
            launch = plan_launch(self.resolved, self._spec, self._addons, os.environ)
        except BaseException:
            self.addons_exited()
            raise
        self.argv = launch.argv
        redactor = Redactor.for_launch(self._spec.env, os.environ, launch.argv)
        self._ui.use_redactor(redactor)
        self._tracker.line = launch.line
        self._tracker.reset()
        self._lifecycle.begin(launch.line, launch.prepared)
        self._state_changed()
        self._ui.reset()
        try:
            argv, cwd, env = launch.argv, launch.cwd, launch.env
            self._client.launch(
                argv,
                cwd=cwd,
                env=env,
                on_exit=self.on_exit,
                scrubber=redactor,
                reader_turn_s=self._config.reader_turn_ms / 1000,
            )
        except AgentStartError:
            if self._lifecycle.launch_failed():
                self._state_changed()
            self.addons_exited()
            raise
        timeout = self._config.startup_timeout if timeout is None else timeout
        try:
            self._commands.request({"type": "get_state"}, timeout=timeout)
        except (AgentNotRunningError, CommandTimeoutError, CommandError) as exc:
            self.end_process(requested=False)
            tail, timed_out = self.stderr_tail, isinstance(exc, CommandTimeoutError)
            code = self._lifecycle.exit_code
            raise start_failure(self.command_line, code, exc, tail, timed_out) from None
        except BaseException:  # an interrupt during start-up must not leave an orphan agent
            self.end_process()
            raise
        if self._lifecycle.started():
            self._state_changed()
        self._idle.start()
        with suppress(AtomicAgentError):  # which /name prompts are extension commands
            data = self._commands.request({"type": "get_commands"}, timeout=10).data
            self._tracker.extension_commands = extension_commands(data)

    @property
    def spec(self) -> LaunchSpec:
        """How the agent is launched."""
        return self._spec

    def relaunch_with(self, spec: LaunchSpec) -> None:
        """Launch with ``spec`` from now on (a key added to its environment); a running agent
        is started again at once (on the same conversation)."""
        with self._waking:
            self._spec = spec
            if self._put_to_sleep(5.0):  # not a stop: the panel and the runs' outputs stay
                self.start()

    def end_process(self, timeout: float = 5.0, *, requested: bool = True) -> int | None:
        """End the agent's whole process tree; its exit code (None when none was started)."""
        process = self._client.process
        if process is None:
            return None
        if requested:
            self._lifecycle.request_stop()
        process.stop()
        process.wait_exit(timeout)
        return self._lifecycle.exit_code

    def sleep(self, timeout: float = 5.0) -> bool:
        """End an idle agent, its conversation kept: the session is ``"asleep"`` until the
        next command starts it again (on the idle watch's thread). A command on its way
        waits (it holds the same lock): one that came first keeps the agent awake (the watch
        is asked again under the lock), one that comes after finds it asleep and wakes it.
        Return whether the agent was put to sleep."""
        with self._waking:
            if not self._idle.due():
                return False
            return self._put_to_sleep(timeout)

    def _put_to_sleep(self, timeout: float) -> bool:
        """End a running agent as a sleep does (its conversation and the session's views
        kept); whether it was running."""
        process = self._client.process
        if process is None or not self._commands.alive:
            return False
        self._lifecycle.request_stop(sleep=True)
        process.stop()
        process.wait_exit(timeout)
        # The exit watcher records the exit (state "asleep") a moment after the process
        # ends: a command that waited on the lock must find it recorded.
        deadline = time.monotonic() + timeout
        while not self._lifecycle.ended and time.monotonic() < deadline:
            threading.Event().wait(0.01)
        return True

    def wake_if_asleep(self) -> None:
        """Before a command goes out (any thread): count it as activity, and start an agent
        put to sleep again, on the same conversation (one start however many commands come
        at once). The next run says so in one line (:meth:`take_wake_note`).

        Raises
        ------
        AgentStartError
            When the agent cannot be started again.
        """
        with self._waking:  # reentrant: the start's own commands come through here
            self._idle.touch()
            if self._lifecycle.phase is not Phase.ASLEEP:
                return
            began = time.monotonic()
            self.start()
            minutes = self._config.idle_sleep_minutes
            idle = f"{minutes:g} minute{'s' if minutes != 1 else ''}"
            self._wake_note = (
                f"The agent was asleep (stopped after {idle} idle) and started again on the "
                f"same conversation in {time.monotonic() - began:.1f} s."
            )

    def take_wake_note(self) -> str | None:
        """The line saying the agent was started again, once (None when it was not)."""
        note, self._wake_note = self._wake_note, None
        return note

    def stop(self, timeout: float = 5.0) -> int | None:
        """End the agent and close the addons; the agent's exit code."""
        self._idle.stop()
        code = self.end_process(timeout)
        if self._lifecycle.phase is Phase.ASLEEP and self._lifecycle.take(Step.STOPPED):
            self._state_changed()  # an agent put to sleep is stopped for good now
        for addon in self._addons:
            addon.close()
        return code

    def addons_exited(self) -> None:
        """Tell the addons their agent is gone (the demo model goes with it)."""
        for addon in self._addons:
            addon.agent_exited()

    def on_exit(self, code: int) -> None:
        """The agent exited (on the exit watcher's thread): the state says how, and what
        waited for the agent is told why it ended."""
        self._idle.stop()
        self.addons_exited()
        stopped = self._lifecycle.exited(code)
        reason, known = exit_reason(code, stopped, self.stderr_tail)
        if known:  # a crash whose cause is known: say it in the panel too
            self._ui.diagnose(f"{reason[0].upper()}{reason[1:]}.")
        process = self._client.process
        if process is not None and process.closed_output:
            reason = "the agent closed its output while still running, so it was stopped"
            self._ui.diagnose(reason)
        self._client.fail_pending(reason)
        self._dialogs.close_pending(reason)
        self._dialogs.report_undelivered()
        self._tracker.exited(reason, "info" if stopped else "error")
        self._state_changed()
