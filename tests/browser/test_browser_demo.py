"""The offline demo model in JupyterLab: a streamed answer, a tool card, and the guard dialog.

``%atomic_agent start --demo`` runs the real agent on the scripted demo model
(atomic_jupyter/demo/) with the bundled demo extension, whose guard asks before the
``rm -rf`` that "clean up the scratch files" makes the model run.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.harness.support import CURRENT_LINE

from .browser_harness import NotebookPage, panel_of, run_start

pytestmark = [pytest.mark.browser, pytest.mark.agent, pytest.mark.kernel]
#: A finished bash card's header (the current line also says how long the call took).
TOOL_DONE = (
    re.compile(r"^tool bash · \$ ls -la · done · \d+ ms$")
    if CURRENT_LINE
    else "tool bash · $ ls -la · done"
)

GUARD_TITLE = "Dangerous command (rm -rf): rm -rf ./demo-scratch"

CELLS = [
    ("start", "%load_ext atomic_jupyter\n%atomic_agent start --demo"),
    ("hello", "%%atomic_agent\nhello! who are you?"),
    ("files", "%%atomic_agent\nlist the files here"),
    ("guard_block", "%%atomic_agent\nclean up the scratch files"),
    ("guard_allow", "%%atomic_agent\ndelete the scratch folder"),
]

#: Records, in the page, each distinct text the cell's assistant Markdown showed.
WATCH_STREAM = """(cell) => {
  const seen = [];
  const look = () => {
    const el = cell.querySelector('.atomic-assistant-text');
    const text = el ? el.innerText : '';
    if (text && seen[seen.length - 1] !== text) seen.push(text);
  };
  new MutationObserver(look).observe(cell, {subtree: true, childList: true, characterData: true});
  window.__streamSeen = seen;
}"""


@pytest.fixture(scope="module")
def nb(open_notebook: Any) -> NotebookPage:
    page = open_notebook("demo.ipynb", CELLS)
    run_start(page, "atomic-jupyter demo")
    return page


def expect_run_done(nb: NotebookPage, cell: str) -> Any:
    transcript = nb.output(cell).locator(".atomic-transcript")
    expect(transcript.locator(".atomic-run-state")).to_have_text("done", timeout=60_000)
    expect(transcript.locator(".atomic-footer")).to_contain_text("turn")
    return transcript


def test_demo_panel_shows_status_and_widget_lines(nb: NotebookPage) -> None:
    panel = panel_of(nb)
    expect(panel.locator(".atomic-status-entry")).to_have_text(
        ["model turns in this conversation: 0"]
    )
    expect(panel.locator(".atomic-widgets-above .atomic-widget-block")).to_contain_text(
        ["The demo extension's commands: type one in the editor and Send"]
    )
    expect(panel.locator(".atomic-widgets-below .atomic-widget-block")).to_contain_text(
        ["Prompts the offline demo model answers:"]
    )
    nb.screenshot(nb.cell("start"), "demo-panel")


def test_demo_answer_streams_markdown(nb: NotebookPage) -> None:
    nb.cell("hello").element_handle().evaluate(WATCH_STREAM)
    nb.run("hello")
    transcript = expect_run_done(nb, "hello")
    answer = transcript.locator(".atomic-assistant-text")
    expect(answer).to_contain_text("Hello from the offline demo model")
    # Rendered Markdown: a heading, a list, a table and highlighted code.
    for tag in ("h1, h2, h3", "li", "table", "pre"):
        expect(answer.locator(tag).first).to_be_visible()
    seen = nb.page.evaluate("() => window.__streamSeen")
    final = answer.inner_text()
    assert seen and seen[-1] == final
    # It streamed: the page showed the answer in several states before the final one.
    # (Not necessarily growing: half-written Markdown such as "**bo" renders differently.)
    assert len(seen) >= 2, f"the answer appeared in one piece: {len(seen)} render(s)"
    print(f"the streamed answer showed {len(seen)} states in the page")
    status = panel_of(nb).locator(".atomic-status-entry")
    expect(status).to_have_text(["model turns in this conversation: 1"])
    nb.screenshot(nb.cell("hello"), "demo-streamed-answer")


def test_demo_tool_card(nb: NotebookPage) -> None:
    nb.run("files")
    transcript = expect_run_done(nb, "files")
    card = transcript.locator(".atomic-tool").first
    expect(card).to_have_class(re.compile(r"\batomic-tool-done\b"))
    expect(card.locator(".atomic-tool-header")).to_have_text(TOOL_DONE)
    expect(card.locator(".atomic-tool-command")).to_contain_text("$ ls -la")
    expect(card.locator(".atomic-tool-output")).to_contain_text("demo.ipynb")
    expect(transcript.locator(".atomic-assistant-text").last).not_to_be_empty()
    nb.screenshot(nb.cell("files"), "demo-tool-card")


@pytest.mark.parametrize(
    ("cell", "choice", "note", "tool_class"),
    [
        (
            "guard_block",
            "Block",
            "[warning] demo guard: blocked rm -rf ./demo-scratch (the user chose Block)",
            "atomic-tool-error",
        ),
        (
            "guard_allow",
            "Allow",
            "[info] demo guard: allowed rm -rf ./demo-scratch",
            "atomic-tool-done",
        ),
    ],
)
def test_demo_guard_dialog(
    nb: NotebookPage, cell: str, choice: str, note: str, tool_class: str
) -> None:
    nb.run(cell)
    dialog = nb.output(cell).locator(".atomic-dialog.atomic-dialog-select")
    expect(dialog).to_be_visible(timeout=60_000)
    expect(dialog).to_contain_text(GUARD_TITLE)
    expect(dialog.locator("button.atomic-option")).to_have_text(["Allow", "Block"])
    expect(dialog.locator(".atomic-countdown")).to_have_text(re.compile(r"^expires in \d+ s$"))
    nb.screenshot(nb.cell(cell), f"demo-guard-{choice.lower()}-before")
    notes = panel_of(nb).locator(".atomic-notification").filter(has_text=note)
    expect(notes).to_have_count(0)
    dialog.get_by_role("button", name=choice, exact=True).click()
    expect(nb.output(cell).locator(".atomic-dialog-outcome")).to_have_text(f"→ {choice} (clicked)")
    expect(notes).to_have_count(1)
    transcript = expect_run_done(nb, cell)
    expect(transcript.locator(".atomic-tool").first).to_have_class(re.compile(rf"\b{tool_class}\b"))
    nb.screenshot(nb.cell(cell), f"demo-guard-{choice.lower()}-after")
    assert nb.page_errors == [], nb.page_errors
