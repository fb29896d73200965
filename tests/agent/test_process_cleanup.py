"""Process clean-up: nothing is left behind, checked by process id (and port) after each way to end."""

from __future__ import annotations

import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import atomic_jupyter as aj
from tests.harness.kernel_client import BrowserLikeKernel
from tests.harness.support import STANDIN, gone, wait_until

# The stand-in agent, and the demo model's own server and folder: no line's behaviour.
pytestmark = [pytest.mark.agent, pytest.mark.one_line]


def port_open(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_restart_ends_the_old_process_and_keeps_the_session() -> None:
    session = aj.start(command=STANDIN, name="life-restart", display=False)
    old = session.pid
    session.restart()
    assert gone(old) and session.alive and session.pid != old
    session.stop()
    assert gone(session.pid)


def test_starting_again_under_the_same_name_replaces_the_old_agent() -> None:
    first = aj.start(command=STANDIN, name="life-rerun", display=False)
    second = aj.start(command=STANDIN, name="life-rerun", display=False)
    assert gone(first.pid) and first.state == "stopped"
    assert aj.session("life-rerun") is second and second.alive
    second.stop()


def test_sessions_side_by_side_are_independent() -> None:
    a = aj.start(command=STANDIN, name="life-a", display=False)
    b = aj.start(command=STANDIN, name="life-b", display=False)
    a.prompt("/scenario dialogs 1", display=False)
    wait_until(lambda: a.pending_dialogs, "the dialog of session a", 10)
    assert len(a.pending_dialogs) == 1 and b.pending_dialogs == []
    a.stop()
    assert b.alive and b.get_state()["isStreaming"] is False
    b.stop()


def test_the_demo_model_server_stops_with_the_session(agent_command: list[str]) -> None:
    session = aj.start(command=agent_command, demo=True, name="life-demo", display=False)
    backend = session.addon("demo").backend
    port, home = backend.server.port, backend.home
    assert port_open(port)
    session.stop()
    assert not port_open(port) and not home.exists()


def test_interpreter_exit_ends_the_agent(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import atomic_jupyter as aj
        s = aj.start(command={STANDIN!r}, display=False)
        print(s.pid, flush=True)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert gone(int(done.stdout.split()[-1]))


def test_kernel_restart_and_shutdown_end_the_agent(tmp_path: Path) -> None:
    with BrowserLikeKernel(tmp_path) as kernel:
        kernel.execute("%load_ext atomic_jupyter")
        kernel.execute(f"import atomic_jupyter as aj\ns = aj.start(command={STANDIN!r})")
        first = int(kernel.execute("print(s.pid)").stdout)
        kernel.km.restart_kernel(now=False)
        assert gone(first)
        kernel.kc.wait_for_ready(timeout=60)
        kernel.execute(f"import atomic_jupyter as aj\ns = aj.start(command={STANDIN!r})")
        kernel.execute(
            "t = aj.start(command=" + repr(STANDIN) + ", name='other')"
        )  # used from another cell
        second = int(kernel.execute("print(s.pid)").stdout)
        other = int(kernel.execute("print(aj.session('other').pid)").stdout)
    assert gone(second) and gone(other)
