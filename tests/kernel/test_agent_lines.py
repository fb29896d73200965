"""The agent lines through a real kernel, as a notebook user meets them: the panel says which
agent runs, ``%atomic_agent bash`` streams its output and keeps a plain record, and the current
line's commands (or a plain refusal on the 0.73 line) through the magic."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.harness.kernel_client import BrowserLikeKernel
from tests.harness.kernel_widgets import WIDGET_VIEW, PagePanel, displayed, elements, panels
from tests.harness.plugin import scripted_start
from tests.harness.support import CURRENT_LINE, pinned_package
from tests.harness.widget_text import visible_text

pytestmark = [pytest.mark.kernel, pytest.mark.agent, pytest.mark.scripted_kernel]


@pytest.fixture(scope="module")
def kernel_setup(scripted_model) -> list[str]:
    return [scripted_start(scripted_model)]


def test_the_panel_says_which_agent_runs_on_which_node(kernel: BrowserLikeKernel) -> None:
    package = pinned_package()
    (panel,) = panels(kernel)
    kernel.wait_for(lambda: elements(panel.html, "atomic-about"), what="the agent's line")
    shown = panel.text("atomic-about")
    assert shown.startswith(f"{package['name']} {package['version']} on Node.js v"), shown
    assert "project trust" not in shown


def test_bash_streams_live_then_leaves_plain_text(kernel: BrowserLikeKernel) -> None:
    result = kernel.execute("%atomic_agent bash echo one; sleep 0.5; echo two; exit 3")
    assert result.stdout == ""
    (live_id,) = result.widget_ids  # the live view, closed once the answer came
    assert live_id not in kernel.models
    # In its place, the result as plain text (and as escaped HTML): no widget view is left.
    (output,) = [o for o in result.outputs if o["output_type"] == "display_data"]
    final = displayed(kernel, output)
    assert WIDGET_VIEW not in final
    assert final["text/plain"] == "one\ntwo\n(exit code 3)"
    assert "one\ntwo\n(exit code 3)" in visible_text(final["text/html"])
    streamed = [  # the text the live view was sent, at each update
        html
        for m in kernel.iter_messages("comm_msg")
        if m["content"]["comm_id"] == live_id
        for html in (m["content"]["data"].get("content") or {}).get("blocks", {}).values()
    ]
    if CURRENT_LINE:  # the pieces came while the cell still ran, as escaped text
        assert streamed and visible_text(streamed[-1]) == "one\ntwo\n"
        assert all('class="atomic-live-text"' in html for html in streamed)
    else:
        assert streamed == []


def test_thinking_levels_and_the_queue_through_the_magic(kernel: BrowserLikeKernel) -> None:
    levels = kernel.execute("%atomic_agent thinking").stdout
    assert levels.startswith("Thinking levels of this model: off")
    assert kernel.execute("%atomic_agent thinking low").stdout == "Thinking level: low.\n"
    if CURRENT_LINE:
        assert kernel.execute("%atomic_agent clear_queue").stdout == "The queue was empty.\n"
    else:
        failed = kernel.execute("%atomic_agent clear_queue", check=False)
        assert failed.ename == "AgentVersionError"
        assert "'clear_queue' needs agent version 0.84.4 or newer" in failed.evalue
    assert (
        kernel.execute("import atomic_jupyter as aj; print(aj.session().alive)").stdout == "True\n"
    )


def test_trust_project_is_shown_in_the_panel(kernel: BrowserLikeKernel, tmp_path: Path) -> None:
    if not CURRENT_LINE:
        failed = kernel.execute(
            f"%atomic_agent start --name trusted --cwd {tmp_path} --trust-project", check=False
        )
        assert failed.ename == "AgentStartError" and "--approve" in failed.evalue
        return
    started = kernel.execute(f"%atomic_agent start --name trusted --cwd {tmp_path} --trust-project")
    (panel_id,) = started.widget_ids
    panel = PagePanel(kernel, panel_id)
    kernel.wait_for(lambda: elements(panel.html, "atomic-about"), what="the agent's line")
    assert panel.text("atomic-about").endswith(
        "· project trust on (its .pi extensions and settings)"
    )
    status = kernel.execute("%atomic_agent status --name trusted").stdout
    assert "project trust" in status
    kernel.execute("%atomic_agent stop --name trusted")
