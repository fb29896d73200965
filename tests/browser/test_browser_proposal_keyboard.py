"""A proposal in the cell for the keyboard and screen readers, in JupyterLab with Chromium
(issue 55): it sits right under the cell's source (before its outputs), it is a region named
after the change, its Accept and Reject are buttons reached with Tab from the cell and pressed
with Enter or Space (the keyboard's place shown), Escape in the reason box keeps the change,
and a polite live region says when a change is proposed and what became of it.

The offline demo model proposes the changes (``change cell 2 to `...```). Roles and names are
read from Chromium's own accessibility tree (the DevTools protocol's ``queryAXTree``).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from .browser_harness import NotebookPage, run_start, source_of

pytestmark = [pytest.mark.browser, pytest.mark.agent, pytest.mark.kernel]

CELLS = [
    ("start", "%load_ext atomic_jupyter\n%atomic_agent start --demo"),
    ("data", "x = 1\nx"),
    ("p_accept", "%%atomic_agent\nchange cell 2 to `x = 2\\nx`"),
    ("p_reject", "%%atomic_agent\nchange cell 2 to `x = 3\\nx`"),
]
#: How many times Tab may be pressed from the cell to reach the proposal's Accept (the cell's
#: toolbar comes first).
TABS = 10
ANNOUNCER = "#aj-proposal-announcer"


@pytest.fixture(scope="module")
def nb(open_notebook: Any) -> NotebookPage:
    page = open_notebook("proposal_keyboard.ipynb", CELLS)
    run_start(page, "atomic-jupyter demo")
    expect(page.page.locator(".jp-NotebookPanel[data-aj-link='open']")).to_have_count(1)
    page.run("data")  # an output under the source: the proposal goes between them
    expect(page.output("data").locator(".jp-OutputArea-output")).to_have_text("1")
    return page


def accessible(nb: NotebookPage, role: str, name: str) -> list[dict[str, Any]]:
    """The nodes of Chromium's accessibility tree with ``role`` and accessible ``name``."""
    session = nb.page.context.new_cdp_session(nb.page)
    try:
        session.send("Accessibility.enable")
        document = session.send("Runtime.evaluate", {"expression": "document"})
        found = session.send(
            "Accessibility.queryAXTree",
            {"objectId": document["result"]["objectId"], "role": role, "accessibleName": name},
        )
    finally:
        session.detach()
    return [node for node in found["nodes"] if not node.get("ignored")]


def focused(nb: NotebookPage) -> str:
    """What has the keyboard: the focused element's tag, classes and text."""
    return str(
        nb.page.evaluate(
            "() => { const e = document.activeElement;"
            " return `${e.tagName.toLowerCase()}.${e.className} ${e.textContent.slice(0, 30)}`; }"
        )
    )


def tab_to(nb: NotebookPage, selector: str) -> Any:
    """Select the cell ``data`` as a person does (its prompt: command mode), then press Tab
    until the keyboard is on ``selector`` (at most :data:`TABS` times); return it."""
    cell = nb.cell("data")
    cell.locator(".jp-InputArea-prompt").first.click()
    expect(nb.notebook).to_have_class(re.compile(r"\bjp-mod-commandMode\b"))
    target = cell.locator(selector)
    visited = []
    for _ in range(TABS):
        nb.page.keyboard.press("Tab")
        visited.append(focused(nb))
        if target.evaluate("(e) => e === document.activeElement"):
            return target
    raise AssertionError(f"Tab never reached {selector}; the keyboard went to: {visited}")


def focus_ring(locator: Any) -> dict[str, Any]:
    """Whether the element shows the keyboard's place (``:focus-visible``) and its outline."""
    return dict(
        locator.evaluate(
            "(e) => ({visible: e.matches(':focus-visible'),"
            " style: getComputedStyle(e).outlineStyle,"
            " width: parseFloat(getComputedStyle(e).outlineWidth)})"
        )
    )


def test_the_proposal_sits_under_the_source_named_and_announced(nb: NotebookPage) -> None:
    nb.run("p_accept")
    cell = nb.cell("data")
    proposal = cell.locator(".aj-proposal")
    expect(proposal).to_be_visible(timeout=60_000)
    # Right under the source, before the outputs: in the page and on the screen.
    placed = proposal.evaluate(
        """(box) => {
          const cell = box.closest('.jp-Cell');
          const input = cell.querySelector('.jp-Cell-inputWrapper');
          const output = cell.querySelector('.jp-Cell-outputWrapper');
          const before = (a, b) => Boolean(a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING);
          const [i, b, o] = [input, box, output].map(e => e.getBoundingClientRect());
          return {afterSource: box.previousElementSibling === input,
                  beforeOutputs: before(box, output),
                  belowSource: b.top >= i.bottom - 1, aboveOutputs: b.bottom <= o.top + 1};
        }"""
    )
    assert placed == {
        "afterSource": True,
        "beforeOutputs": True,
        "belowSource": True,
        "aboveOutputs": True,
    }, placed
    expect(nb.output("data").locator(".jp-OutputArea-output")).to_have_text("1")
    # A region named after the change, its buttons and box named after what they do.
    name = "The agent proposes to change cell 2: +1 −1"
    expect(proposal).to_have_attribute("role", "region")
    expect(proposal).to_have_attribute("aria-label", name)
    assert len(accessible(nb, "region", name)) == 1
    for role, label in [
        ("button", "Accept the change"),
        ("button", "Reject the change"),
        ("textbox", "Why reject the change (optional, the agent reads it)"),
    ]:
        assert len(accessible(nb, role, label)) == 1, (role, label)
    assert proposal.locator("button").evaluate_all("(bs) => bs.map(b => b.type)") == [
        "button",
        "button",
    ]
    # Said politely once it is shown.
    announcer = nb.page.locator(ANNOUNCER)
    expect(announcer).to_have_attribute("role", "status")
    expect(announcer).to_have_attribute("aria-live", "polite")
    expect(announcer).to_have_text(re.compile(r"^The agent proposes to change cell 2: \+1 −1 in "))


def test_tab_to_accept_and_enter_applies_the_change(nb: NotebookPage) -> None:
    proposal = nb.cell("data").locator(".aj-proposal")
    expect(proposal).to_be_visible()
    accept = tab_to(nb, "button.aj-proposal-accept")
    ring = focus_ring(accept)
    assert ring["visible"] and ring["style"] == "solid" and ring["width"] >= 2, ring
    nb.page.keyboard.press("Enter")
    expect(proposal).to_have_count(0)
    assert source_of(nb, "data") == "x = 2\nx"
    tool = nb.output("p_accept").locator(".atomic-tool", has_text="tool notebook_edit").first
    expect(tool.locator(".atomic-dialog-outcome")).to_have_text("→ Yes (clicked in the notebook)")
    expect(nb.page.locator(ANNOUNCER)).to_have_text(
        "Applied the agent's change: change cell 2: +1 −1."
    )
    # The keyboard is back on the cell, in command mode (not lost on the page's body).
    expect(nb.cell("data")).to_be_focused()
    expect(nb.notebook).to_have_class(re.compile(r"\bjp-mod-commandMode\b"))


def test_escape_in_the_reason_box_keeps_the_change_and_space_on_reject_rejects_it(
    nb: NotebookPage,
) -> None:
    nb.run("p_reject")
    proposal = nb.cell("data").locator(".aj-proposal")
    expect(proposal).to_be_visible(timeout=60_000)
    reason = tab_to(nb, "input.aj-proposal-reason")
    nb.page.keyboard.type("keep x at 2")
    nb.page.keyboard.press("Escape")
    reject = proposal.locator("button.aj-proposal-reject")
    expect(reject).to_be_focused()
    expect(reason).to_have_value("keep x at 2")
    nb.page.keyboard.press("Escape")  # on a button: back to the cell, in command mode
    expect(nb.cell("data")).to_be_focused()
    expect(nb.notebook).to_have_class(re.compile(r"\bjp-mod-commandMode\b"))
    expect(proposal).to_be_visible()  # still waiting for a decision
    assert source_of(nb, "data") == "x = 2\nx"
    reject = tab_to(nb, "button.aj-proposal-reject")
    nb.page.keyboard.press("Space")
    expect(proposal).to_have_count(0)
    tool = nb.output("p_reject").locator(".atomic-tool", has_text="tool notebook_edit").first
    expect(tool).to_contain_text("keep x at 2", timeout=60_000)
    assert source_of(nb, "data") == "x = 2\nx"
    expect(nb.page.locator(ANNOUNCER)).to_have_text(
        "Rejected the agent's change: change cell 2: +1 −1. Nothing was changed."
    )
    assert nb.page_errors == [], nb.page_errors
