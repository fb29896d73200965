"""Files and folders only their owner can read: every file the package writes for a session
(its tools, prototypes, the demo's agent home, saved conversations) is made here, so it is
private whatever the process's umask and whatever the folders above it allow.

On a shared machine (a JupyterHub with one UNIX account per user) the folders above may not
stay private: a home made ``0755``, a data folder moved. So a file is ``0600`` from the moment
it exists (created with that mode, then written and renamed into place: a reader never sees
half of it), and a folder is ``0700``.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

__all__ = ["FILE_MODE", "FOLDER_MODE", "make_private", "private_folder", "write_private"]

#: Read and write by the owner only.
FILE_MODE = 0o600
#: Read, write and enter by the owner only.
FOLDER_MODE = 0o700


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` as a ``0600`` file, replacing it whole (atomically: a
    reader sees the old text or the new, never a part)."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    try:
        os.fchmod(descriptor, FILE_MODE)  # a left-over temporary file kept its old mode
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def private_folder(path: Path) -> Path:
    """Make ``path`` (and its missing parents) and leave it ``0700``; return it."""
    path.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    path.chmod(FOLDER_MODE)
    return path


def make_private(path: Path) -> bool:
    """Make an existing file ``0600`` (a file another program wrote, such as the agent's
    conversation file); return whether it exists."""
    try:
        if path.stat().st_mode & 0o777 != FILE_MODE:
            path.chmod(FILE_MODE)
    except FileNotFoundError:
        return False
    return True
