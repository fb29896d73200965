"""Exclusive locks on files, held by the operating system, so a process that dies releases
them: one install at a time per agent line and home (:func:`install_lock`), one kernel at a
time per saved conversation (:func:`acquire_lock`)."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

__all__ = ["acquire_lock", "install_lock", "lock_holder", "release_lock", "try_install_lock"]

if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _lock(fd: int) -> None:
        while True:
            try:
                msvcrt.locking(fd, msvcrt.LK_LOCK, 1)  # retries for 10 s, then raises
                return
            except OSError:
                continue

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _lock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX)

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


def _holder(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError:
        return ""
    return f" (process {text})" if text.isdigit() else ""


@contextlib.contextmanager
def install_lock(path: Path, on_wait: Callable[[str], None] | None = None) -> Iterator[bool]:
    """Hold the lock at ``path`` for the ``with`` block; yields whether it had to wait.

    ``on_wait`` is told, once, who holds it when another process does.
    """
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        waited = False
        if not _try_lock(fd):
            waited = True
            if on_wait is not None:
                on_wait(f"another install is running{_holder(path)}; waiting for it to finish")
            _lock(fd)
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        try:
            yield waited
        finally:
            os.ftruncate(fd, 0)
            _unlock(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def try_install_lock(path: Path) -> Iterator[bool]:
    """Hold the lock at ``path`` for the ``with`` block if it is free; yields whether it is
    held (False: another process holds it, and nothing waits)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if not _try_lock(fd):
            yield False
            return
        try:
            yield True
        finally:
            _unlock(fd)
    finally:
        os.close(fd)


def acquire_lock(path: Path) -> int | None:
    """Take the lock at ``path`` without waiting, until :func:`release_lock`: the open file
    that holds it, or None when another holder has it (another process, or another open file
    of this one). The lock file says which process holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    if not _try_lock(fd):
        os.close(fd)
        return None
    os.ftruncate(fd, 0)
    os.write(fd, str(os.getpid()).encode())
    return fd


def release_lock(fd: int) -> None:
    """Let go of a lock :func:`acquire_lock` took."""
    try:
        os.ftruncate(fd, 0)
        _unlock(fd)
    finally:
        os.close(fd)


def lock_holder(path: Path) -> str:
    """`` (process N)`` when the lock file at ``path`` names its holder, else ``""``."""
    return _holder(path)
