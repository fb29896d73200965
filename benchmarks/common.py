"""Shared helpers: repetition, medians, the results table, paths."""

from __future__ import annotations

import gc
import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from atomic_jupyter.transport.agent_install import install_folder, pin_of

if TYPE_CHECKING:
    from .stream import Stream

ROOT = Path(__file__).resolve().parent.parent
BENCH_DIR = ROOT / "benchmarks"
STANDIN = BENCH_DIR / "standin_agent.py"
#: The checkout's pinned agent (the current line), as ``make agent`` installs it.
PINNED_AGENT = install_folder(ROOT / ".agents", pin_of("current")) / "node_modules" / ".bin" / "pi"


@dataclass(frozen=True)
class Config:
    """How hard to push: the full run, or the quick smoke run."""

    quick: bool
    reps: int
    text_deltas: int
    thinking_deltas: int
    tool_updates: int
    status_lines: int
    e2e_reps: int
    latency_reps: int
    idle_cells: int
    dialogs: int
    startup_reps: int
    memory_chars: int
    memory_deltas: int
    memory_factor: int
    #: costs: batches of the click and dialog figures (variants take turns), dialogs per batch.
    click_batches: int = 6
    click_batch: int = 5
    #: costs: answer sizes of the per-update figure, its repetitions, and the paced tail:
    #: this many characters at the end, in deltas of about ``paced_delta_chars``, one per
    #: ``paced_gap_ms``.
    paced_sizes: tuple[int, ...] = (8 << 10, 64 << 10, 512 << 10)
    paced_reps: int = 3
    paced_tail_chars: int = 8 << 10
    paced_delta_chars: int = 200
    paced_gap_ms: int = 40
    #: costs: the paced tail of the record-copy figure, long enough for several refreshes
    #: (at least 2 s apart): 64 KB in 200-character deltas every 40 ms lasts about 13 s.
    copy_tail_chars: int = 64 << 10
    #: costs: the size of the one huge line of the memory figure, and its repetitions.
    big_line_bytes: int = 50_000_000
    big_line_reps: int = 3
    #: import: fresh interpreters per statement (``import atomic_jupyter``, ... ``ipywidgets``).
    import_reps: int = 15

    @classmethod
    def make(cls, quick: bool) -> Config:
        """The full run, or the quick smoke run (``--quick``)."""
        if quick:
            return cls(
                True,
                3,
                1000,
                100,
                30,
                500,
                2,
                2,
                10,
                5,
                2,
                4000,
                400,
                5,
                click_batches=2,
                click_batch=3,
                paced_reps=1,
                copy_tail_chars=24 << 10,
                big_line_bytes=10_000_000,
                big_line_reps=2,
                import_reps=5,
            )
        return cls(False, 5, 4000, 400, 100, 2000, 5, 5, 30, 20, 6, 12000, 1000, 10)


def memory_streams(cfg: Config) -> tuple[Stream, Stream]:
    """A short run, and a long one with ``memory_factor`` times the events and the same content.

    Both show the same answer (``memory_chars`` long) and the same final tool output; the long
    one cuts the answer into ``memory_factor`` times more deltas, updates the tool output and
    sets the status ``memory_factor`` times more often. A client that keeps what it shows, and
    no raw events, holds the same after both.
    """
    from .stream import StreamSpec, build_stream

    f = cfg.memory_factor
    short, long = (
        build_stream(
            StreamSpec(
                text_deltas=cfg.memory_deltas * n,
                thinking_deltas=50,
                tool_updates=10 * n,
                status_lines=cfg.memory_deltas // 2 * n,
                answer_chars=cfg.memory_chars,
            )
        )
        for n in (1, f)
    )
    return short, long


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def quantile(values: Sequence[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def timed(func: Callable[[], object]) -> float:
    """Seconds one call of ``func`` takes (after a garbage collection, outside the timing)."""
    gc.collect()
    start = time.perf_counter()
    func()
    return time.perf_counter() - start


@dataclass
class Row:
    """One line of the results table: a figure, its baseline, and how they compare."""

    section: str
    figure: str
    project: str
    baseline: str
    ratio: str
    notes: str = ""


@dataclass
class Results:
    rows: list[Row] = field(default_factory=list)
    facts: dict[str, object] = field(default_factory=dict)

    def add(self, *args: str, **kwargs: str) -> None:
        row = Row(*args, **kwargs)
        self.rows.append(row)
        print(
            f"  {row.figure}: {row.project}  |  baseline {row.baseline}  |  {row.ratio}", flush=True
        )


HEADERS = ("benchmark", "figure", "project (median)", "baseline (median)", "ratio", "notes")


def _cells(row: Row) -> tuple[str, ...]:
    return (row.section, row.figure, row.project, row.baseline, row.ratio, row.notes)


def text_table(rows: Sequence[Row]) -> str:
    """The table for a terminal: aligned columns (notes last, not padded)."""
    cells = [HEADERS, *(_cells(r) for r in rows)]
    widths = [max(len(c[i]) for c in cells) for i in range(len(HEADERS) - 1)]
    lines = []
    for n, c in enumerate(cells):
        lines.append("  ".join(c[i].ljust(widths[i]) for i in range(len(widths))) + "  " + c[-1])
        if n == 0:
            lines.append("  ".join("-" * w for w in widths) + "  " + "-" * 5)
    return "\n".join(lines)


def markdown_table(rows: Sequence[Row]) -> str:
    def esc(text: str) -> str:
        return text.replace("|", "\\|")

    lines = ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    lines += ["| " + " | ".join(esc(c) for c in _cells(r)) + " |" for r in rows]
    return "\n".join(lines)


def fmt_s(seconds: float) -> str:
    """A duration with a sensible unit."""
    if seconds != seconds:  # NaN
        return "n/a"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms" if seconds < 0.1 else f"{seconds * 1e3:.0f} ms"
    return f"{seconds:.2f} s"


def fmt_count(n: float) -> str:
    if n >= 1e6:
        return f"{n / 1e6:.2f}M"
    if n >= 1e4:
        return f"{n / 1e3:.1f}k"
    return f"{n:.0f}"


def rss_of(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM of a process, in bytes (Linux /proc)."""
    out: dict[str, int] = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0]) * 1024
    return out


def machine() -> dict[str, str]:
    """What the numbers were measured on."""
    import platform
    import shutil
    import subprocess

    cpu = "unknown"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = "unknown"
    try:
        with open("/proc/meminfo", encoding="ascii") as info:
            for line in info:
                if line.startswith("MemTotal:"):
                    mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                    break
    except OSError:
        pass
    node = "not found"
    if shutil.which("node"):
        node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    try:
        import msgspec

        msgspec_version = msgspec.__version__
    except ImportError:
        msgspec_version = "not installed (stdlib path only)"
    return {
        "nproc": str(os.cpu_count()),
        "cpu": cpu,
        "memory": mem,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "node": node,
        "msgspec": msgspec_version,
    }
