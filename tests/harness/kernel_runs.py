"""Waiting for the runs of a :class:`~tests.harness.kernel_client.BrowserLikeKernel` as the
page shows them."""

from __future__ import annotations

from .kernel_client import BrowserLikeKernel
from .kernel_widgets import last_run_report, run_state


def wait_done(kernel: BrowserLikeKernel, output: str, timeout: float = 30) -> None:
    """Wait until the run of the output ``output`` reads ``done`` (as the page last showed it:
    a finished run's output is closed once its record is shown); else fail saying what it
    reads, whether the output is still open, and what the run got."""
    try:
        kernel.wait_for(
            lambda: run_state(kernel, output) == "done", timeout=timeout, what="the run to finish"
        )
    except AssertionError as exc:
        said = last_run_report(kernel)
        open_ = output in kernel.models
        raise AssertionError(
            f"the run's state reads {run_state(kernel, output)!r} (open: {open_}); {said}"
        ) from exc
