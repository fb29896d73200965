"""The quickstart in Jupyter Notebook 7 (the ``lab`` extra installs it), clicked as a person.

Notebook 7 is built from JupyterLab's parts, with its own shell and pages (``/notebooks/...``).
Its code cells are run one by one with Ctrl+Enter, the guarded command's dialog is answered
by a click in the page, and the result is read from the page: the panel, the streamed answer,
the tool card, the dialog's outcome, the record each finished run leaves. Photographed as
``artifacts/screenshots/notebook7-*.png``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import nbformat
import pytest
from playwright.sync_api import expect

from tests.harness.support import ROOT

from .browser_harness import (
    LabServer,
    NotebookPage,
    panel_of,
)
from .conftest import opened_in_notebook7

pytestmark = [pytest.mark.browser, pytest.mark.agent, pytest.mark.kernel]

FILENAME = "quickstart-nb7.ipynb"
GUARD_TITLE = "Dangerous command (rm -rf): rm -rf ./demo-scratch"


def quickstart_cells() -> list[tuple[str, str]]:
    """The quickstart's code cells, named by their first line."""
    nb = nbformat.read(ROOT / "notebooks" / "quickstart.ipynb", as_version=4)
    sources = [cell.source for cell in nb.cells if cell.cell_type == "code"]
    return [(f"cell-{i}", source) for i, source in enumerate(sources)]


CELLS = quickstart_cells()


def named(fragment: str) -> str:
    """The name of the quickstart cell whose source holds ``fragment``."""
    return next(name for name, source in CELLS if fragment in source)


@pytest.fixture(scope="module")
def nb(notebook7: LabServer, chromium: Any) -> Iterator[NotebookPage]:
    with opened_in_notebook7(notebook7, chromium, FILENAME, CELLS) as notebook:
        yield notebook


def test_the_quickstart_runs_in_notebook_7(nb: NotebookPage) -> None:
    # Notebook 7.6 itself reports one error while its page loads, before any cell runs
    # ("Cannot read properties of undefined (reading 'schema')", with or without this
    # server's user settings); what happens from here on must add none.
    at_load = list(nb.page_errors)
    nb.run(named("%load_ext"))
    nb.run(named("start --demo"))
    panel = panel_of(nb, named("start --demo"))
    expect(panel.locator(".atomic-state")).to_have_text("idle", timeout=60_000)
    expect(panel.locator(".atomic-status-entry")).to_have_text(
        ["model turns in this conversation: 0"]
    )

    nb.run(named("hello! who are you?"))
    hello = nb.output(named("hello! who are you?"))
    expect(hello.locator(".atomic-run-state")).to_have_text("done", timeout=60_000)
    expect(hello.locator(".atomic-assistant-text")).to_contain_text(
        "Hello from the offline demo model"
    )

    nb.run(named("list the files here"))
    files = nb.output(named("list the files here"))
    expect(files.locator(".atomic-tool-header")).to_contain_text("tool bash · $ ls -la · done")

    # The guard's dialog: --wait returns for it; a click in the page answers it.
    guarded = named("clean up the scratch files")
    nb.run(guarded)
    dialog = nb.output(guarded).locator(".atomic-dialog.atomic-dialog-select")
    expect(dialog).to_contain_text(GUARD_TITLE)
    nb.screenshot(nb.cell(guarded), "notebook7-guard-dialog")
    dialog.get_by_role("button", name="Block", exact=True).click()
    expect(nb.output(guarded).locator(".atomic-transcript .atomic-dialog-outcome")).to_have_text(
        "→ Block (clicked)"
    )
    # The notice of the wait that stopped for it no longer repeats it: the outcome is shown
    # once, in the card.
    expect(nb.output(guarded).locator(".atomic-record-notice")).to_have_count(0)
    expect(nb.output(guarded).locator(".atomic-dialog-outcome")).to_have_count(1)
    nb.run(named("session.wait(timeout=60)"))
    expect(nb.output(guarded).locator(".atomic-run-state")).to_have_text("done")
    # The notice under the cell says how the dialog was settled, not that it waits.
    expect(nb.output(guarded)).not_to_contain_text("needs your answer")

    nb.run(named("/demo-confirm"))
    nb.run(named("dialog.respond(True)"))
    confirm = nb.output(named("/demo-confirm")).locator(".atomic-transcript .atomic-dialog-outcome")
    expect(confirm).to_contain_text("→ Yes (answered by code)")

    for name, source in CELLS:
        if source.startswith(("print(", "%atomic_agent status")):
            nb.run(name)
    status = nb.output(named("%atomic_agent status")).inner_text()
    assert "state" in status and "pid" not in status
    nb.screenshot(nb.cell(named("hello! who are you?")), "notebook7-answer")
    nb.run(named("%atomic_agent stop"))
    # Every run of the session, and its panel, are their records now.
    expect(nb.notebook.locator(".atomic-record-run")).to_have_count(4)
    expect(panel.locator(".atomic-state")).to_have_text("stopped")
    expect(nb.notebook.locator(".atomic-record-panel")).to_have_count(1)
    pwned = nb.pwned()
    assert pwned["value"] is None and pwned["hits"] == [], pwned
    assert nb.page_errors == at_load, nb.page_errors
