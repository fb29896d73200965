"""While a person's cell computes, the agent stays with them, in JupyterLab: a dialog answered,
Stop, and a prompt sent from the panel are each drawn in the page before the cell ends.

JupyterLab (>= 4.4) sends widget messages over a kernel subshell of its own (Settings >
Kernel > "Kernel Comms over subshells", ``perCommTarget`` by default), so the kernel handles
them while the main thread runs the cell; what they change, and what the agent streams next,
is drawn from the kernel's side while the cell still runs. Each busy cell computes until the
test lets it go (a file it waits for), so "before the cell ends" holds by construction and is
checked on the page ("[*]:"). The server's log must hold no traceback.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.harness.support import EXTENSIONS

from .browser_harness import LabServer, NotebookPage, panel_of
from .conftest import opened_in_notebook7

pytestmark = [pytest.mark.browser, pytest.mark.agent, pytest.mark.kernel]

UI_EXTENSION = EXTENSIONS / "ui_everything.ts"
FILENAME = "busy-cell.ipynb"
RUNNING = re.compile(r"^\[\*\]:$")
FINISHED = re.compile(r"^\[\d+\]:$")


def busy(flag: str) -> str:
    """A cell that says it started, then computes until the file ``flag`` exists."""
    return (
        "import os, time\n"
        "print('computing', flush=True)\n"
        f"while not os.path.exists({flag!r}):\n"
        "    time.sleep(0.01)\n"
        "print('done computing')"
    )


def cells(scripted_model: Any) -> list[tuple[str, str]]:
    """The demo's session (its guarded command, its answers) and one on the scripted model
    (an answer that crawls, to stop), a prompt for each, and a busy cell per test."""
    _server, home, args = scripted_model
    return [
        ("start", f"%load_ext atomic_jupyter\n%atomic_agent start --demo -e {UI_EXTENSION}"),
        (
            "crawler",
            f"%atomic_agent start --name crawler --env PI_CODING_AGENT_DIR={home} "
            f"-- {' '.join(args)}",
        ),
        ("ask", "%%atomic_agent\nclean up the scratch files"),
        ("crawl", "%%atomic_agent --name crawler\ncrawl please"),
        ("busy-dialog", busy("release-dialog")),
        ("busy-stop", busy("release-stop")),
        ("busy-send", busy("release-send")),
    ]


@pytest.fixture(scope="module")
def nb(open_notebook: Any, scripted_model: Any) -> NotebookPage:
    page = open_notebook(FILENAME, cells(scripted_model))
    page.run("start")
    page.run("crawler")
    return page


class Busy:
    """A busy cell started on the page, and how it is let go."""

    def __init__(
        self, nb: NotebookPage, server: LabServer, name: str, started: bool = False
    ) -> None:
        self.nb, self.name = nb, name
        self.flag = server.root / f"release-{name.removeprefix('busy-')}"
        self.log_from = server.log_size()  # what the server logs from here on is this test's
        cell = nb.cell(name) if started else nb.start(name)
        self.prompt = cell.locator(".jp-InputArea-prompt").first
        expect(nb.output(name)).to_contain_text("computing", timeout=30_000)

    def still_running(self) -> None:
        expect(self.prompt).to_have_text(RUNNING)
        assert not self.flag.exists()

    def release(self) -> None:
        self.flag.touch()
        expect(self.prompt).to_have_text(FINISHED, timeout=30_000)
        expect(self.nb.output(self.name)).to_contain_text("done computing")


@pytest.fixture
def busy_cell(nb: NotebookPage, lab_server: LabServer) -> Iterator[Callable[[str], Busy]]:
    """Starts a busy cell (``busy_cell(name)``); each is let go at the end, even after a
    failure, so the next test's cells can run."""
    started: list[Busy] = []

    def start(name: str) -> Busy:
        cell = Busy(nb, lab_server, name)
        started.append(cell)
        return cell

    yield start
    for cell in started:
        cell.flag.touch()


#: What the server logs when a browser tab it served goes away (an earlier test's page closed
#: by the harness): not this page's doing.
CLOSED_TAB = ("WebSocketClosedError", "StreamClosedError")


def tracebacks(logged: str) -> list[str]:
    """The tracebacks in ``logged``, but those of a tab that went away (:data:`CLOSED_TAB`)."""
    found = []
    for part in logged.split("Traceback (most recent call last):")[1:]:
        lines = [line for line in part.splitlines() if line.strip()]
        if not any(name in part for name in CLOSED_TAB) and lines:
            found.append(lines[-1])
    return found


def drawn_before_the_cell_ended(
    nb: NotebookPage, cell: Busy, server: LabServer, at_load: Sequence[str] = ()
) -> None:
    """The busy cell still runs (what the test waited for was drawn before it ended); then it
    is let go, and neither the page (beyond the errors it had ``at_load``) nor the server's log
    holds an error."""
    cell.still_running()
    cell.release()
    logged = server.log_since(cell.log_from)
    assert not tracebacks(logged), logged
    assert nb.page_errors == list(at_load), nb.page_errors


def test_a_dialog_answered_during_a_cell_shows_its_answer_and_the_agents_next_words(
    nb: NotebookPage, lab_server: LabServer, busy_cell: Callable[[str], Busy]
) -> None:
    nb.run("ask")
    ask = nb.output("ask")
    allow = ask.get_by_role("button", name="Allow")
    expect(allow).to_be_visible(timeout=30_000)
    cell = busy_cell("busy-dialog")
    allow.click()
    expect(ask.locator(".atomic-dialog-outcome")).to_have_text("→ Allow (clicked)", timeout=5_000)
    expect(ask.locator(".atomic-assistant-text").last).to_contain_text("ran", timeout=15_000)
    expect(ask.locator(".atomic-run-state")).to_have_text("done", timeout=15_000)
    drawn_before_the_cell_ended(nb, cell, lab_server)


def test_stop_during_a_cell_shows_the_stopped_run(
    nb: NotebookPage, lab_server: LabServer, busy_cell: Callable[[str], Busy]
) -> None:
    nb.run("crawl")
    crawl = nb.output("crawl")
    expect(crawl.locator(".atomic-assistant-text").first).to_contain_text("crawl", timeout=30_000)
    cell = busy_cell("busy-stop")
    before = crawl.locator(".atomic-assistant-text").first.inner_text()
    # It keeps streaming while the cell computes.
    expect(crawl.locator(".atomic-assistant-text").first).not_to_have_text(before, timeout=5_000)
    crawl.get_by_role("button", name="Stop").click()
    expect(crawl.locator(".atomic-assistant-stopped")).to_have_text(
        "The answer ends here: the run was stopped.", timeout=10_000
    )
    expect(crawl.get_by_role("button", name="Stop")).to_have_count(0)
    drawn_before_the_cell_ended(nb, cell, lab_server)


def test_a_prompt_sent_from_the_panel_during_a_cell_streams_its_answer_there(
    nb: NotebookPage, lab_server: LabServer, busy_cell: Callable[[str], Busy]
) -> None:
    panel = panel_of(nb)
    cell = busy_cell("busy-send")
    editor = panel.locator(".atomic-editor textarea")
    editor.fill("hello! who are you?")
    panel.get_by_role("button", name="Send").click()
    expect(editor).to_have_value("")
    expect(panel.locator(".atomic-assistant-text").last).to_contain_text(
        "Hello from the offline demo model", timeout=15_000
    )
    drawn_before_the_cell_ended(nb, cell, lab_server)


def test_in_notebook_7_a_dialog_answered_during_a_cell_shows_its_answer(
    notebook7: LabServer, chromium: Any
) -> None:
    """Notebook 7 is built on the same services: its comms go over a subshell too. A dialog
    answered, then a prompt sent from the panel, each during a cell."""
    cells = [
        ("start", "%load_ext atomic_jupyter\n%atomic_agent start --demo"),
        ("ask", "%%atomic_agent\nclean up the scratch files"),
        ("busy-nb7", busy("release-nb7")),
        ("busy-nb7-send", busy("release-nb7-send")),
    ]
    with opened_in_notebook7(notebook7, chromium, "busy-cell-nb7.ipynb", cells) as nb:
        # Notebook 7.6 reports an error of its own while its page loads (see
        # test_browser_notebook7.py); what happens from here on must add none.
        at_load = list(nb.page_errors)
        nb.run("start")
        nb.run("ask")
        ask = nb.output("ask")
        allow = ask.get_by_role("button", name="Allow")
        expect(allow).to_be_visible(timeout=30_000)
        cell = Busy(nb, notebook7, "busy-nb7")
        try:
            allow.click()
            expect(ask.locator(".atomic-dialog-outcome")).to_have_text(
                "→ Allow (clicked)", timeout=5_000
            )
            expect(ask.locator(".atomic-run-state")).to_have_text("done", timeout=15_000)
            drawn_before_the_cell_ended(nb, cell, notebook7, at_load)
        finally:
            cell.flag.touch()
        cell = Busy(nb, notebook7, "busy-nb7-send")
        try:
            panel = panel_of(nb)
            editor = panel.locator(".atomic-editor textarea")
            editor.fill("hello! who are you?")
            panel.get_by_role("button", name="Send").click()
            expect(panel.locator(".atomic-assistant-text").last).to_contain_text(
                "Hello from the offline demo model", timeout=15_000
            )
            drawn_before_the_cell_ended(nb, cell, notebook7, at_load)
        finally:
            cell.flag.touch()


KERNELS_PLUGIN = "@jupyterlab/apputils-extension:kernels-settings"


def test_with_comms_over_subshells_disabled_a_click_says_it_waits_for_the_cell(
    open_notebook: Any, lab_server: LabServer
) -> None:
    """The page's messages go to the main shell, which the cell holds: the click is not lost
    and does not look sent; the output says the kernel is busy, and the answer goes (once)
    when the cell ends."""
    before = str(lab_server.lab_setting(KERNELS_PLUGIN).get("raw") or "{}")
    lab_server.put_lab_setting(KERNELS_PLUGIN, '{"commsOverSubshells": "disabled"}')
    try:
        cells = [
            ("start", "%load_ext atomic_jupyter\n%atomic_agent start --demo --name off"),
            ("ask", "%%atomic_agent --name off\nclean up the scratch files"),
            ("busy-off", busy("release-off")),
        ]
        nb = open_notebook("busy-cell-disabled.ipynb", cells)
        nb.run("start")
        nb.run("ask")
        ask = nb.output("ask")
        allow = ask.get_by_role("button", name="Allow")
        expect(allow).to_be_visible(timeout=30_000)
        cell = Busy(nb, lab_server, "busy-off")
        try:
            allow.click()
            note = ask.locator(".atomic-kernel-busy")
            expect(note).to_contain_text("The kernel is busy running a cell", timeout=10_000)
            expect(ask.locator(".atomic-dialog-outcome")).to_have_count(0)
            cell.still_running()
            cell.release()
            expect(ask.locator(".atomic-run-state")).to_have_text("done", timeout=30_000)
            expect(ask).to_contain_text("→ Allow (clicked)")
            expect(note).to_have_count(0)  # the run's output is its record now
        finally:
            cell.flag.touch()
        assert nb.page_errors == [], nb.page_errors
    finally:
        lab_server.put_lab_setting(KERNELS_PLUGIN, before)


def test_outputs_made_just_before_a_long_cell_are_drawn_while_it_runs(
    open_notebook: Any, lab_server: LabServer
) -> None:
    """Run All: the session's first output (its panel, the kernel's first widget) and a prompt's
    output are drawn, and answer, while the next cell computes: their first messages do not
    wait behind it on the main shell."""
    cells = [
        ("start", "%load_ext atomic_jupyter\n%atomic_agent start --demo --name first"),
        ("ask", "%%atomic_agent --name first\nclean up the scratch files"),
        ("busy-first", busy("release-first")),
    ]
    nb = open_notebook("busy-cell-first.ipynb", cells)
    # Run All, not waited for (its promise ends with the last cell).
    nb.page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    cell = Busy(nb, lab_server, "busy-first", started=True)
    try:
        panel = panel_of(nb)
        # Drawn (the agent works on the prompt that Run All sent next).
        expect(panel.locator(".atomic-state")).to_have_text(
            re.compile("idle|working"), timeout=30_000
        )
        ask = nb.output("ask")
        allow = ask.get_by_role("button", name="Allow")
        expect(allow).to_be_visible(timeout=30_000)
        allow.click()
        expect(ask.locator(".atomic-dialog-outcome")).to_have_text(
            "→ Allow (clicked)", timeout=5_000
        )
        drawn_before_the_cell_ended(nb, cell, lab_server)
    finally:
        cell.flag.touch()


def test_in_notebook_7_stop_during_a_cell_shows_the_stopped_run(
    notebook7: LabServer, chromium: Any, scripted_model: Any
) -> None:
    _server, home, args = scripted_model
    cells = [
        (
            "start",
            "%load_ext atomic_jupyter\n"
            f"%atomic_agent start --env PI_CODING_AGENT_DIR={home} -- {' '.join(args)}",
        ),
        ("crawl", "%%atomic_agent\ncrawl please"),
        ("busy-nb7-stop", busy("release-nb7-stop")),
    ]
    with opened_in_notebook7(notebook7, chromium, "busy-cell-nb7-stop.ipynb", cells) as nb:
        at_load = list(nb.page_errors)
        nb.run("start")
        nb.run("crawl")
        crawl = nb.output("crawl")
        answer = crawl.locator(".atomic-assistant-text").first
        expect(answer).to_contain_text("crawl", timeout=30_000)
        cell = Busy(nb, notebook7, "busy-nb7-stop")
        try:
            before = answer.inner_text()
            expect(answer).not_to_have_text(before, timeout=5_000)  # it streams meanwhile
            crawl.get_by_role("button", name="Stop").click()
            expect(crawl.locator(".atomic-assistant-stopped")).to_have_text(
                "The answer ends here: the run was stopped.", timeout=10_000
            )
            drawn_before_the_cell_ended(nb, cell, notebook7, at_load)
        finally:
            cell.flag.touch()
