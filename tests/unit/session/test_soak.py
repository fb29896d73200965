"""Soak: many dialogs and many streamed prompts against the stand-in agent, with bounded memory.

CI runs a short soak. The full one (1,000 dialogs, 100 prompts) runs with
``SOAK_DIALOGS=1000 SOAK_PROMPTS=100 .venv/bin/python -m pytest tests/unit/session/test_soak.py -s``; it
prints the peak and the growth of the Python heap.
"""

from __future__ import annotations

import gc
import os
import tracemalloc

import atomic_jupyter as aj
from tests.harness.support import STANDIN, wait_until

DIALOGS = int(os.environ.get("SOAK_DIALOGS", "300"))
PROMPTS = int(os.environ.get("SOAK_PROMPTS", "30"))


def test_soak_dialogs_and_streams_lose_nothing_and_memory_stays_bounded() -> None:
    session = aj.start(command=STANDIN, name="soak", display=False)
    try:
        tracemalloc.start()
        answered = 0
        heap: list[int] = []
        for round_ in range(max(DIALOGS // 50, 1)):
            batch = session.prompt("/scenario dialogs 50", display=False)
            wait_until(lambda: len(session.pending_dialogs) == 50, "a batch of dialogs")
            for dialog in session.pending_dialogs:
                dialog.respond("B")
                answered += 1
            last = f"received soak-{(round_ + 1) * 50} x1"
            wait_until(
                lambda last=last: (
                    session.notifications and session.notifications[-1]["message"].startswith(last)
                ),
                "the batch receipts",
            )
            # The command is answered once its dialogs are; the next prompt goes after it.
            assert session.wait(timeout=60, run=batch, quiet=True).reason == "finished"
        for index in range(PROMPTS):
            run = session.prompt("/scenario stream 300", display=False)
            assert session.wait(timeout=60, run=run, quiet=True).reason == "finished"
            assert run.text == "".join(f"word{i} " for i in range(300))
            if index % 5 == 4:
                gc.collect()
                heap.append(tracemalloc.get_traced_memory()[0])
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        receipts = [n for n in session.notifications if n["message"].startswith("received soak-")]
        duplicated = [n for n in receipts if " x1: " not in n["message"]]
        print(
            f"\nsoak: {answered} dialogs, {PROMPTS} streamed prompts; heap peak {peak / 1e6:.1f} MB, "
            f"after each 5 prompts: {[round(h / 1e6, 2) for h in heap]} MB"
        )
        assert answered == DIALOGS - DIALOGS % 50 or answered == 50
        assert duplicated == []
        assert session.diagnostic_count == 0
        # Bounded: the second half of the run does not keep what the first half made.
        if len(heap) >= 4:
            half = len(heap) // 2
            assert max(heap[half:]) < 1.5 * max(heap[:half]) + 2_000_000, heap
    finally:
        session.stop()
