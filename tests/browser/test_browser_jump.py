"""The live view and the record look the same: when a run's output becomes its record, the
output does not jump (its height measured just before and just after, in JupyterLab).

The live view is the record's HTML with the live parts in their places; a finished run has
none left, so the two should measure alike. To measure the last live frame, the kernel holds
the outputs' replacement by their records until a cell lets it go.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from .browser_harness import NotebookPage, run_start

pytestmark = [pytest.mark.browser, pytest.mark.agent, pytest.mark.kernel]

HOLD = """
from atomic_jupyter.notebook import presentation as _p
_held, _finish = [], _p.LiveDisplay.make_final
_p.LiveDisplay.make_final = lambda self, again=False: _held.append(lambda: _finish(self, again))
"""
RELEASE = """
_p.LiveDisplay.make_final = _finish
for _then in _held:
    _then()
print(len(_held), "outputs became their records")
"""

CELLS = [
    ("start", "%load_ext atomic_jupyter\n%atomic_agent start --demo"),
    ("hold", HOLD),
    ("files", "%%atomic_agent\nlist the files here"),
    ("hello", "%%atomic_agent\nhello! who are you?"),
    ("release", RELEASE),
]

HEIGHT = "(area) => area.getBoundingClientRect().height"


@pytest.fixture(scope="module")
def nb(open_notebook: Any) -> NotebookPage:
    page = open_notebook("jump.ipynb", CELLS)
    run_start(page, "atomic-jupyter demo")
    page.run("hold")
    return page


def test_a_run_does_not_jump_when_it_becomes_its_record(nb: NotebookPage) -> None:
    heights = {}
    for cell in ("files", "hello"):
        nb.run(cell)
        live = nb.output(cell).locator(".atomic-output .atomic-run")
        expect(live.locator(".atomic-run-state")).to_have_text("done", timeout=60_000)
        expect(live.locator(".atomic-footer")).to_contain_text("turn")
        expect(live.locator(".atomic-stop")).to_have_count(0)
        heights[cell] = nb.output(cell).evaluate(HEIGHT)
    nb.run("release")
    expect(nb.output("release")).to_contain_text("outputs became their records")
    for cell, before in heights.items():
        record = nb.output(cell).locator(".atomic-record-run")
        expect(record).to_be_visible()
        expect(nb.output(cell).locator(".atomic-output")).to_have_count(0)
        after = nb.output(cell).evaluate(HEIGHT)
        print(f"{cell}: live {before:.1f} px, record {after:.1f} px")
        assert abs(after - before) <= 2, f"{cell}: {before:.1f} px live, {after:.1f} px as record"
    # Code is monospace in both: the tool card's command and output.
    card = nb.output("files").locator(".atomic-tool-output pre, .atomic-tool-command pre").first
    font = card.evaluate("(e) => getComputedStyle(e).fontFamily")
    assert re.search(r"mono|courier|menlo|consolas", font, re.I), font
