"""How often the thread reading the agent lets the kernel's own thread run.

The agent can write faster than the kernel reads: the older agent line repeats the whole
answer in every update, so a long answer is a stream of a hundred megabytes. While it comes
in, the reader thread decodes without a pause. Python runs one thread at a time (the GIL) and
takes the interpreter from a busy thread only every switch interval (5 ms), so each time the
kernel's main thread lets go of it (to send a message, to wait on a socket), it may wait that
long to get it back: a ``1+1`` cell took three times as long as on an idle kernel.

:class:`ReaderTurns` has the reader let go itself, more often: once it has been reading for
``turn_s`` since it last did, it sleeps for no time, which hands the interpreter to a thread
waiting for it (and costs a system call when none is). A shorter turn makes the kernel answer
sooner during such a stream and reads the stream more slowly; BENCHMARKS.md (figure 2) has
both for several turns. A stream that comes slower than it is read costs nothing more than
that system call after a chunk: the reader waits for the pipe then, without the interpreter.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["DEFAULT_TURN_S", "ReaderTurns"]

#: Seconds the reader reads before it lets another thread run (0.5 ms).
DEFAULT_TURN_S = 0.0005


def _let_go() -> None:
    time.sleep(0)


class ReaderTurns:
    """Counts the reader's time since it last let go of the interpreter; lets go every turn.

    Parameters
    ----------
    turn_s : float
        Seconds between two turns given (0: after every chunk). From Python's switch
        interval (:func:`sys.getswitchinterval`) on, Python's own switching comes first.
    clock, let_go : callable, optional
        The clock read after each chunk and how the interpreter is let go (for tests).

    Attributes
    ----------
    given : int
        How many turns the reader has given.
    """

    def __init__(
        self,
        turn_s: float = DEFAULT_TURN_S,
        *,
        clock: Callable[[], float] = time.perf_counter,
        let_go: Callable[[], None] = _let_go,
    ) -> None:
        if not turn_s >= 0:
            raise ValueError(f"a reader's turn must be 0 seconds or more, not {turn_s!r}")
        self.turn_s = turn_s
        self._clock = clock
        self._let_go = let_go
        self._since = clock()
        self.given = 0

    def after_chunk(self) -> None:
        """Called by the reader after it handed over a chunk: let go when a turn is due."""
        if self._clock() - self._since < self.turn_s:
            return
        self._let_go()
        self.given += 1
        self._since = self._clock()
