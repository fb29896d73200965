"""Output that streams in while a cell blocks: ``%atomic_agent bash``'s live output.

The pieces come on the reader thread while the cell waits for the command's answer; they are
appended to an ``Output`` widget's ``outputs`` (a trait change, which is safe from another
thread, unlike ``print`` or ``with output:``, and the kernel's loop cannot run while the cell
blocks). That trait change is the one piece of widget work allowed off the kernel's thread; it
is made under its lock and inside :func:`~atomic_jupyter.ui.dispatch.thread_safe_update`,
which says so to the test suite's thread guard. Once the answer is in, the magic replaces the
live view by the result's record (plain text and escaped HTML), which is what the saved
notebook keeps, and the widget is closed.
"""

from __future__ import annotations

import threading

import ipywidgets as w

from atomic_jupyter.ui.dispatch import thread_safe_update

__all__ = ["LiveOutput"]

#: The most characters the live view keeps (the newest); the result has the agent's own cut.
LIVE_CHARS = 20_000


class LiveOutput:
    """A growing block of plain text, shown in an ``Output`` widget (``widget``)."""

    def __init__(self) -> None:
        self.widget = w.Output(layout=w.Layout(max_height="20em", overflow="auto"))
        self.widget.add_class("atomic-live-output")
        self._lock = threading.Lock()
        self._text = ""
        self.closed = False

    def append(self, text: str) -> None:
        """Add a piece of output (from any thread)."""
        with self._lock:
            if self.closed:
                return
            self._text = (self._text + text)[-LIVE_CHARS:]
            # One stream output, replaced: the frontend shows it as text, never as HTML.
            with thread_safe_update():
                self.widget.outputs = (
                    {"output_type": "stream", "name": "stdout", "text": self._text},
                )

    @property
    def text(self) -> str:
        """What the live view shows."""
        return self._text

    def close(self) -> None:
        """Remove the live view (the caller prints the final result)."""
        with self._lock:
            self.closed = True
        self.widget.close()
