"""Blocking until a run ends, for "Run All", nbval and papermill. No widgets here.

A running cell keeps the kernel from delivering clicks, so a wait also ends as soon as a
dialog needs an answer that no policy gives (docs/guides/unattended.md, "Why a wait stops for
a dialog"). While it blocks the main thread, the kernel's event loop cannot run the views' updates, so
the wait calls ``pump`` (the presentation's) on every wake-up to do that work itself.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from atomic_jupyter.errors import CommandTimeoutError
from atomic_jupyter.session.dialogs import Dialog
from atomic_jupyter.session.runs import PromptRun

__all__ = ["WAIT_TICK", "WaitResult", "wait_for_run"]

#: How often a blocking wait looks at its run when nothing wakes it.
WAIT_TICK = 0.05


def _label(run: PromptRun) -> str:
    first = run.message.split("\n", 1)[0]
    return repr(first if len(first) <= 40 else first[:39] + "…")


@dataclass(frozen=True, repr=False)
class WaitResult:
    """Why a wait returned: ``"finished"``, ``"dialog"`` or ``"exited"``."""

    reason: str
    run: PromptRun | None = None
    dialog: Dialog | None = None

    def __bool__(self) -> bool:
        return self.reason == "finished"

    def __repr__(self) -> str:
        """A short sentence (what a cell ending in ``session.wait()`` shows)."""
        what = f"the run {_label(self.run)}" if self.run is not None else "no run"
        if self.reason == "finished":
            if self.run is None:
                return "<WaitResult: nothing to wait for>"
            how = "failed" if self.run.error else "is done"
            return f"<WaitResult: {what} {how}>"
        if self.reason == "dialog" and self.dialog is not None:
            state = "needs an answer" if self.dialog.pending else f"was {self.dialog.state}"
            return (
                f"<WaitResult: {what} is waiting: the {self.dialog.method} dialog "
                f"{self.dialog.title!r} {state}>"
            )
        if self.reason == "exited":
            return f"<WaitResult: {what} stopped: the agent exited>"
        return f"<WaitResult: {what} stopped: {self.reason}>"

    def tell(self, returncode: int | None) -> None:
        """Say why the wait ended early: a dialog waiting for a person is a notice on
        stdout; an agent that exited, an error on stderr. A finished run says nothing."""
        if self.reason == "dialog":
            assert self.dialog is not None
            print(
                f"A {self.dialog.method} dialog needs your answer: {self.dialog.title!r}. "
                "Answer it where it is shown, then wait again (or give an answer policy).",
            )
        elif self.reason == "exited":
            print(
                f"The agent exited with code {returncode} before the run ended.",
                file=sys.stderr,  # this one is an error
            )


def wait_for_run(
    run: PromptRun | None,
    *,
    timeout: float | None,
    wake: threading.Event,
    pending_dialogs: Callable[[], list[Dialog]],
    alive: Callable[[], bool],
    pump: Callable[[], None],
) -> WaitResult:
    """Block until ``run`` is over, a dialog waits for a person, or the agent is gone.

    ``wake`` is set by the session on every change; ``pump`` runs due view work.

    Raises
    ------
    CommandTimeoutError
        When the run is still going after ``timeout`` seconds.
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        wake.clear()
        pump()
        waiting = pending_dialogs()
        if run is None or run.wait_done(0):
            result = WaitResult("exited" if run is not None and run.exited else "finished", run)
            break
        if waiting:
            result = WaitResult("dialog", run, waiting[0])
            break
        if not alive():
            result = WaitResult("exited", run)
            break
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            raise CommandTimeoutError(
                f"the agent is still working after {timeout:g} s; "
                "wait again, or stop it with session.abort()"
            )
        wake.wait(WAIT_TICK if left is None else min(WAIT_TICK, left))
    pump()
    return result
