"""The output of a ``%%atomic_extension`` cell: what loaded, its errors, its commands, and the
runs of the commands clicked there."""

from __future__ import annotations

from typing import TYPE_CHECKING

from atomic_jupyter.ui.lines_output import Line, LinesOutput, text_line
from atomic_jupyter.ui.page_protocol import CommandClicked, PageContent, PageMessage
from atomic_jupyter.ui.record import run_record, text_html
from atomic_jupyter.ui.run_list import RunList
from atomic_jupyter.ui.run_parts import Text
from atomic_jupyter.ui.text import button_html

if TYPE_CHECKING:
    from atomic_jupyter.addons.prototype.manager import Problem, PrototypeResult
    from atomic_jupyter.session.runs import PromptRun
    from atomic_jupyter.ui.session_view import SessionView

__all__ = ["PROTOTYPE_RUNS", "PrototypeView", "not_run_line"]

#: The runs of its commands a prototype's output shows, at most (the oldest settled go first).
PROTOTYPE_RUNS = 20


def not_run_line(index: int, text: str) -> Line:
    """The line that says a check did not run (``text``: which, and why)."""
    return text_line(
        f"not-run{index}", "atomic-prototype-check-not-run", f"not run: {text}", "warning"
    )


class PrototypeView(LinesOutput):
    """Shows a prototype's load result, later handler errors, and a button per command.

    A command's button sends ``/command`` to the agent; the run (and its dialogs) appear in
    this output, below the buttons, drawn as a run's own output is.

    Parameters
    ----------
    view:
        The view of the session the prototype was loaded into.
    result:
        What defining the prototype gave.
    """

    def __init__(self, view: SessionView, result: PrototypeResult) -> None:
        super().__init__("prototype")
        self.view = view
        self.name = result.name
        if result.ok:
            commands = " ".join(f"/{c}" for c in result.commands) or "no commands"
            self.header = f"extension {result.name} v{result.version} loaded: {commands}"
        else:
            self.header = f"extension {result.name} not loaded" + (
                f" (version {result.version - 1} stays loaded)" if result.version > 1 else ""
            )
        self.ok = result.ok
        self.not_run = list(result.not_run)
        self.problems: list[Problem] = list(result.problems)
        self.commands = list(result.commands) if result.ok else []
        #: The runs of its commands, drawn inside it.
        self.run_list = RunList(
            "runs", self._dialog_changed, view.stop_run, view.make_rule, PROTOTYPE_RUNS
        )
        session = view.session
        self.subscription = (
            session.prototypes.on_problem(result.name, self._later_problem) if result.ok else None
        )
        view.add_host(self)
        self.render()

    def lines(self) -> list[Line]:
        """The header, the checks not run, the problems, the command buttons."""
        tone = "bold" if self.ok else "error"
        lines = [text_line("header", "atomic-prototype-header", self.header, tone)]
        lines += [not_run_line(index, text) for index, text in enumerate(self.not_run)]
        for index, problem in enumerate(self.problems):
            cls = f"atomic-prototype-error atomic-prototype-{problem.kind}-error"
            lines.append(text_line(f"problem{index}", cls, str(problem), "error"))
        if self.commands:
            said = "commands: " + " ".join(f"/{c}" for c in self.commands)
            buttons = " ".join(
                button_html(
                    f"/{command}",
                    "command",
                    "atomic-prototype-command",
                    title=f"Send /{command} to the agent",
                    name=command,
                )
                for command in self.commands
            )
            html = text_html(Text("atomic-prototype-commands", said))
            drawn = f'<div class="atomic-prototype-commands">{buttons}</div>'
            lines.append(Line("commands", html, said, drawn))
        return lines

    @property
    def runs(self) -> list[PromptRun]:
        """The runs of its commands it shows, oldest first."""
        return self.run_list.runs

    def record_lines(self) -> list[Line]:
        """Its lines, then the record of each run of its commands."""
        lines = self.lines()
        for index, run in enumerate(self.runs):
            record = run_record(run)
            lines.append(Line(f"run{index}", record.html, record.plain, ""))
        return lines

    def fill(self, content: PageContent) -> None:
        """The runs of the commands clicked, below the buttons."""
        self.run_list.fill(content, "atomic-prototype-runs")

    def act(self, message: PageMessage) -> None:
        """A command's button (a name it does not have does nothing), or a click for a run
        shown here."""
        if isinstance(message, CommandClicked):
            if message.name in self.commands:
                self._run(message.name)
        else:
            self.run_list.act(message)

    def _run(self, command: str) -> None:
        run: PromptRun = self.view.session.prompt(f"/{command}", display=False, shown=True)
        self.run_list.add(run)
        self.render()

    def _dialog_changed(self) -> None:
        self.view.later(self.render, key=("prototype", id(self)))

    def _later_problem(self, problem: Problem) -> None:
        # Reported on the agent's reader thread: shown on the kernel's loop.
        self.view.later(lambda: self._add_problem(problem))

    def _add_problem(self, problem: Problem) -> None:
        self.problems.append(problem)
        self.render()

    def let_go(self) -> None:
        """Stop following the prototype and its runs (as the output closes)."""
        if self.subscription is not None:
            self.subscription.remove()
            self.subscription = None
        self.view.remove_host(self)
        self.run_list.close()
