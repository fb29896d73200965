"""A dialog's answer is on the agent's stdin before any view work, and lines keep their order.

``AgentProcess.send`` writes a short line at once, on the thread that sends it, when nothing
is queued ahead of it and the pipe has room; everything else goes through the writer thread.
The tests hold the interpreter's thread switching off (``sys.setswitchinterval``) where they
check "at once", so the writer thread cannot have done the write in the meantime.
"""

from __future__ import annotations

import sys
import textwrap
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

import atomic_jupyter as aj
from atomic_jupyter.transport.process import FAST_WRITE_MAX, AgentProcess
from tests.harness.dialog_output import DialogOutput
from tests.harness.output_page import page_text, press
from tests.harness.support import stop_quietly, thread_switch_interval, unique_name, wait_until

#: A child that reads nothing until the file named by its argument exists, then copies its
#: stdin to its stdout.
GATED_CAT = textwrap.dedent(
    """
    import os, sys, time
    gate = sys.argv[1]
    deadline = time.monotonic() + 60
    while not os.path.exists(gate) and time.monotonic() < deadline:
        time.sleep(0.01)
    while chunk := os.read(0, 65536):
        os.write(1, chunk)
    """
)


def no_thread_switches() -> AbstractContextManager[None]:
    """Let no other Python thread run until this thread blocks."""
    return thread_switch_interval(1000.0)


class Gated:
    """An :class:`AgentProcess` whose child reads only once :meth:`open` is called."""

    def __init__(self, tmp_path: Path) -> None:
        self.gate = tmp_path / "gate"
        self.received = bytearray()
        self._lock = threading.Lock()
        self.process = AgentProcess(
            [sys.executable, "-c", GATED_CAT, str(self.gate)], on_data=self._data
        )
        self.process.start()

    def _data(self, data: bytes) -> None:
        with self._lock:
            self.received += data

    def open(self) -> None:
        self.gate.touch()

    def wait_received(self, size: int) -> bytes:
        wait_until(lambda: len(self.received) >= size, f"{size} bytes echoed back", 30)
        with self._lock:
            return bytes(self.received)


@pytest.fixture
def gated(tmp_path: Path) -> Iterator[Gated]:
    g = Gated(tmp_path)
    try:
        yield g
    finally:
        g.open()
        g.process.stop()


def test_a_short_line_is_in_the_pipe_when_send_returns(gated: Gated) -> None:
    line = b'{"type":"extension_ui_response","id":"a","value":"Alpha"}\n'
    with no_thread_switches():
        delivery = gated.process.send(line)
        written_at_return = delivery.done.is_set() and delivery.written
    assert written_at_return, "the line was left to the writer thread"
    assert delivery.end_offset == len(line)
    gated.open()
    assert gated.wait_received(len(line)) == line


def test_a_line_over_the_atomic_size_goes_through_the_writer(gated: Gated) -> None:
    line = b"x" * FAST_WRITE_MAX + b"\n"
    with no_thread_switches():
        delivery = gated.process.send(line)
        written_at_return = delivery.done.is_set()
    assert not written_at_return
    assert delivery.wait(10) and delivery.end_offset == len(line)
    gated.open()
    assert gated.wait_received(len(line)) == line


def test_lines_keep_their_order_when_the_pipe_fills(gated: Gated) -> None:
    """Short lines go straight in until the pipe is full; then they queue behind each other,
    and a short line sent after a queued long one waits for it."""
    lines = [f"{i:06d}".encode() + b"." * 90 + b"\n" for i in range(3000)]  # ~290 KB
    lines.insert(1500, b"L" * 100_000 + b"\n")
    at_return = []
    for line in lines:
        delivery = gated.process.send(line)
        at_return.append(delivery.done.is_set())
    assert at_return[0] and not at_return[-1], "the pipe never filled, or never took a line"
    gated.open()
    assert gated.wait_received(sum(map(len, lines))) == b"".join(lines)


@pytest.mark.agent
@pytest.mark.one_line  # the order of our write and our view; the select is tested on both lines
def test_a_click_writes_the_answer_before_the_page_changes(
    agent_command: list[str], ui_extension: str
) -> None:
    session = aj.start(
        command=agent_command,
        extensions=[ui_extension],
        name=unique_name("answer-write"),
        display=False,
    )
    try:
        run = session.prompt("/ui-select", display=False)
        dialog = wait_until(
            lambda: next((d for d in session.dialogs if d.pending), None), "a select dialog", 30
        )
        output = DialogOutput(dialog, on_rule=None)
        seen: list[Any] = []
        send = output.widget.send

        def look_then_send(message: Any, buffers: Any = None) -> None:
            seen.append(dialog.delivery is not None and dialog.delivery.done.is_set())
            send(message, buffers)

        output.widget.send = look_then_send  # type: ignore[method-assign]
        beta = output.content.dialogs[dialog.id]["options"].index("Beta")
        click = {"type": "dialog", "id": dialog.id, "action": "choose", "index": beta}
        with no_thread_switches():
            press(output.widget, click)
        assert seen and seen[0] is True, "the page changed before the answer was in the pipe"
        assert dialog.id not in output.content.dialogs  # the controls are gone
        assert "→ Beta (clicked)" in " ".join(page_text(output.widget).split())  # settled
        wait_until(
            lambda: any('got select: "Beta"' in n["message"] for n in session.notifications),
            "the extension to receive the answer",
            30,
        )
        assert run.wait_answered(30)
    finally:
        stop_quietly(session)
