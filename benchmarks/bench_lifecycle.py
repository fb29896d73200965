"""Benchmarks 6 and 7: what a long session leaves behind, and how big its records are.

6. Widget models and kernel memory after 100 ``%%atomic_agent --wait`` runs on the demo model
   (the real pinned agent), against the same figures after one run, in the same kernel: each
   finished run's widgets are closed once its output is replaced by its record, so the count
   should not grow. Also the models left after ``%atomic_agent stop``, against the models
   before the session started.
7. Record size: the saved HTML of the quickstart's records and of a 512 KB Markdown answer
   with code blocks, against the text they show.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from tests.harness.kernel_client import BrowserLikeKernel
from tests.harness.widget_text import shown_text

from .common import ROOT, Config, Results, rss_of

#: Prompts of the demo model that end without a person: an answer, and a tool call.
PROMPTS = ("hello! who are you?", "list the files here")


def _models(k: BrowserLikeKernel) -> int:
    code = "import ipywidgets.widgets.widget as _w\nprint(len(_w._instances))"
    return int(k.execute(code).stdout)


def _run(k: BrowserLikeKernel, prompt: str) -> None:
    k.execute(f"%%atomic_agent --wait\n{prompt}", timeout=120)


def lifecycle(cfg: Config, results: Results, workdir: Path) -> None:
    print("6. widget models after many runs", flush=True)
    runs = 20 if cfg.quick else 100
    with BrowserLikeKernel(workdir, env={"PI_CODING_AGENT_DIR": str(workdir / "home")}) as k:
        k.execute("%load_ext atomic_jupyter")
        before = _models(k), len(k.models)
        k.execute("%atomic_agent start --demo", timeout=120)
        pid = int(k.execute("import os; print(os.getpid())").stdout)
        _run(k, PROMPTS[0])
        one = _models(k), len(k.models), rss_of(pid)
        for index in range(runs - 1):
            _run(k, PROMPTS[index % len(PROMPTS)])
        many = _models(k), len(k.models), rss_of(pid)
        k.execute("%atomic_agent stop")
        stopped = _models(k), len(k.models)
    results.facts["lifecycle"] = {"before": before, "one": one, "many": many, "after_stop": stopped}
    results.add(
        "6 lifecycle",
        f"widget models after {runs} waited runs (kernel / page)",
        f"{many[0]} / {many[1]}",
        f"{one[0]} / {one[1]} after 1 run",
        f"{many[0] / one[0]:.2f}×",
        "demo model, real agent; the panel stays live, every finished run is its record",
    )
    mb = 1e6
    results.add(
        "6 lifecycle",
        f"kernel RSS after {runs} waited runs",
        f"{many[2]['VmRSS'] / mb:.0f} MB",
        f"{one[2]['VmRSS'] / mb:.0f} MB after 1 run",
        f"{(many[2]['VmRSS'] - one[2]['VmRSS']) / mb:+.1f} MB",
        "includes the records kept for re-sending at stop",
    )
    results.add(
        "6 lifecycle",
        "widget models after stop (kernel / page)",
        f"{stopped[0]} / {stopped[1]}",
        f"{before[0]} / {before[1]} before start",
        f"{stopped[0] - before[0]:+d} models",
        "",
    )


def _quickstart_records(workdir: Path) -> list[str]:
    import nbformat
    from nbclient import NotebookClient

    shutil.copy(ROOT / "notebooks" / "quickstart.ipynb", workdir)
    nb = nbformat.read(workdir / "quickstart.ipynb", as_version=4)
    NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(workdir)}}
    ).execute()
    return [
        output["data"]["text/html"]
        for cell in nb.cells
        for output in cell.get("outputs", [])
        if "atomic-record" in output.get("data", {}).get("text/html", "")
    ]


def long_answer_record(size: int) -> tuple[str, str]:
    """The record of a run whose answer is ``size`` characters of varied Markdown with code
    blocks, and that answer."""
    from atomic_jupyter.protocol.messages import AgentEvent
    from atomic_jupyter.session.runs import PromptRun
    from atomic_jupyter.ui.record import run_record
    from tests.harness.support import long_markdown

    answer = long_markdown(size)
    run = PromptRun("r", "write a long answer")
    message = {"role": "assistant", "content": [{"type": "text", "text": answer}]}
    for kind, fields in (
        ("agent_start", {}),
        ("message_start", {"message": {"role": "assistant", "content": []}}),
        ("message_end", {"message": message}),
        ("agent_end", {}),
    ):
        run.transcript.apply(AgentEvent(kind, fields))
    return run_record(run).html, answer


def record_size(cfg: Config, results: Results, workdir: Path) -> None:
    print("7. record size", flush=True)
    records = _quickstart_records(workdir)
    saved = sum(len(r) for r in records)
    shown = sum(len(shown_text(r)) for r in records)
    results.add(
        "7 record size",
        f"the quickstart's {len(records)} records: HTML / text shown",
        f"{saved:,} B",
        f"{shown:,} characters shown",
        f"{saved / shown:.2f}×",
        "goal: at most 3×",
    )
    record, answer = long_answer_record(128 << 10 if cfg.quick else 512 << 10)
    results.add(
        "7 record size",
        f"a {len(answer) >> 10} KB Markdown answer's record: HTML / answer",
        f"{len(record):,} B",
        f"{len(answer):,} characters ({len(shown_text(record)):,} shown)",
        f"{len(record) / len(answer):.2f}×",
        "code blocks, tables, lists, links; goal: at most 3×",
    )


def run(cfg: Config, results: Results) -> None:
    with tempfile.TemporaryDirectory(prefix="atomic-bench-life-") as tmp:
        workdir = Path(tmp)
        (workdir / "quickstart").mkdir()
        (workdir / "kernel").mkdir()
        record_size(cfg, results, workdir / "quickstart")
        lifecycle(cfg, results, workdir / "kernel")
