"""An install's progress on a terminal (``atomic-jupyter install-agent``, and
``%atomic_agent install`` outside a kernel): plain text, no widget library."""

from __future__ import annotations

from typing import TextIO

from atomic_jupyter.transport.agent_install.npm_log import Progress

__all__ = ["ProgressPrinter"]


class ProgressPrinter:
    """Shows an install's progress on a terminal: a bar redrawn in place on a TTY, a line
    per step (and per quarter of the download) otherwise; nothing once done (the result
    follows)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self._phase = ""
        self._quarter = -1
        self._drawn = False

    def __call__(self, progress: Progress) -> None:
        if progress.phase == "done":  # the result is printed next, in full
            self.end()
            return
        if self.tty:
            filled = int(progress.fraction * 30)
            bar = "#" * filled + "." * (30 - filled)
            self.stream.write(f"\r[{bar}] {progress.fraction:4.0%} {progress.message[:60]:<60}")
            self._drawn = True
        else:
            quarter = int(progress.fraction * 4)
            if progress.phase != self._phase or quarter != self._quarter:
                self.stream.write(f"{progress.message}\n")
            self._quarter = quarter
        self._phase = progress.phase
        self.stream.flush()

    def end(self) -> None:
        """Clear the line a bar was drawn on."""
        if self._drawn:
            self.stream.write("\r" + " " * 98 + "\r")
            self.stream.flush()
            self._drawn = False
