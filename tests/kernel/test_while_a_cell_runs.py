"""While a person's cell computes, what the page sends over a kernel subshell is handled and
drawn at once: a real kernel driven like JupyterLab >= 4.4, whose comm messages go over a
subshell of their own ("Kernel Comms over subshells": ``perCommTarget``), the real agent.

Each test holds the kernel's main thread with a cell that computes until the test lets it go
(:class:`BusyCell`), so "before the cell ends" is true by construction and checked. The page's
messages go over a subshell made with ``create_subshell_request``, as JupyterLab's do; the
last test sends them to the main shell, as a page with that setting ``disabled`` does.
The kernel's thread guard (``thread_guard=True``) checks every test: what a subshell's thread
does to our widgets is done inside ``thread_safe_update``.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness.kernel_client import BrowserLikeKernel
from tests.harness.kernel_runs import wait_done
from tests.harness.kernel_widgets import (
    answer_html,
    answers,
    dialog_in,
    element_text,
    notes,
    outcome_of,
    page_of,
    panels,
    run_state,
)
from tests.harness.notebook_page import Cell, StandInPage
from tests.harness.plugin import last_tool_answer, scripted_start
from tests.harness.support import EXTENSIONS
from tests.harness.widget_text import visible_text

pytestmark = [pytest.mark.kernel, pytest.mark.agent, pytest.mark.scripted_kernel]

UI_EXTENSION = EXTENSIONS / "ui_everything.ts"


@pytest.fixture(scope="module")
def kernel_setup(scripted_model) -> list[str]:
    """Two sessions: the demo model's (its guarded command, its answers), and the scripted
    model's with the extension of every dialog (a crawling answer to stop)."""
    return [
        f"%atomic_agent start --demo --name demo -e {UI_EXTENSION}",
        scripted_start(scripted_model, f"--name scripted -e {UI_EXTENSION}"),
    ]


@pytest.fixture(scope="module", autouse=True)
def over_a_subshell(kernel: BrowserLikeKernel) -> None:
    """The page's comm messages go over a subshell of their own, as JupyterLab's do."""
    kernel.comm_subshell = kernel.create_subshell()


class BusyCell:
    """A person's cell that computes on the kernel's main thread until :meth:`release`."""

    def __init__(self, kernel: BrowserLikeKernel, folder: Path) -> None:
        self.kernel = kernel
        self.flag = folder / f"release-{uuid.uuid4().hex}"
        code = (
            "import os, time\n"
            f"while not os.path.exists({str(self.flag)!r}):\n"
            "    time.sleep(0.002)\n"
        )
        self.msg_id = kernel.submit(code)
        self.released = False
        kernel.wait_for(self.started, what="the busy cell to start")

    def started(self) -> bool:
        """Whether the kernel announced the cell's code (it runs on the main thread now)."""
        return any(
            m["parent_header"].get("msg_id") == self.msg_id
            for m in self.kernel.iter_messages("execute_input")
        )

    @property
    def running(self) -> bool:
        """Whether the cell has not ended (no reply yet)."""
        return not self.released and not self.kernel.replied(self.msg_id)

    def release(self) -> None:
        """Let the cell end, and wait for it."""
        self.flag.touch()
        self.released = True
        self.kernel.collect(self.msg_id)


@pytest.fixture
def busy(kernel: BrowserLikeKernel, tmp_path: Path) -> Iterator[BusyCell]:
    """A busy cell, started by the test (``busy.start()``), always released at the end."""
    cells: list[BusyCell] = []

    class Starter:
        def start(self) -> BusyCell:
            cell = BusyCell(kernel, tmp_path)
            cells.append(cell)
            return cell

    yield Starter()  # type: ignore[misc]
    for cell in cells:
        if not cell.released:
            cell.release()


def prompt(kernel: BrowserLikeKernel, session: str, text: str) -> str:
    """Send a prompt from a cell (no wait); return its output's comm id."""
    (output,) = kernel.execute(f"%%atomic_agent --name {session}\n{text}").widget_ids
    return output


def test_a_dialog_answered_during_a_cell_shows_its_answer_and_the_agents_next_words(
    kernel: BrowserLikeKernel, busy
) -> None:
    output = prompt(kernel, "demo", "clean up the scratch files")
    dialog = dialog_in(kernel, output, "select")
    cell = busy.start()
    dialog.choose(dialog.description["options"].index("Allow"))
    assert outcome_of(kernel, dialog, timeout=10) == "→ Allow (clicked)"
    ran = "The command rm -rf ./demo-scratch ran"  # drawn whole (it streams in pieces)
    kernel.wait_for(
        lambda: any(ran in visible_text(answer_html(kernel, a)) for a in answers(kernel, output)),
        timeout=20,
        what="the agent's answer after the command ran",
    )
    wait_done(kernel, output, timeout=20)
    assert cell.running, "the cell ended before the page showed the answer"
    cell.release()


@pytest.mark.parametrize(
    ("command", "method", "answer", "said"),
    [
        ("/ui-select", "select", ("choose", 1), 'got select: "Beta"'),
        ("/ui-confirm", "confirm", ("confirm", True), "got confirm: true"),
        ("/ui-input", "input", ("submit", "Ada"), 'got input: "Ada"'),
        ("/ui-editor", "editor", ("submit", "edited"), 'got editor: "edited"'),
    ],
)
def test_every_kind_of_dialog_answered_during_a_cell_is_settled_on_the_page_at_once(
    kernel: BrowserLikeKernel, busy, command: str, method: str, answer: tuple, said: str
) -> None:
    output = prompt(kernel, "demo", command)
    dialog = dialog_in(kernel, output, method)
    panel = panels(kernel)[0]  # the demo session's, started first
    cell = busy.start()
    action, value = answer
    getattr(dialog, action)(value)
    assert "→" in outcome_of(kernel, dialog, timeout=10)
    kernel.wait_for(
        lambda: (lambda n: bool(n) and said in n[-1])(notes(kernel, panel)),
        timeout=10,
        what=f"the note {said!r}",
    )
    assert cell.running
    cell.release()


def test_stop_during_a_cell_shows_the_stopped_run_at_once(kernel: BrowserLikeKernel, busy) -> None:
    output = prompt(kernel, "scripted", "crawl please")
    kernel.wait_for(
        lambda: any(
            "crawl" in visible_text(answer_html(kernel, a)) for a in answers(kernel, output)
        ),
        what="the first streamed words",
    )
    cell = busy.start()
    kernel.send_custom(output, {"type": "stop"})  # what a click on Stop sends
    wait_done(kernel, output, timeout=15)
    assert (
        element_text(page_of(kernel, output), "atomic-assistant-stopped")
        == "The answer ends here: the run was stopped."
    )
    assert cell.running
    cell.release()


def test_a_prompt_sent_from_the_panel_during_a_cell_streams_its_answer_there(
    kernel: BrowserLikeKernel, busy
) -> None:
    panel = panels(kernel)[0]  # the demo session's, started first
    cell = busy.start()
    panel.send("hello! who are you?")
    kernel.wait_for(
        lambda: "Hello from the offline demo model" in visible_text(panel.html),
        timeout=15,
        what="the demo's answer in the panel",
    )
    assert cell.running
    cell.release()


def guard_marked(kernel: BrowserLikeKernel) -> dict[str, int]:
    """What the kernel's thread guard counted of the widget work done off the main thread
    inside ``thread_safe_update()``, by kind of thread."""
    code = "import json, sys\nprint(json.dumps(sys.modules['tests.harness.thread_guard'].marked()))"
    return json.loads(kernel.execute(code).stdout)


def test_the_answer_is_handled_on_the_subshell_and_drawn_by_the_stand_in(
    kernel: BrowserLikeKernel, busy
) -> None:
    """Where the work was done: the page's message on the subshell's thread (answered while
    the cell holds the main thread: no other shell thread could handle it), and what it drew
    off the main thread, inside ``thread_safe_update`` (the guard passes the module). Which of
    the subshell's thread and the dispatcher's stand-in draws is timing: a render already
    waiting for the stand-in takes the answer's change with it (the subshell then draws
    nothing), so the test asserts the two together, not each."""
    before = guard_marked(kernel)
    output = prompt(kernel, "demo", "/ui-confirm")
    dialog = dialog_in(kernel, output, "confirm")
    cell = busy.start()
    dialog.confirm(True)
    assert outcome_of(kernel, dialog, timeout=10) == "→ Yes (clicked)"
    panel = panels(kernel)[0]
    kernel.wait_for(
        lambda: (lambda n: bool(n) and "got confirm: true" in n[-1])(notes(kernel, panel)),
        timeout=10,
        what="the extension's note",
    )
    assert cell.running
    cell.release()
    after = guard_marked(kernel)
    grew = {kind: after.get(kind, 0) - before.get(kind, 0) for kind in after}
    assert grew.get("subshell", 0) + grew.get("stand-in", 0) > 0, grew


def page_subshells(kernel: BrowserLikeKernel) -> list:
    """Where each linked page's last message came from (its subshell's id, or None)."""
    code = (
        "import json\nfrom atomic_jupyter.notebook.page_link import link_of\n"
        "print(json.dumps([p.subshell for p in link_of().pages]))"
    )
    return json.loads(kernel.execute(code).stdout)


def test_a_prompt_that_waits_reads_the_notebook_of_a_page_that_talks_over_a_subshell(
    kernel: BrowserLikeKernel, scripted_model
) -> None:
    """``--wait`` blocks the main thread until the run ends; the page's replies come over its
    subshell, so the notebook tools work. Cells to run would wait for that cell: refused."""
    page = StandInPage(kernel, [Cell("import math"), Cell("x = 1\nx")]).attach()
    try:
        kernel.wait_for(lambda: page.linked, what="the page's link")
        # Its hello goes to the main shell; the extension's "here", once its comm's subshell
        # exists, over that subshell.
        kernel.wait_for(
            lambda: page_subshells(kernel) == [kernel.comm_subshell],
            what="the kernel to know the page talks over its subshell",
        )
        kernel.execute("%%atomic_agent --wait --name scripted\nkernel call notebook_read {}")
        answer = last_tool_answer(scripted_model)
        assert "x = 1" in answer and "cannot be read" not in answer, answer
        # Approved by a policy, so the wait does not stop for a person: the run would wait
        # for this cell.
        kernel.execute('%atomic_agent policy --name scripted --title "Run cells" yes')
        run = {"cell_ids": [page.cells[1].id]}
        kernel.execute(
            f"%%atomic_agent --wait --name scripted\nkernel call notebook_run {json.dumps(run)}"
        )
        answer = last_tool_answer(scripted_model)
        assert answer.startswith("Cells cannot be run while a cell runs"), answer
    finally:
        kernel.execute("%atomic_agent policy --name scripted --clear")
        page.detach()


def test_doctor_says_whether_answers_arrive_during_a_cell(kernel: BrowserLikeKernel) -> None:
    report = kernel.execute("%atomic_agent doctor").stdout
    (line,) = [line for line in report.splitlines() if "answers during a cell" in line]
    assert "yes where the page sends its messages over a kernel subshell" in line, report


def test_a_kernel_call_waiting_for_a_cell_says_which_in_its_card(
    kernel: BrowserLikeKernel, tmp_path: Path
) -> None:
    """The agent's own work that needs the main thread waits for the person's cell, and its
    card names that cell; it runs once the cell ends. (The prompt goes from the cell that then
    computes, so the call cannot start before it.)"""
    flag = tmp_path / "release"
    code = (
        "import os, time\nimport atomic_jupyter as aj\n"
        "aj.session('scripted').prompt('kernel call notebook_variables {}')\n"
        f"while not os.path.exists({str(flag)!r}):\n"
        "    time.sleep(0.002)\n"
    )
    msg_id = kernel.submit(code)

    def run_output() -> str | None:
        for shown in kernel.displays:
            view = shown.data.get("application/vnd.jupyter.widget-view+json")
            if shown.parent_msg_id == msg_id and view and view["model_id"] in kernel.tracker.pages:
                return str(view["model_id"])
        return None

    output = kernel.wait_for(run_output, what="the prompt's output")
    said = kernel.wait_for(
        lambda: re.search(
            r"waiting for cell \[(\d+)\] to finish", visible_text(page_of(kernel, output))
        ),
        timeout=15,
        what="the card to say which cell it waits for",
    )
    assert not kernel.replied(msg_id)
    flag.touch()
    done = kernel.collect(msg_id)
    assert int(said.group(1)) == done.execution_count
    wait_done(kernel, output)
    assert "waiting for cell" not in visible_text(page_of(kernel, output))


@pytest.mark.parametrize("where", ["card", "cell"])
def test_a_notebook_change_decided_during_a_cell_is_applied_and_shown_at_once(
    kernel: BrowserLikeKernel, scripted_model, busy, where: str
) -> None:
    """The agent's change waits for a person; a cell starts; Accept in the run's card, or in
    the notebook's cell (the extension's decision, over its subshell): the page applies it and
    the run's output shows the outcome and the end of the run before the cell ends."""
    page = StandInPage(kernel, [Cell("import math"), Cell("x = 1\nx")]).attach()
    try:
        kernel.wait_for(lambda: page.linked, what="the page's link")
        kernel.wait_for(  # its "here" read, so a tool under --wait may ask it
            lambda: page_subshells(kernel) == [kernel.comm_subshell],
            what="the kernel to know the page talks over its subshell",
        )
        kernel.execute("%%atomic_agent --wait --name scripted\nkernel call notebook_read {}")
        target = page.cells[1]
        operations = [{"op": "replace", "cell_id": target.id, "source": "x = 2\nx"}]
        output = prompt(
            kernel,
            "scripted",
            f"kernel call notebook_edit {json.dumps({'operations': operations})}",
        )
        dialog = dialog_in(kernel, output, "confirm")
        (call,) = list(page.proposals)
        cell = busy.start()
        if where == "card":
            dialog.confirm(True)
        else:
            page.click(call, accept=True)
        assert outcome_of(kernel, dialog, timeout=10).startswith("→ Yes")
        wait_done(kernel, output, timeout=20)
        assert target.source == "x = 2\nx"
        assert last_tool_answer(scripted_model).startswith("Applied to stand-in.ipynb")
        assert cell.running
        cell.release()
    finally:
        page.detach()


def test_a_setting_changed_in_the_panel_during_a_cell_is_shown_at_once(
    kernel: BrowserLikeKernel, busy
) -> None:
    """The panel's thinking level, chosen while a cell computes: the agent is told and the
    panel shows the level it answered with, before the cell ends."""
    panel = panels(kernel)[1]  # the scripted session's
    levels = kernel.wait_for(lambda: panel.settings.get("levels"), what="the panel's settings")
    now = panel.settings["level"]
    wanted = next(level for level in levels if level not in (now, "off"))
    cell = busy.start()
    panel.choose("thinking", wanted)
    kernel.wait_for(
        lambda: panel.settings["level"] == wanted, timeout=10, what=f"thinking {wanted}"
    )
    assert not panel.settings.get("error")
    assert cell.running
    cell.release()
    panel.choose("thinking", now)  # as it was, for the next tests
    kernel.wait_for(lambda: panel.settings["level"] == now, what="the level put back")


def test_stop_during_a_cell_ends_a_run_that_waits_on_its_dialog(
    kernel: BrowserLikeKernel, busy
) -> None:
    """The demo's guarded command asks; a cell starts; Stop instead of an answer: the run ends
    as stopped and its question is settled on the page, before the cell ends."""
    output = prompt(kernel, "demo", "clean up the scratch files")
    dialog = dialog_in(kernel, output, "select")
    cell = busy.start()
    kernel.send_custom(output, {"type": "stop"})
    said = outcome_of(kernel, dialog, timeout=15)
    assert "Allow" not in said, said
    kernel.wait_for(
        lambda: run_state(kernel, output) in ("done", "stopped"),
        timeout=15,
        what="the run to end",
    )
    assert cell.running
    cell.release()
