"""A session's state: every change a check-and-set under one lock, and the end of the agent
("exited", "stopped") final until the next start, whatever thread comes late.

The reader thread follows the agent's events (``agent_start`` -> "working", the idle event ->
"idle") while the exit watcher records the exit; an event handled as the agent exits must
not overwrite "exited". The stress test runs both at once, many times, with the interpreter
switching threads as often as it can.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from atomic_jupyter.protocol.agent_line import AgentLine
from atomic_jupyter.protocol.messages import AgentEvent
from atomic_jupyter.session.lifecycle import STATES, Lifecycle, Step
from atomic_jupyter.session.session import AgentSession
from atomic_jupyter.transport.launch import LaunchSpec

#: How many times the agent exits while events stream (before the fix, about 1 in 20 of
#: these exits was overwritten by a late event).
REPEATS = 1000


def test_a_launch_goes_from_starting_to_idle_and_working_and_back() -> None:
    life = Lifecycle()
    assert life.state == "new" and not life.ended
    life.begin(AgentLine("pi", "1.0.0"), None)
    assert life.state == "starting" and life.agent.version == "1.0.0"
    assert life.take(Step.STARTED) and life.state == "working"  # an agent_start during start-up
    assert life.take(Step.ENDED) and life.state == "idle"
    assert not life.started()  # no longer starting: nothing to do
    assert not life.take(Step.ENDED) and life.state == "idle"
    assert life.take(Step.STARTED) and not life.take(Step.STARTED) and life.state == "working"


@pytest.mark.parametrize("stop", [False, True], ids=["exited", "stopped"])
def test_the_end_of_the_agent_is_final_until_the_next_start(stop: bool) -> None:
    life = Lifecycle()
    life.begin(AgentLine(), None)
    assert life.started()
    if stop:
        life.request_stop()
    assert life.exited(3) is stop
    end = "stopped" if stop else "exited"
    assert life.state == end and life.ended and life.exit_code == 3
    for late in (Step.STARTED, Step.ENDED, Step.SETTLED, Step.ANSWERED, Step.LAUNCH_FAILED):
        assert not life.take(late), late.name
        assert life.state == end
    life.begin(AgentLine(), None)  # a new launch: no exit code, no stop request
    assert (life.state, life.exit_code, life.ended) == ("starting", None, False)
    assert life.exited(0) is False and life.state == "exited"


def test_a_launch_that_cannot_spawn_the_agent_has_exited() -> None:
    life = Lifecycle()
    assert not life.launch_failed() and life.state == "new"  # not starting: nothing to do
    life.begin(AgentLine(), None)
    assert life.launch_failed() and life.state == "exited"


def test_forcing_a_state_takes_only_a_known_one() -> None:
    life = Lifecycle()
    life.force("starting")
    assert life.state == "starting"
    with pytest.raises(ValueError, match="not 'running'"):
        life.force("running")
    assert set(STATES) == {"new", "starting", "idle", "working", "exited", "stopped", "asleep"}


@pytest.fixture
def session() -> Iterator[AgentSession]:
    """A session that never starts: its handlers are driven directly, as the agent's threads
    would call them."""
    yield AgentSession("state-race", LaunchSpec(command=["true"]))


class Stream:
    """The reader thread: runs start and end (``agent_start``, then the idle event) until
    stopped, counting each run, so another thread can wait for it to get on."""

    def __init__(self, session: AgentSession) -> None:
        self.session = session
        self.runs = 0
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._counted = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="stand-in-reader")

    def __enter__(self) -> Stream:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)
        assert not self._thread.is_alive(), "the stand-in reader is stuck"

    def _run(self) -> None:
        start = AgentEvent("agent_start", {})
        idle = AgentEvent(self.session.tracker.idle_after, {})
        try:
            while not self._stop.is_set():
                self.session._inbox.event(start)
                self.session._inbox.event(idle)
                with self._counted:
                    self.runs += 1
                    self._counted.notify_all()
        except BaseException as exc:
            self.error = exc

    def wait_runs(self, count: int) -> None:
        """Block until the stream has handled ``count`` more runs."""
        with self._counted:
            target = self.runs + count
            assert self._counted.wait_for(lambda: self.runs >= target or self.error, 10)
        assert self.error is None, self.error


def test_an_event_sequence_after_the_exit_changes_nothing(session: AgentSession) -> None:
    session.state = "idle"
    session._launcher.on_exit(1)
    for kind in ("agent_start", "agent_end", "agent_settled", "agent_start"):
        session._inbox.event(AgentEvent(kind, {}))
    assert session.state == "exited" and session.returncode == 1


@pytest.mark.usefixtures("fast_thread_switching")
def test_events_handled_as_the_agent_exits_never_overwrite_exited(
    session: AgentSession,
) -> None:
    """While the reader thread streams runs (the state going "idle" <-> "working"), the exit
    watcher records the exit, many times over; once the reader has gone on after the exit,
    the state is still "exited", every time."""
    seen: dict[str, int] = {}
    with Stream(session) as stream:
        for _ in range(REPEATS):
            session.tracker.reset()  # as a new launch does
            session.state = "idle"
            stream.wait_runs(1)  # the exit comes at some point of a run's events
            session._launcher.on_exit(1)
            stream.wait_runs(2)  # an event caught half-way is over
            seen[session.state] = seen.get(session.state, 0) + 1
    assert seen == {"exited": REPEATS}, f"after {REPEATS} exits: {seen}"
