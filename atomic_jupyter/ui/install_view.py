"""An install of the pinned agent, shown in a cell: a progress bar and what is happening while
it runs, then what was installed where (or why it failed); and the button that offers to
install and start. Each is one output widget of lines
(:class:`~atomic_jupyter.ui.lines_output.LinesOutput`). (On a terminal, the progress is
:class:`atomic_jupyter.transport.agent_install.terminal.ProgressPrinter`.)

Updated only on the thread that runs the install (the kernel's: a cell or a button's click).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from atomic_jupyter.transport.agent_install import Progress
from atomic_jupyter.ui.lines_output import Line, LinesOutput, error_text, text_line
from atomic_jupyter.ui.page_protocol import InstallClicked, PageMessage
from atomic_jupyter.ui.text import button_html, escape

__all__ = ["InstallOffer", "InstallProgress", "InstallView"]

_LOOK = {
    "installing": ("Installing", "muted"),
    "installed": ("Installed", "bold"),
    "failed": ("Failed", "error"),
}
_BAR = "width:16em;margin-right:.5em"
_HEAD = "display:flex;align-items:center"


class InstallProgress:
    """Where one install is: its fraction done (never going back), what it does, its steps,
    and how it ended.

    Parameters
    ----------
    what:
        What is installed (the pin, described).
    changed:
        Called after each change (the output that shows it renders).
    """

    def __init__(self, what: str, changed: Callable[[], None]) -> None:
        self.fraction = 0.0
        self.message = f"{what}: starting"
        self.state = "installing"
        self.steps: list[str] = []
        self._changed = changed

    def update(self, progress: Progress) -> None:
        """Show ``progress`` (the bar never moves back)."""
        self.fraction = max(self.fraction, progress.fraction)
        self.message = progress.message
        if not self.steps or self.steps[-1] != progress.phase:
            self.steps.append(progress.phase)
        self._changed()

    def finish(self, ok: bool, text: str) -> None:
        """End it: the bar full, or red, and ``text`` (the first line) as what it says."""
        if ok:
            self.fraction = 1.0
        self.state = "installed" if ok else "failed"
        self.message = text.splitlines()[0] if text else ""
        self._changed()

    def lines(self, key: str = "install") -> list[Line]:
        """The bar with its label, and what the install does (the record keeps the words)."""
        label, tone = _LOOK[self.state]
        bar = (
            f'<progress class="atomic-install-bar" max="1" value="{self.fraction:.3f}" '
            f'style="{_BAR}" aria-label="{escape(label)}"></progress>'
        )
        head = text_line(
            f"{key}-bar", f"atomic-install-label atomic-install-{self.state}", label, tone
        )
        said = text_line(f"{key}-status", "atomic-install-status", self.message)
        drawn = f'<div class="atomic-install-head" style="{_HEAD}">{bar}{head.html}</div>'
        return [Line(head.key, "", live=drawn), said]


class InstallView(LinesOutput):
    """The progress of one install, in an output of its own.

    Attributes
    ----------
    progress:
        Where the install is.
    """

    def __init__(self, what: str) -> None:
        super().__init__("install")
        self.result: str | None = None
        self.progress = InstallProgress(what, self.render)
        self.render()

    def update(self, progress: Progress) -> None:
        """Show ``progress``."""
        self.progress.update(progress)

    def finish(self, ok: bool, text: str) -> None:
        """End the view with ``text`` (the record keeps it whole)."""
        self.result = text
        self.progress.finish(ok, text)

    def lines(self) -> list[Line]:
        """While it runs, the bar and what it does; once ended, what it says (all of it)."""
        if self.result is not None:
            return [text_line("result", "atomic-install-result", self.result)]
        return self.progress.lines()


class InstallOffer(LinesOutput):
    """A button that installs the pinned agent and then starts the session, shown when
    ``start`` found no agent; the install's progress shows below it.

    Parameters
    ----------
    label:
        The button's text.
    action:
        Called on click, on the kernel's thread, with the offer's :attr:`progress` to show
        the install in. The button is disabled while it runs and for good once it
        succeeded; after a failure (shown below it) it says "Try again".

    Attributes
    ----------
    progress:
        The install under way (None before a click).
    """

    def __init__(self, label: str, what: str, action: Callable[[InstallProgress], Any]) -> None:
        super().__init__("install-offer")
        self.label = label
        self.what = what
        self.state = "offered"  # "installing", "done", "failed"
        self.error = ""
        self.progress: InstallProgress | None = None
        self._action = action
        self.render()

    def lines(self) -> list[Line]:
        """The button, the install's progress, its error."""
        title = {
            "offered": self.label,
            "installing": "Installing…",
            "done": "Installed and started",
            "failed": "Try again",
        }[self.state]
        button = button_html(
            title,
            "install",
            "atomic-install-offer-button",
            title=self.label,
            disabled=self.state in ("installing", "done"),
        )
        lines = [Line("offer", "", live=button)]
        if self.progress is not None:
            lines += self.progress.lines()
        if self.error:
            lines.append(text_line("error", "atomic-install-error", self.error, "error"))
        return lines

    def act(self, message: PageMessage) -> None:
        """A click on the button (a second one on its way does nothing)."""
        if not isinstance(message, InstallClicked) or self.state in ("installing", "done"):
            return
        self.state, self.error = "installing", ""
        self.progress = InstallProgress(self.what, self.render)
        self.render()
        try:
            self._action(self.progress)
        except BaseException as exc:  # shown below the button, like a cell's error
            self.state = "failed"
            self.error = error_text(exc)
            self.render()
            return
        self.state = "done"
        self.render()
