"""How a session is shown in a notebook: its :class:`~atomic_jupyter.ui.session_view.SessionView`
and IPython's display. The session creates one when it is first shown (see
:mod:`atomic_jupyter.session.plugins`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from atomic_jupyter.ui.session_view import SessionView

if TYPE_CHECKING:
    from atomic_jupyter.session.runs import PromptRun
    from atomic_jupyter.session.session import AgentSession

__all__ = ["NotebookPresentation", "display", "in_ipython", "view_of"]


def in_ipython() -> bool:
    """Whether IPython runs (a kernel or a terminal shell)."""
    from IPython import get_ipython

    return get_ipython() is not None


def display(obj: Any) -> None:
    """Display ``obj`` in the current cell when IPython runs; do nothing otherwise."""
    if in_ipython():
        from IPython.display import display as ipython_display

        ipython_display(obj)


class NotebookPresentation:
    """Shows one session: the panel and prompt areas of a :class:`SessionView`, displayed by
    IPython in the cell that asks. The view (and so every widget) is made on first use."""

    def __init__(self, session: AgentSession) -> None:
        self._session = session
        self._view: SessionView | None = None

    @property
    def view(self) -> SessionView:
        """The session's view (made on first use, on the main thread)."""
        if self._view is None:
            self._view = SessionView(self._session)
        return self._view

    @property
    def panel(self) -> Any:
        """The session's panel."""
        return self.view.panel

    @property
    def displays(self) -> bool:
        """Whether runs can be displayed (IPython runs)."""
        return in_ipython()

    def prepare_run(self, run: PromptRun) -> None:
        """Build the run's area before its prompt goes out, so no event can miss it."""
        self.view.dispatcher.capture_loop()
        self.view.run_area(run)

    def display_run(self, run: PromptRun) -> None:
        """Display the run's area in the current cell."""
        if run.shown:
            display(self.view.run_area(run))

    def pump(self) -> None:
        """Do the view work that is due (a blocking wait calls this on the main thread)."""
        if self._view is not None:
            self._view.pump()

    def close(self) -> None:
        """Stop observing the session."""
        if self._view is not None:
            self._view.close()


def view_of(session: AgentSession) -> SessionView:
    """The view that shows ``session`` (made on first use)."""
    presentation = session.presentation
    assert isinstance(presentation, NotebookPresentation), "atomic_jupyter.wiring is not loaded"
    return presentation.view
