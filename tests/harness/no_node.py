"""A PATH with no Node.js on it, for what a machine without Node.js does. Standard library
only: :mod:`tests.harness.binder_replay` runs it with the system's Python, before the test
environment exists."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

__all__ = ["NODE_TOOLS", "path_without_node"]

#: The executables a machine with no Node.js lacks.
NODE_TOOLS = {"node", "nodejs", "npm", "npx", "corepack"}


def path_without_node(folder: Path) -> str:
    """A PATH of ``folder`` holding links to every executable on this PATH but Node.js and
    npm (and the project's virtual environment): a machine with no system Node.js."""
    folder.mkdir(exist_ok=True)
    for system in os.environ.get("PATH", "").split(os.pathsep):
        if not os.path.isdir(system) or ".venv" in system:
            continue
        for name in os.listdir(system):
            source = Path(system) / name
            if name in NODE_TOOLS or (folder / name).exists() or not os.access(source, os.X_OK):
                continue
            (folder / name).symlink_to(source)
    assert shutil.which("node", path=str(folder)) is None
    return str(folder)
