"""The agent's change to the open notebook in Jupyter Notebook 7: the same extension (the
wheel's prebuilt one) links the page, the change shows as a diff in the cell, Accept there
applies it, and the card records the decision."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from .browser_harness import LabServer, NotebookPage, panel_of
from .conftest import opened_in_notebook7

pytestmark = [pytest.mark.browser, pytest.mark.agent, pytest.mark.kernel]

FILENAME = "notebook7-edits.ipynb"
EDIT_TITLE = "Apply the agent's change to the notebook?"
CELLS = [
    ("start", "%load_ext atomic_jupyter\n%atomic_agent start --demo"),
    ("data", "total = 1 + 1"),
    ("prompt", "%%atomic_agent\nchange cell 2 to `total = 2 + 2`"),
]


@pytest.fixture(scope="module")
def nb(notebook7: LabServer, chromium: Any) -> Iterator[NotebookPage]:
    with opened_in_notebook7(notebook7, chromium, FILENAME, CELLS) as notebook:
        yield notebook


def test_a_change_is_shown_in_the_cell_and_accepted_there_in_notebook_7(nb: NotebookPage) -> None:
    at_load = list(nb.page_errors)  # Notebook 7.6 reports one error of its own as it loads
    nb.run("start")
    expect(nb.page.locator(".jp-NotebookPanel[data-aj-link='open']")).to_have_count(1)
    expect(panel_of(nb).locator(".atomic-status")).not_to_contain_text("notebook:")
    nb.run("prompt")
    proposal = nb.cell("data").locator(".aj-proposal")
    expect(proposal).to_be_visible(timeout=60_000)
    expect(proposal.locator(".aj-diff-added")).to_have_text(["+ total = 2 + 2"])
    nb.screenshot(nb.cell("data"), "notebook7-edit-proposed")
    proposal.locator("button.aj-proposal-accept").click()
    expect(proposal).to_have_count(0)
    expect(nb.cell("data").locator(".cm-content")).to_have_text("total = 2 + 2")
    outcome = nb.output("prompt").locator(".atomic-tool .atomic-dialog-outcome")
    expect(outcome).to_have_text("→ Yes (clicked in the notebook)")
    assert nb.page_errors == at_load, nb.page_errors
