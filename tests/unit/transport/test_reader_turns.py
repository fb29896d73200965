"""The turns the thread reading the agent gives the kernel's own thread
(:mod:`atomic_jupyter.transport.reader_turns`): due once the reader has read for a turn since
it last gave one, and given by the real reader of a real process after its chunks."""

from __future__ import annotations

import math
import sys
import threading

import pytest

from atomic_jupyter.transport.process import AgentProcess
from atomic_jupyter.transport.reader_turns import ReaderTurns


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_turn_is_given_once_the_reader_has_read_for_a_turn_since_the_last() -> None:
    clock, given = Clock(), []
    turns = ReaderTurns(0.001, clock=clock, let_go=lambda: given.append(clock.now))
    clock.now += 0.0006
    turns.after_chunk()
    assert given == []  # 0.6 ms: not yet
    clock.now += 0.0006
    turns.after_chunk()
    assert given == [clock.now] and turns.given == 1  # 1.2 ms since the start
    clock.now += 0.0009
    turns.after_chunk()
    assert turns.given == 1  # counted again from the turn given, not from the start
    clock.now += 0.0002
    turns.after_chunk()
    assert turns.given == 2


def test_no_turn_is_every_chunk_and_an_endless_one_is_never() -> None:
    clock = Clock()
    every = ReaderTurns(0, clock=clock, let_go=lambda: None)
    never = ReaderTurns(math.inf, clock=clock, let_go=lambda: None)
    for _ in range(5):
        clock.now += 10
        every.after_chunk()
        never.after_chunk()
    assert (every.given, never.given) == (5, 0)


def test_a_negative_turn_is_refused_with_what_was_given() -> None:
    with pytest.raises(ValueError, match="0 seconds or more, not -1"):
        ReaderTurns(-1)
    with pytest.raises(ValueError, match="not nan"):
        ReaderTurns(math.nan)


WRITER = "import sys; [sys.stdout.buffer.write(b'x' * 65535 + b'\\n') for _ in range(200)]"


@pytest.mark.parametrize(("turn", "expect_every_chunk"), [(0.0, True), (math.inf, False)])
def test_the_reader_of_a_real_process_gives_its_turns_after_its_chunks(
    turn: float, expect_every_chunk: bool
) -> None:
    """A process writing 12.8 MB as fast as it can: with no turn the reader lets go after each
    chunk it handed over; with an endless one, never."""
    chunks = []
    ended = threading.Event()
    process = AgentProcess(
        [sys.executable, "-c", WRITER],
        on_data=chunks.append,
        on_eof=ended.set,
        reader_turn_s=turn,
    )
    process.start()
    try:
        assert ended.wait(30), "the writer's output did not end"
    finally:
        process.stop()
    assert sum(map(len, chunks)) == 200 * 65536
    assert process.reader_turns.given == (len(chunks) if expect_every_chunk else 0)
