"""The output of a ``%%atomic_extension`` cell: what loaded, its errors, its commands."""

from __future__ import annotations

from typing import TYPE_CHECKING

import ipywidgets as w

from atomic_jupyter.ui.ansi import strip_ansi
from atomic_jupyter.ui.record import Record, text_record
from atomic_jupyter.ui.text import TextLine

if TYPE_CHECKING:
    from atomic_jupyter.addons.prototype.manager import Problem, PrototypeResult
    from atomic_jupyter.ui.session_view import SessionView

__all__ = ["PrototypeView"]

_ERROR = "var(--jp-error-color1,#c62828)"
_OK = "var(--jp-success-color1,#2e7d32)"
_WARNING = "var(--jp-warn-color1,#b26a00)"


class PrototypeView:
    """Shows a prototype's load result, later handler errors, and a button per command.

    A command's button sends ``/command`` to the agent; the run (and its dialogs) appear below.

    Parameters
    ----------
    view:
        The view of the session the prototype was loaded into.
    result:
        What defining the prototype gave.
    """

    def __init__(self, view: SessionView, result: PrototypeResult) -> None:
        self.view = view
        session = view.session
        self.name = result.name
        if result.ok:
            commands = " ".join(f"/{c}" for c in result.commands) or "no commands"
            header = f"extension {result.name} v{result.version} loaded: {commands}"
        else:
            header = f"extension {result.name} not loaded" + (
                f" (version {result.version - 1} stays loaded)" if result.version > 1 else ""
            )
        self.header = TextLine(header, bold=True, color=_OK if result.ok else _ERROR)
        self.header.add_class("atomic-prototype-header")
        self.errors = w.VBox([self._problem(p) for p in result.problems])
        self.errors.add_class("atomic-prototype-errors")
        buttons = []
        self.commands = list(result.commands) if result.ok else []
        for command in self.commands:
            button = w.Button(
                description=f"/{command}",
                tooltip=f"Send /{command} to the agent",
                layout=w.Layout(width="auto"),
            )
            button.add_class("atomic-prototype-command")
            button.on_click(lambda _b, c=command: self._run(c))
            buttons.append(button)
        self.not_run = w.VBox([self._not_run(text) for text in result.not_run])
        self.not_run.add_class("atomic-prototype-not-run")
        self.runs = w.VBox([])
        self.root = w.VBox([self.header, self.not_run, self.errors, w.HBox(buttons), self.runs])
        self.root.add_class("atomic-prototype")
        self.subscription = (
            session.prototypes.on_problem(result.name, self._later_problem) if result.ok else None
        )

    def record(self) -> Record:
        """The prototype's result as a static record (what it registered, its problems)."""
        lines = [self.header.text]
        lines += [line.text for line in self.not_run.children]
        lines += [line.text for line in self.errors.children]
        if self.commands:
            lines.append("commands: " + " ".join(f"/{c}" for c in self.commands))
        html = "".join(text_record(line).html for line in lines)
        return Record(html, "\n".join(strip_ansi(line) for line in lines))

    @staticmethod
    def _not_run(text: str) -> TextLine:
        line = TextLine(f"not run: {text}", color=_WARNING)
        line.add_class("atomic-prototype-check-not-run")
        return line

    @staticmethod
    def _problem(problem: Problem) -> TextLine:
        line = TextLine(str(problem), color=_ERROR)
        line.add_class("atomic-prototype-error")
        line.add_class(f"atomic-prototype-{problem.kind}-error")
        return line

    def _later_problem(self, problem: Problem) -> None:
        # Reported on the agent's reader thread: show it on the kernel's loop.
        self.view.dispatcher.call(lambda: self._append(problem))

    def _append(self, problem: Problem) -> None:
        self.errors.children = (*self.errors.children, self._problem(problem))

    def _run(self, command: str) -> None:
        run = self.view.session.prompt(f"/{command}", display=False, shown=True)
        self.view.hold_run(run)  # shown here, live as long as this view
        self.runs.children = (*self.runs.children, self.view.run_area(run))
