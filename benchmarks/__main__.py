"""Run every benchmark and print one table: ``python -m benchmarks [--quick]``.

Each figure is measured side by side with its baseline in the same run, over several
repetitions, and reported as the median and the ratio. The same table is printed again at the
end as Markdown, to paste into BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import atomic_jupyter

from . import (
    bench_agent_code,
    bench_big_answers,
    bench_busy,
    bench_costs,
    bench_day,
    bench_decode,
    bench_hub,
    bench_idle,
    bench_import,
    bench_kernel,
    bench_lifecycle,
    bench_notebook_edits,
    bench_startup,
)
from .common import Config, Results, machine, markdown_table, text_table

SECTIONS = (
    "decode",
    "kernel",
    "startup",
    "costs",
    "lifecycle",
    "agent_code",
    "import",
    "notebook_edits",
    "idle",
    "hub",
    "day",
    "busy",
    "big_answers",
)


def _load() -> str:
    try:
        one, five, _fifteen = os.getloadavg()
    except OSError:
        return "n/a"
    return f"{one:.2f} (1 min), {five:.2f} (5 min)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument(
        "--quick", action="store_true", help="a short smoke run: fewer repetitions, smaller streams"
    )
    parser.add_argument(
        "--only", choices=SECTIONS, action="append", help="run only these sections (repeatable)"
    )
    parser.add_argument(
        "--json", metavar="PATH", help="also write every raw measurement to PATH as JSON"
    )
    args = parser.parse_args(argv)
    cfg = Config.make(args.quick)
    sections = args.only or list(SECTIONS)
    results = Results()
    info = machine()
    print("atomic-jupyter benchmarks" + (" (quick)" if cfg.quick else ""), flush=True)
    print("  " + ", ".join(f"{k}: {v}" for k, v in info.items()), flush=True)
    load_before = _load()
    print(f"  atomic_jupyter: {atomic_jupyter.__file__}", flush=True)
    print(f"  load average before: {load_before}", flush=True)
    started = time.monotonic()

    stream = None
    if "decode" in sections or "kernel" in sections:
        stream = bench_decode.run(cfg, results) if "decode" in sections else None
    if "kernel" in sections:
        if stream is None:
            from .stream import StreamSpec, build_stream

            stream = build_stream(
                StreamSpec(
                    text_deltas=cfg.text_deltas,
                    thinking_deltas=cfg.thinking_deltas,
                    tool_updates=cfg.tool_updates,
                    status_lines=cfg.status_lines,
                )
            )
        bench_kernel.run(cfg, results, stream)
    if "startup" in sections:
        bench_startup.run(cfg, results)
    if "costs" in sections:
        bench_costs.run(cfg, results)
    if "lifecycle" in sections:
        bench_lifecycle.run(cfg, results)
    if "agent_code" in sections:
        bench_agent_code.run(cfg, results)
    if "import" in sections:
        bench_import.run(cfg, results)
    if "notebook_edits" in sections:
        bench_notebook_edits.run(cfg, results)
    if "idle" in sections:
        bench_idle.run(cfg, results)
    if "hub" in sections:
        bench_hub.run(cfg, results)
    if "day" in sections:
        bench_day.run(cfg, results)
    if "busy" in sections:
        bench_busy.run(cfg, results)
    if "big_answers" in sections:
        bench_big_answers.run(cfg, results)

    elapsed = time.monotonic() - started
    load_after = _load()
    order = {
        name: i
        for i, name in enumerate(
            [
                "1 stream decode",
                "2 end to end",
                "3 dialog round trip",
                "4 start-up",
                "5 memory",
                bench_costs.CLICKS,
                bench_costs.UPDATES,
                bench_costs.HUGE,
                "6 lifecycle",
                "7 record size",
                bench_agent_code.SECTION,
                bench_import.SECTION,
                bench_notebook_edits.SECTION,
                bench_idle.SECTION,
                bench_hub.SECTION,
                bench_day.SECTION,
                bench_busy.BUSY,
                bench_big_answers.SECTION,
            ]
        )
    }
    rows = sorted(results.rows, key=lambda r: order.get(r.section, 99))
    print()
    print(text_table(rows))
    print()
    print(
        f"{'quick' if cfg.quick else 'full'} run: {elapsed:.0f} s; load average before "
        f"{load_before}, after {load_after}"
    )
    print()
    print("Markdown:")
    print()
    print(markdown_table(rows))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(
                {
                    "config": cfg.__dict__,
                    "machine": info,
                    "package": atomic_jupyter.__file__,
                    "seconds": elapsed,
                    "load_before": load_before,
                    "load_after": load_after,
                    "rows": [r.__dict__ for r in rows],
                    "facts": results.facts,
                },
                f,
                indent=1,
                default=str,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
