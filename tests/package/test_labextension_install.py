"""The JupyterLab extension in the environment the tests run in (``make setup``'s editable
install): JupyterLab lists it as enabled and OK, from this environment's own
``share/jupyter/labextensions/``, and it is the build of the checkout's current sources.

``make setup`` reinstalls the package whenever a source of the extension changes (the Makefile's
``LABEXTENSION_SOURCES``), and the install copies the build there as a wheel's shared data does
(``pyproject.toml``'s ``[tool.hatch.build.targets.wheel.shared-data]``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import hatch_build

NAME = "atomic-jupyter"
#: Where this environment's extensions are: the venv's (sys.prefix) data directory.
INSTALLED = Path(sys.prefix) / "share" / "jupyter" / "labextensions"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def labextension_list(tmp_path: Path) -> str:
    """``jupyter labextension list`` of this environment, without the user's own Jupyter
    directories (their config could disable an extension, their data dir hold another copy)."""
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_DATA_DIR": str(tmp_path / "data"),
        "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "settings"),
        "JUPYTER_PLATFORM_DIRS": "1",
    }
    jupyter = Path(sys.executable).parent / "jupyter"
    done = subprocess.run(
        [str(jupyter), "labextension", "list"],
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    listing = ANSI.sub("", done.stdout + done.stderr)
    assert done.returncode == 0, listing
    return listing


def test_jupyterlab_lists_the_extension_enabled_and_ok_from_this_environment(tmp_path):
    listing = labextension_list(tmp_path)
    ours = [line.strip() for line in listing.splitlines() if line.strip().startswith(f"{NAME} ")]
    assert len(ours) == 1, f"{NAME} is not listed once:\n{listing}"
    assert ours[0] == f"{NAME} v{version(NAME)} enabled OK (python, {NAME})", listing
    # ... in this environment's own folder: the folder is the unindented line above ours.
    lines = listing.splitlines()
    above = lines[: next(i for i, line in enumerate(lines) if line.strip() == ours[0])]
    folders = [line for line in above if line and not line[0].isspace()]
    assert folders and folders[-1] == str(INSTALLED), listing


def test_the_installed_extension_is_the_build_of_the_current_sources():
    assert hatch_build.is_up_to_date(), (
        f"the extension's build in {hatch_build.OUTPUT} is older than its sources in "
        f"{hatch_build.SOURCE}: run `make setup`, which rebuilds and reinstalls it"
    )
    installed = INSTALLED / NAME
    built = hatch_build.OUTPUT
    package = json.loads((installed / "package.json").read_text())
    assert package == json.loads((built / "package.json").read_text()), (
        f"{installed} is not the checkout's build: run `make setup`"
    )
    assert (installed / package["jupyterlab"]["_build"]["load"]).is_file()
    assert sorted(p.name for p in (installed / "static").iterdir()) == sorted(
        p.name for p in (built / "static").iterdir()
    )
    install = json.loads((installed / "install.json").read_text())
    assert install["packageName"] == NAME
