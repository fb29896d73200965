"""The notebook checks of the test command fail on errors a reader would see.

nbval alone fails a cell only on an ``error`` output, but IPython prints a ``UsageError`` (a
magic used before ``%load_ext``) on stderr. notebooks/conftest.py closes that gap; these tests
run pytest with nbval, as the test command does, with that conftest loaded as a plugin
(``-p notebooks.conftest``), on small notebooks in a temporary folder.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tests.harness.support import ROOT

pytestmark = [pytest.mark.kernel, pytest.mark.one_line]  # nbval on small notebooks: no agent


def run_nbval(folder: Path, *sources: str) -> tuple[int, str, dict[int, str]]:
    """Run nbval on a notebook of these code cells: the exit code, the report, and each
    cell's outcome by number."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    path = folder / "check.ipynb"
    nbformat.write(nb, path)
    env = {key: value for key, value in os.environ.items() if key != "PYTEST_ADDOPTS"}
    done = subprocess.run(
        [
            sys.executable, "-m", "pytest", "--nbval-lax", "-p", "no:cacheprovider",
            "-p", "notebooks.conftest", "-c", str(ROOT / "pyproject.toml"),
            "--rootdir", str(ROOT), "-v", str(path),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=100,
    )  # fmt: skip
    report = done.stdout + done.stderr
    outcomes = {
        int(number): outcome
        for number, outcome in re.findall(r"::Cell (\d+) (PASSED|FAILED|ERROR)", report)
    }
    return done.returncode, report, outcomes


def test_a_cell_magic_used_before_load_ext_fails_with_the_usage_error(tmp_path: Path) -> None:
    code, report, outcomes = run_nbval(tmp_path, "%%atomic_agent\nhello")
    assert code == 1, report
    assert outcomes == {0: "FAILED"}, report
    assert "UsageError" in report, report
    assert "Cell magic `%%atomic_agent` not found" in report, report


def test_errors_printed_on_stderr_fail_their_cells(tmp_path: Path) -> None:
    code, report, outcomes = run_nbval(
        tmp_path,
        "%nonexistent_magic",
        "import traceback\n\ntry:\n    1 / 0\nexcept ZeroDivisionError:\n    traceback.print_exc()",
        'import sys\n\nprint("ERROR: the model could not be reached", file=sys.stderr)',
        'print("after the errors, a cell that is fine")',
    )
    assert code == 1, report
    assert outcomes == {0: "FAILED", 1: "FAILED", 2: "FAILED", 3: "PASSED"}, report
    assert "Line magic function `%nonexistent_magic` not found" in report, report
    assert "Traceback (most recent call last):" in report, report
    assert "ERROR: the model could not be reached" in report, report


def test_a_good_notebook_passes_with_notices_and_warnings_on_stderr(tmp_path: Path) -> None:
    code, report, outcomes = run_nbval(
        tmp_path,
        "%load_ext atomic_jupyter",
        'assert "atomic_agent" in get_ipython().magics_manager.magics["cell"]',
        # The notice atomic_jupyter/session/waiting.py writes on stderr, by design.
        'import sys\n\nprint("The agent exited with code 1 before the run ended.", file=sys.stderr)',
        'import warnings\n\nwarnings.warn("a warning is not an error")',
    )
    assert code == 0, report
    assert outcomes == dict.fromkeys(range(4), "PASSED"), report
