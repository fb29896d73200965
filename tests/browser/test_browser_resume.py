"""A conversation continued after a kernel restart in JupyterLab: the demo session answers a
prompt, the kernel is restarted through the Kernel menu, and ``start --resume`` in the new
kernel continues the saved conversation. Its panel says so ("continued: 2 messages since
...") and folds the earlier turn (the prompt and the answer) under "Earlier in this
conversation".

The conversation is saved under ``$ATOMIC_JUPYTER_CONVERSATIONS`` (a folder of the test run,
which the JupyterLab server and its kernels inherit), in the folder of this notebook (its path
comes from ``$JPY_SESSION_NAME``, which a restart keeps). The suite's kernels run the agent
with ``--no-session`` (``agent_command`` in tests/harness/plugin.py), which leaves keeping
sessions to the agent, so nothing would be saved: each kernel of this notebook first drops
that option from its ``$ATOMIC_AGENT_COMMAND``.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from .browser_harness import NotebookPage, panel_of, run_start

pytestmark = [pytest.mark.browser, pytest.mark.agent, pytest.mark.kernel]

PROMPT = "hello there"
#: The start of the demo model's answer to a hello.
ANSWER = "Hello from the offline demo model"

#: Drops the suite's ``--no-session`` from this kernel's agent command (see above).
SAVE = (
    "import os\n\n"
    'command = os.environ["ATOMIC_AGENT_COMMAND"].split()\n'
    'os.environ["ATOMIC_AGENT_COMMAND"] = " ".join(a for a in command if a != "--no-session")'
)

CELLS = [
    ("save", SAVE),
    ("start", "%load_ext atomic_jupyter\n%atomic_agent start --demo"),
    ("prompt", f"%%atomic_agent --wait\n{PROMPT}"),
    ("save-again", SAVE),
    ("resume", "%load_ext atomic_jupyter\n%atomic_agent start --demo --resume"),
    (
        "resumed",
        "import atomic_jupyter as aj\n"
        "print(aj.session().addon('conversations').resumed is not None)",
    ),
    ("stop", "%atomic_agent stop"),
    ("listing", "%atomic_agent conversations"),
]


@pytest.fixture(scope="module")
def nb(open_notebook: Any) -> NotebookPage:
    page = open_notebook("resume.ipynb", CELLS)
    page.run("save")
    run_start(page, "atomic-jupyter demo")
    return page


def test_a_restarted_kernel_continues_the_conversation_and_shows_the_earlier_turns(
    nb: NotebookPage,
) -> None:
    nb.run("prompt")
    transcript = nb.output("prompt").locator(".atomic-transcript")
    expect(transcript.locator(".atomic-run-state")).to_have_text("done", timeout=60_000)
    expect(transcript.locator(".atomic-assistant-text").last).to_contain_text(ANSWER)

    nb.restart_kernel()
    nb.run("save-again")

    nb.run("resume")
    panel = panel_of(nb, "resume")
    expect(panel.locator(".atomic-title")).to_have_text("atomic-jupyter demo")
    # One user message and the demo model's one answer.
    continued = panel.locator(".atomic-continued").filter(has_text="continued:")
    expect(continued).to_have_text(re.compile(r"^continued: 2 messages since \d{4}-\d\d-\d\d "))
    earlier = panel.locator("details.atomic-earlier")
    summary = earlier.locator(":scope > summary")
    expect(summary).to_have_text("Earlier in this conversation (1 turn)")
    turn = earlier.locator(".atomic-transcript")
    expect(turn).to_have_count(1)
    expect(turn).to_be_hidden()  # folded until clicked
    expect(earlier).not_to_have_attribute("open", re.compile(".*"))

    summary.click()
    expect(earlier).to_have_attribute("open", "")
    expect(turn).to_be_visible()
    expect(turn).to_contain_text(PROMPT)
    expect(turn.locator(".atomic-assistant-text")).to_contain_text(ANSWER)
    nb.screenshot(nb.cell("resume"), "resume-after-kernel-restart")

    nb.run("resumed")
    expect(nb.output("resumed")).to_have_text("True")
    nb.run("stop")
    expect(nb.output("stop")).to_contain_text("Stopped agent session 'default'.")
    assert nb.page_errors == [], nb.page_errors


def test_resume_from_the_listing_shows_the_sessions_panel_in_its_place(nb: NotebookPage) -> None:
    """A click has no cell to display in: the panel of the session a Resume starts (the
    session was stopped) replaces the listing, its record copy hidden beside it."""
    nb.run("listing")
    listing = nb.output("listing")
    expect(listing).to_contain_text("Saved conversations of this notebook")
    resume = listing.get_by_role("button", name="Resume").first
    expect(resume).to_be_visible()
    resume.click()
    panel = listing.locator(".atomic-panel")
    expect(panel.locator(".atomic-state")).to_have_text(re.compile("idle|working"), timeout=60_000)
    expect(panel.locator(".atomic-continued")).to_contain_text("continued:")
    expect(listing).not_to_contain_text("Saved conversations of this notebook")
    expect(listing.locator(".atomic-record-copy")).to_be_hidden()
    expect(listing.locator(".atomic-output:visible")).to_have_count(1)
    nb.run("stop")
    expect(nb.output("stop")).to_contain_text("Stopped agent session 'default'.")
    expect(listing.locator(".atomic-record-panel .atomic-state")).to_have_text("stopped")
    assert nb.page_errors == [], nb.page_errors
