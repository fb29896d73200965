"""The dialogs of one session, and the ticker that expires timed ones. No widgets.

:class:`DialogRegistry` keeps every dialog (the newest thousand, and all pending ones),
announces each new dialog of no run (:attr:`~DialogRegistry.added`: a run's dialog is
announced once, by its run, on ``RunTracker.changed``; each dialog announces its own changes
on ``Dialog.changed``), and, while a dialog with a timeout is pending, runs a
ticker thread that expires it on time and announces a countdown tick once a second
(:attr:`~DialogRegistry.ticked`). The ticker ends by itself when no timed dialog is pending.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from atomic_jupyter.session.dialogs import Dialog
from atomic_jupyter.session.observers import Listeners

__all__ = ["DIALOGS_KEPT", "DialogRegistry"]

#: Dialogs kept besides the pending ones (the newest).
DIALOGS_KEPT = 1000

DialogListener = Callable[[Dialog], None]


class DialogRegistry:
    """Every dialog of a session, oldest first.

    Parameters
    ----------
    name:
        Names the ticker thread.
    """

    def __init__(self, name: str) -> None:
        self._name = name
        self._lock = threading.Lock()
        self._dialogs: list[Dialog] = []
        self._ticker: threading.Thread | None = None
        self._wake = threading.Event()
        #: Called with each new dialog of no run, after it is listed (a run announces its own).
        self.added: Listeners[DialogListener] = Listeners()
        #: Called about once a second with each pending dialog that has a timeout.
        self.ticked: Listeners[DialogListener] = Listeners()

    def all(self) -> list[Dialog]:
        """Every dialog kept, oldest first."""
        with self._lock:
            return list(self._dialogs)

    def pending(self) -> list[Dialog]:
        """The dialogs still waiting for an answer, oldest first."""
        with self._lock:
            return [d for d in self._dialogs if d.pending]

    def add(self, dialog: Dialog) -> None:
        """List a new dialog, follow its changes, and announce it when it belongs to no run
        (a run announces its dialogs itself)."""
        with self._lock:
            self._dialogs.append(dialog)
            if len(self._dialogs) > DIALOGS_KEPT:
                keep = [d for d in self._dialogs[:-DIALOGS_KEPT] if d.pending]
                self._dialogs = keep + self._dialogs[-DIALOGS_KEPT:]
        if dialog.host is None:
            self.added.emit(dialog)
        if dialog.deadline is not None and dialog.pending:
            self._ensure_ticker()

    def close_pending(self, reason: str) -> None:
        """Close every pending dialog without an answer (the agent went away)."""
        for dialog in self.pending():
            dialog.close(reason)
        self._wake.set()

    def report_undelivered(self, within: float = 1.0) -> None:
        """The agent is gone: mark answers that never reached it (the writer settles what
        it still holds within ``within`` seconds)."""
        deadline = time.monotonic() + within
        for dialog in self.all():
            delivery = dialog.delivery
            if delivery is None:
                continue
            done = delivery.done.wait(max(0.0, deadline - time.monotonic()))
            if not done or not delivery.delivered:
                dialog.mark_undelivered(delivery.error or "the agent did not read it")

    # ------------------------------------------------------------------ the ticker

    def _ensure_ticker(self) -> None:
        with self._lock:
            if self._ticker is not None:  # running; it clears this under the lock as it ends
                self._wake.set()
                return
            self._ticker = threading.Thread(
                target=self._tick, name=f"atomic-agent-ticker-{self._name}", daemon=True
            )
            self._ticker.start()

    def _tick(self) -> None:
        """Expire timed dialogs on time and announce their countdowns once a second."""
        while True:
            with self._lock:
                timed = [d for d in self._dialogs if d.pending and d.deadline is not None]
                if not timed:
                    self._ticker = None
                    return
            now = time.monotonic()
            for dialog in timed:
                assert dialog.deadline is not None
                if dialog.deadline <= now:
                    dialog.expire()
                else:
                    self.ticked.emit(dialog)
            deadlines = [d.deadline for d in timed if d.pending and d.deadline is not None]
            wait = 1.0 if not deadlines else min(1.0, max(0.01, min(deadlines) - time.monotonic()))
            self._wake.wait(wait)
            self._wake.clear()
