"""Script safety in a real page: nothing the agent, its extensions or its model send runs.

tests/extensions/browser_payloads.ts puts HTML/script/LaTeX payloads (tests/browser/browser_payloads.py)
in every field an extension fills: title, status, widget lines above and below the editor,
notifications, set_editor_text, select title and options (buttons and a dropdown), confirm
title and message, input title and placeholder, editor title and prefill. A scripted model
in the kernel answers with the payloads in Markdown and runs a bash command that prints one.
Each payload tries to set ``window.__pwned``; an init script watches it in every frame.

The tests assert that the global is never set, that the payloads are visible as text, and
that no element that could run or load something (img, script, iframe, svg, object, embed,
MathJax output, ``on*`` attributes, ``javascript:`` links) exists inside the widgets.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.harness.support import CURRENT_LINE, EXTENSIONS

from .browser_harness import NotebookPage, panel_of, run_start
from .browser_payloads import FINAL_TEXT, MARKERS, TOOL_PAYLOAD, model_cell, payload

pytestmark = [pytest.mark.browser, pytest.mark.agent, pytest.mark.kernel]
#: A finished bash card's header (the current line also says how long the call took).
TOOL_DONE = (
    re.compile(r"^tool bash · \$ cat <<'PAYLOAD' … · done · \d+ ms$")
    if CURRENT_LINE
    else "tool bash · $ cat <<'PAYLOAD' … · done"
)

EXTENSION = str(EXTENSIONS / "browser_payloads.ts")

CELLS = [
    ("start", model_cell(EXTENSION)),
    ("fields", "%%atomic_agent\n/payload-fields"),
    ("dialogs", "%%atomic_agent\n/payload-dialogs"),
    ("model", "%%atomic_agent\nshow me the payloads"),
]

OURS = ".atomic-panel, .atomic-dialog, .atomic-transcript"

#: Every element inside our widgets that could run script, load a URL or typeset maths. MathML
#: is allowed where our Markdown renderer writes it (the answer's maths), and only bare: no
#: style, no link, in any of its elements.
DANGEROUS = """(roots) => {
  const found = [];
  const MATHML = 'http://www.w3.org/1998/Math/MathML';
  for (const root of document.querySelectorAll(roots)) {
    for (const el of root.querySelectorAll('*')) {
      const tag = el.tagName.toLowerCase();
      const ourMath = el.namespaceURI === MATHML && el.closest('.atomic-markdown');
      if (['img', 'script', 'iframe', 'svg', 'object', 'embed', 'frame', 'math', 'link',
           'style', 'base', 'form', 'video', 'audio', 'source', 'mjx-container'].includes(tag)
          && !ourMath || el.classList.contains('MathJax')) {
        found.push(tag + ': ' + el.outerHTML.slice(0, 120));
      }
      if (el.namespaceURI === MATHML && (el.hasAttribute('style') || el.hasAttribute('href'))) {
        found.push(tag + ': ' + el.outerHTML.slice(0, 120));
      }
      for (const attr of el.attributes) {
        const name = attr.name.toLowerCase();
        const value = attr.value.replace(/\\s/g, '').toLowerCase();
        if (name.startsWith('on')) found.push(`${tag}[${name}]`);
        if (['href', 'src', 'action', 'formaction', 'xlink:href', 'srcdoc'].includes(name)
            && (value.startsWith('javascript:') || value.startsWith('data:') || name === 'srcdoc')) {
          found.push(`${tag}[${name}=${attr.value.slice(0, 60)}]`);
        }
      }
    }
  }
  return found;
}"""


@pytest.fixture(scope="module")
def nb(open_notebook: Any) -> NotebookPage:
    page = open_notebook("payloads.ipynb", CELLS)
    run_start(page, "Payload test extension")
    return page


def assert_safe(nb: NotebookPage) -> None:
    pwned = nb.pwned()
    assert pwned["value"] is None and pwned["hits"] == [], f"a payload ran: {pwned}"
    found = nb.page.evaluate(DANGEROUS, OURS)
    assert found == [], found
    assert nb.page.locator(OURS).count() > 0
    assert nb.js_dialogs == [], nb.js_dialogs


def one_line(answer: str) -> str:
    """How a dialog's outcome line shows a long one-line answer: cut, with its length."""
    return answer if len(answer) <= 80 else f"{answer[:79]}… ({len(answer)} chars)"


def reported(method: str, value: object) -> str:
    return f"[info] got {method}: {json.dumps(value, ensure_ascii=False)}"


def test_payloads_in_every_fire_and_forget_field_are_text(nb: NotebookPage) -> None:
    nb.run("fields")
    panel = panel_of(nb)
    expect(
        panel.locator(".atomic-notification").filter(has_text="payload fields set")
    ).to_have_count(1)
    expect(panel.locator(".atomic-title")).to_have_text(payload("title"))
    expect(panel.locator(".atomic-status-entry")).to_have_text([payload("status")])
    expect(panel.locator(".atomic-widgets-above .atomic-widget-block")).to_have_text(
        [payload("widget-above-1") + "\n" + payload("widget-above-2")]
    )
    expect(panel.locator(".atomic-widgets-below .atomic-widget-block")).to_have_text(
        [payload("widget-below")]
    )
    for kind in ("info", "warning", "error"):
        expect(
            panel.locator(f".atomic-notify-{kind}").filter(has_text=payload(f"notify-{kind}"))
        ).to_have_text([f"[{kind}] {payload(f'notify-{kind}')}"])
    expect(panel.locator(".atomic-editor textarea")).to_have_value(payload("set-editor-text"))
    text = panel.inner_text()
    for marker in MARKERS:
        assert marker in text
    assert_safe(nb)
    nb.screenshot(nb.output("start"), "payload-panel")


def test_payloads_in_every_dialog_field_are_text(nb: NotebookPage) -> None:
    nb.run("dialogs")
    out = nb.output("dialogs")
    panel = panel_of(nb)

    def pending(method: str) -> Any:
        dialog = out.locator(f".atomic-dialog.atomic-dialog-{method}").filter(
            has=nb.page.locator("button.atomic-cancel")
        )
        expect(dialog).to_have_count(1)
        return dialog

    def answered(method: str, value: object, outcome: str) -> None:
        expect(
            panel.locator(".atomic-notification").filter(has_text=reported(method, value))
        ).to_have_count(1)
        expect(out.locator(".atomic-dialog-outcome").filter(has_text=outcome)).to_have_count(1)

    # select: title and options (buttons)
    dialog = pending("select")
    expect(dialog.locator(".atomic-option")).to_have_text(
        [payload("option-1"), payload("option-2")]
    )
    expect(dialog).to_contain_text(payload("select-title"))
    assert_safe(nb)
    nb.screenshot(dialog, "payload-select")
    dialog.locator(".atomic-option").first.click()
    answered(
        "select",
        payload("option-1"),
        f"→ {one_line(payload('option-1'))}",
    )

    # select with many options: a dropdown
    dialog = pending("select")
    expect(dialog.locator("option")).to_have_count(10)
    expect(dialog.locator("option").nth(2)).to_have_text(payload("dropdown-option-3"))
    expect(dialog).to_contain_text(payload("dropdown-title"))
    dialog.locator("select").select_option(index=2)
    nb.screenshot(dialog, "payload-select-dropdown")
    dialog.locator("button.atomic-submit").click()
    answered(
        "select-many",
        payload("dropdown-option-3"),
        f"→ {one_line(payload('dropdown-option-3'))}",
    )

    # confirm: title and message
    dialog = pending("confirm")
    expect(dialog).to_contain_text(payload("confirm-title"))
    expect(dialog).to_contain_text(payload("confirm-message"))
    assert_safe(nb)
    nb.screenshot(dialog, "payload-confirm")
    dialog.locator("button.atomic-yes").click()
    answered("confirm", True, "→ Yes")

    # input: title and placeholder; the typed answer is a payload too
    dialog = pending("input")
    expect(dialog).to_contain_text(payload("input-title"))
    field = dialog.locator("input[type=text]")
    expect(field).to_have_attribute("placeholder", payload("input-placeholder"))
    nb.screenshot(dialog, "payload-input")
    field.fill(payload("typed-answer"))
    dialog.locator("button.atomic-submit").click()
    answered(
        "input",
        payload("typed-answer"),
        f"→ {one_line(payload('typed-answer'))}",
    )

    # editor: title and prefill, submitted as it is
    dialog = pending("editor")
    expect(dialog).to_contain_text(payload("editor-title"))
    expect(dialog.locator("textarea")).to_have_value(payload("editor-prefill"))
    assert_safe(nb)
    nb.screenshot(dialog, "payload-editor")
    dialog.locator("button.atomic-submit").click()
    answered(
        "editor",
        payload("editor-prefill"),
        f"→ {one_line(payload('editor-prefill'))}",
    )

    text = out.inner_text()
    for marker in MARKERS:
        assert marker in text
    assert_safe(nb)
    # Once the run is over its record stands in its place: the agent's text in it is not
    # typeset by the page's MathJax either (a $\\style{...}$ title would be applied).
    expect(out.locator(".atomic-record-run")).to_have_count(1)
    expect(out.locator("mjx-container")).to_have_count(0)
    for marker in MARKERS:
        assert marker in out.inner_text()
    nb.screenshot(nb.cell("dialogs"), "payload-dialogs-answered")
    nb.screenshot(nb.output("start"), "payload-panel-after-dialogs")


def test_payloads_in_model_markdown_and_tool_output_are_text(nb: NotebookPage) -> None:
    nb.run("model")
    transcript = nb.output("model").locator(".atomic-transcript")
    expect(transcript.locator(".atomic-run-state")).to_have_text("done", timeout=60_000)
    answers = transcript.locator(".atomic-assistant-text")
    expect(answers.last).to_have_text(FINAL_TEXT)
    first = answers.first
    expect(first.locator("h1")).to_have_text("Payload answer")
    shown = first.inner_text()
    for piece in (
        payload("md-inline").split(": ", 1)[1].split(" $")[0],  # the inline HTML, as text
        "<script>window.__pwned='md-script-block'</script>",
        "<img src=x onerror=\"window.__pwned='md-img-block'\">",
        "<svg onload=\"window.__pwned='md-svg-block'\"></svg>",
        "[a javascript link](javascript:window.__pwned='md-link')",
        "<javascript:window.__pwned='md-autolink'>",
        "<img src=x onerror=\"window.__pwned='md-code'\">",
    ):
        assert piece in shown, (piece, shown)
    # Maths is MathML, and the LaTeX payloads in it are inert: no style, no link, no red.
    expect(first.locator("math")).not_to_have_count(0)
    expect(first.locator("math [style], math [href], math a")).to_have_count(0)
    red = first.evaluate(
        "(e) => [...e.querySelectorAll('*')].some("
        "n => getComputedStyle(n).backgroundColor === 'rgb(255, 0, 0)')"
    )
    assert red is False
    # A remote image is a link to it, never loaded.
    expect(first.locator("a", has_text="image: a remote image")).to_have_attribute(
        "href", "https://example.invalid/pixel.png"
    )
    card = transcript.locator(".atomic-tool")
    expect(card.locator(".atomic-tool-header")).to_have_text(TOOL_DONE)
    expect(card.locator(".atomic-tool-command")).to_contain_text("$ cat <<'PAYLOAD'")
    expect(card.locator(".atomic-tool-output")).to_contain_text(TOOL_PAYLOAD)
    assert_safe(nb)
    nb.screenshot(nb.cell("model"), "payload-model-answer")
    assert nb.page_errors == [], nb.page_errors
