"""Widgets live only as long as what they show: through a real kernel and the real agent on
the demo model, a session's panel is one output widget (its editor, rules and the runs it
shows are HTML and messages), a live run is one output widget more (its answer, tool cards and dialogs are HTML
and messages, not widgets), a finished run's widget is closed once its output is replaced by
its record, and stopping a session closes all of its widgets, in the kernel and in the page."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness.kernel_client import BrowserLikeKernel
from tests.harness.kernel_widgets import answers, dialog_in, elements, outcome_of, page_of

pytestmark = [pytest.mark.kernel, pytest.mark.agent]

#: Runs of ``%%atomic_agent --wait`` after the first.
MORE_RUNS = 99
#: The demo model's prompts that end without a person: an answer, and a tool call.
PROMPTS = ["hello! who are you?", "list the files here"]


@pytest.fixture(scope="module")
def kernel_setup() -> list[str]:
    """Nothing started: each test starts (and stops) its own session."""
    return []


def kernel_models(kernel: BrowserLikeKernel) -> int:
    """How many widget models the kernel holds."""
    code = "import ipywidgets.widgets.widget as _w\nprint(len(_w._instances))"
    return int(kernel.execute(code).stdout)


def records_sent_again(outputs: list[dict[str, Any]]) -> list[str]:
    """The HTML of each record ``outputs`` send again in place of an earlier output."""
    return [
        o["data"].get("text/html", "") for o in outputs if o["output_type"] == "update_display_data"
    ]


def is_run_record(html: str) -> bool:
    """Whether ``html`` is a run's record (by its outer element's class)."""
    return "atomic-record-run" in html.split(">", 1)[0]


def run(kernel: BrowserLikeKernel, prompt: str, name: str) -> None:
    done = kernel.execute(f"%%atomic_agent --wait --name {name}\n{prompt}")
    assert done.stderr == "", done.stderr


@pytest.mark.one_line  # our widgets' lifetime: the runs on both lines are tested elsewhere
def test_a_hundred_waited_runs_hold_no_more_widgets_than_one(kernel: BrowserLikeKernel) -> None:
    kernel.execute("%atomic_agent start --demo --name many")
    run(kernel, PROMPTS[0], "many")
    in_kernel, in_page = kernel_models(kernel), len(kernel.models)
    for index in range(MORE_RUNS):
        run(kernel, PROMPTS[index % len(PROMPTS)], "many")
    # The panel is still live; every run is final and shown by its record alone.
    assert kernel_models(kernel) <= in_kernel
    assert len(kernel.models) <= in_page
    kernel.execute("%atomic_agent stop --name many")


def ours(kernel: BrowserLikeKernel) -> list[str]:
    """The open models of this package's outputs in the page (each output's model, and the
    holder that carries their page side)."""
    return [
        comm_id
        for comm_id, state in kernel.models.items()
        if str(state.get("_anywidget_id", "")).startswith("atomic_jupyter.ui.output_widget.")
    ]


def model_names(kernel: BrowserLikeKernel, comm_ids: set[str]) -> list[str]:
    """The model names of ``comm_ids`` in the page, sorted."""
    return sorted(kernel.models[c]["_model_name"] for c in comm_ids)


def test_a_started_sessions_panel_is_one_output_widget(kernel: BrowserLikeKernel) -> None:
    """Measured: 3 models (the panel's output, the holder that carries the page side of every
    output, and the one Layout they share), in the kernel and in the page; at most 5 allowed.
    Stopping the session closes them all."""
    before_kernel, before_page = kernel_models(kernel), set(kernel.models)
    assert ours(kernel) == []
    started = kernel.execute("%atomic_agent start --demo --name panel")
    (panel,) = started.widget_ids
    new = set(kernel.models) - before_page
    assert len(new) <= 5, [kernel.tracker.describe(c) for c in new]
    assert model_names(kernel, new) == ["AnyModel", "AnyModel", "LayoutModel"]
    assert kernel_models(kernel) - before_kernel == 3
    assert panel in ours(kernel) and len(ours(kernel)) == 2  # the panel, and the holder
    kernel.execute("%atomic_agent stop --name panel")
    assert set(kernel.models) == before_page and kernel_models(kernel) == before_kernel
    assert ours(kernel) == []


def test_a_live_run_with_an_answer_a_tool_card_and_a_dialog_is_one_output_widget(
    kernel: BrowserLikeKernel,
) -> None:
    """Measured: the run adds 1 model (its output's) to the session's panel's 3: the holder
    that carries the page side of every output and the one Layout are shared. In the kernel
    and in the page."""
    kernel.execute("%atomic_agent start --demo --name one")
    before_kernel, before_page = kernel_models(kernel), set(kernel.models)
    panel_models = ours(kernel)
    assert len(panel_models) == 2  # the panel's output, and the holder
    shown = kernel.execute("%%atomic_agent --name one\nclean up the scratch files")
    (output,) = shown.widget_ids
    dialog = dialog_in(kernel, output, "select")  # the demo's guard asks before the command
    (answer,) = answers(kernel, output)
    assert "I will remove the demo's scratch folder." in answer.html
    (card,) = elements(page_of(kernel, output), "atomic-tool")
    assert f'data-dialog="{dialog.id}"' in card
    new = set(kernel.models) - before_page
    assert new == {output}, [kernel.tracker.describe(c) for c in new]
    assert model_names(kernel, new) == ["AnyModel"]
    assert kernel_models(kernel) - before_kernel == 1
    dialog.choose(dialog.description["options"].index("Block"))
    assert outcome_of(kernel, dialog).endswith("→ Block (clicked)")
    kernel.execute("%atomic_agent wait --name one --timeout 60")
    kernel.wait_for(lambda: output not in kernel.models, what="the run's output to close")
    assert ours(kernel) == panel_models  # the panel and the holder stay while it is open
    assert kernel_models(kernel) == before_kernel
    kernel.execute("%atomic_agent stop --name one")
    assert ours(kernel) == []  # the last output closed: the holder went with it


def test_stop_closes_every_widget_of_the_session(kernel: BrowserLikeKernel) -> None:
    before_kernel, before_page = kernel_models(kernel), set(kernel.models)
    assert ours(kernel) == []
    kernel.execute("%atomic_agent start --demo --name brief")
    run(kernel, PROMPTS[1], "brief")
    shown = kernel.execute("%%atomic_agent --name brief\n/demo-confirm")  # a dialog left open
    assert shown.widget_ids
    assert len(ours(kernel)) == 3  # the panel's output, the run's, the holder
    kernel.execute("%atomic_agent stop --name brief")
    assert kernel_models(kernel) == before_kernel
    left = [kernel.tracker.describe(c) for c in set(kernel.models) - before_page]
    assert left == [], left
    assert ours(kernel) == []


@pytest.mark.one_line  # what the presentation keeps: the same on both lines
def test_the_final_records_kept_to_send_again_at_stop_are_bounded_by_their_size(
    kernel: BrowserLikeKernel,
) -> None:
    """Stopping sends the records of the session's runs again (for nbclient, which reads only
    the cell it runs), but only of the newest that fit in ``FINAL_RECORDS_KEPT``: the rest
    were let go when newer runs ended, so a day of runs does not keep every record."""
    kernel.execute("%atomic_agent start --demo --name kept")
    run(kernel, PROMPTS[0], "kept")
    run(kernel, PROMPTS[1], "kept")
    size = "from atomic_jupyter.notebook import presentation as _p\n"
    kernel.execute(size + "_p.FINAL_RECORDS_KEPT = 1")  # less than any record
    try:
        run(kernel, PROMPTS[0], "kept")
        stopped = kernel.execute("%atomic_agent stop --name kept")
    finally:
        kernel.execute(size + "_p.FINAL_RECORDS_KEPT = 8 << 20")
    sent_again = records_sent_again(stopped.outputs)
    assert sent_again, "stopping sent no record again (the panel's, at least)"
    assert not [html for html in sent_again if is_run_record(html)]

    kernel.execute("%atomic_agent start --demo --name kept")
    run(kernel, PROMPTS[0], "kept")
    run(kernel, PROMPTS[1], "kept")
    stopped = kernel.execute("%atomic_agent stop --name kept")
    runs_sent = [html for html in records_sent_again(stopped.outputs) if is_run_record(html)]
    assert len(runs_sent) == 2  # under the bound: each run's record, once
