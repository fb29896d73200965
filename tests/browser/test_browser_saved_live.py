"""A notebook saved while its outputs are live: the record copies beside the live widgets.

A run waits for its dialog; the notebook is saved from JupyterLab (as its autosave may do)
and copied away as it was saved. On the live page, the copies are in the page but hidden,
kept current without touching the live widgets (the editor keeps its focus and its text).
The saved copy, opened after its kernel is gone, shows each output's record as it was when
saved, and not the lost widgets. Photographed in the light and the dark theme
(``artifacts/screenshots/saved-live-*.png``).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.harness.support import EXTENSIONS

from .browser_harness import LabServer, NotebookPage, panel_of
from .conftest import reopened_without_kernel

pytestmark = [pytest.mark.browser, pytest.mark.agent, pytest.mark.kernel]

UI_EXTENSION = EXTENSIONS / "ui_everything.ts"
FILENAME = "saved-live.ipynb"
REOPENED = "saved-live-reopened.ipynb"
CELLS = [
    ("start", f"%load_ext atomic_jupyter\n%atomic_agent start -e {UI_EXTENSION}"),
    ("ask", "%%atomic_agent\n/ui-confirm"),
]


def widget_output(nb: NotebookPage, cell: str) -> Any:
    """The output of the cell's live widget (the first; its record copy is the next)."""
    return nb.output(cell).locator(".jp-OutputArea-child").first


@pytest.fixture(scope="module")
def live(open_notebook: Any) -> NotebookPage:
    """The notebook with its session started and a run waiting for its confirm dialog."""
    nb = open_notebook(FILENAME, CELLS)
    nb.run("start")
    nb.run("ask")
    expect(nb.output("ask").get_by_role("button", name="Yes")).to_be_visible()
    return nb


def copy_of(nb: NotebookPage, cell: str) -> Any:
    return nb.output(cell).locator(".atomic-record-copy")


def test_live_copies_are_hidden_and_kept_current(live: NotebookPage) -> None:
    nb = live
    for cell in ("start", "ask"):
        expect(copy_of(nb, cell)).to_have_count(1)
        expect(copy_of(nb, cell)).to_be_hidden()
        # The output that holds it takes no room either.
        child = nb.output(cell).locator(".jp-OutputArea-child").filter(has=copy_of(nb, cell))
        expect(child).to_be_hidden()
        expect(
            widget_output(nb, cell).locator(".atomic-output, .jupyter-widgets").first
        ).to_be_visible()
    # Kept current (the text of a hidden element): the dialog the run waits for.
    expect(copy_of(nb, "ask")).to_contain_text("waiting for an answer", timeout=15_000)
    expect(copy_of(nb, "ask")).to_contain_text("Proceed?")
    # The copy's parts carry copy classes: the page has one live dialog, one outcome line.
    expect(nb.output("ask").locator(".atomic-dialog")).to_have_count(1)
    expect(copy_of(nb, "ask").locator(".atomic-copy-dialog")).to_have_count(1)


def test_a_copy_refresh_leaves_the_live_widgets_alone(
    live: NotebookPage, lab_server: LabServer
) -> None:
    nb = live
    # Save now, while the run waits, and keep what was saved (its signature is JupyterLab's:
    # the copy opens trusted, as the notebook itself would).
    nb.page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    saved = lab_server.root / FILENAME
    deadline = time.monotonic() + 30
    while "waiting for an answer" not in saved.read_text(encoding="utf-8"):
        assert time.monotonic() < deadline, "the saved file never held the waiting dialog"
        nb.page.wait_for_timeout(200)
    shutil.copy(saved, lab_server.root / REOPENED)

    # Type in the panel's editor, mark the live panel's node, then answer the dialog from
    # code: the panel's copy is refreshed (its newest notification) while the editor has the
    # focus.
    panel = panel_of(nb)
    editor = panel.locator(".atomic-editor textarea")
    editor.click()
    editor.type("a draft")
    panel.evaluate("(e) => { e.dataset.marked = 'yes'; }")
    lab_server.run_in_kernel(
        FILENAME,
        "import atomic_jupyter as aj\nfor d in aj.session().pending_dialogs: d.respond(True)",
    )
    expect(copy_of(nb, "start")).to_contain_text("got confirm: true", timeout=15_000)
    expect(nb.output("ask").locator(".atomic-dialog-outcome")).to_have_text(
        "→ Yes (answered by code)"
    )
    assert panel.evaluate("(e) => e.dataset.marked") == "yes"  # the same node: not rebuilt
    assert editor.evaluate("(e) => document.activeElement === e")
    expect(editor).to_have_value("a draft")
    # The run is over: its output is its record, its copy emptied.
    expect(copy_of(nb, "ask")).to_have_count(0)
    expect(nb.output("ask").locator(".atomic-record-run")).to_be_visible()
    assert nb.page_errors == [], nb.page_errors


@pytest.fixture(scope="module")
def reopened(lab_server: LabServer, chromium: Any, live: NotebookPage) -> Iterator[NotebookPage]:
    """The copy saved mid-run, open in JupyterLab with its kernel shut down."""
    assert (lab_server.root / REOPENED).exists(), "test_a_copy_refresh... saves it first"
    names = [name for name, _ in CELLS]
    with reopened_without_kernel(lab_server, chromium, REOPENED, names) as nb:
        yield nb


def test_reopened_without_its_kernel_it_shows_the_records_as_saved(
    reopened: NotebookPage,
) -> None:
    nb = reopened
    run = copy_of(nb, "ask")
    expect(run).to_be_visible()
    expect(run.locator(".atomic-copy-run-prompt")).to_have_text("> /ui-confirm")
    expect(run).to_contain_text("Proceed?")
    expect(run.locator(".atomic-copy-dialog-waiting")).to_have_text("waiting for an answer")
    panel = copy_of(nb, "start")
    expect(panel).to_be_visible()
    expect(panel.locator(".atomic-copy-title")).to_have_text("UI test extension")
    # The lost widgets' outputs ("Error displaying widget") are hidden by the copy's style.
    for cell in ("start", "ask"):
        expect(widget_output(nb, cell)).to_be_hidden()
    nb.expect_no_lost_widget_shown()
    nb.screenshot(nb.cell("ask"), "saved-live-light")
    dark = nb.set_theme("JupyterLab Dark")
    assert dark["light"] is False
    nb.screenshot(nb.cell("ask"), "saved-live-dark")
    assert nb.set_theme("JupyterLab Light")["light"] is True
    pwned = nb.pwned()
    assert pwned["value"] is None and pwned["hits"] == [], pwned
    assert nb.js_dialogs == [], nb.js_dialogs
