"""Output that streams in while a cell blocks: ``%atomic_agent bash``'s live output.

The pieces come on the reader thread while the cell waits for the command's answer; the
output's one widget is sent the text so far (its last :data:`LIVE_CHARS`) as one block of
escaped text. That render is the one piece of widget work allowed off the kernel's thread
(the kernel's loop cannot run while the cell blocks): it is made under the output's lock and
inside :func:`~atomic_jupyter.ui.dispatch.thread_safe_update`, which says so to the test
suite's thread guard. Once the answer is in, the magic replaces the live view by the result's
record, which is what the saved notebook keeps, and the widget is emptied and closed.
"""

from __future__ import annotations

from atomic_jupyter.ui.dispatch import thread_safe_update
from atomic_jupyter.ui.lines_output import Line, LinesOutput
from atomic_jupyter.ui.text import pre_html

__all__ = ["LIVE_CHARS", "LiveOutput"]

#: The most characters the live view keeps (the newest); the result has the agent's own cut.
LIVE_CHARS = 20_000
_BOX = '<div class="atomic-live-text" style="max-height:20em;overflow:auto">{}</div>'


class LiveOutput(LinesOutput):
    """A growing block of plain text, shown in one output widget (``widget``)."""

    def __init__(self) -> None:
        super().__init__("live-output")
        self._text = ""

    def append(self, text: str) -> None:
        """Add a piece of output (from any thread)."""
        with self._lock:
            if self.closed:
                return
            self._text = (self._text + text)[-LIVE_CHARS:]
            with thread_safe_update():
                self.render()

    @property
    def text(self) -> str:
        """What the live view shows."""
        return self._text

    def lines(self) -> list[Line]:
        """The text so far, as one block (not kept in the record: the result is)."""
        if not self._text:
            return []
        return [Line("text", "", live=_BOX.format(pre_html([self._text])))]
