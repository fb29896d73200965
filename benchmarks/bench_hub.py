"""Benchmark 15: a team on a real JupyterHub (issue 42). Root only: real UNIX users.

The hub of the test suite (``tests/harness/hub.py``: the guide's shared environment, made by
its commands; ``LocalProcessSpawner``; users made with ``useradd``), on 127.0.0.1:

- memory per user: the summed RSS of every process of that user (the single-user server, the
  kernel, the agent and what it runs) with the agent awake and idle, then asleep
  (``idle_sleep_minutes``), against a user whose kernel started no agent;
- the time from a prompt's cell (sent over the kernel's websocket, as JupyterLab sends it) to
  the first streamed word of the answer, for one user alone and for ten users at once (the
  median and the slowest of the ten);
- the same time for an agent asleep (the prompt starts it again) against a running one.

The demo model everywhere: what is measured is the hub, the kernel and the agent, not a
provider.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from tests.harness.hub import (
    Hub,
    HubKernel,
    HubUser,
    _build_shared,
    made_users,
    processes_of_uid,
    running_hub,
    start_concurrently,
)

from .bench_idle import first_word, put_to_sleep, tree_rss
from .common import Config, Results, fmt_s, median

SECTION = "15 hub"
START = "%load_ext atomic_jupyter\n%atomic_agent start --demo"


def _rss_of_user(uid: int) -> int:
    return sum(tree_rss(pid, children=False) for pid in processes_of_uid(uid))


def _first_word(kernel: HubKernel) -> float:
    return first_word(kernel, timeout=180)


def _wheel(folder: Path) -> Path:
    done = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(folder), "."],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    (wheel,) = folder.glob("*.whl")
    return wheel


def _memory(hub: Hub, users: list[HubUser], results: Results) -> None:
    bare_user, agent_user = users[0], users[1]
    hub.start_servers([bare_user.name, agent_user.name])
    bare = hub.open_kernel(bare_user.name)
    bare.execute("%load_ext atomic_jupyter")  # the package loaded, no agent
    with_agent = hub.open_kernel(agent_user.name)
    with_agent.execute(START, timeout=180)
    _first_word(with_agent)
    without, awake = _rss_of_user(bare_user.uid), _rss_of_user(agent_user.uid)
    put_to_sleep(with_agent)
    asleep = _rss_of_user(agent_user.uid)
    mb = 1e6
    results.facts["hub_memory"] = {"no_agent": without, "awake": awake, "asleep": asleep}
    results.add(
        SECTION,
        "memory per user (server + kernel + agent): agent awake (idle) / asleep",
        f"{awake / mb:.0f} MB / {asleep / mb:.0f} MB",
        f"{without / mb:.0f} MB with no agent",
        f"{awake / without:.2f}× / {asleep / without:.2f}×",
        "summed RSS of the user's processes; LocalProcessSpawner, real UNIX users, demo model",
    )
    for kernel in (bare, with_agent):
        kernel.close()


def _at_once(hub: Hub, users: list[HubUser], results: Results, repeats: int) -> None:
    names = [u.name for u in users]
    hub.start_servers([n for n in names if hub.server(n) is None])
    kernels = start_concurrently([lambda n=n: hub.open_kernel(n) for n in names])
    start_concurrently([lambda k=k: k.execute(START, timeout=300) for k in kernels])
    start_concurrently([lambda k=k: _first_word(k) for k in kernels])  # one-off costs
    alone, together_median, together_max = [], [], []
    for _ in range(repeats):
        alone.append(_first_word(kernels[0]))
        gate = threading.Barrier(len(kernels))

        def timed(kernel: HubKernel, gate: threading.Barrier = gate) -> float:
            gate.wait()
            return _first_word(kernel)

        times = start_concurrently([lambda k=k: timed(k) for k in kernels])
        together_median.append(statistics.median(times))
        together_max.append(max(times))
    results.facts["hub_first_word"] = {
        "alone": alone,
        "together_median": together_median,
        "together_max": together_max,
    }
    results.add(
        SECTION,
        f"prompt → first streamed word, {len(kernels)} users at once (median / slowest)",
        f"{fmt_s(median(together_median))} / {fmt_s(median(together_max))}",
        f"{fmt_s(median(alone))} one user alone",
        f"{median(together_median) / median(alone):.1f}× / {median(together_max) / median(alone):.1f}×",
        f"medians over {repeats} rounds; {os.cpu_count()} CPUs; the prompt sent over each "
        "kernel's websocket",
    )
    awake, woken = [], []
    kernel = kernels[0]
    for _ in range(repeats):
        awake.append(_first_word(kernel))
        put_to_sleep(kernel)
        woken.append(_first_word(kernel))
    results.add(
        SECTION,
        "prompt → first streamed word on the hub, the agent asleep (started again first)",
        fmt_s(median(woken)),
        f"{fmt_s(median(awake))} running",
        f"{median(woken) / median(awake):.1f}×",
        f"median of {repeats} each, taking turns",
    )
    for each in kernels:
        each.close()


def run(cfg: Config, results: Results) -> None:
    print("15. a team on a real JupyterHub", flush=True)
    if os.geteuid() != 0:
        print("  skipped: real UNIX users need root", flush=True)
        return
    repeats = 2 if cfg.quick else 5
    count = 3 if cfg.quick else 10
    with tempfile.TemporaryDirectory(prefix="atomic-bench-hub-") as tmp:
        wheel = _wheel(Path(tmp))
        folder = Path(tempfile.mkdtemp(prefix="atomic-hub-"))
        try:
            began = time.monotonic()
            _build_shared(folder, wheel)
            print(f"  shared environment made in {time.monotonic() - began:.0f} s", flush=True)
            from tests.harness.hub import SharedEnvironment

            shared = SharedEnvironment(folder, wheel, [], 0.0)
            letters = [f"{i}" for i in range(count)]
            with made_users(shared, letters) as users:
                options = {"cull_timeout": 3600, "activity_interval": 60}
                with running_hub(shared, users, **options) as hub:
                    _memory(hub, users[:2], results)
                    _at_once(hub, users, results, repeats)
        finally:
            subprocess.run(["rm", "-rf", str(folder)], check=False)
