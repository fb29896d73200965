"""A prompt sent to the agent, and where the dialogs it raises are shown."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Callable

from .messages import Response

if TYPE_CHECKING:
    import ipywidgets

__all__ = ["PromptRun"]


class PromptRun:
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
    """

    def __init__(self, run_id: str, message: str) -> None:
        self.id = run_id
        self.message = message
        self.response: Response | None = None
        self.error: str | None = None
        self._answered = threading.Event()
        self._widget: ipywidgets.Widget | None = None
        self._widget_factory: Callable[[PromptRun], ipywidgets.Widget] | None = None
        self._build_lock = threading.RLock()

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

    @property
    def widget(self) -> ipywidgets.Widget | None:
        """The run's output area (built on first use)."""
        with self._build_lock:
            if self._widget is None and self._widget_factory is not None:
                self._widget = self._widget_factory(self)
            return self._widget
