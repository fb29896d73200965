"""Benchmark 14: what an idle agent costs, asleep and awake (issue 42).

In one kernel driven like JupyterLab, on the demo model (the real pinned agent):

- the memory a session holds: the kernel and every process under it (the agent and what it
  runs), summed RSS, with the agent awake and idle, then put to sleep
  (``AtomicAgent.idle_sleep_minutes``), against the same kernel before any session started;
- the time from a prompt's cell to the first streamed word of its answer, the agent asleep
  (the prompt starts it again on the same conversation) against awake, the variants taking
  turns, median of five each.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.harness.kernel_client import BrowserLikeKernel
from tests.harness.kernel_widgets import answers, element_text, panels

from .common import Config, Results, fmt_s, median

PROMPT = "hello! who are you?"


def _tree(pid: int) -> list[int]:
    """``pid`` and every process under it."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        each = todo.pop()
        found.append(each)
        todo += children.get(each, [])
    return found


def tree_rss(pid: int, children: bool = True) -> int:
    """Summed RSS of ``pid`` and (with ``children``) its descendants, in bytes."""
    total = 0
    for each in _tree(pid) if children else [pid]:
        try:
            with open(f"/proc/{each}/status", encoding="ascii") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
        except OSError:
            continue
    return total


def state_of(k: Any) -> str:
    """The session's state as its panel shows it (any kernel the page helpers read)."""
    (panel,) = panels(k)
    return element_text(panel.html, "atomic-state")


def put_to_sleep(k: Any) -> None:
    """Let the agent fall asleep (a very short idle time, read live), then set it back."""
    k.execute("%config AtomicAgent.idle_sleep_minutes = 0.005")
    k.wait_for(lambda: "asleep" in state_of(k), timeout=60, what="the agent asleep")
    k.execute("%config AtomicAgent.idle_sleep_minutes = 30")


def first_word(k: Any, timeout: float = 60) -> float:
    """Seconds from sending a prompt's cell to the first streamed chunk of its answer (any
    kernel the page helpers read: the suite's, or one on a hub)."""
    began = time.perf_counter()
    (output,) = k.execute(f"%%atomic_agent\n{PROMPT}", timeout=2 * timeout).widget_ids
    k.wait_for(
        lambda: any(a.html for a in answers(k, output)), timeout=timeout, what="a first word"
    )
    took = time.perf_counter() - began
    k.execute(f"%atomic_agent wait --timeout {timeout:g}", timeout=2 * timeout)
    return took


def idle(cfg: Config, results: Results, workdir: Path) -> None:
    print("14. an idle agent asleep and awake", flush=True)
    repeats = 2 if cfg.quick else 5
    env = {"PI_CODING_AGENT_DIR": str(workdir / "home"), "JUPYTERHUB_ACTIVITY_INTERVAL": "1"}
    with BrowserLikeKernel(workdir, env=env) as k:
        k.execute("%load_ext atomic_jupyter")
        pid = int(k.execute("import os; print(os.getpid())").stdout)
        bare = tree_rss(pid)
        k.execute("%atomic_agent start --demo", timeout=120)
        first_word(k)  # the first run's one-off costs (imports, the agent's caches)
        awake_memory = tree_rss(pid)
        put_to_sleep(k)
        asleep_memory = tree_rss(pid)
        awake, woken = [], []
        for _ in range(repeats):
            awake.append(first_word(k))
            put_to_sleep(k)
            woken.append(first_word(k))
        k.execute("%atomic_agent stop")
    mb = 1e6
    results.facts["idle"] = {
        "bare": bare,
        "awake": awake_memory,
        "asleep": asleep_memory,
        "first_word_awake": awake,
        "first_word_woken": woken,
    }
    results.add(
        SECTION,
        "memory of the kernel and its processes: agent awake (idle) / asleep",
        f"{awake_memory / mb:.0f} MB / {asleep_memory / mb:.0f} MB",
        f"{bare / mb:.0f} MB before any session",
        f"+{(awake_memory - bare) / mb:.0f} MB / +{(asleep_memory - bare) / mb:.0f} MB",
        "summed RSS of the kernel and every process under it; demo model",
    )
    results.add(
        SECTION,
        "prompt cell → first streamed word, the agent asleep (started again first)",
        fmt_s(median(woken)),
        f"{fmt_s(median(awake))} awake",
        f"{median(woken) / median(awake):.1f}×",
        f"median of {repeats} each, the variants taking turns; demo model",
    )


SECTION = "14 idle"


def run(cfg: Config, results: Results) -> None:
    with tempfile.TemporaryDirectory(prefix="atomic-bench-idle-") as tmp:
        idle(cfg, results, Path(tmp))
