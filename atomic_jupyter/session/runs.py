"""A prompt sent to the agent: its transcript, and whether its run has ended."""

from __future__ import annotations

import threading

from atomic_jupyter.protocol.messages import Response
from atomic_jupyter.session.transcript import Transcript

__all__ = ["PromptRun"]


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
        The text sent.
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
        #: Whether the run's area is on the page (a prompt cell, or the panel's editor).
        self.shown = False
        #: Whether the prompt waits in the agent's queue behind a running run.
        self.queued = False
        #: Whether the prompt invokes an extension command (which runs at once).
        self.is_command = False
        #: How many ``agent_end`` events had come when the prompt was answered.
        self.answered_after = 0
        #: Whether the run ended because the agent exited.
        self.exited = False
        self._done = threading.Event()
        self._answered = threading.Event()
        self._finished = threading.Event()

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

    def _settle(self, response: Response | None, error: str | None) -> None:
        self.response = response
        self.error = error
        self._answered.set()

    def _finish(self) -> None:
        self._finished.set()

    def _final_shown(self) -> None:
        self._done.set()
