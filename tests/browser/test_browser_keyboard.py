"""A person at the keyboard, in JupyterLab with Chromium: typing while the same output keeps
changing, answering a dialog with the keyboard alone, Escape, and the panel's editor while a
run in the panel streams.

The real pinned agent runs tests/extensions/ui_everything.ts; its ``/ui-input-busy`` shows an
input dialog while custom entries keep arriving in the same run (so the output the text box is
in is updated many times while a person types in it).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.harness.support import EXTENSIONS

from .browser_harness import NotebookPage, panel_of, run_start

pytestmark = [pytest.mark.browser, pytest.mark.agent, pytest.mark.kernel]

CELLS = [
    (
        "start",
        f"%load_ext atomic_jupyter\n%atomic_agent start -e {EXTENSIONS / 'ui_everything.ts'}",
    ),
    ("busy", "%%atomic_agent\n/ui-input-busy"),
    ("keys", "%%atomic_agent\n/ui-select"),
    ("escape", "%%atomic_agent\n/ui-input"),
    ("confirm_keys", "%%atomic_agent\n/ui-confirm"),
    ("flood", "%%atomic_agent\n/ui-flood 40000"),
]


@pytest.fixture(scope="module")
def nb(open_notebook: Any) -> NotebookPage:
    page = open_notebook("keyboard.ipynb", CELLS)
    run_start(page, "UI test extension")
    return page


def reports(nb: NotebookPage, method: str, value: object) -> Any:
    shown = "undefined" if value is None else json.dumps(value, ensure_ascii=False)
    return (
        nb.output("start")
        .locator(".atomic-notification")
        .filter(has_text=f"[info] got {method}: {shown}")
    )


def test_typing_in_a_dialog_while_its_output_keeps_changing_keeps_every_character_and_the_cursor(
    nb: NotebookPage,
) -> None:
    nb.run("busy")
    out = nb.output("busy")
    field = out.locator(".atomic-dialog.atomic-dialog-input input[type=text]")
    expect(field).to_be_visible()
    entries = out.locator(".atomic-entry")
    expect(entries.first).to_be_visible()  # the output is being updated
    field.click()
    before = entries.count()
    first = "naïve typing, 日本語, "
    field.press_sequentially(first, delay=25)
    for _ in range(3):
        field.press("ArrowLeft")
    field.press_sequentially("XY", delay=25)  # typed where the cursor is, not at the end
    field.press_sequentially("", delay=0)
    typed = first[:-3] + "XY" + first[-3:]
    expect(field).to_have_value(typed)
    # The output changed while the person typed (entries arrived in the same run)...
    assert entries.count() > before + 5, (before, entries.count())
    # ...and the text box kept the focus and the cursor where the person left it.
    assert field.evaluate("(f) => document.activeElement === f")
    assert field.evaluate("(f) => [f.selectionStart, f.selectionEnd]") == [len(first) - 1] * 2
    report = reports(nb, "input", typed)
    field.press("Enter")  # Enter submits a text box
    expect(report).to_have_count(1)
    expect(out.locator(".atomic-dialog-outcome")).to_contain_text("(clicked)")


def test_a_dialog_answered_with_the_keyboard_alone(nb: NotebookPage) -> None:
    nb.run("keys")
    dialog = nb.output("keys").locator(".atomic-dialog.atomic-dialog-select")
    expect(dialog.locator("button.atomic-option")).to_have_count(3)
    # The buttons are real buttons, named by their text, in the page's Tab order.
    alpha = dialog.get_by_role("button", name="Alpha", exact=True)
    alpha.focus()
    nb.page.keyboard.press("Tab")
    beta_focused = dialog.get_by_role("button", name="Beta", exact=True)
    assert beta_focused.evaluate("(b) => document.activeElement === b")
    report = reports(nb, "select", "Beta")
    nb.page.keyboard.press("Space")
    expect(report).to_have_count(1)
    expect(nb.output("keys").locator(".atomic-dialog-outcome")).to_have_text("→ Beta (clicked)")


def test_enter_presses_a_focused_button(nb: NotebookPage) -> None:
    nb.run("confirm_keys")
    dialog = nb.output("confirm_keys").locator(".atomic-dialog.atomic-dialog-confirm")
    no = dialog.get_by_role("button", name="No", exact=True)
    no.focus()
    report = reports(nb, "confirm", False)
    nb.page.keyboard.press("Enter")
    expect(report).to_have_count(1)
    expect(nb.output("confirm_keys").locator(".atomic-dialog-outcome")).to_have_text(
        "→ No (clicked)"
    )


def test_escape_cancels_a_dialog_and_is_no_notebook_shortcut(nb: NotebookPage) -> None:
    nb.run("escape")
    field = nb.output("escape").locator(".atomic-dialog.atomic-dialog-input input[type=text]")
    expect(field).to_be_visible()
    field.click()
    field.press_sequentially("abc")  # no key typed here reaches the notebook ("a" inserts a cell)
    cells = nb.notebook.locator(".jp-Cell").count()
    report = reports(nb, "input", None)
    field.press("Escape")
    expect(report).to_have_count(1)
    expect(nb.output("escape").locator(".atomic-dialog-outcome")).to_have_text(
        "→ cancelled (clicked)"
    )
    assert nb.notebook.locator(".jp-Cell").count() == cells


def test_typing_in_the_panel_editor_while_the_panel_keeps_changing_keeps_every_character(
    nb: NotebookPage,
) -> None:
    """The panel is one output: its status line changes thousands of times while a person
    types in its editor, and neither the text nor the cursor is lost."""
    panel = panel_of(nb)
    editor = panel.locator(".atomic-editor textarea")
    status = panel.locator(".atomic-status-entry", has_text="update")
    nb.run("flood")
    expect(status).to_be_visible()
    editor.click()
    seen = set()
    typed = "a prompt typed during a flood, naïve 日本語"
    for piece in (typed[:15], typed[15:30], typed[30:]):
        editor.press_sequentially(piece, delay=20)
        seen.add(status.inner_text())
    editor.press("Home")  # the cursor to the start of the line, and type there
    editor.press_sequentially(">> ", delay=20)
    seen.add(status.inner_text())
    expect(editor).to_have_value(">> " + typed)
    assert len(seen) >= 2, f"the panel did not change while typing: {seen}"
    assert editor.evaluate("(e) => document.activeElement === e")
    assert editor.evaluate("(e) => [e.selectionStart, e.selectionEnd]") == [3, 3]
    flood_done = nb.output("start").locator(".atomic-notification").filter(has_text="flood done")
    expect(flood_done).to_have_count(1, timeout=60_000)
    expect(editor).to_have_value(">> " + typed)  # the flood's end left it alone too
