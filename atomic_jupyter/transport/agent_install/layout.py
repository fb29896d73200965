"""What a finished install looks like, and whether a folder is one.

An install of a pin lives in ``<home>/<line>/<version>-<digest>/``: the pin's ``package.json``
and ``package-lock.json``, the ``node_modules`` that ``npm ci`` made from them, and
:data:`MARKER`, written last. The folder only ever appears whole (it is built beside it and
renamed into place), so a folder without its marker, or with missing packages, was damaged
afterwards and is never used.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from atomic_jupyter.transport.agent_install.homes import AgentHome
from atomic_jupyter.transport.agent_install.pins import AgentPin

__all__ = [
    "MARKER",
    "STAGING_PREFIX",
    "TRASH_PREFIX",
    "InstalledAgent",
    "Search",
    "check_install",
    "find_installed",
    "install_folder",
]

#: The file that says an install finished, and from which pin.
MARKER = "atomic-jupyter-install.json"
#: Folder names beside the installs: one being built, and one being replaced.
STAGING_PREFIX = ".staging-"
TRASH_PREFIX = ".trash-"


@dataclass(frozen=True)
class InstalledAgent:
    """A complete install of a pin.

    Attributes
    ----------
    pin:
        What was installed.
    folder:
        The install folder (holds ``node_modules``).
    home:
        The agent home it is in.
    """

    pin: AgentPin
    folder: Path
    home: AgentHome

    @property
    def executable(self) -> Path:
        """The agent's command: ``node_modules/.bin/pi``."""
        return self.folder / "node_modules" / ".bin" / self.pin.bin_name

    @property
    def package_folder(self) -> Path:
        """The agent's npm package folder."""
        return self.folder / "node_modules" / self.pin.package


@dataclass(frozen=True)
class Search:
    """Where a pin was looked for: the install found (or None), and every install seen that
    cannot be used, as ``(folder, problem)``."""

    found: InstalledAgent | None
    damaged: tuple[tuple[Path, str], ...] = ()
    homes: tuple[AgentHome, ...] = ()


def install_folder(home: Path, pin: AgentPin) -> Path:
    """Where ``pin`` is installed in ``home``."""
    return home / pin.line / pin.install_name


def _read_json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


@functools.lru_cache(maxsize=8)
def _required_packages(pin: AgentPin) -> tuple[str, ...]:
    """The lock's non-optional package paths (read once per pin: every start checks them)."""
    lock = _read_json(pin.folder / "package-lock.json")
    packages = lock.get("packages", {}) if isinstance(lock, dict) else {}
    return tuple(
        path
        for path, entry in packages.items()
        if path and isinstance(entry, dict) and not entry.get("optional")
    )


def check_install(folder: Path, pin: AgentPin) -> str | None:
    """Why ``folder`` is not a usable install of ``pin``, in words; None when it is one."""
    if not folder.is_dir():
        return "it is not installed"
    marker = _read_json(folder / MARKER)
    if not isinstance(marker, dict):
        return f"it has no {MARKER}, so its install never finished or was damaged"
    if marker.get("digest") != pin.digest:
        return "it was installed from another lock file"
    try:
        lock_matches = (folder / "package-lock.json").read_bytes() == (
            pin.folder / "package-lock.json"
        ).read_bytes()
    except OSError:
        lock_matches = False
    if not lock_matches:
        return "its package-lock.json is not the pinned one"
    manifest = _read_json(folder / "node_modules" / pin.package / "package.json")
    version = manifest.get("version") if isinstance(manifest, dict) else None
    if version != pin.version:
        found = f"version {version}" if version else "no readable package.json"
        return f"its {pin.package} has {found}, not {pin.version}"
    if not (folder / "node_modules" / ".bin" / pin.bin_name).exists():
        return f"its node_modules/.bin/{pin.bin_name} is missing"
    missing = [p for p in _required_packages(pin) if not (folder / p / "package.json").is_file()]
    if missing:
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        return f"packages are missing from it: {missing[0]}{more}"
    return None


def find_installed(pin: AgentPin, homes: Sequence[AgentHome]) -> Search:
    """The first usable install of ``pin`` in ``homes``, and the damaged ones seen."""
    damaged: list[tuple[Path, str]] = []
    for home in homes:
        folder = install_folder(home.path, pin)
        if not folder.exists():
            continue
        problem = check_install(folder, pin)
        if problem is None:
            return Search(InstalledAgent(pin, folder, home), tuple(damaged), tuple(homes))
        damaged.append((folder, problem))
    return Search(None, tuple(damaged), tuple(homes))
