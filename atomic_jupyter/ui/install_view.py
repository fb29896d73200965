"""An install of the pinned agent, shown in a cell: a progress bar and what is happening while
it runs, then what was installed where (or why it failed) as plain text; on a terminal, a bar
redrawn in place (:class:`ProgressPrinter`).

Updated only on the thread that runs the install (the kernel's: a cell or a button's click).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TextIO

import ipywidgets as w

from atomic_jupyter.transport.agent_install import Progress
from atomic_jupyter.ui.closing import close_widget

__all__ = ["InstallOffer", "InstallView", "ProgressPrinter"]


class InstallView:
    """The progress of one install.

    Attributes
    ----------
    bar:
        The progress bar, from 0 to 1.
    status:
        What the install is doing, in words.
    widget:
        Both, to display.
    """

    def __init__(self, what: str) -> None:
        self.bar = w.FloatProgress(
            value=0.0, min=0.0, max=1.0, description="Installing", bar_style="info"
        )
        self.status = w.Label(value=f"{what}: starting")
        self.widget = w.VBox([self.bar, self.status])
        self.widget.add_class("atomic-install")
        self.steps: list[str] = []

    def update(self, progress: Progress) -> None:
        """Show ``progress`` (the bar never moves back)."""
        self.bar.value = max(self.bar.value, progress.fraction)
        self.status.value = progress.message
        if not self.steps or self.steps[-1] != progress.phase:
            self.steps.append(progress.phase)

    def finish(self, ok: bool, text: str) -> None:
        """End the view: the bar full and green, or red, and ``text`` as its status."""
        if ok:
            self.bar.value = 1.0
        self.bar.bar_style = "success" if ok else "danger"
        self.bar.description = "Installed" if ok else "Failed"
        self.status.value = text.splitlines()[0] if text else ""

    def close(self) -> None:
        """Close the widgets (the cell then shows the install's text record)."""
        close_widget(self.widget)


class InstallOffer:
    """A button that installs the pinned agent and then starts the session, shown when
    ``start`` found no agent.

    Parameters
    ----------
    label:
        The button's text.
    action:
        Called on click, on the kernel's thread, with the offer's output area current (what it
        displays goes below the button). The button is disabled while it runs and for good
        once it succeeded; after a failure (shown below it) it says "Try again".
    """

    def __init__(self, label: str, action: Callable[[], Any]) -> None:
        self.button = w.Button(description=label, icon="download", button_style="primary")
        self.button.layout.width = "auto"
        self.output = w.Output()
        self.widget = w.VBox([self.button, self.output])
        self.widget.add_class("atomic-install-offer")
        self._action = action
        self.button.on_click(self._clicked)

    def _clicked(self, _button: Any = None) -> None:
        if self.button.disabled:
            return  # a second click already on its way
        self.button.disabled = True
        self.button.description = "Installing…"
        with self.output:
            try:
                self._action()
            except BaseException as exc:  # shown in the offer's output, like a cell's error
                self.button.description = "Try again"
                self.button.button_style = "danger"
                self.button.disabled = False
                text = getattr(exc, "_render_traceback_", None)
                print("\n".join(text()) if text else f"{type(exc).__name__}: {exc}")
                return
        self.button.description = "Installed and started"
        self.button.button_style = "success"


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
