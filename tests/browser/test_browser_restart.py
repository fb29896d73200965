"""After Kernel → Restart or Shut Down, every output of ours shows its record, never a broken
widget or controls that can no longer answer.

A restart disconnects every widget view on the page: ipywidgets marks each
``jupyter-widgets-disconnected`` and draws it as a broken-link icon. Outputs that were final
are records already. What was still live when the kernel went (the listing of
``%atomic_agent conversations``, the panel of a running session) has its record copy beside it; the
copy's style shows the copy, and hides the widget's output, once the widget is disconnected.
(The kernel cannot replace them itself as it exits: JupyterLab drops the display updates a
restarting kernel sends.)
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.harness.support import EXTENSIONS, agent_example

from .browser_harness import NotebookPage
from .test_browser_resume import SAVE

pytestmark = [pytest.mark.browser, pytest.mark.agent, pytest.mark.kernel]

CELLS = [
    ("save", SAVE),
    # The agent's own example sets the panel's widget lines: the record must keep them.
    (
        "start",
        "%load_ext atomic_jupyter\n"
        f"%atomic_agent start --demo -e {agent_example('widget-placement.ts')}",
    ),
    ("prompt", "%%atomic_agent --wait\nhello there"),
    ("sessions", "%atomic_agent conversations"),
]


@pytest.fixture(scope="module")
def nb(open_notebook: Any) -> NotebookPage:
    page = open_notebook("restart.ipynb", CELLS)
    for name in ("save", "start", "prompt"):
        page.run(name)
    expect(page.output("prompt").locator(".atomic-run-state")).to_have_text("done", timeout=60_000)
    return page


def test_after_a_restart_the_listing_and_the_panel_show_their_records(nb: NotebookPage) -> None:
    nb.run("sessions")
    listing = nb.output("sessions")
    expect(listing.get_by_role("button", name="Resume").first).to_be_visible()

    nb.restart_kernel()

    notebook = nb.notebook
    expect(notebook.locator(".jupyter-widgets-disconnected:visible")).to_have_count(0)
    nb.expect_no_lost_widget_shown()
    expect(listing).to_contain_text("Saved conversations of this notebook")
    expect(listing.get_by_role("button")).to_have_count(0)
    # The panel too: its record, not its editor and Send, which could no longer answer.
    expect(nb.output("start").get_by_role("button")).to_have_count(0)
    expect(nb.output("start").locator(".atomic-record-copy")).to_be_visible()
    expect(nb.output("start")).to_contain_text("atomic-jupyter demo")
    expect(nb.output("start")).to_contain_text("Above editor widget")
    expect(nb.output("start")).to_contain_text("Below editor widget")
    assert nb.page_errors == [], nb.page_errors


SHUTDOWN_CELLS = [
    (
        "start",
        f"%load_ext atomic_jupyter\n%atomic_agent start -e {EXTENSIONS / 'ui_everything.ts'}",
    ),
    ("ask", "%%atomic_agent\n/ui-confirm"),
]


def test_after_a_shutdown_the_panel_and_a_waiting_dialog_show_their_records(
    open_notebook: Any,
) -> None:
    """Kernel → Shut Down leaves widget views as they were (ipywidgets marks them
    disconnected only on a restart): our outputs see their kernel gone and show their
    records, not a panel that looks live or a dialog whose buttons can no longer answer."""
    nb = open_notebook("shutdown.ipynb", SHUTDOWN_CELLS)
    nb.run("start")
    nb.run("ask")
    ask = nb.output("ask")
    expect(ask.get_by_role("button", name="Yes")).to_be_visible()
    # The record copies follow the outputs at most every RECORD_INTERVAL (2 s): the copy has
    # the question before the kernel goes (a shutdown sooner keeps the copy of before).
    expect(ask.locator(".atomic-record-copy")).to_contain_text("waiting for an answer")
    nb.page.evaluate("() => window.jupyterapp.commands.execute('kernelmenu:shutdown')")
    for cell in ("start", "ask"):
        expect(nb.output(cell).locator(".atomic-output:visible")).to_have_count(0)
        expect(nb.output(cell).locator(".atomic-record-copy")).to_be_visible()
    expect(ask.get_by_role("button")).to_have_count(0)
    expect(ask).to_contain_text("waiting for an answer")
    expect(nb.output("start")).to_contain_text("UI test extension")
