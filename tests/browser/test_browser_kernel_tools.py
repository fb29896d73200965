"""A kernel function exposed with ``side_effects=True`` in JupyterLab: the agent's call waits
for a Yes clicked in the tool's card, then runs in the kernel.

The offline demo model calls an exposed function when the prompt names it, with the quoted
text as its string argument, and then says "Your kernel's `NAME` answered: ...".
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from .browser_harness import NotebookPage, run_start

pytestmark = [pytest.mark.browser, pytest.mark.agent, pytest.mark.kernel]

APPROVAL = "Run save_note in the kernel?"

CELLS = [
    ("start", "%load_ext atomic_jupyter\n%atomic_agent start --demo"),
    (
        "expose",
        "import atomic_jupyter as aj\n\n"
        "notes = []\n\n\n"
        "def save_note(text: str) -> str:\n"
        '    """Append a note to the notebook\'s list of notes."""\n'
        "    notes.append(text)\n"
        '    return f"saved note {len(notes)}: {text}"\n\n\n'
        "aj.session().expose(save_note, side_effects=True)\n"
        "print(sorted(aj.session().kernel_tools))",
    ),
    ("prompt", "%%atomic_agent\nuse save_note with 'buy milk'"),
    ("notes", "print(notes)"),
]


@pytest.fixture(scope="module")
def nb(open_notebook: Any) -> NotebookPage:
    page = open_notebook("kernel_tools.ipynb", CELLS)
    run_start(page, "atomic-jupyter demo")
    return page


def test_side_effect_call_waits_for_yes_in_the_tool_card_then_runs_in_the_kernel(
    nb: NotebookPage,
) -> None:
    nb.run("expose")
    expect(nb.output("expose")).to_contain_text("['save_note']")

    nb.run("prompt")  # no --wait: the cell returns, the run goes on
    card = nb.output("prompt").locator(".atomic-tool").first
    dialog = card.locator(".atomic-tool-dialogs.atomic-dialog.atomic-dialog-confirm")
    expect(dialog).to_be_visible(timeout=60_000)
    expect(dialog).to_contain_text(APPROVAL)
    expect(dialog).to_contain_text('"text": "buy milk"')  # the arguments, before the call
    expect(card.locator(".atomic-tool-header")).to_contain_text("tool save_note")
    expect(dialog.locator("button.atomic-yes, button.atomic-no")).to_have_text(["Yes", "No"])
    nb.screenshot(nb.cell("prompt"), "kernel-tool-approval-before")

    dialog.get_by_role("button", name="Yes", exact=True).click()
    expect(card.locator(".atomic-dialog-outcome")).to_have_text("→ Yes (clicked)")
    transcript = nb.output("prompt").locator(".atomic-transcript")
    expect(transcript.locator(".atomic-run-state")).to_have_text("done", timeout=60_000)
    expect(card).to_have_class(re.compile(r"\batomic-tool-done\b"))
    expect(card.locator(".atomic-tool-output")).to_contain_text("saved note 1: buy milk")
    expect(transcript.locator(".atomic-assistant-text").last).to_contain_text(
        "Your kernel's save_note answered"
    )
    nb.screenshot(nb.cell("prompt"), "kernel-tool-approval-after")

    nb.run("notes")
    expect(nb.output("notes")).to_have_text("['buy milk']")
    assert nb.page_errors == [], nb.page_errors
