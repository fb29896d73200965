"""An install of the pinned agent, shown in a cell: a progress bar and what is happening while
it runs, then what was installed where (or why it failed) as plain text; and the button that
offers to install and start. (On a terminal, the progress is
:class:`atomic_jupyter.transport.agent_install.terminal.ProgressPrinter`.)

Updated only on the thread that runs the install (the kernel's: a cell or a button's click).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ipywidgets as w

from atomic_jupyter.transport.agent_install import Progress
from atomic_jupyter.ui.closing import close_widget

__all__ = ["InstallOffer", "InstallView"]


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
