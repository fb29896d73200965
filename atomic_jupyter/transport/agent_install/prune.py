"""Removing what no kernel of this version of atomic-jupyter uses from an agent home: the
installs of other pins (an upgrade leaves the old one behind, about 190 MB) and the leftovers
of interrupted installs. A line whose install lock is held (an install is running) is left
alone."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from atomic_jupyter.transport.agent_install.layout import STAGING_PREFIX, TRASH_PREFIX
from atomic_jupyter.transport.agent_install.pins import AgentPin, pins
from atomic_jupyter.transport.file_locks import try_install_lock

__all__ = ["prune_installs", "unused_installs"]


def _kept(keep: Sequence[AgentPin] | None) -> set[tuple[str, str]]:
    return {(pin.line, pin.install_name) for pin in (pins() if keep is None else keep)}


def unused_installs(home: Path, keep: Sequence[AgentPin] | None = None) -> list[Path]:
    """The folders in ``home`` that are neither an install of a pin in ``keep`` (the shipped
    pins when None) nor an install lock: other pins' installs and leftovers."""
    if not home.is_dir():
        return []
    kept = _kept(keep)
    found = []
    for line_folder in sorted(p for p in home.iterdir() if p.is_dir()):
        for child in sorted(line_folder.iterdir()):
            if child.is_dir() and (line_folder.name, child.name) not in kept:
                found.append(child)
    return found


def prune_installs(home: Path, keep: Sequence[AgentPin] | None = None) -> list[str]:
    """Remove :func:`unused_installs` from ``home``; what was done, a sentence each.

    Stop the kernels that run an older install first: its files go.
    """
    done = []
    by_line: dict[Path, list[Path]] = {}
    for folder in unused_installs(home, keep):
        by_line.setdefault(folder.parent, []).append(folder)
    for line_folder, folders in by_line.items():
        with try_install_lock(line_folder / ".install.lock") as held:
            if not held:
                done.append(f"Left {line_folder} alone: an install is running there.")
                continue
            for folder in folders:
                shutil.rmtree(folder, ignore_errors=True)
                what = (
                    "leftovers of an interrupted install"
                    if folder.name.startswith((STAGING_PREFIX, TRASH_PREFIX))
                    else "an install of another version"
                )
                done.append(f"Removed {folder} ({what}).")
    return done
