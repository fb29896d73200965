"""The offline demo model on the open notebook, in a real kernel driven like JupyterLab, with
the real agent and the stand-in notebook page (``tests/harness/notebook_page.py``, the
extension's own link code). A prompt sent with ``--wait`` keeps its cell running, so the
page's answer cannot reach the kernel and ``notebook_read`` is refused: the demo says that it
could not read the notebook and why, never "The notebook has no cell 2". Without ``--wait`` it
proposes the change, the person accepts it in the cell, and it says what it did in a plain
sentence.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.harness.kernel_runs import wait_done
from tests.harness.notebook_page import Cell, StandInPage

pytestmark = [pytest.mark.kernel, pytest.mark.agent]

PROMPT = "change cell 2 to `x = 7`"


@pytest.fixture(scope="module")
def kernel_setup() -> list[str]:
    return ["%atomic_agent start --demo", "import atomic_jupyter as aj"]


@pytest.fixture(scope="module")
def page(kernel: Any) -> Iterator[StandInPage]:
    made = StandInPage(kernel, [Cell("import math"), Cell("x = 1\nx")], path="edits.ipynb")
    made.attach()
    kernel.wait_for(lambda: made.linked, what="the page's link")
    yield made
    made.detach()


def last_answer(kernel: Any) -> str:
    """What the demo model said in the last run (its text blocks, tool cards left out)."""
    return kernel.execute("print(aj.session().runs[-1].text)").stdout


def test_under_wait_the_demo_says_why_it_could_not_read_the_notebook(kernel, page):
    said = kernel.execute("print(sorted(aj.session().unavailable_tools))").stdout.strip()
    assert said == "[]"  # linked: the demo is offered the notebook tools
    result = kernel.execute(f"%%atomic_agent --wait\n{PROMPT}", timeout=120)
    assert result.status == "ok"
    answer = last_answer(kernel)
    assert "I could not read the notebook, so I changed nothing." in answer
    assert "cannot be read or changed while a cell runs" in answer
    assert "Send the prompt again without `--wait`" in answer
    assert "no cell" not in answer
    assert page.cells[1].source == "x = 1\nx"


def test_without_wait_the_demo_changes_the_cell_and_says_so_plainly(kernel, page):
    (area,) = kernel.execute(f"%%atomic_agent\n{PROMPT}").widget_ids
    kernel.wait_for(lambda: list(page.proposals), timeout=60, what="the proposal in the cell")
    (proposed,) = list(page.proposals)
    page.click(proposed, accept=True)
    wait_done(kernel, str(area), timeout=60)
    assert page.cells[1].source == "x = 7"
    answer = last_answer(kernel)
    assert answer.rstrip().endswith("Done: cell 2 now reads `x = 7`.")
    assert "(I am the offline demo model.)" not in answer
