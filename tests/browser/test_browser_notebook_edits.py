"""The agent edits the open notebook in JupyterLab: each change a diff in the cells and in the
run's card, decided in either place, applied as one edit, undone with Ctrl+Z, refused when the
person typed in the cell meanwhile, run as Shift+Enter would, made a rule, and kept in the file.

The offline demo model reads the notebook, then proposes the change a prompt names by the
cells' positions (``change cell 2 to `x = 2```, see ``addons/demo/notebook_cells.py``). The
tests run in order on one notebook; cells inserted or deleted are followed in ``nb.names``.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.harness.support import ROOT

from .browser_harness import LabServer, NotebookPage, run_start, source_of
from .conftest import reopened_without_kernel

pytestmark = [pytest.mark.browser, pytest.mark.agent, pytest.mark.kernel]

FILENAME = "notebook_edits.ipynb"
#: The pictures of docs/guides/notebook-edits.md, made here (see NotebookPage.doc_screenshot).
DOC_PICTURES = ROOT / "docs" / "_static" / "notebook-edits"
EDIT_TITLE = "Apply the agent's change to the notebook?"
RUN_TITLE = "Run cells of the notebook in the kernel?"

CELLS = [
    ("start", "%load_ext atomic_jupyter\n%atomic_agent start --demo"),
    ("data", "x = 1\nx"),
    ("scratch", "z = 3"),
    ("p_change", "%%atomic_agent\nchange cell 2 to `x = 2\\nx`"),
    ("p_reject", "%%atomic_agent\nchange cell 2 to `x = 99`"),
    ("p_markdown", "%%atomic_agent\nadd a markdown cell after cell 1: `# Notes`"),
    ("p_delete", "%%atomic_agent\ndelete cell 4"),
    ("p_run", "%%atomic_agent\nrun cell 3"),
    ("p_typed", "%%atomic_agent\nchange cell 3 to `x = 7`"),
    ("p_rule", "%%atomic_agent\nchange cell 3 to `x = 8`"),
    ("p_after_rule", "%%atomic_agent\nchange cell 3 to `x = 9`"),
    ("p_restart", "%%atomic_agent\nadd a code cell at the end: `x = 10`"),
]


@pytest.fixture(scope="module")
def nb(open_notebook: Any) -> NotebookPage:
    page = open_notebook(FILENAME, CELLS)
    run_start(page, "atomic-jupyter demo")
    # The page linked itself to the kernel once atomic-jupyter announced itself there.
    expect(page.page.locator(".jp-NotebookPanel[data-aj-link='open']")).to_have_count(1)
    return page


def proposal_in(nb: NotebookPage, name: str) -> Any:
    return nb.cell(name).locator(".aj-proposal")


def card(nb: NotebookPage, prompt: str) -> Any:
    return nb.output(prompt).locator(".atomic-tool", has_text="tool notebook_edit").first


def run_done(nb: NotebookPage, prompt: str) -> Any:
    transcript = nb.output(prompt).locator(".atomic-transcript")
    expect(transcript.locator(".atomic-run-state")).to_have_text("done", timeout=60_000)
    return transcript


def test_a_change_shows_as_a_diff_in_the_cell_and_the_card_and_accept_applies_it(
    nb: NotebookPage,
) -> None:
    nb.run("p_change")
    proposal = proposal_in(nb, "data")
    expect(proposal).to_be_visible(timeout=60_000)
    expect(proposal.locator(".aj-proposal-head")).to_have_text(
        "The agent proposes to change this cell: +1 −1"
    )
    expect(proposal.locator(".aj-diff-removed")).to_have_text(["- x = 1"])
    expect(proposal.locator(".aj-diff-added")).to_have_text(["+ x = 2"])
    # The same diff in the run's card, with the question.
    tool = card(nb, "p_change")
    expect(tool.locator(".aj-diff-del")).to_contain_text("x = 1")
    expect(tool.locator(".aj-diff-add")).to_contain_text("x = 2")
    dialog = tool.locator(".atomic-dialog.atomic-dialog-confirm")
    expect(dialog).to_contain_text(EDIT_TITLE)
    assert source_of(nb, "data") == "x = 1\nx"  # nothing changed before the decision
    # The card as it stays while the change waits: the kernel's diff and its words.
    expect(tool.locator(".atomic-tool-header")).to_contain_text("(JupyterLab)")
    expect(tool).to_contain_text("waiting for a decision")
    nb.doc_screenshot(
        nb.cell("data"),
        "notebook-edit-proposed-in-cell",
        DOC_PICTURES / "notebook-edit-proposed-in-cell.png",
    )
    nb.doc_screenshot(
        tool, "notebook-edit-proposed-in-card", DOC_PICTURES / "notebook-edit-proposed-in-card.png"
    )

    proposal.locator("button.aj-proposal-accept").click()
    expect(proposal).to_have_count(0)
    assert source_of(nb, "data") == "x = 2\nx"
    expect(tool.locator(".atomic-dialog-outcome")).to_have_text("→ Yes (clicked in the notebook)")
    transcript = run_done(nb, "p_change")
    expect(transcript.locator(".atomic-assistant-text").last).to_contain_text(
        "Done: I changed cell 2; it now starts with x = 2."
    )
    expect(nb.cell("data")).not_to_have_class(re.compile(r"aj-proposed-change"))
    assert nb.page_errors == [], nb.page_errors


def test_ctrl_z_in_the_cell_brings_its_source_back(nb: NotebookPage) -> None:
    editor = nb.cell("data").locator(".cm-content").first
    editor.click()
    nb.page.keyboard.press("Control+z")
    expect(editor).to_have_text(re.compile(r"^x = 1\s*x$"))
    assert source_of(nb, "data") == "x = 1\nx"
    nb.page.keyboard.press("Escape")


def test_a_rejected_change_leaves_the_cell_and_the_model_gets_the_reason(
    nb: NotebookPage,
) -> None:
    nb.run("p_reject")
    proposal = proposal_in(nb, "data")
    expect(proposal).to_be_visible(timeout=60_000)
    proposal.locator("input.aj-proposal-reason").fill("keep x small")
    proposal.locator("button.aj-proposal-reject").click()
    expect(proposal).to_have_count(0)
    transcript = run_done(nb, "p_reject")
    assert source_of(nb, "data") == "x = 1\nx"
    tool = card(nb, "p_reject")
    expect(tool.locator(".atomic-dialog-outcome")).to_have_text("→ No (clicked in the notebook)")
    # An outcome, not a failure: no "error", no red text, the reason given.
    expect(tool.locator(".aj-tool-outcome")).to_have_text(
        "Rejected: nothing was changed. The reason: keep x small"
    )
    expect(tool.locator(".atomic-tool-header")).to_contain_text("1 cell to change")
    expect(tool.locator(".atomic-tool-header")).to_contain_text(" · rejected")
    expect(tool.locator(".atomic-tool-header")).not_to_contain_text("error")
    expect(tool.locator(".aj-tool-error")).to_have_count(0)
    expect(transcript.locator(".atomic-assistant-text").last).to_contain_text(
        "You rejected the change"
    )


def test_a_markdown_cell_inserted_after_cell_1_is_rendered_there(nb: NotebookPage) -> None:
    nb.run("p_markdown")
    placeholder = proposal_in(nb, "start")
    expect(placeholder).to_be_visible(timeout=60_000)
    expect(placeholder.locator(".aj-proposal-head")).to_have_text(
        "The agent proposes a new markdown cell below"
    )
    # The card's question answers it too: Yes there applies the change in the notebook.
    card(nb, "p_markdown").locator("button.atomic-yes").click()
    expect(placeholder).to_have_count(0)
    nb.names.insert(1, "notes")
    notes = nb.cell("notes")
    expect(notes).to_have_class(re.compile(r"\bjp-MarkdownCell\b"))
    expect(notes.locator(".jp-RenderedMarkdown h1")).to_have_text(re.compile(r"^Notes"))
    run_done(nb, "p_markdown")
    expect(card(nb, "p_markdown").locator(".atomic-dialog-outcome")).to_have_text("→ Yes (clicked)")


def test_a_deletion_is_marked_then_removes_the_cell(nb: NotebookPage) -> None:
    nb.run("p_delete")
    scratch = nb.cell("scratch")
    expect(scratch).to_have_class(re.compile(r"\baj-proposed-delete\b"), timeout=60_000)
    expect(proposal_in(nb, "scratch").locator(".aj-proposal-head")).to_have_text(
        "The agent proposes to delete this cell"
    )
    proposal_in(nb, "scratch").locator("button.aj-proposal-accept").click()
    nb.names.remove("scratch")
    expect(nb.notebook.locator(".jp-Cell")).to_have_count(len(nb.names))
    run_done(nb, "p_delete")
    assert "z = 3" not in [source_of(nb, name) for name in nb.names]


def test_the_agent_runs_a_cell_as_shift_enter_would(nb: NotebookPage) -> None:
    nb.run("p_run")
    tool = nb.output("p_run").locator(".atomic-tool", has_text="tool notebook_run").first
    dialog = tool.locator(".atomic-dialog.atomic-dialog-confirm")
    expect(dialog).to_contain_text(RUN_TITLE, timeout=60_000)
    # The cells named as the person sees them: the position and the first line.
    expect(dialog).to_contain_text("cell 3: x = 1")
    # The card's "cell 3" is a link to that cell.
    nb.cell("start").click()
    link = tool.locator(".aj-cell-link", has_text="cell 3").first
    link.click()
    expect(nb.cell("data")).to_have_class(re.compile(r"\bjp-mod-active\b"))
    nb.cell("start").click()
    link.focus()
    nb.page.keyboard.press("Enter")
    expect(nb.cell("data")).to_have_class(re.compile(r"\bjp-mod-active\b"))
    dialog.locator("button.atomic-yes").click()
    transcript = run_done(nb, "p_run")
    prompt = nb.cell("data").locator(".jp-InputArea-prompt").first
    expect(prompt).to_have_text(re.compile(r"^\[\d+\]:$"))
    expect(nb.output("data").locator(".jp-OutputArea-output")).to_have_text("1")
    expect(tool).to_contain_text("ran as [")
    expect(transcript.locator(".atomic-assistant-text").last).not_to_contain_text("did not work")


def test_a_cell_typed_in_while_the_change_waits_is_refused_and_left_as_typed(
    nb: NotebookPage,
) -> None:
    nb.run("p_typed")
    proposal = proposal_in(nb, "data")
    expect(proposal).to_be_visible(timeout=60_000)
    editor = nb.cell("data").locator(".cm-content").first
    editor.click()
    nb.page.keyboard.press("Control+End")
    nb.page.keyboard.type("  # mine")
    nb.page.keyboard.press("Escape")
    proposal.locator("button.aj-proposal-accept").click()
    run_done(nb, "p_typed")
    assert source_of(nb, "data") == "x = 1\nx  # mine"
    expect(card(nb, "p_typed")).to_contain_text("edited while the change waited")


def test_from_now_on_makes_a_rule_and_the_next_change_is_applied_without_asking(
    nb: NotebookPage,
) -> None:
    nb.run("p_rule")
    tool = card(nb, "p_rule")
    dialog = tool.locator(".atomic-dialog.atomic-dialog-confirm")
    expect(dialog).to_contain_text(EDIT_TITLE, timeout=60_000)
    dialog.locator(".atomic-make-rule input[type=checkbox]").check()
    dialog.locator("button.atomic-yes").click()
    run_done(nb, "p_rule")
    assert source_of(nb, "data") == "x = 8"

    nb.run("p_after_rule")
    run_done(nb, "p_after_rule")
    assert source_of(nb, "data") == "x = 9"
    outcome = card(nb, "p_after_rule").locator(".atomic-dialog-outcome")
    expect(outcome).to_have_text("→ Yes (rule)")
    expect(proposal_in(nb, "data")).to_have_count(0)


def test_a_change_waiting_when_the_kernel_restarts_is_dropped_from_the_page(
    nb: NotebookPage,
) -> None:
    # The rule made above answers changes at once: this one asks, as the session is new.
    nb.run("start")
    expect(nb.page.locator(".jp-NotebookPanel[data-aj-link='open']")).to_have_count(1)
    nb.run("p_restart")
    placeholder = nb.notebook.locator(".aj-proposal-new-cell")
    expect(placeholder).to_be_visible(timeout=60_000)
    cells_before = nb.notebook.locator(".jp-Cell").count()
    nb.restart_kernel()
    expect(placeholder).to_have_count(0)
    assert nb.notebook.locator(".jp-Cell").count() == cells_before  # nothing was applied


def test_the_saved_file_holds_the_changes_and_the_cards_read_without_a_kernel(
    nb: NotebookPage, lab_server: LabServer, chromium: Any
) -> None:
    nb.page.keyboard.press("Escape")
    nb.page.keyboard.press("Control+s")
    path = lab_server.root / FILENAME
    nb.wait_saved()
    saved = json.loads(path.read_text(encoding="utf-8"))
    sources = ["".join(cell["source"]) for cell in saved["cells"]]
    assert sources[1] == "# Notes" and saved["cells"][1]["cell_type"] == "markdown"
    assert sources[2] == "x = 9"
    assert "z = 3" not in sources
    with reopened_without_kernel(lab_server, chromium, FILENAME, nb.names) as again:
        record = again.output("p_change")
        expect(record).to_contain_text("→ Yes (clicked in the notebook)")
        expect(record.locator(".aj-diff-add").first).to_contain_text("x = 2")
        expect(again.output("p_reject")).to_contain_text(
            "Rejected: nothing was changed. The reason: keep x small"
        )
        again.doc_screenshot(
            again.cell("p_change"),
            "notebook-edit-record",
            DOC_PICTURES / "notebook-edit-record.png",
        )
