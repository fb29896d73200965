"""Benchmark 16: kernel memory over a day's session (issue 41; ``--only day``).

One kernel driven like JupyterLab runs a day's prompts one after another: 1,000
``%%atomic_agent --wait`` cells (100 with ``--quick``), every fiftieth of them a run whose
tool returns 10 MB (20 in all), the rest a short run with a 50 KB tool output. The agent is
the stand-in (``benchmarks/standin_agent.py``) replaying generated streams in the 0.73
line's shape, so a thousand runs take minutes, not hours; what the kernel keeps of a run is
the same as for the real agent (the same events).

The kernel's resident memory (``VmRSS``) is read every 50 runs. The baseline, in the same run:
a bare kernel (no session) doing the same cells' reading, each cell reading and parsing the
same stream's lines and keeping nothing. What the session keeps is also read from the
session itself: the runs it holds and their weight in bytes.
"""

from __future__ import annotations

import json
import shlex
import sys
import tempfile
from pathlib import Path

from tests.harness.kernel_client import BrowserLikeKernel

from .common import ROOT, Config, Results, rss_of
from .stream import StreamSpec, build_stream

SECTION = "16 a day's session"
STANDIN = ROOT / "benchmarks" / "standin_agent.py"
#: Every this many runs: one heavy run, and a reading of the memory.
EVERY = 50
#: The heavy runs' tool output.
HEAVY_BYTES = 10 << 20
#: The bound this benchmark checks: what the session adds to the kernel after a day, at most.
BOUND_BYTES = 200 << 20

_KEPT = (
    "import json as _dj, atomic_jupyter as _daj\n"
    "_ds = _daj.session()\n"
    "print(_dj.dumps({'runs': len(_ds.runs), 'bytes': sum(r.weight for r in _ds.runs)}))"
)


def _bare_cell(path: Path) -> str:
    """A cell of the bare kernel: read and parse the run's stream, keep nothing."""
    return (
        "import json as _bj\n"
        f"with open({str(path)!r}, encoding='utf-8') as _bf:\n"
        "    _bn = sum(len(_bj.loads(_bl)) for _bl in _bf)\n"
        "del _bn"
    )


def _streams(workdir: Path) -> tuple[Path, Path]:
    short = build_stream(
        StreamSpec(text_deltas=30, thinking_deltas=10, tool_updates=1, status_lines=0)
    )
    heavy = build_stream(
        StreamSpec(
            text_deltas=30,
            thinking_deltas=10,
            tool_updates=1,
            status_lines=0,
            tool_output_bytes=HEAVY_BYTES,
        )
    )
    short_path, heavy_path = workdir / "day-short.jsonl", workdir / "day-heavy.jsonl"
    short_path.write_bytes(short.data)
    heavy_path.write_bytes(heavy.data)
    return short_path, heavy_path


def _which(index: int, short: Path, heavy: Path) -> Path:
    """The stream of run ``index`` (0-based): every EVERY-th one, half-way, is heavy."""
    return heavy if index % EVERY == EVERY // 2 else short


def day(cfg: Config, results: Results, workdir: Path) -> None:
    runs = 100 if cfg.quick else 1000
    print(f"16. a day's session: {runs} runs, {runs // EVERY} of them of 10 MB", flush=True)
    short, heavy = _streams(workdir)
    report = workdir / "day-report.jsonl"
    command = shlex.join([sys.executable, str(STANDIN), "--report", str(report)])
    home = workdir / "home"
    home.mkdir()
    session: list[tuple[int, int, int, int]] = []  # runs, VmRSS, runs kept, their bytes
    with BrowserLikeKernel(workdir, env={"PI_CODING_AGENT_DIR": str(home)}) as k:
        k.execute("%load_ext atomic_jupyter")
        pid = int(k.execute("import os; print(os.getpid())").stdout)
        k.execute(f"%atomic_agent start --command {shlex.quote(command)}", timeout=60)
        for index in range(runs):
            path = _which(index, short, heavy)
            k.execute(f"%%atomic_agent --wait\nreplay {path}", timeout=300)
            if (index + 1) % EVERY == 0:
                kept = json.loads(k.execute(_KEPT).stdout)
                session.append((index + 1, rss_of(pid)["VmRSS"], kept["runs"], kept["bytes"]))
                print(f"  {session[-1]}", flush=True)
        k.execute("%atomic_agent stop")
    bare: list[tuple[int, int]] = []
    with BrowserLikeKernel(workdir) as k:
        pid = int(k.execute("import os; print(os.getpid())").stdout)
        start = rss_of(pid)["VmRSS"]
        for index in range(runs):
            k.execute(_bare_cell(_which(index, short, heavy)), timeout=300)
            if (index + 1) % EVERY == 0:
                bare.append((index + 1, rss_of(pid)["VmRSS"]))
    results.facts["day"] = {"session": session, "bare": bare, "bare_start": start}
    mb = 1e6
    last, bare_last = session[-1], bare[-1]
    plateau_from = session[min(3, len(session) - 1)]  # after 200 runs (100 kept, 4 heavy)
    added = last[1] - bare_last[1]
    results.add(
        SECTION,
        f"kernel RSS after {runs} runs, {runs // EVERY} of them with 10 MB tool outputs",
        f"{last[1] / mb:.0f} MB",
        f"{bare_last[1] / mb:.0f} MB bare kernel, same cells' reading",
        f"{last[1] / bare_last[1]:.2f}× (+{added / mb:.0f} MB)",
        f"bound: the session adds at most {BOUND_BYTES >> 20} MB: "
        + ("met" if added <= BOUND_BYTES else "NOT MET"),
    )
    results.add(
        SECTION,
        f"kernel RSS growth from run {plateau_from[0]} to run {last[0]}",
        f"{(last[1] - plateau_from[1]) / mb:+.0f} MB",
        f"{(bare_last[1] - bare[min(3, len(bare) - 1)][1]) / mb:+.0f} MB bare kernel",
        "",
        "every 50 runs: " + ", ".join(f"{rss / mb:.0f}" for _, rss, _, _ in session) + " MB",
    )
    results.add(
        SECTION,
        f"what the session keeps after {runs} runs: runs / their weight",
        f"{last[2]} runs / {last[3] / mb:.1f} MB",
        "",
        "",
        "the weight: the texts, tool outputs and details of their transcripts",
    )


def run(cfg: Config, results: Results) -> None:
    with tempfile.TemporaryDirectory(prefix="atomic-bench-day-") as tmp:
        day(cfg, results, Path(tmp))
