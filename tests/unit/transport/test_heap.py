"""Giving freed memory back to the system (:mod:`atomic_jupyter.transport.heap`): the heap is
trimmed once a megabyte of text's worth was let go, and a trim returns free pages to the
system where the C library is glibc."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from atomic_jupyter.transport import heap


def test_the_heap_is_trimmed_once_what_was_let_go_adds_up_to_the_threshold(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[int] = []
    monkeypatch.setattr(heap, "_looked", True)
    monkeypatch.setattr(heap, "_trim", lambda pad: calls.append(pad) or 1)
    monkeypatch.setattr(heap, "_freed", 0)
    half = heap.TRIM_AFTER_CHARS // 2
    assert heap.note_freed(half) is False
    assert heap.note_freed(-5) is False  # nothing negative is counted
    assert calls == []
    assert heap.note_freed(half) is True
    assert calls == [0]
    assert heap.note_freed(half) is False  # counting starts again after a trim
    assert calls == [0]


def test_without_glibc_nothing_is_trimmed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heap, "_looked", True)
    monkeypatch.setattr(heap, "_trim", None)
    monkeypatch.setattr(heap, "_freed", 0)
    before = heap.trims()
    assert heap.note_freed(heap.TRIM_AFTER_CHARS) is False
    assert heap.trims() == before


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_a_trim_gives_freed_memory_back_to_the_system() -> None:
    """In a fresh interpreter: strings of 100 KB, from the heap (under glibc's mmap threshold
    once it has grown), every other one kept, the rest freed; a trim returns the freed pages."""
    code = textwrap.dedent(
        """
        from atomic_jupyter.transport import heap
        def rss():
            for line in open("/proc/self/status"):
                if line.startswith("VmRSS"):
                    return int(line.split()[1]) * 1024
        big = bytes(30 << 20)
        del big  # freeing a mapped block raises glibc's mmap threshold above 100 KB
        made = [bytes(100_000) + bytes([n % 256]) for n in range(2000)]
        kept = made[::2]
        del made
        before = rss()
        assert heap.trim_heap()
        print(before - rss(), len(kept))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert int(out[0]) > 50_000_000, f"only {int(out[0]):,} bytes came back"
