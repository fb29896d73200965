"""The notebooks as ``make lab`` serves them: opening and saving one leaves ``git status``
clean, and the file browser shows the notebooks and their data, not the notebook checks'
``conftest.py``.

JupyterLab writes into a notebook it opens the running kernel's ``kernelspec`` and
``language_info`` (the Python version included), marks it changed when they differ from the
file's, and saves it through the Jupyter server's contents manager (the contents API's PUT).
The notebooks are committed in that form (scripts/make_notebooks.py), and make lab's server
(scripts/lab.sh, with scripts/lab-config/) keeps a notebook's Python version when that is all a
save would change, so another Python changes nothing either:

- every notebook saved through a ``FileContentsManager`` configured as make lab configures it,
  with the metadata JupyterLab takes from a real kernel, keeps its bytes; and with another
  Python's version too;
- ``scripts/lab.sh`` itself, run on a copy of the checkout's scripts and notebooks: its
  contents API lists no ``conftest.py``, and a PUT of the quickstart as JupyterLab saves it
  keeps the file's bytes.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import start_new_kernel
from jupyter_server.services.contents.manager import ContentsManager
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from tests.harness.support import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
LAB_CONFIG = ROOT / "scripts" / "lab-config"
#: Seconds for JupyterLab to answer on its port.
SERVER_START_S = 90


@pytest.fixture(scope="module")
def kernel_metadata() -> dict[str, Any]:
    """What JupyterLab writes into a notebook it opens with the ``python3`` kernel: the
    kernel's spec and the ``language_info`` of its ``kernel_info`` reply (a real kernel's)."""
    spec = KernelSpecManager().get_kernel_spec("python3")
    manager, client = start_new_kernel(kernel_name="python3")
    try:
        reply = client.kernel_info(reply=True, timeout=60)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    return {
        "kernelspec": {
            "display_name": spec.display_name,
            "language": spec.language,
            "name": "python3",
        },
        "language_info": reply["content"]["language_info"],
    }


def lab_contents_manager(root: Path) -> Any:
    """The contents manager of make lab's server (its configuration's class, configured) on
    ``root``, with signatures kept in memory, not in the user's data directory."""
    config = PyFileConfigLoader("jupyter_server_config.py", path=str(LAB_CONFIG)).load_config()
    config.merge(Config({"NotebookNotary": {"db_file": ":memory:"}}))
    manager_class = config.ServerApp.contents_manager_class
    assert issubclass(manager_class, ContentsManager)
    return manager_class(root_dir=str(root), config=config)


def opened_by_jupyterlab(content: dict[str, Any], metadata: dict[str, Any]) -> None:
    """The notebook's metadata once JupyterLab has connected it to its kernel."""
    content["metadata"]["kernelspec"] = dict(metadata["kernelspec"])
    content["metadata"]["language_info"] = json.loads(json.dumps(metadata["language_info"]))


@pytest.mark.kernel
@pytest.mark.one_line  # the notebooks' metadata: no agent
@pytest.mark.parametrize("version", ["this Python's", "another Python's"])
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[path.name for path in NOTEBOOKS])
def test_saving_a_notebook_as_jupyterlab_does_keeps_its_bytes(
    tmp_path: Path, kernel_metadata: dict[str, Any], notebook: Path, version: str
) -> None:
    shutil.copy(notebook, tmp_path)
    committed = notebook.read_bytes()
    metadata = json.loads(json.dumps(kernel_metadata))
    if version == "another Python's":
        metadata["language_info"]["version"] = "3.99.1"
    manager = lab_contents_manager(tmp_path)
    model = asyncio.run(manager.get(notebook.name, content=True, type="notebook"))
    content = json.loads(json.dumps(model["content"]))  # as the page sends it: plain JSON
    opened_by_jupyterlab(content, metadata)
    saving = {"type": "notebook", "format": "json", "content": content}
    asyncio.run(manager.save(saving, notebook.name))
    saved = (tmp_path / notebook.name).read_bytes()
    assert saved.decode() == committed.decode(), (
        f"saving {notebook.name} as JupyterLab does changed it: commit the metadata JupyterLab "
        "writes (scripts/make_notebooks.py)"
    )


# --------------------------------------------------------------------------- scripts/lab.sh


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class LabLaunch:
    """``scripts/lab.sh`` running on a copy of the checkout (its scripts and notebooks, and
    this environment as its ``.venv``), with Jupyter's own folders in ``scratch``."""

    def __init__(self, scratch: Path) -> None:
        self.checkout = scratch / "checkout"
        (self.checkout / "scripts").mkdir(parents=True)
        for name in ("lab.sh", "lab-settings", "lab-config"):
            source = ROOT / "scripts" / name
            target = self.checkout / "scripts" / name
            if source.is_dir():
                shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy2(source, target)
        shutil.copytree(ROOT / "notebooks", self.checkout / "notebooks")
        (self.checkout / ".venv").symlink_to(sys.prefix, target_is_directory=True)
        self.port = free_port()
        self.token = secrets.token_hex(16)
        env = {key: value for key, value in os.environ.items() if not key.startswith("JUPYTER")}
        for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR"):
            folder = scratch / name.lower()
            folder.mkdir()
            env[name] = str(folder)
        env.update(
            PORT=str(self.port),
            JUPYTER_TOKEN=self.token,
            JUPYTER_PLATFORM_DIRS="1",
            JUPYTERLAB_SETTINGS_DIR=str(scratch / "lab-user-settings"),
            JUPYTERLAB_WORKSPACES_DIR=str(scratch / "lab-workspaces"),
            ATOMIC_AGENT_COMMAND="false",  # no kernel starts here: no agent looked for
        )
        self.log_path = scratch / "lab.log"
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                ["bash", str(self.checkout / "scripts" / "lab.sh"), "quickstart.ipynb"],
                cwd=scratch,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + SERVER_START_S
        while True:
            try:
                self.request("GET", "/api/status")
                return
            except (urllib.error.URLError, ConnectionError, OSError):
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"scripts/lab.sh did not serve:\n{self.log()}") from None
                time.sleep(0.2)

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")[-4000:]

    def request(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}",
            data=data,
            method=method,
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=30)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabLaunch]:
    launch = LabLaunch(tmp_path_factory.mktemp("make-lab"))
    try:
        yield launch
    finally:
        launch.stop()


def test_the_file_browser_lists_the_notebooks_and_not_conftest(lab: LabLaunch) -> None:
    listing = lab.request("GET", "/api/contents/?content=1")
    names = sorted(entry["name"] for entry in listing["content"])
    assert "quickstart.ipynb" in names and "sales.csv" in names, names
    assert (lab.checkout / "notebooks" / "conftest.py").is_file()
    assert "conftest.py" not in names, names


@pytest.mark.kernel
@pytest.mark.one_line  # the notebooks' metadata: no agent
def test_saving_the_quickstart_from_another_python_keeps_its_bytes(
    lab: LabLaunch, kernel_metadata: dict[str, Any]
) -> None:
    path = lab.checkout / "notebooks" / "quickstart.ipynb"
    committed = path.read_bytes()
    model = lab.request("GET", "/api/contents/quickstart.ipynb?type=notebook&content=1")
    metadata = json.loads(json.dumps(kernel_metadata))
    metadata["language_info"]["version"] = "3.99.1"
    opened_by_jupyterlab(model["content"], metadata)
    body = {"type": "notebook", "format": "json", "content": model["content"]}
    lab.request("PUT", "/api/contents/quickstart.ipynb", body)
    assert path.read_bytes().decode() == committed.decode()
