"""Whether a line written to the agent's stdin was delivered: read by the agent. No threads.

A line is *written* once it is in the pipe, and *delivered* once the agent has read it from
the pipe (into its own buffer: whether it acted on it is the protocol's business). The writer
counts the bytes it writes; the bytes still in the pipe are asked of the kernel (``FIONREAD``
on the pipe's write end) only when someone asks whether a line was delivered, and once more
when the agent has exited, just before its stdin is closed. Where a pipe cannot tell
(checked once per interpreter), written means delivered.
"""

from __future__ import annotations

import array
import os
import threading
import time
from collections.abc import Callable
from typing import Any

try:  # not on Windows, which does not run the FIONREAD path
    import fcntl
    import termios

    _FIONREAD: int | None = termios.FIONREAD
except (ImportError, AttributeError):  # pragma: no cover - platform dependent
    _FIONREAD = None

__all__ = ["Delivery", "PipeCount"]

#: Seconds between two looks at whether a delivery was decided.
POLL_S = 0.02


def _probe_write_end() -> bool:
    """Whether ``FIONREAD`` on a pipe's write end counts the bytes not yet read (Linux does;
    some systems answer 0 there, or nothing)."""
    if _FIONREAD is None:
        return False
    try:
        read_end, write_end = os.pipe()
    except OSError:
        return False
    try:
        os.write(write_end, b"ab")
        buf = array.array("i", [0])
        fcntl.ioctl(write_end, _FIONREAD, buf, True)
        return buf[0] == 2
    except OSError:
        return False
    finally:
        os.close(read_end)
        os.close(write_end)


_WRITE_END_COUNTS: bool | None = None


def _unread_bytes(fd: int) -> int | None:
    """Bytes written into the pipe ``fd`` (its write end) and not read yet; None where a pipe
    cannot tell."""
    global _WRITE_END_COUNTS
    if _WRITE_END_COUNTS is None:
        _WRITE_END_COUNTS = _probe_write_end()
    if not _WRITE_END_COUNTS:
        return None
    buf = array.array("i", [0])
    try:
        fcntl.ioctl(fd, _FIONREAD, buf, True)  # type: ignore[arg-type]
    except OSError:
        return None
    return int(buf[0])


class PipeCount:
    """How many bytes went into the agent's stdin pipe, and how many of them it has read.

    The writer thread adds what it writes and, at the end, closes the pipe through
    :meth:`settle`, which takes the final count first. Anyone may ask :meth:`read_so_far`.

    Parameters
    ----------
    stdin:
        The pipe's write end (a raw file object).
    gone:
        Whether the agent has exited (it reads nothing more then).
    """

    def __init__(self, stdin: Any, gone: Callable[[], bool]) -> None:
        self._lock = threading.Lock()
        self._stdin = stdin
        self._gone = gone
        #: Bytes written into the pipe (whole ``write`` calls).
        self.written = 0
        #: Whether the pipe can tell what was read (else written counts as read).
        self.counts = _unread_bytes(stdin.fileno()) is not None
        self._final: int | None = None
        #: Why a line the agent had not read by the end was not delivered.
        self.final_reason = "the agent exited without reading it"
        #: Set once the final count is taken and the pipe closed.
        self.settled = threading.Event()

    def add(self, count: int) -> int:
        """Count ``count`` more bytes written; return the total."""
        with self._lock:
            self.written += count
            return self.written

    def read_so_far(self) -> tuple[int | None, bool]:
        """``(bytes the agent has read at least, whether that is final)``; None when unknown.

        Never more than it read: the bytes written are taken before those still in the pipe.
        """
        with self._lock:
            if self._final is not None or self._stdin is None:
                return self._final, True
            gone = self._gone()  # first: once gone, what is in the pipe stays there
            written = self.written
            unread = _unread_bytes(self._stdin.fileno()) if self.counts else None
            return (None if unread is None else written - unread), gone

    def settle(self) -> None:
        """Take the final count and close the pipe (the writer thread, once)."""
        with self._lock:
            stdin, self._stdin = self._stdin, None
            if stdin is None:
                return
            if self.counts:
                if not self._gone():
                    self.final_reason = "the agent's input was closed before it read it"
                unread = _unread_bytes(stdin.fileno())
                self._final = None if unread is None else self.written - unread
            try:
                stdin.close()
            except OSError:
                pass
            self.settled.set()


class Delivery:
    """The fate of one line written to the agent's stdin.

    Attributes
    ----------
    payload:
        The line's bytes.
    done:
        Set once the write settled: the line went into the pipe (``written``), or could not
        (``error`` says why).
    written:
        Whether the whole line went into the pipe.
    end_offset:
        Once written, the position in the agent's input just after the line.

    Notes
    -----
    ``delivered`` is whether the agent has read the line from the pipe. While the agent runs
    it is checked when asked (and is False until then, not decided); once the agent has
    exited it is decided from the count taken before its stdin was closed. A line read once
    stays delivered. Where the pipe cannot tell, a written line counts as delivered.
    """

    def __init__(self, payload: bytes, count: PipeCount | None = None) -> None:
        self.payload = payload
        self.done = threading.Event()
        self.written = False
        self.end_offset: int | None = None
        #: Bytes of the line already in the pipe (the writer writes the rest).
        self.sent = 0
        self._count = count
        self._decided = threading.Event()
        self._delivered = False
        self._error: str | None = None

    def __repr__(self) -> str:
        how = "delivered" if self.delivered else "written" if self.written else "not written"
        final = "" if self.decided else ", undecided"
        return f"<Delivery {len(self.payload)} bytes {how}{final}>"

    @property
    def delivered(self) -> bool:
        """Whether the agent has read the line (see the class notes)."""
        self._check()
        return self._delivered

    @property
    def decided(self) -> bool:
        """Whether ``delivered`` is final: the line was read, or could not be written, or the
        agent exited (or its input was closed) before reading it."""
        self._check()
        return self._decided.is_set()

    @property
    def error(self) -> str | None:
        """Why the line was not delivered (once decided), else None."""
        self._check()
        return self._error

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the write settled; return whether the line went into the pipe."""
        self.done.wait(timeout)
        return self.written

    def wait_decided(self, timeout: float | None = None) -> bool:
        """Wait until ``delivered`` is final (see :attr:`decided`); return whether it is.

        While the agent runs, an unread line is decided only when the agent reads it or exits.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        if not self.done.wait(timeout):
            return False
        while not self.decided:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return False
            if self._count is None:  # pragma: no cover - decided when written
                return False
            self._count.settled.wait(POLL_S if remaining is None else min(POLL_S, remaining))
        return True

    # the writer thread's side

    def _written(self, end_offset: int) -> None:
        self.written = True
        self.end_offset = end_offset
        if self._count is None or not self._count.counts:
            self._decide(True)
        self.done.set()

    def _fail(self, error: str) -> None:
        self._decide(False, error)
        self.done.set()

    def _decide(self, delivered: bool, error: str | None = None) -> None:
        self._delivered = delivered
        self._error = error
        self._decided.set()

    def _check(self) -> None:
        """Decide from the pipe's count if it can be decided now."""
        if self._decided.is_set() or not self.written or self._count is None:
            return
        read, final = self._count.read_so_far()
        assert self.end_offset is not None
        if read is None:
            if final:  # the count could not be taken: written is all that is known
                self._decide(True)
        elif read >= self.end_offset:
            self._decide(True)
        elif final:
            self._decide(False, self._count.final_reason)
