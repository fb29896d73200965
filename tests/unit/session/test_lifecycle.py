"""The session's one state machine (its transition table: the session's state and what the
agent is doing), the run tracker taking its steps from the agent's events, and the tracker's
state read and written only under its lock."""

from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Any

import pytest

from atomic_jupyter.protocol.agent_line import AgentLine
from atomic_jupyter.protocol.messages import AgentEvent
from atomic_jupyter.session.lifecycle import (
    ENDED,
    RETRY_DUE,
    RUNNING,
    SHOWN,
    TRANSITIONS,
    IllegalTransition,
    Lifecycle,
    Phase,
    Step,
    advance,
)
from atomic_jupyter.session.run_tracker import RunTracker

A, S = Phase, Step
#: The steps the agent's events trigger (the agent may send them in any order).
AGENT_STEPS = [
    S.STARTED,
    S.ENDED,
    S.ENDED_TO_SETTLE,
    S.SETTLED,
    S.RETRY_ANNOUNCED,
    S.RETRY_OVER,
]
CURRENT = AgentLine("@earendil-works/pi-coding-agent", "1.6.0")
OLD = AgentLine("@mariozechner/pi-coding-agent", "0.73.1")


# --------------------------------------------------------------------------- the table


@pytest.mark.parametrize(
    "source, step, target",
    [
        (A.IDLE, S.STARTED, A.WORKING),
        (A.STARTING, S.STARTED, A.WORKING),  # an agent_start during start-up
        (A.RETRY_DUE, S.STARTED, A.WORKING),  # the retry has begun
        (A.WORKING_RETRY_DUE, S.STARTED, A.WORKING),
        (A.SETTLING, S.STARTED, A.WORKING),  # the run goes again before it settled
        (A.WORKING, S.ENDED, A.IDLE),
        (A.WORKING_RETRY_DUE, S.ENDED, A.IDLE),
        (A.WORKING, S.ENDED_TO_SETTLE, A.SETTLING),  # still "working" until agent_settled
        (A.WORKING, S.SETTLED, A.IDLE),
        (A.SETTLING, S.SETTLED, A.IDLE),
        (A.RETRY_DUE, S.SETTLED, A.IDLE),  # the agent gave up retrying
        (A.IDLE, S.RETRY_ANNOUNCED, A.RETRY_DUE),
        (A.WORKING, S.RETRY_ANNOUNCED, A.WORKING_RETRY_DUE),
        (A.RETRY_DUE, S.RETRY_OVER, A.IDLE),
        (A.WORKING_RETRY_DUE, S.RETRY_OVER, A.WORKING),
        (A.WORKING, S.RETRY_OVER, A.WORKING),  # the usual order: the retry's agent_start first
        (A.STARTING, S.ENDED, A.STARTING),  # still starting until the first answer
        (A.STARTING, S.ANSWERED, A.IDLE),
        (A.WORKING, S.ANSWERED, A.WORKING),  # the first answer after an agent_start
        (A.STARTING, S.LAUNCH_FAILED, A.EXITED),
        (A.NEW, S.STARTED, A.NEW),  # a session never started shows "new"
        (A.WORKING, S.EXITED, A.EXITED),
        (A.RETRY_DUE, S.STOPPED, A.STOPPED),
        (A.EXITED, S.BEGIN, A.STARTING),
        (A.WORKING, S.BEGIN, A.STARTING),
    ],
)
def test_each_named_transition(source: Phase, step: Step, target: Phase) -> None:
    assert advance(source, step) is target


def test_every_step_of_the_agent_is_legal_from_every_phase() -> None:
    """The agent's events may come in any order; the tracker never refuses one."""
    for phase in Phase:
        for step in AGENT_STEPS:
            advance(phase, step)


@pytest.mark.parametrize("step", AGENT_STEPS + [S.ANSWERED, S.LAUNCH_FAILED])
@pytest.mark.parametrize("end", [A.EXITED, A.STOPPED])
def test_late_lines_of_an_agent_that_exited_change_nothing(end: Phase, step: Step) -> None:
    assert advance(end, step) is end


def test_an_illegal_transition_is_a_clear_error() -> None:
    with pytest.raises(IllegalTransition) as info:
        advance(A.EXITED, S.EXITED)  # the agent cannot exit twice with no launch between
    message = str(info.value)
    assert "EXITED" in message and "exited" in message and "BEGIN" in message


def test_the_table_names_every_phase_and_leads_only_to_phases() -> None:
    assert set(TRANSITIONS) == set(Phase) == set(SHOWN)
    assert all(set(row.values()) <= set(Phase) for row in TRANSITIONS.values())
    assert all(row[S.BEGIN] is A.STARTING for row in TRANSITIONS.values())
    assert {A.WORKING, A.WORKING_RETRY_DUE} == RUNNING
    assert {A.RETRY_DUE, A.WORKING_RETRY_DUE} == RETRY_DUE
    assert {A.EXITED, A.STOPPED, A.ASLEEP} == ENDED


def test_a_session_shows_one_of_its_seven_states_in_every_phase() -> None:
    assert set(SHOWN.values()) == {
        "new",
        "starting",
        "idle",
        "working",
        "exited",
        "stopped",
        "asleep",
    }
    assert {p for p, shown in SHOWN.items() if shown == "working"} == {
        A.WORKING,
        A.WORKING_RETRY_DUE,
        A.SETTLING,
    }
    assert {p for p, shown in SHOWN.items() if shown == "idle"} == {A.IDLE, A.RETRY_DUE}


def test_a_step_says_whether_the_shown_state_changed() -> None:
    life = Lifecycle(Phase.WORKING)
    assert not life.take(S.RETRY_ANNOUNCED) and life.phase is A.WORKING_RETRY_DUE
    assert not life.take(S.ENDED_TO_SETTLE) and life.state == "working"
    assert life.take(S.SETTLED) and life.state == "idle"


# --------------------------------------------------------------------------- the tracker


def tracker(line: AgentLine) -> tuple[RunTracker, Lifecycle]:
    """A tracker on its own, and the state machine it takes its steps on."""
    life = Lifecycle(Phase.IDLE)
    return RunTracker(lambda callback: callback(None), line=line, lifecycle=life), life


def event(t: RunTracker, kind: str, **fields: Any) -> None:
    t.on_event(AgentEvent(kind, fields))


def test_the_tracker_follows_a_retry_on_the_old_line() -> None:
    t, life = tracker(OLD)
    assert life.phase is A.IDLE
    event(t, "agent_start")
    assert life.phase is A.WORKING
    event(t, "agent_end")
    event(t, "auto_retry_start", attempt=1)
    assert life.phase is A.RETRY_DUE
    event(t, "agent_start")
    event(t, "auto_retry_end", success=True)
    assert life.phase is A.WORKING
    event(t, "agent_end")
    event(t, "compaction_end", reason="overflow", willRetry=True)
    assert life.phase is A.RETRY_DUE
    life.exited(1)  # the session's exit watcher
    t.exited("the agent exited", "error")
    assert life.phase is A.EXITED
    event(t, "agent_start")  # a late line
    assert life.phase is A.EXITED


def test_on_the_current_line_retries_within_a_run_are_not_steps() -> None:
    t, life = tracker(CURRENT)
    event(t, "agent_start")
    event(t, "auto_retry_start", attempt=1)
    event(t, "compaction_end", reason="overflow", willRetry=True)
    assert life.phase is A.WORKING  # agent_settled ends the run, whatever comes before
    event(t, "agent_end")
    assert life.phase is A.SETTLING  # the session still shows "working"
    event(t, "agent_settled")
    assert life.phase is A.IDLE


def test_the_lifecycle_refuses_an_agent_exiting_twice_until_a_new_launch() -> None:
    life = Lifecycle(Phase.IDLE)
    life.exited(1)
    with pytest.raises(IllegalTransition):
        life.exited(1)
    life.begin(OLD, None)  # a new launch
    assert life.phase is A.STARTING
    life.exited(0)


#: The tracker's state: every read and write of these is under its lock.
STATE = {
    "_line",
    "_settle_seen",
    "_runs",
    "_latest",
    "_current",
    "_extension_commands",
    "_injected",
    "_ends",
}


def _holds_the_lock(node: ast.With) -> bool:
    return any(ast.unparse(item.context_expr) == "self._lock" for item in node.items)


def test_the_trackers_state_is_touched_only_under_its_lock() -> None:
    source = textwrap.dedent(inspect.getsource(RunTracker))
    (cls,) = ast.parse(source).body
    assert isinstance(cls, ast.ClassDef)
    outside: list[str] = []

    def visit(node: ast.AST, locked: bool, method: str) -> None:
        if isinstance(node, ast.With) and _holds_the_lock(node):
            locked = True
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
            and node.attr in STATE
            and not locked
        ):
            outside.append(f"{method}: self.{node.attr} (line {node.lineno})")
        for child in ast.iter_child_nodes(node):
            visit(child, locked, method)

    methods = [n for n in cls.body if isinstance(n, ast.FunctionDef)]
    assert len(methods) > 20
    for method in methods:
        if method.name != "__init__":
            visit(method, False, method.name)
    assert outside == []
