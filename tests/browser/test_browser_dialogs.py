"""Every dialog kind and the panel, clicked and typed into in JupyterLab by Chromium.

The real pinned agent runs tests/extensions/ui_everything.ts, whose commands raise each kind
of dialog and report what they received with notify("got <method>: <JSON>"); the tests read
that report in the panel after each answer. Screenshots go to artifacts/screenshots/.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.harness.support import EXTENSIONS

from .browser_harness import VIEWPORT, NotebookPage, panel_of, run_start

pytestmark = [pytest.mark.browser, pytest.mark.agent, pytest.mark.kernel]

UI_EXTENSION = EXTENSIONS / "ui_everything.ts"

CELLS = [
    ("start", f"%load_ext atomic_jupyter\n%atomic_agent start -e {UI_EXTENSION}"),
    ("select", "%%atomic_agent\n/ui-select"),
    ("select_many", "%%atomic_agent\n/ui-select-many"),
    ("confirm_yes", "%%atomic_agent\n/ui-confirm"),
    ("confirm_no", "%%atomic_agent\n/ui-confirm"),
    ("input", "%%atomic_agent\n/ui-input"),
    ("editor", "%%atomic_agent\n/ui-editor"),
    ("cancel_select", "%%atomic_agent\n/ui-select"),
    ("cancel_confirm", "%%atomic_agent\n/ui-confirm"),
    ("cancel_input", "%%atomic_agent\n/ui-input"),
    ("cancel_editor", "%%atomic_agent\n/ui-editor"),
    ("timed", "%%atomic_agent\n/ui-confirm 6000"),
    ("fire", "%%atomic_agent\n/ui-fire"),
]


@pytest.fixture(scope="module")
def nb(open_notebook: Any) -> NotebookPage:
    page = open_notebook("dialogs.ipynb", CELLS)
    run_start(page, "UI test extension")
    expect(panel_of(page).locator(".atomic-state")).to_have_text("idle")
    return page


class Reports:
    """The extension's notify() reports in the panel: wait for one more of a given text."""

    def __init__(self, nb: NotebookPage, text: str) -> None:
        self.items = panel_of(nb).locator(".atomic-notification").filter(has_text=text)
        self.before = self.items.count()

    def expect_one_more(self) -> None:
        expect(self.items).to_have_count(self.before + 1)


def reported(method: str, value: object) -> str:
    """The notification ui_everything.ts sends for an answer (JSON.stringify of it)."""
    shown = "undefined" if value is None else json.dumps(value, ensure_ascii=False)
    return f"[info] got {method}: {shown}"


def dialog_in(nb: NotebookPage, cell: str, method: str) -> Any:
    dialog = nb.output(cell).locator(f".atomic-dialog.atomic-dialog-{method}")
    expect(dialog).to_be_visible()
    return dialog


def expect_outcome(nb: NotebookPage, cell: str, text: str) -> None:
    outcome = nb.output(cell).locator(".atomic-dialog-outcome")
    expect(outcome).to_have_text(text)
    # The controls are gone once it collapsed.
    expect(nb.output(cell).locator(".atomic-dialog button")).to_have_count(0)


# --------------------------------------------------------------------------- the panel


def test_panel_shows_title_state_and_status(nb: NotebookPage) -> None:
    panel = panel_of(nb)
    expect(panel.locator(".atomic-status-entry")).to_have_text(["ready"])
    expect(panel.locator(".atomic-editor textarea")).to_have_value("")
    expect(panel.get_by_role("button", name="Send")).to_be_enabled()
    nb.screenshot(nb.cell("start"), "panel-started")


# --------------------------------------------------------------------------- answering


def test_select_click_an_option(nb: NotebookPage) -> None:
    nb.run("select")
    dialog = dialog_in(nb, "select", "select")
    expect(dialog).to_contain_text("Pick one")
    options = dialog.locator("button.atomic-option")
    expect(options).to_have_text(["Alpha", "Beta", "Gamma"])
    nb.screenshot(nb.cell("select"), "select-before")
    report = Reports(nb, reported("select", "Beta"))
    options.filter(has_text="Beta").click()
    report.expect_one_more()
    expect_outcome(nb, "select", "→ Beta (clicked)")
    nb.screenshot(nb.cell("select"), "select-after")


def test_select_many_options_in_a_dropdown(nb: NotebookPage) -> None:
    nb.run("select_many")
    dialog = dialog_in(nb, "select_many", "select")
    dropdown = dialog.locator("select")
    expect(dropdown.locator("option")).to_have_count(12)
    dropdown.select_option(label="Option 7")
    nb.screenshot(nb.cell("select_many"), "select-dropdown-before")
    report = Reports(nb, reported("select", "Option 7"))
    dialog.locator("button.atomic-submit").click()
    report.expect_one_more()
    expect_outcome(nb, "select_many", "→ Option 7 (clicked)")


@pytest.mark.parametrize(
    ("cell", "button", "answer", "shown"),
    [("confirm_yes", "Yes", True, "Yes"), ("confirm_no", "No", False, "No")],
)
def test_confirm(nb: NotebookPage, cell: str, button: str, answer: bool, shown: str) -> None:
    nb.run(cell)
    dialog = dialog_in(nb, cell, "confirm")
    expect(dialog).to_contain_text("Proceed?")
    expect(dialog).to_contain_text("This is the message.\nIt has two lines.")
    yes_no = dialog.locator("button.atomic-yes, button.atomic-no")
    expect(yes_no).to_have_text(["Yes", "No"])
    if answer:
        expect_one_row_of_buttons_saying_what_each_sends(nb, dialog)
        nb.screenshot(nb.cell(cell), "confirm-before")
    report = Reports(nb, reported("confirm", answer))
    dialog.get_by_role("button", name=button, exact=True).click()
    report.expect_one_more()
    expect_outcome(nb, cell, f"→ {shown} (clicked)")
    nb.screenshot(nb.cell(cell), f"confirm-after-{shown.lower()}")


def expect_one_row_of_buttons_saying_what_each_sends(nb: NotebookPage, dialog: Any) -> None:
    """A confirm's Yes, No and Dismiss, each titled with what the extension gets, level in one
    row: in the notebook as the tests' window has it, and in a narrow window."""
    buttons = dialog.locator("button")
    expect(buttons).to_have_text(["Yes", "No", "Dismiss"])
    titles = buttons.evaluate_all("(all) => all.map((b) => b.title)")
    assert titles == [
        "Answer yes: the extension gets true",
        "Answer no: the extension gets false",
        "Close without answering (Escape): the extension is told you cancelled, "
        "which it takes as No",
    ], titles
    tops = "(all) => all.map((b) => Math.round(b.getBoundingClientRect().top))"
    panel = ".jp-NotebookPanel:not(.lm-mod-hidden)"
    try:
        for width in (VIEWPORT["width"], 800):
            nb.page.set_viewport_size({"width": width, "height": VIEWPORT["height"]})
            # JupyterLab lays itself out again on the resize: wait for the notebook to fit.
            nb.page.wait_for_function(
                f"(w) => document.querySelector('{panel}').getBoundingClientRect().right <= w",
                arg=width,
            )
            level = buttons.evaluate_all(tops)
            assert len(set(level)) == 1, (width, level)
    finally:
        nb.page.set_viewport_size(VIEWPORT)


def test_input_typed_unicode(nb: NotebookPage) -> None:
    nb.run("input")
    dialog = dialog_in(nb, "input", "input")
    expect(dialog).to_contain_text("Your name")
    field = dialog.locator("input[type=text]")
    expect(field).to_have_attribute("placeholder", "type a name…")
    nb.screenshot(nb.cell("input"), "input-before")
    text = "Zoë Ågren 日本語 🚀"
    field.click()
    field.press_sequentially(text)
    expect(field).to_have_value(text)
    nb.screenshot(nb.cell("input"), "input-typed")
    report = Reports(nb, reported("input", text))
    dialog.locator("button.atomic-submit").click()
    report.expect_one_more()
    expect_outcome(nb, "input", f"→ {text} (clicked)")
    nb.screenshot(nb.cell("input"), "input-after")


def test_editor_typed_multiline_unicode(nb: NotebookPage) -> None:
    nb.run("editor")
    dialog = dialog_in(nb, "editor", "editor")
    expect(dialog).to_contain_text("Edit the text")
    area = dialog.locator("textarea")
    expect(area).to_have_value("Line 1\nLine 2")
    nb.screenshot(nb.cell("editor"), "editor-before")
    text = "First line, naïve\nSecond line 日本語\nThird line 🚀 done"
    area.click()
    nb.page.keyboard.press("Control+A")
    nb.page.keyboard.type(text)  # Enter between the lines, as a person types them
    expect(area).to_have_value(text)
    nb.screenshot(nb.cell("editor"), "editor-typed")
    report = Reports(nb, reported("editor", text))
    dialog.locator("button.atomic-submit").click()
    report.expect_one_more()
    expect_outcome(nb, "editor", "→ First line, naïve (3 lines) (clicked)")
    nb.screenshot(nb.cell("editor"), "editor-after")


# --------------------------------------------------------------------------- cancelling


@pytest.mark.parametrize(
    ("method", "title", "default"),
    [
        ("select", "Pick one", None),
        ("confirm", "Proceed?", False),  # a cancelled confirm is a No for the extension
        ("input", "Your name", None),
        ("editor", "Edit the text", None),
    ],
)
def test_cancel(nb: NotebookPage, method: str, title: str, default: object) -> None:
    cell = f"cancel_{method}"
    nb.run(cell)
    dialog = dialog_in(nb, cell, method)
    if method == "input":
        dialog.locator("input[type=text]").fill("typed, then cancelled")
    report = Reports(nb, reported(method, default))
    dialog.locator("button.atomic-cancel").click()
    report.expect_one_more()
    expect_outcome(nb, cell, "→ cancelled (clicked)")
    nb.screenshot(nb.cell(cell), f"cancel-{method}-after")


# --------------------------------------------------------------------------- a timed dialog


def test_timed_dialog_counts_down_and_expires(nb: NotebookPage) -> None:
    report = Reports(nb, reported("confirm", False))  # the extension's default on expiry
    nb.run("timed")
    dialog = dialog_in(nb, "timed", "confirm")
    countdown = dialog.locator(".atomic-countdown")
    expect(countdown).to_have_text(re.compile(r"^expires in [1-6] s$"))
    seen = [int(re.findall(r"\d+", countdown.inner_text())[0])]
    nb.screenshot(nb.cell("timed"), "timed-counting-down")
    if seen[0] > 1:
        # It counts down while the page waits: a smaller number shows next.
        lower = "".join(str(n) for n in range(1, seen[0]))
        expect(countdown).to_have_text(re.compile(rf"^expires in [{lower}] s$"), timeout=10_000)
    expect_outcome(nb, "timed", "→ timed out: No (the agent's default)")
    report.expect_one_more()
    nb.screenshot(nb.cell("timed"), "timed-expired")


# --------------------------------------------------------------------------- fire and forget, Send


def test_fire_and_forget_fields_then_send_from_the_editor(nb: NotebookPage) -> None:
    nb.run("fire")
    panel = panel_of(nb)
    expect(panel.locator(".atomic-title")).to_have_text("Fired title")
    expect(panel.locator(".atomic-status-entry")).to_have_text(["ready", "status one"])
    expect(panel.locator(".atomic-widgets-above .atomic-widget-block")).to_have_text(
        ["top line 1\ntop line 2"]
    )
    expect(panel.locator(".atomic-widgets-below .atomic-widget-block")).to_have_text(
        ["bottom line"]
    )
    expect(panel).not_to_contain_text("to be cleared")
    for kind, text in [
        ("info", "[info] an info note"),
        ("warning", "[warning] a warning note"),
        ("error", "[error] an error note"),
    ]:
        expect(
            panel.locator(f".atomic-notification.atomic-notify-{kind}").filter(has_text=text)
        ).to_have_count(1)
    expect(panel.locator(".atomic-notification").filter(has_text="a default note")).to_have_count(1)
    editor = panel.locator(".atomic-editor textarea")
    expect(editor).to_have_value("prefilled by the extension")
    nb.screenshot(nb.cell("start"), "panel-status-widgets-prefilled")

    # Replace the prefill with an extension command and press Send.
    editor.fill("/ui-select")
    expect(editor).to_have_value("/ui-select")
    panel.get_by_role("button", name="Send").click()
    expect(editor).to_have_value("")  # the editor is cleared once sent
    dialog = panel.locator(".atomic-dialog.atomic-dialog-select")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Pick one")
    nb.screenshot(nb.cell("start"), "panel-send-dialog-before")
    report = Reports(nb, reported("select", "Gamma"))
    dialog.get_by_role("button", name="Gamma").click()
    report.expect_one_more()
    expect(panel.locator(".atomic-dialog-outcome")).to_have_text("→ Gamma (clicked)")
    nb.screenshot(nb.cell("start"), "panel-send-dialog-after")
    assert nb.page_errors == [], nb.page_errors
    assert nb.js_dialogs == [], nb.js_dialogs


def test_panel_editor_sends_on_shift_enter_and_ctrl_enter_and_enter_adds_a_line(
    nb: NotebookPage,
) -> None:
    panel = panel_of(nb)
    editor = panel.locator(".atomic-editor textarea")
    expect(editor).to_have_attribute("placeholder", re.compile("Shift\\+Enter"))
    commands_before = nb.page.evaluate("() => window.__jpCommands.length")
    cells_before = nb.notebook.locator(".jp-Cell").count()

    # Typing, Enter and letters that are notebook shortcuts in command mode ("a", "b", "dd",
    # "x") all stay in the editor: Enter adds a line, no notebook command runs.
    editor.fill("")
    editor.click()
    nb.page.keyboard.type("a b dd x")
    nb.page.keyboard.press("Enter")
    nb.page.keyboard.type("second line")
    expect(editor).to_have_value("a b dd x\nsecond line")
    nb.screenshot(nb.cell("start"), "panel-editor-two-lines")
    # It follows the theme, as ipywidgets' own text areas do.
    assert nb.set_theme("JupyterLab Dark")["light"] is False
    try:
        nb.screenshot(nb.cell("start"), "panel-editor-two-lines-dark")
        background = editor.evaluate("(e) => getComputedStyle(e).backgroundColor")
        channels = [int(c) for c in re.findall(r"\d+", background)[:3]]
        assert sum(channels) / 3 < 100, background
    finally:
        assert nb.set_theme("JupyterLab Light")["light"] is True

    for keys in ("Shift+Enter", "Control+Enter"):
        editor.fill("/ui-confirm")
        report = Reports(nb, reported("confirm", True))
        outcomes = panel.locator(".atomic-dialog-outcome").count()
        editor.press(keys)
        expect(editor).to_have_value("")  # sent, then cleared
        yes = panel.locator(".atomic-dialog.atomic-dialog-confirm").get_by_role(
            "button", name="Yes"
        )
        expect(yes).to_be_visible()  # the one open dialog: answered ones have no buttons
        yes.click()
        report.expect_one_more()
        expect(panel.locator(".atomic-dialog-outcome")).to_have_count(outcomes + 1)

    ran = nb.page.evaluate("(n) => window.__jpCommands.slice(n)", commands_before)
    assert not [c for c in ran if c.startswith("notebook:")], ran
    expect(nb.notebook.locator(".jp-Cell")).to_have_count(cells_before)
    assert nb.page_errors == [], nb.page_errors
