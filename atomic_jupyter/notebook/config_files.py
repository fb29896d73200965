"""The IPython configuration files a kernel reads ``AtomicAgent`` settings from, and what they
set: the doctor's report of what every user of an environment gets.

A kernel (ipykernel's ``IPKernelApp``) reads ``ipython_config.py`` and then
``ipython_kernel_config.py`` in each of these folders, a later folder's value overridden by an
earlier one's: the user's own profile, then the Python environment's ``etc/ipython`` (every
user of a shared environment), then the machine's ``/usr/local/etc/ipython`` and
``/etc/ipython``. This module finds them the way IPython does, without importing IPython (the
command line's doctor runs without it), and reads them with traitlets' own loader.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from traitlets.config.loader import PyFileConfigLoader

from atomic_jupyter.notebook.config import AtomicAgent

__all__ = ["ConfigFile", "config_files", "effective_settings"]

#: The machine's folders, read by every kernel on it (IPython's ``SYSTEM_CONFIG_DIRS``).
MACHINE_FOLDERS = (Path("/usr/local/etc/ipython"), Path("/etc/ipython"))
#: The files a kernel reads in each folder, the later one winning.
FILE_NAMES = ("ipython_config.py", "ipython_kernel_config.py")


@dataclass(frozen=True)
class ConfigFile:
    """One configuration file a kernel reads, and the ``AtomicAgent`` settings it makes."""

    path: Path
    #: Who reads it: ``"you"``, ``"every user of this environment"`` or ``"every user of this
    #: machine"``.
    scope: str
    settings: dict[str, Any] = field(default_factory=dict)
    #: Why it could not be read (None when it was).
    error: str | None = None


def _profile(environ: Mapping[str, str]) -> Path:
    base = environ.get("IPYTHONDIR") or os.path.join(os.path.expanduser("~"), ".ipython")
    return Path(base) / "profile_default"


def _folders(environ: Mapping[str, str]) -> list[tuple[Path, str]]:
    """The folders searched, the most important first (as IPython orders them)."""
    environment = Path(sys.prefix) / "etc" / "ipython"
    folders = [(_profile(environ), "you")]
    if environment not in MACHINE_FOLDERS:
        folders.append((environment, "every user of this environment"))
    folders += [(folder, "every user of this machine") for folder in MACHINE_FOLDERS]
    return folders


def _read(path: Path, scope: str) -> ConfigFile:
    try:
        loaded = PyFileConfigLoader(path.name, path=str(path.parent)).load_config()
    except Exception as exc:  # a broken file is reported, never raised
        return ConfigFile(path, scope, error=f"{type(exc).__name__}: {exc}")
    section = loaded.get("AtomicAgent", {}) if "AtomicAgent" in loaded else {}
    return ConfigFile(path, scope, dict(section))


def config_files(environ: Mapping[str, str] | None = None) -> list[ConfigFile]:
    """The files a kernel of this environment reads that exist, the most important first."""
    environ = os.environ if environ is None else environ
    found = []
    for folder, scope in _folders(environ):
        for name in reversed(FILE_NAMES):  # ipython_kernel_config.py wins over ipython_config.py
            path = folder / name
            if path.is_file():
                found.append(_read(path, scope))
    return found


def effective_settings(files: list[ConfigFile]) -> dict[str, tuple[Any, ConfigFile | None]]:
    """Every ``AtomicAgent`` setting: its value and the file it comes from (None: the
    default), given :func:`config_files`' list. Unknown names are listed too, from their file."""
    names = sorted(AtomicAgent.class_traits(config=True))
    values: dict[str, tuple[Any, ConfigFile | None]] = {
        name: (AtomicAgent.class_traits()[name].default(), None) for name in names
    }
    for file in reversed(files):  # the least important first, so the most important wins
        for name, value in file.settings.items():
            values[name] = (value, file)
    return values
