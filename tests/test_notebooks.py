"""The quickstart notebook, executed headless with nbclient as a reader's "Run All" would.

nbval (in the test command) runs every notebook; this test looks inside the result: the saved
widget state must show a streamed answer, a tool card, an answered dialog and status lines,
and no cell may have error output.
"""

from __future__ import annotations

import html
import re
import shutil

import nbformat
import pytest
from nbclient import NotebookClient

from tests.harness.support import ROOT

pytestmark = [pytest.mark.kernel, pytest.mark.agent]

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def visible(value: str) -> str:
    return html.unescape(re.sub(r"<[^>]*>", "", value))


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> nbformat.NotebookNode:
    work = tmp_path_factory.mktemp("quickstart")
    shutil.copy(ROOT / "notebooks" / "quickstart.ipynb", work)
    nb = nbformat.read(work / "quickstart.ipynb", as_version=4)
    NotebookClient(
        nb,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(work)}},
        store_widget_state=True,
    ).execute()
    return nb


def models_of(nb: nbformat.NotebookNode) -> dict[str, dict]:
    state = nb.metadata["widgets"][WIDGET_STATE]["state"]
    return {model_id: entry["state"] for model_id, entry in state.items()}


def with_class(models: dict[str, dict], name: str) -> list[dict]:
    return [m for m in models.values() if name in (m.get("_dom_classes") or [])]


def test_quickstart_runs_without_error_output(executed: nbformat.NotebookNode) -> None:
    for cell in executed.cells:
        for output in cell.get("outputs", []):
            assert output["output_type"] != "error", output
            assert not (output["output_type"] == "stream" and output["name"] == "stderr"), output[
                "text"
            ]


def test_quickstart_shows_streamed_text_a_tool_card_an_answered_dialog_and_status(
    executed: nbformat.NotebookNode,
) -> None:
    models = models_of(executed)
    answers = [visible(m["value"]) for m in with_class(models, "atomic-assistant-piece")]
    assert any(a.startswith("Hello from the offline demo model") for a in answers), answers
    tools = with_class(models, "atomic-tool")
    assert tools and all(
        "atomic-tool-done" in t["_dom_classes"] or "atomic-tool-error" in t["_dom_classes"]
        for t in tools
    )
    outcomes = [visible(m["value"]) for m in with_class(models, "atomic-dialog-outcome")]
    assert any(o.endswith("-> Block") for o in outcomes), outcomes
    assert any(o.endswith("-> Yes") for o in outcomes), outcomes
    status = [visible(m["value"]) for m in with_class(models, "atomic-status-entry")]
    assert any(s.startswith("turns:") for s in status), status
    footers = [visible(m["value"]) for m in with_class(models, "atomic-footer")]
    assert any("tokens" in f for f in footers), footers
    # Widget lines above and below the editor.
    assert with_class(models, "atomic-widget-block")
