"""Python functions of the kernel as the agent's tools (``session.expose``), in a real kernel
driven like JupyterLab, with the real agent (both lines) and the scripted model, which calls
the tool and repeats what it answered."""

from __future__ import annotations

import pytest

from tests.harness.kernel_widgets import dialog_in, elements, page_of, panels
from tests.harness.plugin import last_tool_answer, scripted_start
from tests.harness.support import EXTENSIONS
from tests.harness.widget_text import visible_text

pytestmark = [pytest.mark.kernel, pytest.mark.agent, pytest.mark.scripted_kernel]

TOOLS = '''
import time
import atomic_jupyter as aj

calls = []

def area(r: float) -> float:
    """The area of a circle of radius r."""
    calls.append(("area", r, time.monotonic()))
    return 3.0 * r * r

def explode(reason: str) -> str:
    """Always fails."""
    raise RuntimeError(f"boom: {reason}")

def delete_things(n: int) -> str:
    """Deletes n things (it does not really)."""
    calls.append(("delete_things", n, time.monotonic()))
    return f"deleted {n}"

s = aj.session()
s.expose(area)
s.expose(explode)
s.expose(delete_things, side_effects=True)
'''


@pytest.fixture(scope="module")
def kernel_setup(scripted_model) -> list[str]:
    forger = EXTENSIONS / "forge_kernel_call.ts"
    return [scripted_start(scripted_model, f"-e {forger}"), TOOLS]


def test_an_exposed_function_is_called_with_typed_arguments_during_a_wait(kernel, scripted_model):
    result = kernel.execute('%%atomic_agent --wait\nkernel call area {"r": 2}', timeout=60)
    assert result.ok
    assert last_tool_answer(scripted_model) == "float: 12.0"
    calls = kernel.execute("print(calls[-1][:2])").stdout.strip()
    assert calls == "('area', 2.0)"  # a float, as the hint says, though JSON sent 2


def test_an_exception_reaches_the_model_and_the_kernel_goes_on(kernel, scripted_model):
    kernel.execute('%%atomic_agent --wait\nkernel call explode {"reason": "testing"}', timeout=60)
    answer = last_tool_answer(scripted_model)
    assert "RuntimeError: boom: testing" in answer and "Traceback" in answer
    assert kernel.execute("print(1 + 1)").stdout.strip() == "2"


def test_a_call_needing_approval_asks_in_the_tool_card_and_a_refusal_reaches_the_model(
    kernel, scripted_model
):
    result = kernel.execute('%%atomic_agent\nkernel call delete_things {"n": 3}')
    (area_id,) = result.widget_ids
    dialog = dialog_in(kernel, area_id, "confirm")  # the approval dialog
    (card,) = elements(page_of(kernel, area_id), "atomic-tool")
    (place,) = elements(card, "atomic-dialog-live")  # its controls are drawn in the card
    assert f'data-dialog="{dialog.id}"' in place and [
        visible_text(b) for b in elements(place, "atomic-no")
    ] == ["No"]
    dialog.confirm(False)
    kernel.execute("import atomic_jupyter as aj; aj.session().wait(timeout=60)")
    assert "declined to run delete_things" in last_tool_answer(scripted_model)
    assert (
        kernel.execute("print([c for c in calls if c[0] == 'delete_things'])").stdout.strip()
        == "[]"
    )


def test_a_busy_kernel_makes_a_call_wait_and_its_card_says_so(kernel, scripted_model, tmp_path):
    """The call comes while the cell that sent the prompt still computes: its card says it
    waits for the kernel while the cell runs (the kernel's loop cannot run then, so that is
    rendered from another thread), and the call runs after the cell, on the kernel's thread,
    and the run ends with its answer."""
    go = tmp_path / "go"
    busy = kernel.submit(
        "import pathlib, time\n"
        "busy_run = aj.session().prompt('kernel call area {\"r\": 1}')\n"
        f"go = pathlib.Path({str(go)!r})\n"
        "deadline = time.monotonic() + 90\n"
        "while not go.exists() and time.monotonic() < deadline:\n"
        "    time.sleep(0.05)\n"
        "ended = time.monotonic()"
    )

    def waiting_card() -> str | None:
        """The output whose tool card of ``area`` says it waits for the kernel."""
        for output in list(kernel.tracker.pages):
            for card in elements(page_of(kernel, output), "atomic-tool"):
                shown = visible_text(card)
                if "area" in shown and "waiting for the kernel" in shown:
                    return output
        return None

    output = kernel.wait_for(waiting_card, timeout=60, what="the card saying it waits")
    assert not kernel.replied(busy)  # seen while the cell still computed
    go.touch()
    kernel.collect(busy, timeout=30)
    kernel.execute("aj.session().wait(timeout=60)")
    ran_at = float(kernel.execute("print([c for c in calls if c[0] == 'area'][-1][2])").stdout)
    ended = float(kernel.execute("print(ended)").stdout)
    assert ran_at >= ended  # after the busy cell, on the kernel's thread
    assert "3.0" in last_tool_answer(scripted_model)
    assert kernel.execute("print(busy_run.finished)").stdout.strip() == "True"
    (card,) = elements(page_of(kernel, output), "atomic-tool")  # its final state
    shown = visible_text(card)
    assert "3.0" in shown and "waiting for the kernel" not in shown


def test_tools_are_there_again_after_a_restart(kernel, scripted_model):
    kernel.execute("%atomic_agent restart")
    kernel.execute('%%atomic_agent --wait\nkernel call area {"r": 3}', timeout=60)
    assert "27.0" in last_tool_answer(scripted_model)


def test_an_unexposed_function_cannot_be_called(kernel, scripted_model):
    kernel.execute("aj.session().unexpose('explode')")
    kernel.execute('%%atomic_agent --wait\nkernel call explode {"reason": "again"}', timeout=60)
    answer = last_tool_answer(scripted_model)
    assert "boom" not in answer
    assert "explode" in answer  # the agent says it has no such tool


def test_the_panel_lists_what_the_agent_can_call(kernel):
    (panel,) = panels(kernel)
    kernel.wait_for(
        lambda: "atomic-kernel-tools" in panel.status,
        timeout=15,
        what="the panel's list of kernel tools",
    )
    entry = panel.status["atomic-kernel-tools"]
    assert entry.startswith("kernel tools: ")
    assert "area" in entry and "delete_things" in entry
    listed = kernel.execute("print(sorted(aj.session().kernel_tools))").stdout.strip()
    assert "'area'" in listed


def test_a_call_without_the_secret_is_refused_and_runs_nothing(kernel):
    """Another extension in the agent sends what a kernel tool sends, with a made-up secret."""
    before = kernel.execute("print(len(calls))").stdout.strip()
    kernel.execute("%%atomic_agent --wait\n/forge-call area", timeout=60)
    notes = kernel.execute(
        "print([n['message'] for n in aj.session().notifications if 'forged' in n['message']])"
    ).stdout
    assert "refused" in notes and "secret" in notes
    assert kernel.execute("print(len(calls))").stdout.strip() == before  # area never ran
    assert kernel.execute("print(aj.session().pending_dialogs)").stdout.strip() == "[]"
