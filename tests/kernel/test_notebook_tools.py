"""The agent's notebook tools in a real kernel, through the real agent (both lines) and the
scripted model (``kernel call NAME {json}`` calls a tool and repeats its answer), with a
stand-in for the notebook page's extension (``tests/harness/notebook_page.py``; the browser
tests drive the real page): not offered until a page links, then reading, a change accepted in
the card or in a cell, rejected with a reason, refused when the cell changed or a cell waits.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.harness.kernel_runs import wait_done
from tests.harness.kernel_widgets import dialog_in, outcome_of, texts_of
from tests.harness.notebook_page import Cell, StandInPage
from tests.harness.plugin import last_tool_answer, scripted_start

pytestmark = [pytest.mark.kernel, pytest.mark.agent, pytest.mark.scripted_kernel]

NOTEBOOK_TOOLS = ["notebook_edit", "notebook_read", "notebook_run"]
EDIT_TITLE = "Apply the agent's change to the notebook?"
RUN_TITLE = "Run cells of the notebook in the kernel?"


@pytest.fixture(scope="module")
def kernel_setup(scripted_model: Any) -> list[str]:
    return [scripted_start(scripted_model), "import atomic_jupyter as aj\nimport json"]


def call(name: str, arguments: dict[str, Any]) -> str:
    return f"%%atomic_agent\nkernel call {name} {json.dumps(arguments)}"


def area_of(result: Any) -> str:
    (area,) = result.widget_ids
    return str(area)


def offered(scripted_model: Any) -> list[str]:
    server, _home, _args = scripted_model
    return sorted(n for n in server.requests[-1].tool_names if n.startswith("notebook_"))


@pytest.fixture(scope="module")
def page(kernel: Any) -> Any:
    cells = [Cell("import math"), Cell("x = 1\nx"), Cell("# Title", "markdown")]
    made = StandInPage(kernel, cells)
    yield made
    made.detach()


def test_without_a_page_the_notebook_tools_are_not_offered_and_say_why(kernel, scripted_model):
    said = kernel.execute("print(json.dumps(aj.session().unavailable_tools))").stdout
    why = json.loads(said)
    assert sorted(why) == NOTEBOOK_TOOLS
    assert why["notebook_read"].startswith("no notebook page with atomic-jupyter's extension")
    status = kernel.execute("print(aj.session().status['atomic-notebook'])").stdout.strip()
    assert status == (
        "notebook: not linked (yet), so the agent cannot edit it: a page with atomic-jupyter's "
        "extension links once no cell runs (%atomic_agent doctor says more)"
    )
    kernel.execute("%%atomic_agent --wait\nhello", timeout=60)
    assert offered(scripted_model) == ["notebook_cells", "notebook_variables"]


def test_a_linked_page_brings_the_tools_and_the_agent_reads_the_cells(kernel, scripted_model, page):
    page.attach()
    kernel.wait_for(lambda: page.linked, what="the page's link")
    said = kernel.execute("print(aj.session().unavailable_tools)").stdout.strip()
    assert said == "{}"
    status = kernel.execute("print(aj.session().status)").stdout.strip()
    assert "atomic-notebook" not in status  # linked: nothing to say
    area = area_of(kernel.execute(call("notebook_read", {})))
    wait_done(kernel, area)
    answer = last_tool_answer(scripted_model)
    assert offered(scripted_model) == ["notebook_cells", *NOTEBOOK_TOOLS, "notebook_variables"]
    assert "Notebook stand-in.ipynb (stand-in page): 3 cells" in answer
    assert f"--- cell 2 · id {page.cells[1].id} · code · not run\nx = 1\nx" in answer
    assert f"--- cell 3 · id {page.cells[2].id} · markdown\n# Title" in answer


def test_a_change_accepted_in_the_card_is_applied_by_the_page(kernel, scripted_model, page):
    target = page.cells[1]
    operations = [{"op": "replace", "cell_id": target.id, "source": "x = 2\nx"}]
    area = area_of(kernel.execute(call("notebook_edit", {"operations": operations})))
    dialog = dialog_in(kernel, area, "confirm")
    assert dialog.description["title"] == EDIT_TITLE
    assert target.source == "x = 1\nx"  # shown, not applied
    assert list(page.proposals) != []
    dialog.confirm(True)
    assert outcome_of(kernel, dialog) == "→ Yes (clicked)"
    wait_done(kernel, area)
    assert target.source == "x = 2\nx"
    answer = last_tool_answer(scripted_model)
    assert answer.startswith(
        "Applied to stand-in.ipynb (stand-in page) (accepted): 1 cell changed."
    )


def test_a_change_rejected_in_a_cell_gives_the_model_the_reason(kernel, scripted_model, page):
    target = page.cells[1]
    operations = [{"op": "replace", "cell_id": target.id, "source": "x = 99"}]
    area = area_of(kernel.execute(call("notebook_edit", {"operations": operations})))
    dialog = dialog_in(kernel, area, "confirm")
    (proposed,) = list(page.proposals)
    page.click(proposed, accept=False, reason="keep x small")
    assert outcome_of(kernel, dialog) == "→ No (clicked in the notebook)"
    wait_done(kernel, area)
    assert target.source == "x = 2\nx"
    answer = last_tool_answer(scripted_model)
    assert "rejected the change" in answer and "Their reason: keep x small" in answer
    # An outcome, not a failure: the card says what was proposed and that it was rejected.
    (header,) = texts_of(kernel, area, "atomic-tool-header")
    assert header.startswith("tool notebook_edit · 1 cell to change · stand-in.ipynb")
    assert re.search(r" · rejected( · [\d.]+ m?s)?$", header) and "error" not in header
    (said,) = texts_of(kernel, area, "aj-tool-outcome")
    assert said == "Rejected: nothing was changed. The reason: keep x small"
    assert dialog.description["message"] == (
        "The agent proposes to change 1 cell in stand-in.ipynb (stand-in page) (the diff is "
        "above and in the notebook's cells):\nchange cell 2: x = 2"
    )


def test_the_cell_of_the_running_prompt_cannot_be_replaced_or_deleted(kernel, scripted_model, page):
    target = page.cells[1]
    for op in ({"op": "replace", "cell_id": target.id, "source": "y = 0"},
               {"op": "delete", "cell_id": target.id}):  # fmt: skip
        prompt = call("notebook_edit", {"operations": [op]})
        area = area_of(kernel.execute(prompt, cell_id=target.id))
        wait_done(kernel, area)
        answer = last_tool_answer(scripted_model)
        assert f"cell {target.id} holds the prompt of this run" in answer, answer
        assert "Nothing was changed" in answer
        assert page.proposals == {}
    assert target.source == "x = 2\nx" and target in page.cells


def test_cells_to_run_are_named_as_the_person_sees_them_and_a_no_is_an_outcome(
    kernel, scripted_model, page
):
    wait_done(kernel, area_of(kernel.execute(call("notebook_read", {}))))
    target = page.cells[1]
    area = area_of(kernel.execute(call("notebook_run", {"cell_ids": [target.id]})))
    dialog = dialog_in(kernel, area, "confirm")
    assert dialog.description["title"] == RUN_TITLE
    assert dialog.description["message"] == (
        "Run 1 cell of stand-in.ipynb (stand-in page) in its kernel, as Shift+Enter would:\n"
        "cell 2: x = 2"
    )
    (header,) = texts_of(kernel, area, "atomic-tool-header")
    assert header.startswith("tool notebook_run · run cell 2 ·")
    dialog.confirm(False)
    wait_done(kernel, area)
    assert last_tool_answer(scripted_model) == "The person declined to run cell 2; nothing ran."
    (header,) = texts_of(kernel, area, "atomic-tool-header")
    assert re.search(r" · declined( · [\d.]+ m?s)?$", header) and "error" not in header


def test_an_edit_of_a_cell_changed_since_it_was_read_is_refused(kernel, scripted_model, page):
    target = page.cells[0]
    target.source = "import math  # the person's own edit"
    operations = [{"op": "replace", "cell_id": target.id, "source": "import cmath"}]
    wait_done(kernel, area_of(kernel.execute(call("notebook_edit", {"operations": operations}))))
    answer = last_tool_answer(scripted_model)
    assert "changed since you read it" in answer and "Nothing was changed" in answer
    assert target.source == "import math  # the person's own edit"
    assert page.proposals == {}


def test_an_unknown_id_an_unread_cell_and_a_change_that_changes_nothing_are_refused(
    kernel, scripted_model, page
):
    cases = [
        (
            [{"op": "delete", "cell_id": "nope"}],
            "read cell nope (notebook_read) before changing it",
        ),
        (
            [{"op": "insert", "after": "nope", "source": "1"}],
            'no cell "nope" in the notebook to insert after',
        ),
        (
            [{"op": "replace", "cell_id": page.cells[1].id, "source": page.cells[1].source}],
            "is its source",
        ),
    ]
    for operations, wanted in cases:
        area = area_of(kernel.execute(call("notebook_edit", {"operations": operations})))
        wait_done(kernel, area, timeout=60)
        assert wanted in last_tool_answer(scripted_model)
    assert [c.source for c in page.cells][1] == "x = 2\nx"


def test_a_prompt_that_waits_gets_a_refusal_not_a_deadlock(kernel, scripted_model, page):
    result = kernel.execute("%%atomic_agent --wait\nkernel call notebook_read {}", timeout=60)
    assert result.status == "ok"
    answer = last_tool_answer(scripted_model)
    assert "cannot be read or changed while a cell runs" in answer
    assert "--wait" in answer


def test_a_policy_decides_a_change_at_once_in_an_unattended_run(kernel, scripted_model, page):
    kernel.execute('%atomic_agent policy --title "change to the notebook" yes')
    target = page.cells[1]
    operations = [{"op": "replace", "cell_id": target.id, "source": "x = 3\nx"}]
    try:
        area = area_of(kernel.execute(call("notebook_edit", {"operations": operations})))
        wait_done(kernel, area)
    finally:
        kernel.execute("%atomic_agent policy --clear")
    assert target.source == "x = 3\nx"
    assert "Applied to stand-in.ipynb" in last_tool_answer(scripted_model)
    assert page.proposals == {}


def test_the_notebook_closed_while_a_change_waits_cancels_it(kernel, scripted_model, page):
    target = page.cells[1]
    operations = [{"op": "delete", "cell_id": target.id}]
    area = area_of(kernel.execute(call("notebook_edit", {"operations": operations})))
    dialog = dialog_in(kernel, area, "confirm")
    page.detach()
    assert outcome_of(kernel, dialog) == (
        "→ cancelled (the notebook stand-in.ipynb (stand-in page) was closed)"
    )
    wait_done(kernel, area)
    assert "Nothing was changed" in last_tool_answer(scripted_model)
    assert target in page.cells
    said = kernel.execute("print(sorted(aj.session().unavailable_tools))").stdout.strip()
    assert said == str(NOTEBOOK_TOOLS)


def test_allow_applies_a_change_unasked_and_off_offers_no_notebook_tool(
    kernel, scripted_model, page
):
    page.attach()
    kernel.wait_for(lambda: page.linked, what="the page's link again")
    kernel.execute(scripted_start(scripted_model, "--notebook-edits allow"))
    wait_done(kernel, area_of(kernel.execute(call("notebook_read", {}))))
    target = page.cells[0]
    operations = [{"op": "replace", "cell_id": target.id, "source": "import cmath"}]
    wait_done(kernel, area_of(kernel.execute(call("notebook_edit", {"operations": operations}))))
    assert target.source == "import cmath"
    assert "(applied without asking (notebook_edits is allow))" in last_tool_answer(scripted_model)

    kernel.execute(scripted_start(scripted_model, "--notebook-edits off"))
    kernel.execute("%%atomic_agent --wait\nhello", timeout=60)
    assert offered(scripted_model) == ["notebook_cells", "notebook_variables"]
    assert kernel.execute("print(aj.session().unavailable_tools)").stdout.strip() == "{}"
