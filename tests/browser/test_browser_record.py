"""The saved notebook is the record: the quickstart, run, saved and reopened without its kernel.

The quickstart is executed headless (nbclient, as "Run All" would) and saved the way
JupyterLab saves by default: without widget state. It is then opened in JupyterLab after the
kernel that ran it is gone, and the kernel JupyterLab starts for it is shut down too. A
widget view whose model is gone shows "Error displaying widget: model not found"; every
output of the product must instead show its record: the prompt, the answer, the tool call,
the dialog's outcome. Photographed in the light and the dark theme
(``artifacts/screenshots/record-*.png``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient
from playwright.sync_api import expect

from tests.harness.plugin import agent_kernel_env
from tests.harness.support import ROOT

from .browser_harness import (
    LabServer,
    NotebookPage,
)
from .conftest import reopened_without_kernel

pytestmark = [pytest.mark.browser, pytest.mark.agent, pytest.mark.kernel]

LIGHT = "JupyterLab Light"
DARK = "JupyterLab Dark"
FILENAME = "record-quickstart.ipynb"


@pytest.fixture(scope="module")
def saved_quickstart(
    lab_server: LabServer, agent_command: list[str], private_agent_home: Path
) -> list[str]:
    """The quickstart, executed and saved under the server's root without widget state (as
    JupyterLab saves by default); returns its cells' names."""
    work = lab_server.root
    nb = nbformat.read(ROOT / "notebooks" / "quickstart.ipynb", as_version=4)
    client = NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(work)}}
    )
    client.execute(env={**os.environ, **agent_kernel_env(agent_command, private_agent_home)})
    nb.metadata.pop("widgets", None)
    nbformat.write(nb, work / FILENAME)
    return [f"cell-{i}" for i in range(len(nb.cells))]


@pytest.fixture(scope="module")
def reopened(
    lab_server: LabServer, chromium: Any, saved_quickstart: list[str]
) -> Iterator[NotebookPage]:
    """The saved quickstart open in JupyterLab, its kernel shut down; the theme put back."""
    with reopened_without_kernel(lab_server, chromium, FILENAME, saved_quickstart) as nb:
        yield nb


def cell_with(nb: NotebookPage, source: str) -> Any:
    """The cell whose input holds ``source``."""
    return nb.notebook.locator(".jp-Cell").filter(
        has=nb.page.locator(".jp-InputArea", has_text=source)
    )


def test_the_reopened_quickstart_shows_the_conversation_not_broken_widgets(
    reopened: NotebookPage,
) -> None:
    nb = reopened
    runs = nb.notebook.locator(".atomic-record-run")
    expect(runs).to_have_count(5)
    hello = cell_with(nb, "hello! who are you?").locator(".atomic-record-run")
    expect(hello.locator(".atomic-run-prompt")).to_have_text("> hello! who are you?")
    expect(hello.locator(".atomic-run-state")).to_have_text("done")
    expect(hello.locator(".atomic-assistant-text")).to_contain_text(
        "Hello from the offline demo model"
    )
    # Rendered Markdown, not its source.
    expect(
        hello.locator(".atomic-assistant-text h1, .atomic-assistant-text h2").first
    ).to_be_visible()
    # A prompt that cited a value: as written in the header, as sent in a closed fold.
    cited = cell_with(nb, "what is in $`primes`?").locator(".atomic-record-run")
    expect(cited.locator(".atomic-run-prompt")).to_have_text("> what is in $`primes`?")
    sent = cited.locator("details.atomic-run-sent")
    expect(sent.locator("summary")).to_have_text("Sent to the agent, with 1 cited value: primes")
    expect(sent).not_to_have_attribute("open", "")
    # The prompt as sent (its cited value a table, say) in the code font, its columns kept.
    font = sent.locator(".atomic-run-sent-text").evaluate("(e) => getComputedStyle(e).fontFamily")
    assert "monospace" in font, font
    tools = cell_with(nb, "list the files here").locator(".atomic-tool")
    expect(tools.locator(".atomic-tool-header")).to_contain_text("tool bash · $ ls -la · done")
    guarded = cell_with(nb, "clean up the scratch files")
    # The dialog is named once, by its question; its outcome line says what came of it.
    dialog = guarded.locator(".atomic-tool .atomic-record-dialog")
    expect(dialog.locator(".atomic-dialog-question")).to_have_text(
        "select dialog: Dangerous command (rm -rf): rm -rf ./demo-scratch"
    )
    expect(dialog.locator(".atomic-dialog-outcome")).to_have_text("→ Block (answered by code)")
    # The notice of the wait that stopped for that dialog neither says it waits nor repeats
    # its outcome: the outcome is shown once, in the card.
    expect(guarded).not_to_contain_text("needs your answer")
    expect(guarded.locator(".atomic-dialog-outcome")).to_have_count(1)
    # The panel of the stopped session, as it was.
    expect(nb.notebook.locator(".atomic-record-panel .atomic-state")).to_have_text("stopped")
    # Nothing on the page is a widget that lost its model, and nothing ran.
    expect(nb.notebook).not_to_contain_text("Error displaying widget")
    expect(nb.notebook.locator(".jupyter-widgets")).to_have_count(0)
    # The removed views that took the copies' places are hidden, with no kernel too.
    expect(nb.notebook).not_to_contain_text("Loading widget")
    pwned = nb.pwned()
    assert pwned["value"] is None and pwned["hits"] == [], pwned
    assert nb.js_dialogs == [] and nb.page_errors == [], (nb.js_dialogs, nb.page_errors)


def test_the_record_photographed_in_the_light_and_the_dark_theme(
    reopened: NotebookPage,
) -> None:
    nb = reopened
    guarded = cell_with(nb, "clean up the scratch files").locator(".jp-OutputArea")
    hello = cell_with(nb, "hello! who are you?").locator(".jp-OutputArea")
    assert nb.page.evaluate("() => document.body.dataset.jpThemeName") == LIGHT
    nb.screenshot(hello, "record-answer-light")
    nb.screenshot(guarded, "record-tool-dialog-light")
    dark = nb.set_theme(DARK)
    assert dark["light"] is False
    nb.screenshot(hello, "record-answer-dark")
    nb.screenshot(guarded, "record-tool-dialog-dark")
    # In the dark theme the record's text is light (it follows the theme's variables).
    color = guarded.locator(".atomic-tool-header").first.evaluate(
        "(e) => getComputedStyle(e).color"
    )
    channels = [int(c) for c in color[color.index("(") + 1 : color.index(")")].split(",")[:3]]
    assert sum(channels) / 3 > 128, color
    code_coloured(hello, dark=True)
    assert nb.set_theme(LIGHT)["light"] is True
    code_coloured(hello, dark=False)


#: A code token's colour against its code block's, and the contrast of each on the block.
TOKEN_LOOK = """(span) => {
  const rgb = (c) => (c.match(/[\\d.]+/g) || []).slice(0, 3).map(Number);
  const lum = ([r, g, b]) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  let box = span.closest("pre"), bg = "rgba(0, 0, 0, 0)";
  for (let e = box; e; e = e.parentElement) {
    const c = getComputedStyle(e).backgroundColor;
    if (!c.startsWith("rgba(0, 0, 0, 0)") && c !== "transparent") { bg = c; break; }
  }
  const contrast = (a, b) => (Math.max(lum(a), lum(b)) + 0.05) / (Math.min(lum(a), lum(b)) + 0.05);
  const token = rgb(getComputedStyle(span).color), text = rgb(getComputedStyle(box).color);
  return {token, text, bg: rgb(bg), contrast: contrast(token, rgb(bg))};
}"""


def code_coloured(output: Any, dark: bool) -> None:
    """The answer's code is coloured in this (untrusted: written by nbformat, not signed)
    notebook: its keyword has a colour of its own that reads on the block's background."""
    keyword = output.locator(".atomic-assistant-text pre span", has_text="import").first
    look = keyword.evaluate(TOKEN_LOOK)
    assert look["token"] != look["text"], look
    assert look["contrast"] >= 3, (dark, look)


@pytest.mark.parametrize("template", ["lab", "classic"])
def test_nbconvert_html_shows_the_records_code_in_a_code_font(
    lab_server: LabServer, chromium: Any, saved_quickstart: list[str], template: str
) -> None:
    """nbconvert's HTML of the saved quickstart, as a browser draws it: every pre-formatted
    text of a record (code, a command, its output, the prompt as sent with its cited value)
    is in a monospace font, so that columns line up. (``.jp-OutputArea-output pre`` takes the
    text's font in nbconvert's lab template, and in JupyterLab.)"""
    from nbconvert import HTMLExporter

    nb = nbformat.read(lab_server.root / FILENAME, as_version=4)
    html, _ = HTMLExporter(template_name=template).from_notebook_node(nb)
    page = chromium.new_page()
    try:
        page.set_content(html, wait_until="domcontentloaded")
        fonts = page.evaluate(
            """() => [...document.querySelectorAll('.atomic-record pre')].map(pre => {
                const inner = pre.querySelector('code') || pre;
                return [pre.textContent.slice(0, 40), getComputedStyle(inner).fontFamily];
            })"""
        )
    finally:
        page.close()
    assert len(fonts) >= 3, fonts  # the code cited, the command listed, its output
    assert [text for text, _ in fonts if text.startswith("what is in `primes`?")], fonts
    proportional = [(text, font) for text, font in fonts if "monospace" not in font]
    assert proportional == [], proportional
