"""Session clean-up through the real agent: stopping, restarting, replacing a session, or the
interpreter exiting leaves no temporary folder (prototypes, the demo's private agent home),
no listener and no thread of the session behind."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
import threading
from pathlib import Path

import pytest

import atomic_jupyter as aj
from atomic_jupyter.transport.launch import LaunchSpec
from tests.harness.support import wait_until

# Our own folders, listeners and threads; starting, stopping and exits are tested on both lines
# by test_agent_session and test_kernel_magic.
pytestmark = [pytest.mark.agent, pytest.mark.one_line]

OURS = ("atomic-prototypes-", "atomic-demo-agent-")


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(OURS))


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary directory of this test's own, where the sessions make their folders."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def test_start_restart_and_stop_leave_no_temporary_folder(
    agent_command: list[str], private_tmp: Path
) -> None:
    session = aj.AgentSession("cleanup", LaunchSpec(command=agent_command, demo=True))
    session.start(timeout=60)
    assert len(leftovers(private_tmp)) == 2  # the prototypes' folder and the demo's home
    prototypes = session.prototypes.folder
    assert prototypes is not None
    session.restart(timeout=60)
    assert session.prototypes.folder == prototypes  # kept across a restart
    assert len(leftovers(private_tmp)) == 2  # the old demo home went with the old agent
    assert session.stop() is not None
    assert leftovers(private_tmp) == []
    assert not prototypes.exists()
    session.start(timeout=60)  # a stopped session can start again, with fresh folders
    assert len(leftovers(private_tmp)) == 2
    session.stop()
    assert leftovers(private_tmp) == []


def test_a_session_replaced_by_name_or_crashed_leaves_no_folder(
    agent_command: list[str], private_tmp: Path
) -> None:
    first = aj.start(command=agent_command, name="replaced", display=False, timeout=60)
    first.client.process.stop()  # the agent dies under the session
    assert first.client.process.wait_exit(10)
    assert first.state == "exited"
    second = aj.start(command=agent_command, name="replaced", display=False, timeout=60)
    assert len(leftovers(private_tmp)) == 1  # only the new session's
    second.stop()
    assert leftovers(private_tmp) == []


def test_stop_leaves_no_listener_or_thread_of_the_session(agent_command: list[str]) -> None:
    session = aj.AgentSession("threads", LaunchSpec(command=agent_command)).start(timeout=60)
    assert len(session.event_listeners) == 1  # the prototypes addon listens for handler errors
    assert session.prototypes.folder is not None
    pid = session.pid

    def ours() -> list[str]:
        names = [t.name for t in threading.enumerate()]
        return [n for n in names if n.endswith((f"-{pid}", "-threads"))]

    assert len(ours()) == 4  # stdout reader, stderr drain, stdin writer, exit watcher
    session.stop()
    assert len(session.event_listeners) == 0
    assert session.prototypes.folder is None
    wait_until(lambda: ours() == [], "the session's threads to end", timeout=10)


def test_the_interpreter_exiting_leaves_no_temporary_folder(
    agent_command: list[str], tmp_path: Path
) -> None:
    folder = tmp_path / "tmp"
    folder.mkdir()
    script = textwrap.dedent(
        f"""
        import atomic_jupyter as aj
        s = aj.start(command={agent_command!r}, demo=True, display=False, timeout=60)
        assert s.alive
        print("started", flush=True)
        """
    )
    env = {**os.environ, "TMPDIR": str(folder)}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "started"
    assert leftovers(folder) == []
