"""The sdist and the wheel of the checkout, built once per test run and shared by the modules
that check them (``tests/package/test_packaging.py``) and install them (``tests/package/test_install_anywhere.py``),
also across xdist workers: the first to ask builds them, under a lock, into the run's shared
temporary folder; the others wait for it and read what it left.

The build is ``python -m build --sdist --wheel`` of the checkout (:data:`BUILD`), isolated, into
a scratch folder: nothing is written into the checkout, and
:attr:`CheckoutDists.left_in_checkout` says whether that held.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from .support import ROOT

#: The build frontend, isolated, with uv making its build environments (``build[uv]``, a test
#: dependency): the same artifacts as with pip, each environment in a few seconds of CPU instead
#: of about twenty (jupyterlab and Node.js are the wheel's build requirements).
BUILD = (sys.executable, "-m", "build", "--installer", "uv")

#: What a build may leave in the checkout if it went wrong.
BUILD_FOLDERS = ("dist", "build")


@dataclass(frozen=True)
class CheckoutDists:
    """The sdist and the wheel built from the checkout."""

    sdist: Path
    wheel: Path
    #: ``dist/`` or ``build/`` folders that the build left in the checkout.
    left_in_checkout: list[str]


def _shared_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run's temporary folder that every xdist worker sees (a worker's own base folder is
    ``popen-gwN`` inside it)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def _build(out: Path) -> list[str]:
    before = {name for name in BUILD_FOLDERS if (ROOT / name).exists()}
    argv = [*BUILD, "--sdist", "--wheel", "--outdir", str(out), str(ROOT)]
    done = subprocess.run(argv, cwd=out, capture_output=True, text=True, timeout=540)
    assert done.returncode == 0, (
        f"{argv} failed ({done.returncode}):\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    )
    return sorted({name for name in BUILD_FOLDERS if (ROOT / name).exists()} - before)


def _only(folder: Path, pattern: str) -> Path:
    found = sorted(folder.glob(pattern))
    assert len(found) == 1, f"expected one {pattern} in {folder}, found {found}"
    return found[0]


def checkout_dists(tmp_path_factory: pytest.TempPathFactory) -> CheckoutDists:
    """The checkout's sdist and wheel: built by the first caller of the run, read by the rest."""
    shared = _shared_folder(tmp_path_factory)
    folder, said = shared / "checkout-dists", shared / "checkout-dists.json"
    with open(shared / "checkout-dists.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not said.exists():
            shutil.rmtree(folder, ignore_errors=True)  # a build that failed half-way
            folder.mkdir()
            said.write_text(json.dumps({"left_in_checkout": _build(folder)}))
    left = json.loads(said.read_text())["left_in_checkout"]
    return CheckoutDists(_only(folder, "*.tar.gz"), _only(folder, "*.whl"), left)
