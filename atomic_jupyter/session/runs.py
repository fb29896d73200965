"""A prompt sent to the agent: its transcript, and whether its run has ended."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from atomic_jupyter.errors import AtomicAgentError, CommandError, CommandTimeoutError
from atomic_jupyter.protocol.messages import Response
from atomic_jupyter.session.transcript import Transcript
from atomic_jupyter.session.weight import transcript_weight

__all__ = ["CommandRun", "PromptRun"]

log = logging.getLogger(__name__)


class PromptRun:
    """One prompt sent to the agent (an extension command such as ``/name`` counts).

    Events and dialogs that come after this prompt, until the next one, go into this run's
    :class:`~atomic_jupyter.session.transcript.Transcript`; a view shows it in the output area
    of the cell that sent the prompt.

    Attributes
    ----------
    id:
        The id of the ``prompt`` command.
    message:
        The prompt as written (the header shows it).
    response:
        The agent's ``response`` to the command, once it came (for an extension command
        it comes when the command's handler has finished).
    error:
        Why the prompt failed (refused by the agent, or the agent exited), else None.
    transcript:
        What the run showed: text, thinking, tool calls, notes and dialogs.
    shown:
        Whether the run's area is on the page (a prompt cell, the panel, a prototype's cell).
    """

    def __init__(self, run_id: str, message: str) -> None:
        self.id = run_id
        self.message = message
        self.response: Response | None = None
        self.error: str | None = None
        self.transcript = Transcript(message)
        #: What the agent got: ``message`` with its cited values (``$`name```) expanded.
        self.sent = message
        #: The expressions cited in ``message``, each once, in order.
        self.cited: tuple[str, ...] = ()
        #: Whether the run's area is on the page (a prompt cell, or the panel's editor).
        self.shown = False
        #: Whether the prompt waits in the agent's queue behind a running run.
        self.queued = False
        #: Which of the session's prompts this is (1 for the first; 0 before it is sent).
        self.number = 0
        #: ``"prompt"``, or a command's type (:class:`CommandRun`).
        self.kind = "prompt"
        #: Whether the prompt invokes an extension command (which runs at once).
        self.is_command = False
        #: How many ``agent_end`` events had come when the prompt was answered.
        self.answered_after = 0
        #: Whether the agent answered that a run ``started`` or was ``queued``: it ends with
        #: ``agent_settled`` (current agent line).
        self.awaits_settle = False
        #: Whether the run ended because the agent exited.
        self.exited = False
        self._done = threading.Event()
        self._answered = threading.Event()
        self._lock = threading.Lock()
        self._answer_settled = False
        self._on_answer: list[Callable[[PromptRun], None]] = []
        self._finished = threading.Event()
        self._weight: int | None = None

    def __repr__(self) -> str:
        state = "finished" if self.finished else "answered" if self.answered else "waiting"
        return f"<PromptRun {self.id} {self.message[:40]!r} {state}>"

    @property
    def answered(self) -> bool:
        """Whether the agent has answered the prompt command (or it failed)."""
        return self._answered.is_set()

    @property
    def finished(self) -> bool:
        """Whether the run is over: the agent went idle after it, it failed, or the agent exited."""
        return self._finished.is_set()

    @property
    def weight(self) -> int:
        """What the run holds in memory, in characters of its transcript
        (:mod:`~atomic_jupyter.session.weight`); taken once more after the run is over, then
        kept."""
        weight = self._weight
        if weight is None:
            over = self.finished  # before the weight: a run that ends meanwhile is taken again
            weight = transcript_weight(self.transcript)
            if over:
                self._weight = weight
        return weight

    def wait_done(self, timeout: float | None = None) -> bool:
        """Block until the run is over and its final transcript was handed to the page."""
        return self._done.wait(timeout)

    @property
    def text(self) -> str:
        """The assistant's text in this run (final messages exactly as the agent sent them)."""
        return self.transcript.text()

    def wait_answered(self, timeout: float | None = None) -> bool:
        """Block until the prompt command is answered or failed; return whether it was."""
        return self._answered.wait(timeout)

    def when_answered(self, callback: Callable[[PromptRun], None]) -> None:
        """Call ``callback(run)`` once the command is answered (at once if it already is),
        before anyone waiting for the answer wakes up."""
        with self._lock:
            if not self._answer_settled:
                self._on_answer.append(callback)
                return
        callback(self)

    def _settle(self, response: Response | None, error: str | None) -> None:
        self.response = response
        self.error = error
        with self._lock:
            self._answer_settled = True
            callbacks, self._on_answer = self._on_answer, []
        try:
            for callback in callbacks:
                try:
                    callback(self)
                except Exception:  # a failing listener must not leave the run unanswered
                    log.exception("atomic-jupyter: error in a callback of %r", self)
        finally:
            self._answered.set()

    def _finish(self) -> None:
        self._finished.set()

    def _final_shown(self) -> None:
        self._done.set()


class CommandRun(PromptRun):
    """A command the agent may pause on an extension's dialog (``new_session``,
    ``switch_session``, ``fork``, ``clone``, ``compact``, ``bash``): sent without blocking,
    shown like a prompt's run (its dialogs and its result go into its transcript).

    Attributes
    ----------
    command:
        The command as sent (a dict with its ``type``).
    kind:
        The command's type.
    """

    def __init__(self, run_id: str, command: dict[str, Any], label: str) -> None:
        super().__init__(run_id, label)
        self.command = dict(command)
        self.kind = str(command.get("type", "command"))
        self.is_command = True

    def __repr__(self) -> str:
        state = "finished" if self.finished else "answered" if self.answered else "waiting"
        return f"<CommandRun {self.kind} {state}>"

    @property
    def data(self) -> Any:
        """The agent's answer (its ``data``), once it came.

        Raises
        ------
        CommandError
            When the agent answered with an error (or exited first).
        AtomicAgentError
            When the agent has not answered yet (use :meth:`result` to wait).
        """
        if not self.answered:
            raise AtomicAgentError(
                f"the agent has not answered {self.kind!r} yet; use .result() or "
                "session.wait() (a dialog under the cell may be waiting for you)"
            )
        response = self.response
        if response is not None and not response.success:
            raise CommandError(self.kind, response.error or "no reason given")
        if self.error is not None or response is None:
            raise AtomicAgentError(f"{self.kind!r} got no answer: {self.error}")
        return response.data

    def result(self, timeout: float | None = None) -> Any:
        """Block until the agent answers, then return :attr:`data`.

        In a notebook cell, a dialog raised by the command cannot be clicked while this
        blocks: wait with ``session.wait(run=...)``, which stops when a dialog needs you.

        Raises
        ------
        CommandTimeoutError
            When no answer comes within ``timeout`` seconds.
        CommandError
            When the agent answered with an error.
        """
        if not self.wait_answered(timeout):
            raise CommandTimeoutError(
                f"the agent did not answer {self.kind!r} within {timeout:g} s "
                "(a dialog waiting for an answer can hold it up)"
            )
        return self.data
