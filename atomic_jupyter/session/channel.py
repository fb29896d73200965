"""A session's commands to its agent: written only while the agent runs, answered in time, and
failing with the session's own errors (which name the session and how to restart it).

:func:`as_command` is the one place a command is made from its type or a dict, and fields.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from atomic_jupyter.errors import AgentNotRunningError, CommandError, CommandTimeoutError
from atomic_jupyter.protocol.messages import Response, UIResponse
from atomic_jupyter.session.launch_env import how_it_ended
from atomic_jupyter.session.lifecycle import Lifecycle
from atomic_jupyter.session.run_tracker import RunTracker
from atomic_jupyter.session.settings import Settings
from atomic_jupyter.transport.client import AgentClient, PendingCommand
from atomic_jupyter.transport.process import Delivery

__all__ = ["CommandChannel", "as_command"]


def as_command(
    command: Mapping[str, Any] | str, fields: Mapping[str, Any], *, given: bool = False
) -> dict[str, Any]:
    """A command as a new dict: ``command`` (a dict, or just its type) with ``fields`` added.

    ``given``: leave out the fields whose value is None (optional arguments not given).
    """
    extra = {k: v for k, v in fields.items() if v is not None} if given else fields
    base = {"type": command} if isinstance(command, str) else command
    return {**base, **extra}


class CommandChannel:
    """Sends a session's commands through its client.

    Parameters
    ----------
    client:
        The client of the session's agent.
    lifecycle:
        The session's state (a command goes out only while the agent runs or starts).
    name:
        The session's name (its errors say how to restart it).
    settings:
        Read for ``request_timeout`` at each request.
    redact:
        Takes secrets out of the agent's error texts.
    tracker:
        Told of each command (a ``steer``'s message is not a prompt of its own).
    """

    def __init__(
        self,
        client: AgentClient,
        lifecycle: Lifecycle,
        *,
        name: str,
        settings: Settings,
        redact: Callable[[str], str],
        tracker: RunTracker,
    ) -> None:
        self._client = client
        self._lifecycle = lifecycle
        self._name = name
        self._settings = settings
        self._redact = redact
        self._tracker = tracker

    @property
    def alive(self) -> bool:
        """Whether the agent process is running (and its launch not over)."""
        process = self._client.process
        return process is not None and process.alive and not self._lifecycle.ended

    def accepting(self) -> bool:
        """Whether the agent can take a command or an answer: it runs, or is starting."""
        return self.alive or self._lifecycle.state == "starting"

    def not_running_error(self) -> AgentNotRunningError:
        """The session's error for an agent that is not running (how it ended, and how to
        restart it)."""
        what = how_it_ended(self._lifecycle.state, self._lifecycle.exit_code)
        flag = "" if self._name == "default" else " --name " + self._name
        return AgentNotRunningError(
            f"the agent of session {self._name!r} {what}; restart it with "
            f"`%atomic_agent restart{flag}` or session.restart()"
        )

    def check_running(self) -> None:
        """Raise :meth:`not_running_error` unless the agent runs or is starting."""
        if self._client.process is None or not self.accepting():
            raise self.not_running_error()

    def prepare(self, command: Mapping[str, Any]) -> PendingCommand:
        """Give a command its id and future without writing it (see :meth:`write`)."""
        self.check_running()
        return self._client.prepare(command)

    def write(self, pending: PendingCommand) -> None:
        """Write a prepared command; an agent that is not running is the session's error."""
        try:
            self._client.write(pending)
        except AgentNotRunningError:
            raise self.not_running_error() from None

    def send(self, command: Mapping[str, Any]) -> PendingCommand:
        """Write a command and return the future of its answer."""
        self.check_running()
        try:
            return self._client.request(command)
        except AgentNotRunningError:
            raise self.not_running_error() from None

    def request(
        self, /, command: Mapping[str, Any] | str, timeout: float | None = None, **fields: Any
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
        command = as_command(command, fields)
        timeout = self._settings.request_timeout if timeout is None else timeout
        self._tracker.note_command(command)
        pending = self.send(command)
        try:
            response: Response = pending.result(timeout)
        except FutureTimeout:
            self._client.abandon(pending)
            raise CommandTimeoutError(
                f"the agent did not answer {pending.command!r} within {timeout:g} s "
                "(a dialog waiting for an answer can hold it up)"
            ) from None
        except AgentNotRunningError:
            raise self.not_running_error() from None
        if not response.success:
            raise CommandError(pending.command, self._redact(response.error or "no reason given"))
        return response

    def answer(self, response: UIResponse) -> Delivery:
        """Write a dialog's answer; raise :meth:`not_running_error` when the agent is gone."""
        process = self._client.process
        # exited() looks at the process itself: the exit watcher may not have run yet.
        if process is None or not self.alive or process.exited():
            raise self.not_running_error()
        return self._client.send_answer(response)
