"""Giving the memory a big answer used back to the system once it is freed.

A kernel that draws a long answer allocates many times its size while it streams (the decoded
events, the renders, the messages to the page) and frees nearly all of it when the run ends.
glibc's allocator keeps what was freed for later allocations: the kernel's resident memory
stays at its highest for the rest of the day, though Python holds little of it. Its
``malloc_trim`` hands the free pages of every arena back to the system (``madvise``), in a few
milliseconds for a heap of a few hundred megabytes (BENCHMARKS.md, figure 18).

:func:`note_freed` is told how much was let go (in characters: a run's weight, renders
forgotten); once that adds up to :data:`TRIM_AFTER_CHARS`, the heap is trimmed. Elsewhere than
glibc (macOS, musl, Windows) nothing is done.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
import threading
from collections.abc import Callable

__all__ = ["TRIM_AFTER_CHARS", "note_freed", "trim_heap", "trims"]

#: Characters let go, added up, after which the heap is trimmed: about a megabyte of text
#: (its renders and messages weigh several times that).
TRIM_AFTER_CHARS = 1 << 20

_lock = threading.Lock()
_freed = 0
_trims = 0
_trim: Callable[[int], int] | None = None
_looked = False


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None where the C library has none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return None  # musl, or no C library found
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


def trim_heap() -> bool:
    """Hand the allocator's free pages back to the system now; False where that cannot be
    done (no glibc)."""
    global _trim, _looked, _trims
    with _lock:
        if not _looked:
            _trim, _looked = _malloc_trim(), True
        trim = _trim
        if trim is None:
            return False
        _trims += 1
    trim(0)
    return True


def note_freed(chars: int) -> bool:
    """Note that about ``chars`` characters of text were let go (with what was made of them);
    trim the heap once :data:`TRIM_AFTER_CHARS` have added up. Returns whether it trimmed."""
    global _freed
    with _lock:
        _freed += max(0, chars)
        if _freed < TRIM_AFTER_CHARS:
            return False
        _freed = 0
    return trim_heap()


def trims() -> int:
    """How many times the heap was trimmed in this process (for tests and benchmarks)."""
    return _trims
