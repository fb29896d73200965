"""The panel's line about the notebook link, as Run All leaves it (issue 55): prompts that
wait (``--wait``) hold the kernel's main thread, so the page's link waits behind them, and the
last cell stops the agent before the page could link. The line the panel shows meanwhile is
true (the page links once no cell runs), and the panel saved when the agent stopped says
nothing of a link a page makes a moment later."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness.kernel_widgets import outputs_of, panels, record_of
from tests.harness.notebook_page import Cell, StandInPage
from tests.harness.plugin import scripted_start
from tests.harness.widget_text import visible_text

pytestmark = [pytest.mark.kernel, pytest.mark.agent, pytest.mark.scripted_kernel]

LINE = "notebook: not linked (yet)"


@pytest.fixture(scope="module")
def kernel_setup(scripted_model: Any) -> list[str]:
    return [scripted_start(scripted_model)]


def test_the_saved_panel_of_a_run_all_says_nothing_false_of_the_link(kernel: Any) -> None:
    (panel,) = panels(kernel)
    kernel.execute("%%atomic_agent --wait\nhello", timeout=120)
    kernel.wait_for(
        lambda: panel.status.get("atomic-notebook", "").startswith(LINE),
        what="the panel's line while no page is linked",
    )
    assert "links once no cell runs" in panel.status["atomic-notebook"]
    kernel.execute("%atomic_agent stop")
    kernel.wait_for(lambda: record_of(kernel, panel.comm_id), what="the panel's saved record")
    saved = visible_text(record_of(kernel, panel.comm_id) or "")
    assert "stopped" in saved and "linked" not in saved, saved
    page = StandInPage(kernel, [Cell("x = 1")]).attach()
    try:
        kernel.wait_for(lambda: page.linked, what="the page's link, once no cell runs")
    finally:
        page.detach()
    assert outputs_of(kernel, "panel") == []
