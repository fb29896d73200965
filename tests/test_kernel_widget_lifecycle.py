"""Widgets live only as long as what they show: through a real kernel and the real agent on
the demo model, a finished run's widgets (its transcript, dialogs, answer chunks) are closed
once its output is replaced by its record, and stopping a session closes all of its widgets,
in the kernel and in the page."""

from __future__ import annotations

import pytest

from tests.harness.kernel_client import BrowserLikeKernel

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


def run(kernel: BrowserLikeKernel, prompt: str, name: str) -> None:
    done = kernel.execute(f"%%atomic_agent --wait --name {name}\n{prompt}")
    assert done.stderr == "", done.stderr


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


def test_stop_closes_every_widget_of_the_session(kernel: BrowserLikeKernel) -> None:
    before_kernel, before_page = kernel_models(kernel), set(kernel.models)
    kernel.execute("%atomic_agent start --demo --name brief")
    run(kernel, PROMPTS[1], "brief")
    shown = kernel.execute("%%atomic_agent --name brief\n/demo-confirm")  # a dialog left open
    assert shown.widget_ids
    kernel.execute("%atomic_agent stop --name brief")
    assert kernel_models(kernel) == before_kernel
    left = [kernel.tracker.describe(c) for c in set(kernel.models) - before_page]
    assert left == [], left
