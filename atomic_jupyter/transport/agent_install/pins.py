"""The pinned agents: one npm manifest and lock file per agent line, shipped in the package
(``atomic_jupyter/agent_pins/<line>/``). ``make``, Binder and ``atomic-jupyter install-agent``
all install from these files; nothing else names the agent's version.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["LINES", "AgentPin", "PinError", "pin_of", "pins"]

#: The agent lines, the default first: ``current`` (``@earendil-works/pi-coding-agent``) and
#: the older ``0.73`` (``@mariozechner/pi-coding-agent``).
LINES = ("current", "0.73")
#: Where the pins live: the package's own data folder.
PINS_FOLDER = Path(__file__).resolve().parents[2] / "agent_pins"
#: The files of a pin, in the order their bytes go into its digest.
PIN_FILES = ("package.json", "package-lock.json")


class PinError(ValueError):
    """A pin folder that cannot be read: missing files, bad JSON, or no agent in it."""


@dataclass(frozen=True)
class AgentPin:
    """One agent line's pinned install.

    Attributes
    ----------
    line:
        ``"current"`` or ``"0.73"``.
    folder:
        The folder holding ``package.json`` and ``package-lock.json``.
    package:
        The agent's npm package name, e.g. ``@earendil-works/pi-coding-agent``.
    version:
        Its pinned version, e.g. ``1.6.0``.
    bin_name:
        The agent's executable in ``node_modules/.bin`` (``pi``).
    node_requirement:
        The Node.js range the agent needs (its ``engines.node``), or None.
    package_count:
        How many packages the lock file installs (for progress).
    digest:
        The first 12 hex digits of the SHA-256 of the manifest and lock file: an install
        made from other files has another digest.
    """

    line: str
    folder: Path
    package: str
    version: str
    bin_name: str
    node_requirement: str | None
    package_count: int
    digest: str

    @property
    def install_name(self) -> str:
        """The name of this pin's install folder: ``<version>-<digest>``."""
        return f"{self.version}-{self.digest}"

    def describe(self) -> str:
        """``@earendil-works/pi-coding-agent 1.6.0 (the current line)``."""
        return f"{self.package} {self.version} (the {self.line} line)"


def read_pin(line: str, folder: Path) -> AgentPin:
    """The pin in ``folder``: its manifest names one ``*-coding-agent`` package, pinned in the
    lock file.

    Raises
    ------
    PinError
        When a file is missing or unreadable, or the lock file does not pin the agent.
    """
    raw: list[bytes] = []
    parsed: list[dict[str, Any]] = []
    for name in PIN_FILES:
        try:
            data = (folder / name).read_bytes()
            value = json.loads(data)
        except OSError as exc:
            raise PinError(f"the agent pin in {folder} cannot be read: {exc}") from None
        except ValueError as exc:
            raise PinError(
                f"the agent pin in {folder} cannot be read: {name} is not JSON ({exc})"
            ) from None
        if not isinstance(value, dict):
            raise PinError(f"the agent pin in {folder} cannot be read: {name} is not a JSON object")
        raw.append(data)
        parsed.append(value)
    manifest, lock = parsed
    dependencies = manifest.get("dependencies")
    dependencies = dependencies if isinstance(dependencies, dict) else {}
    names = [name for name in dependencies if name.endswith("coding-agent")]
    packages = lock.get("packages")
    if len(names) != 1 or not isinstance(packages, dict):
        raise PinError(f"the agent pin in {folder} does not name one agent package")
    entry = packages.get(f"node_modules/{names[0]}")
    if not isinstance(entry, dict) or not isinstance(entry.get("version"), str):
        raise PinError(f"the lock file in {folder} does not pin {names[0]}")
    bins = entry.get("bin")
    engines = entry.get("engines")
    bins = bins if isinstance(bins, dict) else {}
    engines = engines if isinstance(engines, dict) else {}
    digest = hashlib.sha256()
    for data in raw:
        digest.update(hashlib.sha256(data).digest())
    return AgentPin(
        line=line,
        folder=folder,
        package=names[0],
        version=entry["version"],
        bin_name=next(iter(bins), "pi"),
        node_requirement=engines.get("node"),
        package_count=sum(1 for key in packages if key),
        digest=digest.hexdigest()[:12],
    )


@functools.cache
def pin_of(line: str) -> AgentPin:
    """The shipped pin of ``line``.

    Raises
    ------
    PinError
        When ``line`` is not one of :data:`LINES`, or its files are damaged.
    """
    if line not in LINES:
        raise PinError(f"there is no agent line {line!r}; the lines are {', '.join(LINES)}")
    return read_pin(line, PINS_FOLDER / line)


def pins() -> list[AgentPin]:
    """Every shipped pin, the default line first."""
    return [pin_of(line) for line in LINES]
