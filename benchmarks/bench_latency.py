"""Figure 2's guard: a ``1+1`` cell while the 145 MB stream comes in, against an idle kernel;
and the trade the reader's turn sets between that and how fast the stream is read.

Each cell is timed twice: by the client, from ``execute_request`` to the reply and the idle
status (what a person waits), and on the kernel's side, from the request's sending to the
idle status's stamp in the kernel (the client's own work left out: on this 2-CPU machine the
test client draws every patch with the page's module in Node.js while it waits).
"""

from __future__ import annotations

import datetime as dt
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median
from typing import TYPE_CHECKING

from atomic_jupyter.transport.reader_turns import DEFAULT_TURN_S

from .common import Config, Results, fmt_s, quantile

if TYPE_CHECKING:
    from tests.harness.kernel_client import BrowserLikeKernel

    from .bench_kernel import Rig

#: The reader's turns compared (milliseconds): never (as before issue 41), Python's own switch
#: interval (5), and shorter ones.
TURNS_MS = (math.inf, 5.0, 2.0, 1.0, 0.5, 0.25, 0.0)


@dataclass(frozen=True)
class CellTime:
    """One ``1+1`` cell: as the client saw it, and on the kernel's side."""

    client: float
    kernel: float


@dataclass
class Latencies:
    """Cells on the idle kernel and while a stream came in, and how long each stream took."""

    idle: list[CellTime] = field(default_factory=list)
    busy: list[CellTime] = field(default_factory=list)
    #: Seconds from the stand-in's first write to the reader's handling of ``agent_end``.
    streams: list[float] = field(default_factory=list)

    def ratio(self, side: str = "client") -> float:
        """The median busy cell against the median idle one."""
        return median(getattr(c, side) for c in self.busy) / median(
            getattr(c, side) for c in self.idle
        )

    def median_ms(self, which: str, side: str = "client") -> float:
        return median(getattr(c, side) for c in getattr(self, which)) * 1e3


def timed_cell(k: BrowserLikeKernel) -> CellTime:
    """Run ``1+1``; how long the client waited, and how long after its sending the kernel
    stamped the idle status (both clocks are this machine's)."""
    first = len(k.messages)
    sent = dt.datetime.now(dt.timezone.utc)
    start = time.monotonic()
    result = k.execute("1+1")
    client = time.monotonic() - start
    assert result.result == "2", result
    (idle,) = [
        m["header"]["date"]
        for m in k.messages[first:]
        if m["parent_header"].get("msg_id") == result.msg_id
        and m["header"]["msg_type"] == "status"
        and m["content"]["execution_state"] == "idle"
    ]
    return CellTime(client, (idle - sent).total_seconds())


def _replayed(r: Rig) -> tuple[float, float]:
    """The last replay's first write (the stand-in's clock, this machine's monotonic one) and
    the seconds from it to the reader's handling of ``agent_end``."""
    (record,) = [x for x in r.records() if x["kind"] == "replay"]
    return record["t_first"], r.stamps()["agent_end"] - record["t_first"]


def cells_during_stream(r: Rig, path: Path, into: Latencies) -> None:
    """Replay the stream and run ``1+1`` cells back to back until it is done; keep the cells
    that started after its first write."""
    transcript = r.prompt(f"replay {path}")
    cells: list[tuple[float, CellTime]] = []
    while r.state_of(transcript) != "done":
        start = time.monotonic()
        cells.append((start, timed_cell(r.k)))
        r.k.drain(0)
    done = time.monotonic()
    first, took = _replayed(r)
    into.busy += [cell for start, cell in cells if first - 0.005 <= start < done]
    into.streams.append(took)


def stream_alone(r: Rig, path: Path) -> float:
    """Seconds the reader took over the stream with no cell running."""
    r.wait_done(r.prompt(f"replay {path}"))
    return _replayed(r)[1]


def idle_cells(cfg: Config, r: Rig) -> list[CellTime]:
    """One batch of ``1+1`` cells on the idle kernel (a repetition's share)."""
    return [timed_cell(r.k) for _ in range(max(2, cfg.idle_cells // cfg.latency_reps))]


def guard(cfg: Config, r: Rig, path: Path) -> Latencies:
    """Figure 2's guard, in the default session (the default turn): idle cells and cells
    during the stream, taking turns."""
    found = Latencies()
    for _ in range(cfg.latency_reps):
        found.idle += idle_cells(cfg, r)
        cells_during_stream(r, path, found)
    return found


def report_guard(results: Results, found: Latencies) -> None:
    busy = [c.client for c in found.busy]
    results.add(
        "2 end to end",
        "`1+1` cell latency while the stream runs",
        f"{fmt_s(median(busy))} (p90 {fmt_s(quantile(busy, 0.9))}, n={len(busy)})",
        f"idle kernel: {fmt_s(median(c.client for c in found.idle))} (n={len(found.idle)})",
        f"{found.ratio():.1f}×",
        "execute_request to execute_reply + idle, through jupyter_client (the client draws "
        f"every patch meanwhile); the kernel's side alone: {found.median_ms('busy', 'kernel'):.1f} "
        f"against {found.median_ms('idle', 'kernel'):.1f} ms, {found.ratio('kernel'):.1f}×; "
        f"reader turn {DEFAULT_TURN_S * 1e3:g} ms (the default)",
    )


def set_turn(r: Rig, turn_ms: float) -> None:
    """Give the default session's running reader the turn ``turn_ms`` (a benchmark's reach
    into the process; ``AtomicAgent.reader_turn_ms`` is read when an agent starts)."""
    r.k.execute(
        f"_baj.session().client.process.reader_turns.turn_s = float({str(turn_ms)!r}) / 1000"
    )


def turns(cfg: Config, results: Results, r: Rig, path: Path) -> None:
    """The trade: for each turn of :data:`TURNS_MS`, in the session and kernel of the guard
    (the turns take turns in each repetition), the stream read alone and ``1+1`` during it."""
    alone: dict[float, list[float]] = {turn: [] for turn in TURNS_MS}
    found = {turn: Latencies() for turn in TURNS_MS}
    try:
        for _ in range(cfg.latency_reps):
            for turn in TURNS_MS:
                set_turn(r, turn)
                alone[turn].append(stream_alone(r, path))
        # As the guard: idle cells, then cells during a stream (no stream alone in between,
        # whose last renders would fall among the idle cells).
        for _ in range(cfg.latency_reps):
            for turn in TURNS_MS:
                set_turn(r, turn)
                found[turn].idle += idle_cells(cfg, r)
                cells_during_stream(r, path, found[turn])
    finally:
        set_turn(r, DEFAULT_TURN_S * 1e3)
    off = median(alone[TURNS_MS[0]])
    for turn in TURNS_MS:
        f = found[turn]
        results.add(
            "2 end to end",
            ("no reader turns (as before)" if turn == math.inf else f"reader turn {turn:g} ms")
            + (" (the default)" if turn == DEFAULT_TURN_S * 1e3 else "")
            + ": `1+1` while the stream runs, against idle",
            f"{f.ratio():.2f}× ({f.median_ms('busy'):.1f} against {f.median_ms('idle'):.1f} ms)",
            f"the stream read alone in {fmt_s(median(alone[turn]))}",
            f"{median(alone[turn]) / off:.2f}× without turns",
            f"kernel's side {f.ratio('kernel'):.2f}×; with the cells running the stream took "
            f"{fmt_s(median(f.streams))}; n={len(f.busy)} cells during streams",
        )
    results.facts["reader_turns"] = {
        str(turn): {
            "stream_alone_s": alone[turn],
            "stream_with_cells_s": found[turn].streams,
            "idle_1p1": [(c.client, c.kernel) for c in found[turn].idle],
            "busy_1p1": [(c.client, c.kernel) for c in found[turn].busy],
        }
        for turn in TURNS_MS
    }
