"""Every text of a proposal in the cell, of its run's output (the tool card, its dialog, the
transcript) and of the session's panel is readable in JupyterLab's light and dark theme: WCAG
AA, a contrast ratio of at least 4.5:1 (issue 55).

The offline demo model proposes a change to a cell (its header, its removed, added and kept
lines, Accept, Reject and the reason box), then the deletion of a cell (the cell marked, its
source struck through). In each theme, switched live as a person does (Settings → Theme), the
ratio of every visible text is computed from the page's own computed colours: the text's
colour (and the opacity of it and its ancestors) over the background behind it (the
backgrounds of the element and its ancestors, composited), with relative luminance as WCAG
defines it (any CSS colour read back from a canvas pixel). A field's placeholder counts as its
text; a disabled control does not (WCAG leaves it out). The struck source of the cell to
delete is JupyterLab's own (its editor's colours): each of its texts must keep the contrast
JupyterLab gives it (the mark dims nothing). The card is measured again once the change is
rejected and once one is accepted. The theme is a user setting kept by the server: the module
puts it back.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from .browser_harness import LabServer, NotebookPage, run_start
from .wcag import COMPOSITE_JS

pytestmark = [pytest.mark.browser, pytest.mark.agent, pytest.mark.kernel]

THEMES_PLUGIN = "@jupyterlab/apputils-extension:themes"
LIGHT = "JupyterLab Light"
DARK = "JupyterLab Dark"
#: WCAG 2 AA for normal text.
AA = 4.5

CELLS = [
    ("start", "%load_ext atomic_jupyter\n%atomic_agent start --demo"),
    ("data", "x = 1\nx"),
    ("scratch", "# scratch\nz = 3"),
    ("p_change", "%%atomic_agent\nchange cell 2 to `x = 2\\nx`"),
    ("p_delete", "%%atomic_agent\ndelete cell 3"),
]

#: In the page, inside each of ``roots``: every visible text (an element's own text, a
#: button's or field's text, a field's placeholder) with its contrast against what is behind
#: it, as ``{ratio, text, what, color, background}``, in document order. Colours are
#: composited: the backgrounds of the element and its ancestors from the page's white canvas
#: up, the text over that with its own alpha and every opacity on the way.
CONTRASTS = (
    """(roots) => {
  // Any CSS colour (rgb(), color(srgb ...) from color-mix(), a name) as [r, g, b, alpha],
  // read back from a canvas pixel; one the canvas cannot read fails the test.
  const canvas = document.createElement('canvas');
  canvas.width = canvas.height = 1;
  const pen = canvas.getContext('2d', { willReadFrequently: true });
  const parse = (c) => {
    pen.fillStyle = '#010203';
    pen.fillStyle = c;
    if (pen.fillStyle === '#010203' && !/^(#010203|rgb\\(1, 2, 3\\))$/.test(c)) {
      throw new Error(`a colour the test cannot read: ${c}`);
    }
    pen.clearRect(0, 0, 1, 1);
    pen.fillRect(0, 0, 1, 1);
    const [r, g, b, a] = pen.getImageData(0, 0, 1, 1).data;
    return [r, g, b, a / 255];
  };
  """
    + COMPOSITE_JS
    + """
  const what = (el) => {
    const cls = typeof el.className === 'string' && el.className.trim()
      ? '.' + el.className.trim().split(/\\s+/).join('.') : '';
    return el.tagName.toLowerCase() + cls;
  };
  const texts = [];
  for (const root of roots) {
    for (const el of [root, ...root.querySelectorAll('*')]) {
      if (!el.getClientRects().length) continue;  // not shown (display:none, a closed fold)
      const style = getComputedStyle(el);
      if (style.visibility === 'hidden' || el.disabled) continue;
      const field = el.tagName === 'INPUT' || el.tagName === 'TEXTAREA';
      if (field && ['checkbox', 'radio', 'hidden'].includes(el.type)) continue;
      const placeholder = field && !el.value && el.placeholder;
      const own = [...el.childNodes]
        .filter(n => n.nodeType === 3).map(n => n.textContent).join('').trim();
      const text = placeholder || (field ? el.value : own);
      if (!text) continue;
      const colour = parse(placeholder ? getComputedStyle(el, '::placeholder').color : style.color);
      colour[3] *= opacity(el);
      const behind = background(el);
      const value = contrast(over(colour, behind), behind);
      texts.push({ ratio: Math.round(value * 100) / 100, text: text.slice(0, 50), what: what(el),
                   color: placeholder ? `${colour} (placeholder)` : style.color,
                   background: behind.slice(0, 3).map(Math.round).join(',') });
    }
  }
  return texts;
}"""
)


def contrasts(nb: NotebookPage, *locators: Any) -> list[dict[str, Any]]:
    """Every visible text inside the elements of ``locators``, with its contrast ratio."""
    roots = [element for locator in locators for element in locator.element_handles()]
    assert roots, "nothing to measure"
    return list(nb.page.evaluate(CONTRASTS, roots))


def low_contrast(nb: NotebookPage, *locators: Any) -> tuple[list[dict[str, Any]], int]:
    """The texts inside the elements of ``locators`` whose contrast is below :data:`AA`, and
    how many texts were measured."""
    texts = contrasts(nb, *locators)
    return [text for text in texts if text["ratio"] < AA], len(texts)


def report(found: dict[str, list[dict[str, Any]]]) -> str:
    """What is below AA, a line a text."""
    return "texts below WCAG AA (4.5:1):\n" + "\n".join(
        f"{where}: {low['ratio']}:1 {low['text']!r} in {low['what']} "
        f"({low['color']} on {low['background']})"
        for where, lows in found.items()
        for low in lows
    )


def theme_saved(lab_server: LabServer, theme: str) -> None:
    """Wait until the server holds ``theme`` as the user's setting (the page saves it)."""
    deadline = time.monotonic() + 30
    while (saved := lab_server.lab_setting(THEMES_PLUGIN)["settings"].get("theme")) != theme:
        assert time.monotonic() < deadline, f"the server's theme setting is {saved!r}"
        time.sleep(0.2)  # polling an HTTP endpoint


@pytest.fixture(scope="module")
def theme_setting(lab_server: LabServer) -> Iterator[str]:
    """The server's theme setting as this module found it; put back afterwards."""
    raw = str(lab_server.lab_setting(THEMES_PLUGIN).get("raw") or "{}")
    yield raw
    if lab_server.lab_setting(THEMES_PLUGIN).get("raw") != raw:
        lab_server.put_lab_setting(THEMES_PLUGIN, raw)


@pytest.fixture(scope="module")
def nb(theme_setting: str, open_notebook: Any) -> NotebookPage:
    page = open_notebook("contrast.ipynb", CELLS)
    run_start(page, "atomic-jupyter demo")
    expect(page.page.locator(".jp-NotebookPanel[data-aj-link='open']")).to_have_count(1)
    page.run("data")  # an output under the cell's source, as a person's cell has
    assert page.page.evaluate("() => document.body.dataset.jpThemeName") == LIGHT
    return page


def in_both_themes(
    nb: NotebookPage, lab_server: LabServer, measure: dict[str, Any]
) -> dict[str, list[dict[str, Any]]]:
    """Measure each of ``measure`` (name -> locators) in the light, then the dark theme (the
    page left in the light one); return what is below AA, by theme and name. Each must have
    texts to measure."""
    found: dict[str, list[dict[str, Any]]] = {}
    for theme in (LIGHT, DARK):
        if nb.page.evaluate("() => document.body.dataset.jpThemeName") != theme:
            shown = nb.set_theme(theme)
            assert shown["light"] is (theme == LIGHT), shown
        for name, locators in measure.items():
            low, measured = low_contrast(nb, *locators)
            assert measured > 0, f"{name}: no text measured in {theme}"
            if low:
                found[f"{theme}: {name}"] = low
    assert nb.set_theme(LIGHT)["light"] is True
    theme_saved(lab_server, LIGHT)
    return found


def run_output(nb: NotebookPage, name: str) -> Any:
    """The outputs of the cell called ``name``: its run (live, or its record once done), with
    its cards and dialogs (JupyterLab's output prompt left out)."""
    return nb.output(name).locator(".jp-OutputArea-output")


def run_done(nb: NotebookPage, name: str) -> None:
    transcript = nb.output(name).locator(".atomic-transcript")
    expect(transcript.locator(".atomic-run-state")).to_have_text("done", timeout=60_000)


def decided_output(
    nb: NotebookPage, lab_server: LabServer, prompt: str, decision: str
) -> dict[str, Any]:
    """What is below AA in the run's output of ``prompt`` once its change was decided, in both
    themes, named with the ``decision``. Measured once the run's record has replaced its live
    view: "done" shows first, and the swap that follows would leave nothing to measure."""
    expect(nb.output(prompt).locator(".atomic-record-run")).to_have_count(1, timeout=60_000)
    low = in_both_themes(nb, lab_server, {"the run's output": [run_output(nb, prompt)]})
    return {f"{name} ({decision})": texts for name, texts in low.items()}


def test_a_proposed_change_and_its_card_read_in_both_themes(
    nb: NotebookPage, lab_server: LabServer
) -> None:
    nb.run("p_change")
    proposal = nb.cell("data").locator(".aj-proposal")
    expect(proposal).to_be_visible(timeout=60_000)
    expect(proposal.locator(".aj-diff-kept")).to_have_text(["  x"])
    card = run_output(nb, "p_change").locator(".atomic-tool", has_text="tool notebook_edit")
    expect(card.locator(".atomic-dialog-confirm button").first).to_be_visible()
    parts = {
        "head": ".aj-proposal-head",
        "removed line": ".aj-diff-removed",
        "added line": ".aj-diff-added",
        "kept line": ".aj-diff-kept",
        "Accept": "button.aj-proposal-accept",
        "Reject": "button.aj-proposal-reject",
        "reason box": "input.aj-proposal-reason",
    }
    for selector in parts.values():
        expect(proposal.locator(selector)).to_have_count(1)
    found = in_both_themes(
        nb,
        lab_server,
        {
            **{name: [proposal.locator(selector)] for name, selector in parts.items()},
            "the proposal": [proposal],
            "the run's output, its card asking": [run_output(nb, "p_change")],
            "the session's panel": [run_output(nb, "start")],
        },
    )
    # The reason typed: the field's own text, then the change rejected with it.
    proposal.locator("input.aj-proposal-reason").fill("keep x small")
    typed, measured = low_contrast(nb, proposal.locator("input.aj-proposal-reason"))
    assert measured == 1
    if typed:
        found[f"{LIGHT}: the reason typed"] = typed
    proposal.locator("button.aj-proposal-reject").click()
    expect(proposal).to_have_count(0)
    run_done(nb, "p_change")
    found.update(decided_output(nb, lab_server, "p_change", "rejected"))
    assert found == {}, report(found)


def test_a_proposed_deletion_and_its_card_read_in_both_themes(
    nb: NotebookPage, lab_server: LabServer
) -> None:
    nb.run("p_delete")
    scratch = nb.cell("scratch")
    proposal = scratch.locator(".aj-proposal")
    expect(proposal).to_be_visible(timeout=60_000)
    expect(scratch).to_have_class(re.compile(r"\baj-proposed-delete\b"))
    source = scratch.locator(".jp-InputArea-editor")
    found = in_both_themes(nb, lab_server, {"the proposal": [proposal]})
    # The cell's source is JupyterLab's (its own editor colours): marked for deletion, each of
    # its texts keeps the contrast JupyterLab gives it (struck through, never dimmed).
    for theme in (LIGHT, DARK):
        assert nb.set_theme(theme)["light"] is (theme == LIGHT)
        marked = contrasts(nb, source)
        scratch.evaluate("(cell) => cell.classList.remove('aj-proposed-delete')")
        plain = contrasts(nb, source)
        scratch.evaluate("(cell) => cell.classList.add('aj-proposed-delete')")
        assert [t["text"] for t in marked] == [t["text"] for t in plain] and marked
        dimmed = [
            {**was, "ratio": now["ratio"], "what": f"{now['what']} (was {was['ratio']}:1)"}
            for now, was in zip(marked, plain, strict=True)
            if now["ratio"] < min(AA, was["ratio"]) - 0.01
        ]
        if dimmed:
            found[f"{theme}: the cell's source, marked for deletion"] = dimmed
    assert nb.set_theme(LIGHT)["light"] is True
    theme_saved(lab_server, LIGHT)
    struck = scratch.locator(".jp-InputArea").first
    assert "line-through" in struck.evaluate("(e) => getComputedStyle(e).textDecorationLine")
    proposal.locator("button.aj-proposal-accept").click()
    nb.names.remove("scratch")
    expect(nb.notebook.locator(".jp-Cell")).to_have_count(len(nb.names))
    run_done(nb, "p_delete")
    found.update(decided_output(nb, lab_server, "p_delete", "accepted"))
    assert found == {}, report(found)
