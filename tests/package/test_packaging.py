"""Packaging: the sdist and the wheel as PyPI and pip see them, and the first look of ``make lab``.

The module takes the sdist and the wheel built once per run from the checkout
(:mod:`tests.harness.checkout_dists`: ``python -m build --sdist --wheel``, isolated, into a
scratch folder: nothing is written into the checkout), then builds a second wheel from the
unpacked sdist, the way pip builds from an sdist. The tests check them as an upload would (``twine check --strict``), read the wheel's metadata as pip does, and compare the
two wheels member by member. Each wheel build builds the JupyterLab extension from the sdist's
``labextension/`` (``hatch_build.py``: ``npm ci``, ``tsc``, ``build-labextension``), which the
wheel ships as shared data.

``scripts/lab.sh`` is then started as ``make lab`` starts it (on a free port, with a fresh token,
with private Jupyter directories) to check that JupyterLab's default for the news question is
"no" on that launch only, and that a person's own setting still wins.
"""

from __future__ import annotations

import configparser
import email.message
import email.parser
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import tarfile
import threading
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.harness.checkout_dists import BUILD, checkout_dists
from tests.harness.support import ROOT

# Isolated builds install hatchling from PyPI; a loaded machine needs a while.
pytestmark = [pytest.mark.build, pytest.mark.timeout(600)]

PACKAGE = "atomic_jupyter"
#: The pinned agents the installer reads from the installed package.
PIN_FILES = [
    f"{PACKAGE}/agent_pins/{line}/{name}"
    for line in ("current", "0.73")
    for name in ("package.json", "package-lock.json")
]
#: The files at the top of the sdist: what builds the package and what explains it.
SDIST_TOP = {
    PACKAGE,
    "labextension",
    "hatch_build.py",
    "README.md",
    "LICENSE",
    "ARCHITECTURE.md",
    "pyproject.toml",
    "PKG-INFO",
}
#: The JupyterLab extension's npm name, and where a wheel installs it (shared data).
LABEXTENSION = "atomic-jupyter"
LABEXTENSION_DATA = f"data/share/jupyter/labextensions/{LABEXTENSION}/"
#: What builds the extension: its sources, its lockfile (npm ci) and its build settings.
LABEXTENSION_SOURCES = [
    "labextension/package.json",
    "labextension/package-lock.json",
    "labextension/tsconfig.json",
    "labextension/webpack.config.js",
    "labextension/install.json",
    "labextension/src/index.ts",
    "labextension/style/index.css",
    "hatch_build.py",
]
#: hatchling adds the checkout's .gitignore, so that a build from the sdist leaves out what a
#: build from the checkout leaves out.
SDIST_TOP_OPTIONAL = {".gitignore"}
JUPYTER_CLASSIFIERS = {
    "Framework :: Jupyter",
    "Framework :: Jupyter :: JupyterLab",
    "Framework :: Jupyter :: JupyterLab :: 4",
    "Framework :: IPython",
}
PROJECT_HOME = "https://github.com/atomic-jupyter/atomic-jupyter"
NEWS_PLUGIN = "@jupyterlab/apputils-extension:notification"
LAB_START_S = 90


@dataclass(frozen=True)
class Dists:
    """The artefacts of one build: from the checkout, and the wheel built from its sdist."""

    wheel: Path
    sdist: Path
    wheel_from_sdist: Path
    #: ``dist/`` or ``build/`` folders that the build left in the checkout.
    left_in_checkout: list[str]


def run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``cmd``; fail with its output when it fails."""
    result = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=540)
    assert result.returncode == 0, (
        f"{cmd} failed ({result.returncode}):\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    )
    return result


def only(folder: Path, pattern: str) -> Path:
    """The one file in ``folder`` that matches ``pattern``."""
    found = sorted(folder.glob(pattern))
    assert len(found) == 1, f"expected one {pattern} in {folder}, found {found}"
    return found[0]


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> Dists:
    built = checkout_dists(tmp_path_factory)  # once per run (test_install_anywhere installs it)
    scratch = tmp_path_factory.mktemp("packaging")
    unpacked = scratch / "sdist"
    with tarfile.open(built.sdist) as archive:
        archive.extractall(unpacked, filter="data")
    source = only(unpacked, "*")
    again = scratch / "from-sdist"
    run([*BUILD, "--wheel", "--outdir", str(again), str(source)], cwd=scratch)
    return Dists(built.wheel, built.sdist, only(again, "*.whl"), built.left_in_checkout)


def wheel_members(wheel: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(wheel) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def dist_info(wheel: Path) -> str:
    """The wheel's ``.dist-info`` folder name, e.g. ``atomic_jupyter-0.1.0.dist-info``."""
    name, version = wheel.name.split("-")[:2]
    return f"{name}-{version}.dist-info"


def shared_data(wheel: Path) -> str:
    """Where the wheel keeps the extension: ``atomic_jupyter-0.1.0.data/data/share/...``."""
    return dist_info(wheel).removesuffix(".dist-info") + f".data/{LABEXTENSION_DATA}"


def wheel_metadata(wheel: Path) -> email.message.Message:
    raw = wheel_members(wheel)[f"{dist_info(wheel)}/METADATA"]
    return email.parser.BytesParser().parsebytes(raw)


def sdist_names(sdist: Path) -> list[str]:
    """The sdist's member names without the leading ``name-version/``."""
    with tarfile.open(sdist) as archive:
        names = [member.name for member in archive.getmembers() if member.isfile()]
    return [name.split("/", 1)[1] for name in names]


def read_sdist_member(sdist: Path, name: str) -> bytes:
    """The bytes of the sdist's ``name`` (a path without the leading ``name-version/``)."""
    with tarfile.open(sdist) as archive:
        member = next(m for m in archive.getmembers() if m.name.split("/", 1)[-1] == name)
        extracted = archive.extractfile(member)
        assert extracted is not None, name
        return extracted.read()


# --------------------------------------------------------------------------- the build


def test_building_writes_nothing_into_the_checkout(dists):
    assert dists.left_in_checkout == []


def test_twine_check_strict_passes_on_the_wheel_and_the_sdist(dists, tmp_path):
    result = run(
        [sys.executable, "-m", "twine", "check", "--strict", str(dists.wheel), str(dists.sdist)],
        cwd=tmp_path,
    )
    assert result.stdout.count("PASSED") == 2, result.stdout


# --------------------------------------------------------------------------- the wheel


def test_wheel_metadata_names_the_jupyter_frameworks(dists):
    classifiers = set(wheel_metadata(dists.wheel).get_all("Classifier") or [])
    assert classifiers >= JUPYTER_CLASSIFIERS
    assert "Programming Language :: Python :: 3.10" in classifiers
    assert "Programming Language :: Python :: 3.13" in classifiers


def test_wheel_metadata_states_the_mit_license_and_ships_its_file(dists):
    metadata = wheel_metadata(dists.wheel)
    assert metadata["License-Expression"] == "MIT"
    assert metadata.get_all("License-File") == ["LICENSE"]
    # PEP 639: a license expression, never also a license classifier.
    assert not [c for c in metadata.get_all("Classifier") or [] if c.startswith("License ::")]
    shipped = wheel_members(dists.wheel)[f"{dist_info(dists.wheel)}/licenses/LICENSE"]
    assert shipped == (ROOT / "LICENSE").read_bytes()
    assert b"MIT License" in shipped


def test_wheel_metadata_links_the_project_pages(dists):
    urls = dict(
        entry.split(", ", 1) for entry in wheel_metadata(dists.wheel).get_all("Project-URL") or []
    )
    assert set(urls) == {"Homepage", "Documentation", "Source", "Issues"}
    assert all(url.startswith(PROJECT_HOME) for url in urls.values()), urls
    assert urls["Issues"] == f"{PROJECT_HOME}/issues"


def test_wheel_metadata_describes_the_package_with_the_readme(dists):
    metadata = wheel_metadata(dists.wheel)
    assert metadata["Description-Content-Type"] == "text/markdown"
    assert metadata.get_payload().startswith("# atomic-jupyter")
    assert metadata["Requires-Python"] == ">=3.10"
    requires = metadata.get_all("Requires-Dist") or []
    assert "platformdirs>=3" in requires


def test_wheel_installs_the_atomic_jupyter_command(dists):
    entry_points = configparser.ConfigParser()
    text = wheel_members(dists.wheel)[f"{dist_info(dists.wheel)}/entry_points.txt"]
    entry_points.read_string(text.decode())
    assert dict(entry_points["console_scripts"]) == {"atomic-jupyter": "atomic_jupyter.cli:main"}


def test_wheel_holds_the_agent_pins_and_the_typing_marker(dists):
    members = wheel_members(dists.wheel)
    for name in [*PIN_FILES, f"{PACKAGE}/py.typed"]:
        assert name in members, f"{name} is not in {dists.wheel.name}"
    for name in PIN_FILES:
        assert members[name] == (ROOT / name).read_bytes(), f"{name} differs from the checkout"
        json.loads(members[name])


def test_wheel_holds_the_package_data_the_agent_loads(dists):
    members = wheel_members(dists.wheel)
    for name in (
        "addons/demo/demo_extension.ts",
        "addons/prototype/hub.ts",
        "addons/kernel_tools/kernel_tools.ts",
    ):
        assert f"{PACKAGE}/{name}" in members


def test_wheel_holds_only_the_package_and_its_metadata(dists):
    names = list(wheel_members(dists.wheel))
    strays = [
        name
        for name in names
        if not name.startswith(
            (f"{PACKAGE}/", f"{dist_info(dists.wheel)}/", shared_data(dists.wheel))
        )
        or "__pycache__" in name
        or "node_modules" in name
        or name.endswith(".pyc")
    ]
    assert strays == []
    assert not [name for name in names if name.startswith(("tests/", "agent/"))]
    # The built extension is shared data only, not also package data.
    assert not [name for name in names if name.startswith(f"{PACKAGE}/labextension/")]


def test_wheel_ships_the_built_labextension_where_jupyterlab_finds_it(dists):
    members = wheel_members(dists.wheel)
    data = shared_data(dists.wheel)
    assert f"{data}package.json" in members, f"no prebuilt extension in {dists.wheel.name}"
    package = json.loads(members[f"{data}package.json"])
    assert package["name"] == LABEXTENSION
    # jupyter labextension list shows this version: the Python package's.
    assert package["version"] == dists.wheel.name.split("-")[1]
    # build-labextension names the entry point once webpack is done: a whole build.
    entry = package["jupyterlab"]["_build"]["load"]
    assert entry.startswith("static/remoteEntry.") and entry.endswith(".js"), entry
    assert f"{data}{entry}" in members
    static = [name for name in members if name.startswith(f"{data}static/")]
    assert [name for name in static if "/static/remoteEntry." in name] == [f"{data}{entry}"]
    assert not [name for name in members if name.startswith(data) and "node_modules" in name]
    install = json.loads(members[f"{data}install.json"])
    assert install["packageManager"] == "python"
    assert install["packageName"] == "atomic-jupyter"


# --------------------------------------------------------------------------- the sdist


def test_sdist_holds_only_what_builds_and_explains_the_package(dists):
    names = sdist_names(dists.sdist)
    top = {name.split("/", 1)[0] for name in names}
    assert top - SDIST_TOP_OPTIONAL == SDIST_TOP
    strays = [
        name
        for name in names
        if "__pycache__" in name or "node_modules" in name or name.endswith(".pyc")
    ]
    assert strays == []
    assert set(PIN_FILES) <= set(names)


def test_sdist_holds_the_labextension_sources_and_lockfile_but_no_build(dists):
    names = sdist_names(dists.sdist)
    missing = [name for name in LABEXTENSION_SOURCES if name not in names]
    assert missing == []
    # npm ci installs exactly the lockfile's packages: the checkout's.
    lockfile = "labextension/package-lock.json"
    assert read_sdist_member(dists.sdist, lockfile) == (ROOT / lockfile).read_bytes()
    built = [
        name
        for name in names
        if "node_modules/" in name
        or name.startswith(("labextension/lib/", f"{PACKAGE}/labextension/"))
        or name.endswith(".tsbuildinfo")
    ]
    assert built == []


def test_wheel_built_from_the_sdist_is_the_wheel_built_from_the_checkout(dists):
    assert dists.wheel_from_sdist.name == dists.wheel.name
    from_checkout = wheel_members(dists.wheel)
    from_sdist = wheel_members(dists.wheel_from_sdist)
    assert sorted(from_sdist) == sorted(from_checkout)
    differ = [
        name
        for name, data in from_checkout.items()
        if hashlib.sha256(data).digest() != hashlib.sha256(from_sdist[name]).digest()
    ]
    assert differ == []


# --------------------------------------------------------------------------- make lab


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LabLaunch:
    """``scripts/lab.sh`` running with ``env``; :meth:`wait_ready` waits, with a deadline, until
    the server answers on ``port`` or exits."""

    def __init__(self, env: dict[str, str], port: int, token: str) -> None:
        self.port, self.token = port, token
        self.lines: list[str] = []
        self.exited = threading.Event()
        self.proc = subprocess.Popen(
            [str(ROOT / "scripts" / "lab.sh")],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)
        self.exited.set()  # the output ended: the server exited

    def wait_ready(self, timeout: float) -> None:
        # The server logs "is running at" before it binds its port (a callback of its event
        # loop), so the answer to a request is the signal.
        deadline = time.monotonic() + timeout
        status = f"http://127.0.0.1:{self.port}/api/status"
        request = urllib.request.Request(status, headers={"Authorization": f"token {self.token}"})
        while not self.exited.is_set() and time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(request, timeout=5) as r:
                    if r.status == 200:
                        return
            except OSError:  # not listening yet (URLError is an OSError)
                pass
            # Between two attempts, wake at once if the server exits.
            self.exited.wait(0.1)
        raise AssertionError(
            f"scripts/lab.sh did not start JupyterLab in {timeout} s:\n{self.log()}"
        )

    def log(self) -> str:
        return "".join(self.lines[-60:])

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()  # lab.sh execs jupyter: this is the server
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=30)
        self._reader.join(timeout=10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


@pytest.fixture
def lab_launch(tmp_path: Path) -> Iterator[tuple[LabLaunch, str, Path]]:
    """``scripts/lab.sh`` on a free port with a fresh token, with every Jupyter directory of
    its own: yields the launch, the token and the user settings directory."""
    port, token = free_port(), os.urandom(24).hex()
    user_settings = tmp_path / "user-settings"
    dirs = {
        "JUPYTERLAB_SETTINGS_DIR": user_settings,
        "JUPYTERLAB_WORKSPACES_DIR": tmp_path / "workspaces",
        "JUPYTER_CONFIG_DIR": tmp_path / "config",
        "JUPYTER_DATA_DIR": tmp_path / "data",
        "JUPYTER_RUNTIME_DIR": tmp_path / "runtime",
        "IPYTHONDIR": tmp_path / "ipython",
        "ATOMIC_JUPYTER_AGENT_HOME": tmp_path / "agents",
    }
    for folder in dirs.values():
        folder.mkdir()
    env = {**os.environ, **{key: str(value) for key, value in dirs.items()}}
    env.update({"PORT": str(port), "JUPYTER_TOKEN": token, "JUPYTER_PLATFORM_DIRS": "1"})
    launch = LabLaunch(env, port, token)
    try:
        launch.wait_ready(LAB_START_S)
        yield launch, token, user_settings
    finally:
        launch.stop()


def lab_settings(port: int, token: str, raw: str | None = None) -> dict[str, object]:
    """The server's answer for the notification settings; with ``raw``, first save ``raw`` as
    the user's own settings, as JupyterLab's settings editor does."""
    url = f"http://127.0.0.1:{port}/lab/api/settings/{NEWS_PLUGIN}"
    headers = {"Authorization": f"token {token}", "Content-Type": "application/json"}
    if raw is not None:
        put = urllib.request.Request(
            url, data=json.dumps({"raw": raw}).encode(), headers=headers, method="PUT"
        )
        with urllib.request.urlopen(put, timeout=10):
            pass
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as r:
        return dict(json.loads(r.read()))


def test_make_lab_does_not_ask_about_jupyter_news_and_keeps_the_users_own_choice(lab_launch):
    launch, token, user_settings = lab_launch
    overrides = ROOT / "scripts" / "lab-settings" / "overrides.json"
    overrides_before = overrides.read_bytes()

    # JupyterLab asks its question when the setting is "none" (its own default); lab.sh's
    # launch makes the default "false" and leaves the user's settings alone.
    answer = lab_settings(launch.port, token)
    schema = answer["schema"]
    assert isinstance(schema, dict)
    assert schema["properties"]["fetchNews"]["default"] == "false"
    assert answer["settings"] == {}

    # A person who says yes keeps their yes: it is saved in their own settings directory,
    # and it is what applies over the launch's default.
    answer = lab_settings(launch.port, token, raw='{"fetchNews": "true"}')
    assert answer["settings"] == {"fetchNews": "true"}
    saved = (
        user_settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    )
    assert json.loads(saved.read_text()) == {"fetchNews": "true"}
    assert overrides.read_bytes() == overrides_before
