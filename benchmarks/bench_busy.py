"""Benchmark 17 (issue 51): a click while a person's cell computes, against the same click on
an idle kernel, and the click's way to the agent against a bare ``ipywidgets.Button``.

One kernel (``BrowserLikeKernel``) runs the stand-in agent; the page's comm messages go over a
kernel subshell made with ``create_subshell_request``, as JupyterLab's do by default.

(a) **Click → answer drawn** (the dialog settled in the page's store of the run's output: its
    controls gone, its outcome in the block), with the kernel idle, and with a cell computing a
    busy Python loop on the main thread (``while not os.path.exists(flag): n += 1``), which
    holds the interpreter but every switch interval. Before issue 51 the busy figure was the
    cell's whole duration (the redraw waited for the main thread's loop); the loop here runs
    until the answer is drawn, so its own length is the figure.
(b) **Click → the agent's stdin** (the stand-in stamps the response line as it reads it), idle,
    against a bare ``ipywidgets.Button`` whose handler writes a line of the same size into a
    pipe read by a small process (figure 6's baseline), also sent over the subshell.

The variants take turns; times come from ``time.monotonic()`` (one clock for every process).
Nothing here asserts a speed; each click checks that the agent read "Alpha".
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path

from tests.harness.kernel_widgets import outcome_of

from .bench_costs import DialogRig
from .bench_kernel import dialog_button, rig
from .common import Config, Results, fmt_s, median, quantile

#: The section name of the table.
BUSY = "17 click during a cell"
#: What the busy cell computes until the flag file exists.
BUSY_CELL = "import os, time\nn = 0\nwhile not os.path.exists({flag!r}):\n    n += 1\n"


def _click_and_draw(d: DialogRig, workdir: Path, busy: bool) -> tuple[float, float]:
    """One dialog of the stand-in, clicked (with a busy cell running when ``busy``): (click →
    answer drawn, click → the agent read it)."""
    k, r = d.k, d.r
    transcript = r.prompt("dialogs 1 0")
    found = k.wait_for(
        lambda: dialog_button(k, transcript, "Benchmark dialog 0:"), timeout=60, what="a dialog"
    )
    assert found is not None
    dialog, index = found
    d._quiet()
    cell = flag = None
    if busy:
        flag = workdir / f"busy-{uuid.uuid4().hex}"
        cell = k.submit(BUSY_CELL.format(flag=str(flag)))
        k.wait_for(
            lambda: any(
                m["parent_header"].get("msg_id") == cell for m in k.iter_messages("execute_input")
            ),
            what="the busy cell to start",
        )
    t_click = time.monotonic()
    dialog.choose(index)
    said = outcome_of(k, dialog, timeout=30)
    t_drawn = time.monotonic()
    if busy:
        assert cell is not None and flag is not None
        assert not k.replied(cell), "the busy cell ended before the answer was drawn"
        flag.touch()
        k.collect(cell)
    assert said.startswith("→ Alpha"), said
    r.wait_done(transcript)
    (record,) = [x for x in r.records() if x["kind"] == "dialog"]
    assert record["answer"].get("value") == "Alpha", record
    return t_drawn - t_click, record["t_answer"] - t_click


def busy_clicks(cfg: Config, results: Results, workdir: Path) -> None:
    """Figure 17 (see the module's text)."""
    print("17. a click while a cell computes, over a kernel subshell", flush=True)
    reps = max(3, cfg.click_batch * cfg.click_batches // 2)
    with rig(workdir, "busy-click") as r:
        r.k.comm_subshell = r.k.create_subshell()
        d = DialogRig(r, workdir)
        try:
            _click_and_draw(d, workdir, busy=False)  # warm-up, not counted
            response_bytes = d.project(1)[0][2]
            d.start_bare(response_bytes)
            d.bare_clicks(1)
            drawn: dict[str, list[float]] = {"idle": [], "busy": []}
            stdin: dict[str, list[float]] = {"project": [], "bare": []}
            for rep in range(reps):
                order = ["idle", "busy", "bare"]
                order = order[rep % 3 :] + order[: rep % 3]
                for step in order:
                    if step == "bare":
                        stdin["bare"] += d.bare_clicks(1)
                        continue
                    to_draw, to_stdin = _click_and_draw(d, workdir, busy=step == "busy")
                    drawn[step].append(to_draw)
                    if step == "idle":
                        stdin["project"].append(to_stdin)
        finally:
            d.close()
    for name, values in (("drawn, cell computing", drawn["busy"]), ("drawn, idle", drawn["idle"])):
        print(
            f"  click → answer {name}: median {fmt_s(median(values))}, "
            f"p90 {fmt_s(quantile(values, 0.9))} (n={len(values)})",
            flush=True,
        )
    busy, idle = median(drawn["busy"]), median(drawn["idle"])
    results.add(
        BUSY,
        "click → answer drawn in the run's output: a cell computing / idle",
        fmt_s(busy),
        f"{fmt_s(idle)} idle",
        f"{busy / idle:.2f}×",
        f"median of {len(drawn['busy'])} each, over a subshell; goal < 100 ms; before issue 51: "
        "when the cell ends",
    )
    project, bare = median(stdin["project"]), median(stdin["bare"])
    results.add(
        BUSY,
        "click → agent stdin: a dialog's option / a bare Button (idle, over a subshell)",
        fmt_s(project),
        fmt_s(bare),
        f"{project / bare:.2f}×",
        f"median of {len(stdin['project'])} each; guard: <= 1.2×",
    )


def run(cfg: Config, results: Results) -> None:
    """Figure 17, in a folder of its own."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="atomic-bench-busy-") as tmp:
        busy_clicks(cfg, results, Path(tmp))
