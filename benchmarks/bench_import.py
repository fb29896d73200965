"""Benchmark 12: what importing the package costs, against importing ipywidgets.

(project) ``import atomic_jupyter``; ``import atomic_jupyter.cli``; and what running
          ``atomic-jupyter install-agent --help`` imports (the parser's choices and defaults
          come from the installer's package); each in a fresh interpreter.
(baseline) ``import ipywidgets`` in a fresh interpreter of the same run.

Each child runs with ``-X importtime``: the figure is the sum of the cumulative times of the
top-level imports that the statement made (the interpreter's own start-up imports come before
a marker the child writes, and are left out; for an import statement, the child's
``time.perf_counter`` around it agrees with that sum to some 10 µs). The notes give the whole
child's wall-clock time, from its start to its exit, the modules it loaded, and which of the
notebook's libraries (ipywidgets, IPython, anywidget, ipykernel, traitlets) are in
``sys.modules`` afterwards. The statements take turns within each repetition. The children
run in a temporary folder, so that ``PYTHONPATH`` chooses the ``atomic_jupyter`` measured
(``benchmarks/__init__.py``); each reports its ``__file__``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

from .common import Config, Results, fmt_s, median

SECTION = "12 import"
#: The libraries a notebook needs and the command line should not load.
NOTEBOOK_LIBRARIES = ("ipywidgets", "IPython", "anywidget", "ipykernel", "traitlets")
MARK = "-- atomic-jupyter bench: the statement starts here --"
#: What each child does after the marker: the statements measured, and the baseline's.
HELP = "atomic-jupyter install-agent --help"
STATEMENTS = {
    "import atomic_jupyter": "import atomic_jupyter",
    "import atomic_jupyter.cli": "import atomic_jupyter.cli",
    HELP: (
        "from atomic_jupyter.cli import main\n"
        "try:\n    main(['install-agent', '--help'])\nexcept SystemExit:\n    pass"
    ),
}
BASELINE = "import ipywidgets"

CHILD = """\
import sys, time
sys.stderr.write({mark!r} + "\\n")
sys.stderr.flush()
started = time.perf_counter()
{statement}
seconds = time.perf_counter() - started
import json
print(json.dumps({{
    "seconds": seconds,
    "file": getattr(sys.modules.get("atomic_jupyter"), "__file__", None),
    "modules": len(sys.modules),
    "loaded": [name for name in {watched!r} if name in sys.modules],
}}))
"""


def importtime_total(stderr: str) -> float:
    """Seconds: the cumulative times of the top-level imports after the marker."""
    _, _, after = stderr.partition(MARK)
    total_us = 0
    for line in after.splitlines():
        if not line.startswith("import time:"):
            continue
        _self, cumulative, name = line[len("import time:") :].split("|", 2)
        if cumulative.strip().isdigit() and not name[1:].startswith(" "):  # top level
            total_us += int(cumulative)
    return total_us / 1e6


def measure(statement: str, cwd: str) -> dict[str, object]:
    """One fresh interpreter running ``statement``: its figures."""
    code = CHILD.format(mark=MARK, statement=statement, watched=NOTEBOOK_LIBRARIES)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=True,
        timeout=120,
    )
    found = json.loads(done.stdout.strip().splitlines()[-1])
    found["process"] = time.perf_counter() - started
    found["importtime"] = importtime_total(done.stderr)
    return found


def run(cfg: Config, results: Results) -> None:
    """Measure the imports, taking turns, ``cfg.import_reps`` times each."""
    print("12. import time", flush=True)
    statements = {**STATEMENTS, BASELINE: BASELINE}
    runs: dict[str, list[dict[str, object]]] = {label: [] for label in statements}
    with tempfile.TemporaryDirectory(prefix="bench-import-") as cwd:
        for statement in statements.values():  # a warm-up: files in the page cache, .pyc
            measure(statement, cwd)
        for _ in range(cfg.import_reps):
            for label, statement in statements.items():
                runs[label].append(measure(statement, cwd))

    def figure(label: str, key: str) -> float:
        return median([float(str(r[key])) for r in runs[label]])

    base, base_wall = figure(BASELINE, "importtime"), figure(BASELINE, "process")
    base_last = runs[BASELINE][-1]
    results.facts["import"] = {m: runs[m] for m in runs}
    for label in STATEMENTS:
        last = runs[label][-1]
        names = last["loaded"]
        loaded = ", ".join(names) if isinstance(names, list) and names else "none"
        ours, wall = figure(label, "importtime"), figure(label, "process")
        what = f"what `{label}` imports" if label == HELP else f"`{label}`"
        results.add(
            SECTION,
            f"{what} in a fresh interpreter (-X importtime)",
            fmt_s(ours),
            f"`{BASELINE}`: {fmt_s(base)}",
            f"{ours / base:.2f}×",
            notes=(
                f"{cfg.import_reps} reps each, taking turns; whole interpreter, start to exit, "
                f"{fmt_s(wall)} vs {fmt_s(base_wall)}; {last['modules']} modules in sys.modules vs "
                f"{base_last['modules']}; of {', '.join(NOTEBOOK_LIBRARIES)} loaded: {loaded}; "
                f"from {os.path.dirname(str(last['file']))}"
            ),
        )
