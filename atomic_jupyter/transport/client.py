"""The client: an agent process joined to a protocol connection. ``request()`` -> a future.

:class:`AgentClient` owns one :class:`~atomic_jupyter.transport.process.AgentProcess` at a
time and one :class:`~atomic_jupyter.protocol.connection.RpcConnection` per launch. Bytes
from the agent's stdout go through the connection on the reader thread: answers settle the
future of their command, everything else goes to ``on_message``. Commands are encoded by the
connection and written by the process's writer thread, in order.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import Future, InvalidStateError
from typing import Any

from atomic_jupyter.errors import AgentNotRunningError, AgentStartError
from atomic_jupyter.protocol.connection import ConnectionEvent, Reply, RpcConnection
from atomic_jupyter.protocol.decode import Scrubber
from atomic_jupyter.protocol.messages import Response, UIResponse
from atomic_jupyter.transport.process import AgentProcess, Delivery
from atomic_jupyter.transport.reader_turns import DEFAULT_TURN_S

__all__ = ["QUESTIONS", "AgentClient", "AgentGoneError", "PendingCommand"]

#: Commands that only ask (they change nothing and no extension raises a dialog on them): one
#: waiting for its answer does not make the client :meth:`~AgentClient.busy`.
QUESTIONS = frozenset(
    {"get_state", "get_session_stats", "get_available_thinking_levels", "get_available_models"}
)

log = logging.getLogger(__name__)


class AgentGoneError(AgentNotRunningError):
    """The agent went away before it answered a command; the message says why."""


class PendingCommand(Future):  # type: ignore[type-arg]
    """The future answer (a :class:`~atomic_jupyter.protocol.messages.Response`) to one command.

    Attributes
    ----------
    id:
        The command's id.
    command:
        The command's type.
    """

    def __init__(self, cid: str, command: str, data: bytes) -> None:
        super().__init__()
        self.id = cid
        self.command = command
        self.data = data

    def settle(self, response: Response) -> None:
        """Set the answer (a second answer is ignored)."""
        try:
            self.set_result(response)
        except InvalidStateError:
            pass

    def fail(self, error: BaseException) -> None:
        """Set the failure (ignored once settled)."""
        try:
            self.set_exception(error)
        except InvalidStateError:
            pass


class AgentClient:
    """Commands to one agent and their answers; the agent's other messages to a callback.

    Parameters
    ----------
    on_message:
        Called on the reader thread with every event of the connection that is not the
        answer to a waiting command (agent events, UI requests, stray or late answers,
        duplicate dialogs, undecodable lines). Exceptions are logged; the stream goes on.
    """

    def __init__(self, on_message: Callable[[ConnectionEvent], None] | None = None) -> None:
        self._on_message = on_message
        self._lock = threading.Lock()
        self._connection = RpcConnection()
        self._futures: dict[str, PendingCommand] = {}
        self._process: AgentProcess | None = None

    @property
    def on_message(self) -> Callable[[ConnectionEvent], None] | None:
        """Where the agent's messages go (given to the constructor)."""
        return self._on_message

    @property
    def process(self) -> AgentProcess | None:
        """The running (or last) agent process; None before the first launch and after a
        launch that could not spawn it."""
        return self._process

    def launch(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None,
        env: Mapping[str, str],
        on_exit: Callable[[int], None],
        scrubber: Scrubber | None = None,
        reader_turn_s: float = DEFAULT_TURN_S,
    ) -> AgentProcess:
        """Spawn the agent with a fresh connection; ``scrubber`` takes secrets out of the
        agent's lines before they are decoded; ``reader_turn_s`` is how often the reader lets
        the kernel's own thread run while a fast stream comes in.

        Raises
        ------
        AgentStartError
            When the agent cannot be spawned (then :attr:`process` is None).
        """
        with self._lock:
            self._connection = RpcConnection(scrubber=scrubber)
        process = AgentProcess(
            argv,
            on_data=self.receive_data,
            on_eof=self.receive_eof,
            on_exit=on_exit,
            cwd=cwd,
            env=env,
            reader_turn_s=reader_turn_s,
        )
        self._process = process  # before it starts: its first lines may come at once
        try:
            process.start()
        except AgentStartError:
            self._process = None
            raise
        return process

    # ------------------------------------------------------------------ commands

    def prepare(self, command: Mapping[str, Any]) -> PendingCommand:
        """Give a command its id and a future, without writing it yet (see :meth:`write`)."""
        with self._lock:
            outgoing = self._connection.send_command(command)
            pending = PendingCommand(outgoing.id, outgoing.command, outgoing.data)
            self._futures[pending.id] = pending
        return pending

    def write(self, pending: PendingCommand) -> None:
        """Queue a prepared command for the agent's stdin.

        Raises
        ------
        AgentNotRunningError
            When there is no running agent; the command is forgotten.
        """
        process = self._process
        try:
            if process is None:
                raise AgentNotRunningError("the agent is not running")
            process.send(pending.data)
        except AgentNotRunningError:
            with self._lock:
                self._connection.forget(pending.id)
                self._futures.pop(pending.id, None)
            raise

    def request(self, command: Mapping[str, Any]) -> PendingCommand:
        """Send a command; return the future of its answer."""
        pending = self.prepare(command)
        self.write(pending)
        return pending

    def abandon(self, pending: PendingCommand) -> None:
        """Stop waiting for an answer; one that comes later is reported as late."""
        with self._lock:
            self._connection.abandon(pending.id)
            self._futures.pop(pending.id, None)

    def waiting(self, *, besides: Collection[str] = ()) -> list[str]:
        """The types of the commands still waiting for their answer (leaving out the types
        in ``besides``), oldest first."""
        with self._lock:
            return [kind for kind in self._connection.pending.values() if kind not in besides]

    def busy(self) -> bool:
        """Whether a command waits for the agent's answer, other than the questions that
        change nothing and raise no dialog (:data:`QUESTIONS`)."""
        return bool(self.waiting(besides=QUESTIONS))

    def fail_pending(self, reason: str) -> None:
        """The agent is gone: fail every command still waiting, with ``reason``."""
        with self._lock:
            self._connection.close()
            futures, self._futures = list(self._futures.values()), {}
        for future in futures:
            future.fail(AgentGoneError(reason))

    def send_answer(self, response: UIResponse) -> Delivery:
        """Queue a dialog's answer for the agent's stdin; return how its write goes."""
        process = self._process
        if process is None:
            raise AgentNotRunningError("the agent is not running")
        with self._lock:
            data = self._connection.send_ui_response(response)
        return process.send(data)

    # ------------------------------------------------------------------ incoming

    def receive_data(self, data: bytes) -> None:
        """Bytes from the agent's stdout (the reader thread calls this, as can a test)."""
        with self._lock:
            events = self._connection.receive_data(data)
        self._deliver(events)

    def receive_eof(self) -> None:
        """The agent's stdout has ended."""
        with self._lock:
            events = self._connection.receive_eof()
        self._deliver(events)

    def _deliver(self, events: list[ConnectionEvent]) -> None:
        for event in events:
            try:
                if isinstance(event, Reply):
                    with self._lock:
                        future = self._futures.pop(event.id, None)
                    if future is not None:
                        future.settle(event.response)
                elif self._on_message is not None:
                    self._on_message(event)
            except Exception:  # a bug in a handler must not stop the stream
                log.exception("atomic-jupyter: error while handling a message from the agent")
