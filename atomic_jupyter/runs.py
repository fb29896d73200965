"""A prompt sent to the agent, and where the dialogs it raises are shown."""

from __future__ import annotations

import threading

from .lazy_widget import LazyWidget
from .messages import Response

__all__ = ["PromptRun"]


class PromptRun(LazyWidget):
    """One prompt sent to the agent (an extension command such as ``/name`` counts).

    Dialogs that the agent raises after this prompt, until the next one, are shown in this
    run's widget, which the cell that sent the prompt displays.

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
    widget:
        The run's output area (built on first use).
    """

    def __init__(self, run_id: str, message: str) -> None:
        self.id = run_id
        self.message = message
        self.response: Response | None = None
        self.error: str | None = None
        self._answered = threading.Event()
        self._init_widget()

    def __repr__(self) -> str:
        state = "answered" if self._answered.is_set() else "waiting"
        return f"<PromptRun {self.id} {self.message[:40]!r} {state}>"

    @property
    def answered(self) -> bool:
        """Whether the agent has answered the prompt command (or it failed)."""
        return self._answered.is_set()

    def wait_answered(self, timeout: float | None = None) -> bool:
        """Block until the prompt command is answered or failed; return whether it was."""
        return self._answered.wait(timeout)

    def _settle(self, response: Response | None, error: str | None) -> None:
        self.response = response
        self.error = error
        self._answered.set()
