"""Benchmark 13: the agent working on the open notebook.

(a) Reading a 500-cell notebook: what ``notebook_read`` gives the model (characters, and the
    time :func:`~atomic_jupyter.notebook.notebook_text.cell_listing` takes), against the
    baseline of handing it the notebook's cells whole (their JSON, as the page sent them).
(b) From a prompt to the change visible in the cell: JupyterLab in headless Chromium, the
    offline demo model. From the prompt cell's run to the moment the diff is drawn in the
    cell (the model reads the notebook, then proposes the change: two tool calls), against
    the baseline of the ``python`` tool in the same notebook (``--kernel-code allow``): from
    its prompt's run to the code's output drawn in its card (one call). A card is drawn at a
    throttled pace and the change through the page's own link at once, so the moment a card
    appears is no start line: both are timed from the run. The page times both itself (a
    MutationObserver); each change is then rejected, so the notebook stays as it was.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .common import Config, Results, fmt_s, median

SECTION = "13 notebook edits"
CELLS = 500

#: In the page: from the next run of a cell (JupyterLab's ``notebook:run-cell``) to the first
#: moment ``target`` is in the cell ``index`` (or anywhere, without ``inCell``), as a
#: MutationObserver sees it; ``window.__ajWatch.took`` holds the milliseconds once seen.
WATCH = """([index, target, inCell]) => {
  const watch = (window.__ajWatch = { started: null, took: null });
  const cellOf = () =>
    document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell')[index];
  const look = () => {
    if (watch.started === null || watch.took !== null) return;
    const where = inCell ? cellOf() : document;
    if (where && where.querySelector(target)) {
      watch.took = performance.now() - watch.started;
      observer.disconnect();
    }
  };
  const observer = new MutationObserver(look);
  observer.observe(document.body, { childList: true, subtree: true, attributes: true });
  const onRun = (_, args) => {
    if (args.id !== 'notebook:run-cell' || watch.started !== null) return;
    watch.started = performance.now();
    window.jupyterapp.commands.commandExecuted.disconnect(onRun);
  };
  window.jupyterapp.commands.commandExecuted.connect(onRun);
  return true;
}"""


def _reading(cfg: Config, results: Results) -> None:
    from atomic_jupyter.notebook.notebook_text import cell_listing

    body = "\n".join(f"value_{{k}}_{line} = {line} * 2" for line in range(12))
    reply = {
        "cells": [
            {
                "id": f"cell{k:04d}",
                "type": "code" if k % 4 else "markdown",
                "source": body.format(k=k),
                "execution_count": k if k % 4 else None,
                "outputs": [{"type": "stream", "name": "stdout", "text": f"out {k}\n" * 5}],
                "running": False,
            }
            for k in range(CELLS)
        ]
    }
    reps = 3 if cfg.quick else 10
    ours: list[float] = []
    whole: list[float] = []
    listing = ""
    everything = ""
    for _ in range(reps):
        start = time.perf_counter()
        listing = cell_listing(reply).text
        ours.append(time.perf_counter() - start)
        start = time.perf_counter()
        everything = json.dumps(reply["cells"])
        whole.append(time.perf_counter() - start)
    shown = listing.count("--- cell ")
    results.add(
        SECTION,
        f"notebook_read of a {CELLS}-cell notebook: characters the model gets",
        f"{len(listing):,}",
        f"the cells' JSON: {len(everything):,}",
        f"{len(listing) / len(everything):.3f}×",
        notes=f"cells 1–{shown} shown, the rest named with the range to ask for",
    )
    results.add(
        SECTION,
        f"notebook_read of a {CELLS}-cell notebook: time to make the listing",
        fmt_s(median(ours)),
        f"json.dumps of the cells: {fmt_s(median(whole))}",
        f"{median(ours) / median(whole):.2f}×",
        notes=f"medians of {reps}",
    )


def _browser(cfg: Config, results: Results, scratch: Path) -> None:
    from playwright.sync_api import sync_playwright

    from tests.browser.browser_harness import (
        CHROMIUM,
        CHROMIUM_ARGS,
        LabServer,
        NotebookPage,
        write_notebook,
    )
    from tests.harness.plugin import agent_kernel_env
    from tests.harness.support import PINNED_AGENT

    reps = 2 if cfg.quick else 5
    cells = [
        ("start", "%load_ext atomic_jupyter\n%atomic_agent start --demo --kernel-code allow"),
        ("data", "import pandas as pd\ndf = pd.DataFrame({'a': [1, 2, 3]})"),
    ]
    for k in range(reps):
        cells.append((f"edit{k}", "%%atomic_agent\nchange cell 2 to `df = None`"))
        cells.append((f"python{k}", "%%atomic_agent\ndescribe $`df` and plot its first column"))
    home = scratch / "agent-home"  # empty: the agent never reads the person's own ~/.pi
    home.mkdir(parents=True, exist_ok=True)
    command = [str(PINNED_AGENT), "--no-session"]
    server = LabServer(scratch / "lab", sys.executable, agent_kernel_env(command, home))
    write_notebook(server.root / "bench.ipynb", [source for _, source in cells])
    server.start()
    edit: list[float] = []
    python: list[float] = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            nb = NotebookPage(page, "bench.ipynb", [name for name, _ in cells])
            page.goto(server.lab_url("bench.ipynb"))
            nb.wait_ready()
            nb.run("start")
            page.wait_for_selector(".jp-NotebookPanel[data-aj-link='open']", timeout=60_000)
            nb.run("data")
            for k in range(reps):
                page.evaluate(WATCH, [nb.names.index("data"), ".aj-proposal", True])
                nb.run(f"edit{k}")
                edit.append(_took(page))
                page.locator(".aj-proposal button.aj-proposal-reject").first.click()
                page.wait_for_selector(".aj-proposal", state="detached")
                done = ".atomic-tool.atomic-tool-done .atomic-tool-output"
                page.evaluate(WATCH, [nb.names.index(f"python{k}"), done, True])
                nb.run(f"python{k}")
                python.append(_took(page))
            browser.close()
    finally:
        server.stop()
    results.add(
        SECTION,
        "prompt run → the agent's change drawn in the cell (notebook_read, then notebook_edit)",
        fmt_s(median(edit)),
        f"prompt run → python's output drawn in its card (allowed): {fmt_s(median(python))}",
        f"{median(edit) / median(python):.2f}×",
        notes=(
            f"medians of {reps}, taking turns, JupyterLab in Chromium, the demo model; the "
            "page's own clock (a MutationObserver); the change needs two tool calls; python one, which runs describe() and draws a matplotlib figure"
        ),
    )


def _took(page: Any) -> float:
    """Seconds the page's watch measured (waiting for it to see its target)."""
    page.wait_for_function("() => window.__ajWatch.took !== null", timeout=60_000)
    return float(page.evaluate("() => window.__ajWatch.took")) / 1000


def run(cfg: Config, results: Results) -> None:
    _reading(cfg, results)
    with tempfile.TemporaryDirectory(prefix="atomic-bench-notebook-") as tmp:
        _browser(cfg, results, Path(tmp))
