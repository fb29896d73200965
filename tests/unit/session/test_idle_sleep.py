"""Idle agents sleep and wake (``AtomicAgent.idle_sleep_minutes``), and a busy one keeps its
kernel counted as active (:mod:`atomic_jupyter.session.idle`).

The watch on its own with fakes first (when it sleeps, when it signals), the state machine's
``"asleep"``, then the real agent on the demo model: an agent left idle is stopped (its process
gone), the next prompt starts it again on the same saved conversation and says so; one that
waits on a dialog is not stopped and signals activity meanwhile.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from atomic_jupyter.session import idle
from atomic_jupyter.session.idle import IdleWatch, beat_interval
from atomic_jupyter.session.lifecycle import Lifecycle, Phase, Step
from atomic_jupyter.session.session import AgentSession
from atomic_jupyter.session.settings import SessionSettings
from atomic_jupyter.transport.launch import LaunchSpec
from atomic_jupyter.transport.private_files import FILE_MODE
from tests.harness.support import (
    PINNED_AGENT,
    STANDIN,
    gone,
    stop_quietly,
    unique_name,
    wait_until,
)

# --------------------------------------------------------------------------- the watch alone


class Agent:
    """What the watch looks at, set by the test."""

    def __init__(self) -> None:
        self.busy = False
        self.slept = threading.Event()

    def sleep(self) -> bool:
        self.slept.set()
        return True


@pytest.fixture
def signals(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[float]]:
    """The activity signals sent (the kernel's IOPub message stands in for a list)."""
    sent: list[float] = []
    monkeypatch.setattr(idle, "_signal", lambda: sent.append(1.0))
    yield sent


def watch(agent: Agent, minutes: float, beat: float = 0.05) -> IdleWatch:
    return IdleWatch(minutes=lambda: minutes, busy=lambda: agent.busy, sleep=agent.sleep, beat=beat)


def test_an_idle_agent_is_put_to_sleep_once_its_idle_time_is_up(signals: list[float]) -> None:
    agent = Agent()
    watched = watch(agent, minutes=0.002)  # 0.12 s
    watched.start()
    assert agent.slept.wait(10), "the idle agent was not put to sleep"
    assert signals == []  # an idle agent says nothing: an idle server can be culled


def test_a_busy_agent_never_sleeps_and_signals_activity(signals: list[float]) -> None:
    agent = Agent()
    agent.busy = True
    watched = watch(agent, minutes=0.001)
    watched.start()
    wait_until(lambda: len(signals) >= 5, "five activity signals while busy", 10)
    assert not agent.slept.is_set()
    agent.busy = False  # the run ended: the idle time counts from the last busy check
    assert agent.slept.wait(10), "the agent was not put to sleep once idle"
    watched.stop()


def test_an_agent_busy_at_a_check_sleeps_on_time_once_idle_not_a_beat_later(
    signals: list[float],
) -> None:
    """A watch that found the agent busy looked again only a beat later (a minute): an agent
    still settling its run at that check (the 0.73 line asks whether it still streams) slept a
    minute late (a flaky test on a loaded machine). It looks again within the idle time."""
    agent = Agent()
    agent.busy = True
    watched = watch(agent, minutes=0.002, beat=600)  # 0.12 s idle; a beat of ten minutes
    checks_before = watched.checks
    watched.start()
    wait_until(lambda: watched.checks > checks_before, "a check while the agent is busy", 10)
    agent.busy = False
    assert agent.slept.wait(10), "the agent idle since slept a beat late"
    watched.stop()


def test_no_sleep_when_it_is_off_or_the_agent_was_stopped(signals: list[float]) -> None:
    off, stopped = Agent(), Agent()
    watch(off, minutes=0).start()
    early = watch(stopped, minutes=0.002)
    early.start()
    early.stop()
    control = Agent()
    watch(control, minutes=0.004).start()  # later than the other two would have slept
    assert control.slept.wait(10)
    assert not off.slept.is_set() and not stopped.slept.is_set()


def test_a_command_counts_as_activity(signals: list[float]) -> None:
    agent = Agent()
    watched = watch(agent, minutes=0.01, beat=0.05)  # 0.6 s
    watched.start()
    stop = threading.Event()

    def commands() -> None:  # a command every 0.1 s
        while not stop.wait(0.1):
            watched.touch()

    sender = threading.Thread(target=commands, daemon=True)
    sender.start()
    try:
        assert not agent.slept.wait(1.5), "an agent sent commands was put to sleep"
    finally:
        stop.set()
    assert agent.slept.wait(10)


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, 60.0),
        ({"JUPYTERHUB_ACTIVITY_INTERVAL": "300"}, 60.0),
        ({"JUPYTERHUB_ACTIVITY_INTERVAL": "10"}, 10.0),
        ({"JUPYTERHUB_ACTIVITY_INTERVAL": "0"}, 60.0),
        ({"JUPYTERHUB_ACTIVITY_INTERVAL": "soon"}, 60.0),
        ({"JUPYTERHUB_ACTIVITY_INTERVAL": "0.1"}, 0.5),
    ],
)
def test_the_signal_comes_once_a_minute_or_as_often_as_the_hub_asks(
    environ: dict[str, str], expected: float
) -> None:
    assert beat_interval(environ) == expected


# --------------------------------------------------------------------------- the state machine


def test_a_sleep_ends_asleep_and_a_launch_or_a_stop_leaves_it() -> None:
    life = Lifecycle(Phase.IDLE)
    life.request_stop(sleep=True)
    assert life.exited(0) and life.state == "asleep" and life.ended
    life.take(Step.BEGIN)
    assert life.state == "starting"
    asleep = Lifecycle(Phase.IDLE)
    asleep.request_stop(sleep=True)
    asleep.exited(0)
    asleep.take(Step.STOPPED)
    assert asleep.state == "stopped"


def test_a_stop_asked_for_wins_over_a_sleep() -> None:
    for first, second in ((False, True), (True, False)):
        life = Lifecycle(Phase.IDLE)
        life.request_stop(sleep=first)
        life.request_stop(sleep=second)
        life.exited(0)
        assert life.state == "stopped", (first, second)


# --------------------------------------------------------------------------- the real agent

real_agent = pytest.mark.agent


def demo_session(tmp_path: Path, minutes: float) -> AgentSession:
    settings = SessionSettings(idle_sleep_minutes=minutes, conversations_dir=str(tmp_path))
    spec = LaunchSpec(command=[str(PINNED_AGENT)], demo=True)
    return AgentSession(unique_name("idle"), spec, config=settings)


def user_texts(session: AgentSession) -> list[str]:
    messages = session.get_messages()["messages"]
    texts = []
    for message in messages:
        if message.get("role") != "user":
            continue
        content = message.get("content")
        parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
        texts += [p.get("text", "") for p in parts if isinstance(p, dict)]
    return texts


@real_agent
def test_an_idle_agent_sleeps_and_the_next_prompt_continues_its_conversation(
    tmp_path: Path,
) -> None:
    session = demo_session(tmp_path, minutes=0.02)  # 1.2 s
    try:
        session.start()
        first = session.prompt("hello there", display=False)
        session.wait(run=first, timeout=60)
        pid, conversation = session.pid, session.addon("conversations").path
        assert pid is not None and conversation is not None
        wait_until(lambda: session.state == "asleep", "the idle agent to sleep", 30)
        assert gone(pid), "the agent put to sleep still runs"
        assert not session.alive
        assert conversation.stat().st_mode & 0o777 == FILE_MODE

        second = session.prompt("hello again", display=False)
        session.wait(run=second, timeout=60)
        assert session.pid not in (None, pid)
        notes = [b.text for b in second.transcript.blocks if getattr(b, "kind", "") == "note"]
        assert any("was asleep" in n and "same conversation" in n for n in notes), notes
        assert user_texts(session) == ["hello there", "hello again"]  # one conversation
        assert session.addon("conversations").path == conversation
        assert not any("was asleep" in getattr(b, "text", "") for b in first.transcript.blocks)
    finally:
        stop_quietly(session)
    assert session.state == "stopped"


@real_agent
def test_an_agent_waiting_on_a_dialog_stays_awake_and_signals_activity(
    tmp_path: Path, signals: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUPYTERHUB_ACTIVITY_INTERVAL", "0.5")
    session = demo_session(tmp_path, minutes=0.01)  # 0.6 s
    try:
        session.start()
        run = session.prompt("/demo-confirm", display=False)
        wait_until(lambda: session.pending_dialogs, "the demo's confirm dialog", 30)
        wait_until(lambda: len(signals) >= 4, "activity signals while the dialog waits", 30)
        assert session.state != "asleep" and session.alive  # 2 s waiting: 3x the idle time
        session.pending_dialogs[0].respond(True)
        session.wait(run=run, timeout=60)
        wait_until(lambda: session.state == "asleep", "the agent to sleep once idle", 30)
    finally:
        stop_quietly(session)


# --------------------------------------------------------------------------- site defaults


def test_a_sites_model_and_answers_reach_every_new_session_unless_a_start_says_otherwise(
    tmp_path: Path,
) -> None:
    """``c.AtomicAgent.provider``, ``model`` and ``answer_policies`` (an admin's environment
    config, or the user's own) apply to each start; a start's own options win; the demo keeps
    its own model."""
    import atomic_jupyter as aj
    from atomic_jupyter.notebook.config import AtomicAgent

    config = AtomicAgent(
        provider="anthropic",
        model="claude-sonnet-4-5",
        answer_policies=[{"method": "select", "title": "Dangerous command", "answer": "Block"}],
        conversations_dir=str(tmp_path),
    )
    name = unique_name("site")
    session = aj.start(name=name, command=STANDIN, config=config, display=False, save=False)
    try:
        argv = session.argv
        assert argv[argv.index("--provider") + 1] == "anthropic"
        assert argv[argv.index("--model") + 1] == "claude-sonnet-4-5"
        (policy,) = session.policies
        assert (policy.method, policy.title, policy.answer) == (
            "select",
            "Dangerous command",
            "Block",
        )
        own = aj.start(
            name=name,
            command=STANDIN,
            config=config,
            display=False,
            save=False,
            provider="openai",
            model="gpt-5",
        )
        assert own.argv[own.argv.index("--model") + 1] == "gpt-5"
        assert own.argv.count("--provider") == 1
    finally:
        stop_quietly(aj.session(name))


def test_a_malformed_answer_policy_setting_is_refused_with_what_is_wrong() -> None:
    from traitlets import TraitError

    from atomic_jupyter.notebook.config import AtomicAgent

    for bad, said in (
        ([{"titel": "x", "answer": "y"}], "unknown keys ['titel']"),
        ([{"title": "x"}], 'needs one of "answer" and "cancel": true'),
        ([{"answer": "y", "method": "pick"}], "method 'pick' is not"),
        ([{"answer": "y", "title": "(unclosed"}], "title is not a regular expression"),
    ):
        with pytest.raises(TraitError, match=re.escape(said)):
            AtomicAgent(answer_policies=bad)


@real_agent
def test_an_agent_whose_conversation_is_not_saved_never_sleeps(tmp_path: Path) -> None:
    """``--no-save``: stopping the agent would lose its conversation, so it stays awake."""
    settings = SessionSettings(idle_sleep_minutes=0.001, conversations_dir=str(tmp_path))
    spec = LaunchSpec(command=[str(PINNED_AGENT)], demo=True, save=False)
    unsaved = AgentSession(unique_name("unsaved"), spec, config=settings)
    saved = demo_session(tmp_path, minutes=0.001)
    try:
        unsaved.start()
        saved.start()
        wait_until(lambda: saved.state == "asleep", "the saved session's agent to sleep", 30)
        # Its watch checked at least once, long after its idle time was up.
        wait_until(lambda: unsaved._idle.checks >= 1, "the unsaved session's first check", 30)
        assert unsaved.alive and unsaved.state == "idle"
    finally:
        stop_quietly(unsaved)
        stop_quietly(saved)


@real_agent
def test_a_prompt_that_comes_as_the_agent_goes_to_sleep_still_runs(tmp_path: Path) -> None:
    """The sleep and a command meet: either the command comes first (the agent stays awake)
    or the sleep does (the command finds it asleep and wakes it), never "not running" in
    between (seen on a loaded hub: the process gone, its exit not yet recorded)."""
    session = demo_session(tmp_path, minutes=0.0005)  # 30 ms: due at once when idle
    try:
        session.start()
        for round_ in range(4):
            wait_until(lambda: session.state in ("idle", "asleep"), "an idle agent", 30)
            wait_until(lambda: session._idle.due() or session.state == "asleep", "due", 30)
            sleeper = threading.Thread(target=session._launcher.sleep)
            sleeper.start()
            if round_ % 2:
                threading.Event().wait(0.05)  # let the sleep take the lock first
            run = session.prompt(f"hello {round_}", display=False)
            assert session.wait(run=run, timeout=60).reason == "finished"
            sleeper.join(10)
            assert run.text, run.transcript.blocks
    finally:
        stop_quietly(session)
