"""Stopping ends the agent's whole process tree, and "delivered" means the agent read it.

The first half runs the real pinned agent (the line under test, ``ATOMIC_TEST_AGENT``) on a
scripted model that calls the ``bash`` tool with a long-running command, waits until that
command's processes run (found in ``/proc`` by a unique number in their command line), ends
the agent in each way (stop, restart, a crash) and checks that none of them is left. The agent
starts its tools in process groups of their own, so ending the agent's group is not enough.

The second half checks :class:`~atomic_jupyter.transport.process.Delivery` against small
Python children that read some of their input, or all of it, and against the stand-in agent.
Nothing here sleeps hoping that something happened: every wait polls a condition under a
deadline.
"""

from __future__ import annotations

import os
import random
import signal
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import atomic_jupyter as aj
from atomic_jupyter.addons.model_server import (
    ChatRequest,
    Text,
    ToolCall,
    Turn,
    Usage,
    agent_args,
)
from atomic_jupyter.session.session import AgentSession
from atomic_jupyter.transport import delivery as delivery_module
from atomic_jupyter.transport.process import AgentProcess, Delivery
from tests.harness.kernel_client import BrowserLikeKernel
from tests.harness.plugin import agent_kernel_env
from tests.harness.support import (
    STANDIN,
    processes_where,
    scripted_agent_home,
    stop_quietly,
    unique_name,
    wait_until,
)

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")

#: What the user says to have the scripted model run ``COMMAND`` with the bash tool.
RUN = "please run: "

#: Seconds everything of an ended agent has to be gone in.
GONE_WITHIN = 5.0


# --------------------------------------------------------------------------- processes


def new_marker() -> str:
    """A number no other process has in its command line: ``sleep MARKER`` runs for days."""
    return f"{random.randint(100000, 999999)}.{os.getpid()}{random.randint(100, 999)}"


def marked(marker: str) -> list[int]:
    """The running processes (zombies left out) whose command line holds ``marker``."""
    found = []
    needle = marker.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read()
            with open(f"/proc/{entry}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in cmdline and state != b"Z":
            found.append(int(entry))
    return found


def sleeps(marker: str) -> list[int]:
    """The running ``sleep MARKER`` processes."""
    found = []
    for pid in marked(marker):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if argv[:2] == [b"sleep", marker.encode()]:
            found.append(pid)
    return found


def none_left(marker: str) -> bool:
    return not marked(marker)


def kill_marked(marker: str) -> None:
    """Clean-up after a failed test: end what the test left running."""
    for pid in marked(marker):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


# --------------------------------------------------------------------------- the real agent


def script(request: ChatRequest) -> Turn:
    """``please run: COMMAND`` has the model call bash with ``COMMAND``; then it says so."""
    text = request.last_user_text
    if text.startswith(RUN) and request.turn_index == 0:
        return Turn([ToolCall("bash", {"command": text[len(RUN) :]})], usage=Usage(50, 10))
    return Turn([Text("ran it")], usage=Usage(60, 5))


@pytest.fixture(scope="module")
def tool_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, list[str]]]:
    """A scripted model whose only trick is running a command; ``(agent_home, agent_args)``."""
    home = tmp_path_factory.mktemp("tree-agent-home")
    with scripted_agent_home(home, script) as server:
        yield home, agent_args(server)


@pytest.fixture
def marker() -> Iterator[str]:
    value = new_marker()
    yield value
    kill_marked(value)


@pytest.fixture
def tool_session(
    agent_command: list[str], tool_model: tuple[Path, list[str]], tmp_path: Path
) -> Iterator[AgentSession]:
    """A session on the tool model, working in the test's ``tmp_path``; stopped at the end."""
    home, args = tool_model
    session = aj.start(
        command=agent_command,
        env={"PI_CODING_AGENT_DIR": str(home)},
        extra_args=args,
        cwd=str(tmp_path),
        name=unique_name("tree"),
        display=False,
    )
    try:
        yield session
    finally:
        stop_quietly(session)


def run_tool(session: AgentSession, command: str, marker: str, count: int = 1) -> list[int]:
    """Have the agent run ``command`` with its bash tool; wait until ``count`` processes
    ``sleep MARKER`` run; return their ids."""
    started = threading.Event()

    def on_event(event: Any) -> None:
        if event.type == "tool_execution_start":
            started.set()

    subscription = session.on_event(on_event)
    try:
        session.prompt(RUN + command, display=False)
        assert started.wait(60), "the agent did not start its bash tool"
    finally:
        subscription.remove()
    return wait_until(
        lambda: (found := sleeps(marker)) and len(found) >= count and found,
        f"{count} 'sleep {marker}' process(es) of the tool",
        30,
    )


@pytest.mark.agent
def test_stop_ends_the_processes_of_a_running_bash_tool(
    marker: str, tool_session: AgentSession
) -> None:
    session = tool_session
    # The shell stays (it waits for its child): the tool's group has two processes.
    run_tool(session, f"sleep {marker} & wait", marker)
    assert len(marked(marker)) == 2
    session.stop()
    assert not session.alive
    wait_until(lambda: none_left(marker), "the tool's processes to be gone", GONE_WITHIN)


@pytest.mark.agent
def test_restart_ends_the_processes_of_a_running_bash_tool(
    marker: str, tool_session: AgentSession
) -> None:
    session = tool_session
    # One sleep in the tool's process group, one in a session of its own.
    run_tool(session, f"setsid sleep {marker} & sleep {marker} & wait", marker, count=2)
    old = session.pid
    session.restart()
    assert session.alive and session.pid != old
    wait_until(lambda: none_left(marker), "the tool's processes to be gone", GONE_WITHIN)


@pytest.mark.agent
def test_a_crashed_agents_tool_processes_are_ended(marker: str, tool_session: AgentSession) -> None:
    session = tool_session
    run_tool(session, f"sleep {marker} & wait", marker)
    assert session.pid is not None
    os.kill(session.pid, signal.SIGKILL)  # no clean-up of its own
    wait_until(lambda: session.state == "exited", "the session to notice the crash", 10)
    wait_until(lambda: none_left(marker), "the tool's processes to be gone", GONE_WITHIN)


@pytest.mark.agent
def test_stop_ends_what_a_tool_started_in_a_session_of_its_own(
    marker: str, tool_session: AgentSession
) -> None:
    session = tool_session
    # One sleep leaves the tool's process group (as a daemon would); the tool goes on.
    run_tool(session, f"setsid sleep {marker} & sleep {marker} & wait", marker, count=2)
    session.stop()
    wait_until(lambda: none_left(marker), "the tool's processes to be gone", GONE_WITHIN)


# --------------------------------------------------------------------------- the agent's group


@pytest.fixture
def leaving_a_child(marker: str) -> Iterator[AgentProcess]:
    """An agent, started, that exits at the end of its input but leaves a child (``sleep
    MARKER``) behind in its group; stopped at the end."""
    process = AgentProcess(
        ["bash", "-c", f"sleep {marker} & read -r line; exit 0"], on_data=lambda data: None
    )
    process.start()
    try:
        yield process
    finally:
        process.stop()


def test_stop_ends_what_is_left_of_the_group_after_the_agent_exited(
    marker: str, leaving_a_child: AgentProcess
) -> None:
    process = leaving_a_child
    wait_until(lambda: sleeps(marker), "the agent's child", 10)
    started = time.monotonic()
    process.stop()
    assert process.wait_exit(5)
    wait_until(lambda: none_left(marker), "the agent's child to be gone", GONE_WITHIN)
    assert processes_where("pgrp", process.pid or 0) == []
    assert time.monotonic() - started < GONE_WITHIN


def test_a_crashed_agents_group_is_ended(marker: str, leaving_a_child: AgentProcess) -> None:
    process = leaving_a_child
    wait_until(lambda: sleeps(marker), "the agent's child", 10)
    assert process.pid is not None
    os.kill(process.pid, signal.SIGKILL)
    assert process.wait_exit(5)
    wait_until(lambda: none_left(marker), "the agent's child to be gone", GONE_WITHIN)


def test_an_agent_that_ignores_sigterm_is_killed_and_stop_keeps_to_its_deadline(
    marker: str,
) -> None:
    code = f"import signal, subprocess; signal.signal(signal.SIGTERM, signal.SIG_IGN); subprocess.run(['sleep', '{marker}'])"
    process = AgentProcess([sys.executable, "-c", code], on_data=lambda data: None)
    process.start()
    try:
        wait_until(lambda: sleeps(marker), "the agent's child", 10)
        started = time.monotonic()
        process.stop(grace=0.5)
        took = time.monotonic() - started
        assert process.returncode == -signal.SIGKILL
        wait_until(lambda: none_left(marker), "the agent's child to be gone", GONE_WITHIN)
        assert took < 5
    finally:
        process.stop()


# --------------------------------------------------------------------------- deliveries


def reading_child(lines_to_read: int) -> list[str]:
    """A child that reads ``lines_to_read`` lines (without reading ahead), says ``read N``
    after each, then waits for SIGUSR1 and exits, without reading anything more."""
    return [
        sys.executable,
        "-c",
        textwrap.dedent(
            f"""
            import os, signal, sys
            signal.signal(signal.SIGUSR1, lambda *a: os._exit(0))
            for n in range({lines_to_read}):
                line = b""
                while not line.endswith(b"\\n"):
                    line += os.read(0, 1)
                os.write(1, b"read %d\\n" % (n + 1))
            os.write(1, b"waiting\\n")
            while True:
                signal.pause()
            """
        ),
    ]


class Child:
    """An :class:`AgentProcess` running a small child, and what it wrote.

    ``at_exit`` is called on the exit watcher when the child has exited (where the session
    reports undelivered answers); what it returns is kept in ``seen_at_exit``.
    """

    def __init__(self, argv: list[str], at_exit: Any = None) -> None:
        self.output = b""
        self.seen_at_exit: Any = None
        self._at_exit = at_exit
        self.process = AgentProcess(argv, on_data=self._data, on_exit=self._exit)
        self.process.start()

    def _data(self, data: bytes) -> None:
        self.output += data

    def _exit(self, code: int) -> None:
        if self._at_exit is not None:
            self.seen_at_exit = self._at_exit()

    def said(self, text: str) -> bool:
        return text.encode() in self.output

    def finish(self) -> None:
        assert self.process.pid is not None
        os.kill(self.process.pid, signal.SIGUSR1)
        assert self.process.wait_exit(5)


def test_a_line_the_agent_never_read_is_written_but_not_delivered() -> None:
    later: list[Delivery] = []
    # What the exit watcher sees, where the session reports undelivered answers.
    child = Child(reading_child(1), at_exit=lambda: [(d.decided, d.delivered) for d in later])
    try:
        first = child.process.send(b"one\n")
        wait_until(lambda: child.said("read 1"), "the child to read the first line", 10)
        assert first.wait(5) and first.written
        wait_until(lambda: first.delivered, "the first line to count as read", 5)
        assert first.decided and first.error is None

        wait_until(lambda: child.said("waiting"), "the child to stop reading", 10)
        later.extend([child.process.send(b"two\n"), child.process.send(b"three\n")])
        second, third = later
        assert second.wait(5) and third.wait(5)
        assert second.written and third.written
        # Written into the pipe, not read: not delivered yet, and not decided while it runs.
        assert not second.delivered and not third.delivered
        assert not second.decided and not third.decided

        child.finish()
        assert child.seen_at_exit == [(True, False), (True, False)]
        for delivery in (second, third):
            assert delivery.wait_decided(2)
            assert delivery.delivered is False
            assert delivery.error is not None and "exited without reading it" in delivery.error
        assert first.delivered is True and first.error is None
    finally:
        child.process.stop()


def test_lines_the_agent_read_are_delivered() -> None:
    child = Child(reading_child(3))
    try:
        deliveries = [child.process.send(line) for line in (b"one\n", b"two\n", b"three\n")]
        wait_until(lambda: child.said("waiting"), "the child to read three lines", 10)
        wait_until(lambda: all(d.delivered for d in deliveries), "all to count as read", 5)
        child.finish()
        for delivery in deliveries:
            assert delivery.wait_decided(2) and delivery.delivered and delivery.error is None
    finally:
        child.process.stop()


def test_lines_that_could_not_be_written_are_neither_written_nor_delivered() -> None:
    child = Child(reading_child(0))
    try:
        wait_until(lambda: child.said("waiting"), "the child to start", 10)
        big = child.process.send(b"x" * (1 << 20) + b"\n")  # more than a pipe holds
        small = child.process.send(b"small\n")  # queued behind it
        assert not big.done.is_set()
        child.finish()
        for delivery in (big, small):
            assert delivery.wait_decided(2)
            assert not delivery.written and not delivery.delivered
            assert delivery.error is not None and "stdin is closed" in delivery.error
    finally:
        child.process.stop()


def test_without_fionread_a_written_line_counts_as_delivered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(delivery_module, "_unread_bytes", lambda fd: None)
    child = Child(reading_child(0))
    try:
        wait_until(lambda: child.said("waiting"), "the child to start", 10)
        delivery = child.process.send(b"never read\n")
        assert delivery.wait(5) and delivery.written
        assert delivery.delivered and delivery.decided
        child.finish()
        assert delivery.delivered
    finally:
        child.process.stop()


def test_an_answer_the_agent_never_read_is_reported_undelivered_when_it_exits() -> None:
    session = aj.start(command=STANDIN, name=unique_name("tree-deaf"), display=False)
    try:
        session.prompt("/scenario deaf", display=False)
        dialog = wait_until(
            lambda: session.pending_dialogs[0] if session.pending_dialogs else None, "the dialog"
        )
        dialog.respond("A")  # a small answer: it fits in the pipe, and nobody reads it
        delivery: Delivery = dialog.delivery
        assert delivery.wait(5) and delivery.written and not delivery.delivered
        assert session.pid is not None
        os.kill(session.pid, signal.SIGKILL)
        wait_until(lambda: session.state == "exited", "the session to notice the exit", 10)
        wait_until(lambda: "not delivered" in dialog.outcome, "the answer reported undelivered", 2)
        assert "exited without reading it" in dialog.outcome
        assert delivery.delivered is False
    finally:
        stop_quietly(session)


def test_an_answer_the_agent_read_is_not_reported_undelivered() -> None:
    session = aj.start(command=STANDIN, name=unique_name("tree-read"), display=False)
    try:
        session.answer_with("A")  # answered as it arrives, before the run ends
        session.prompt("/scenario dialogs 1", display=False)
        dialog = wait_until(lambda: session.dialogs and session.dialogs[0], "the dialog")
        wait_until(
            lambda: any("received" in n["message"] for n in session.notifications),
            "the stand-in to report the answer",
            10,
        )
        assert dialog.delivery.delivered and dialog.delivery.decided
        session.stop()
        assert dialog.delivery.delivered and "not delivered" not in dialog.outcome
    finally:
        stop_quietly(session)


# --------------------------------------------------------------------------- the kernel


@pytest.mark.agent
@pytest.mark.kernel
def test_kernel_restart_and_shutdown_end_the_processes_of_a_running_tool(
    agent_command: list[str], tool_model: tuple[Path, list[str]], tmp_path: Path
) -> None:
    """A notebook's kernel restarted, then shut down, each while the agent's bash tool runs:
    the tool's processes go with the agent."""
    home, args = tool_model
    env = agent_kernel_env(agent_command, home)
    first, second = new_marker(), new_marker()
    try:
        with BrowserLikeKernel(tmp_path, env=env) as kernel:
            for marker in (first, second):
                kernel.execute("%load_ext atomic_jupyter")
                kernel.execute(f"%atomic_agent start -- {' '.join(args)}")
                kernel.execute(f"%%atomic_agent\n{RUN}sleep {marker} & wait")
                wait_until(lambda m=marker: sleeps(m), f"the tool's 'sleep {marker}'", 60)
                if marker == first:
                    kernel.km.restart_kernel(now=False)
                    wait_until(lambda: none_left(first), "the tool gone with the kernel", 15)
                    kernel.kc.wait_for_ready(timeout=60)
        wait_until(lambda: none_left(second), "the tool gone with the kernel", 15)
    finally:
        kill_marked(first)
        kill_marked(second)
