"""The run tracker's state machine: its transition table, the tracker taking its steps from the
agent's events, and the tracker's state read and written only under its lock."""

from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Any

import pytest

from atomic_jupyter.protocol.agent_line import AgentLine
from atomic_jupyter.protocol.messages import AgentEvent
from atomic_jupyter.session.activity import (
    RETRY_DUE,
    RUNNING,
    TRANSITIONS,
    Activity,
    IllegalTransition,
    Step,
    advance,
)
from atomic_jupyter.session.run_tracker import RunTracker

A, S = Activity, Step
#: The steps the agent's events trigger (the agent may send them in any order).
AGENT_STEPS = [S.STARTED, S.ENDED, S.SETTLED, S.RETRY_ANNOUNCED, S.RETRY_OVER]
CURRENT = AgentLine("@earendil-works/pi-coding-agent", "1.6.0")
OLD = AgentLine("@mariozechner/pi-coding-agent", "0.73.1")


# --------------------------------------------------------------------------- the table


@pytest.mark.parametrize(
    "source, step, target",
    [
        (A.IDLE, S.STARTED, A.RUNNING),
        (A.RETRY_DUE, S.STARTED, A.RUNNING),  # the retry has begun
        (A.RUNNING_RETRY_DUE, S.STARTED, A.RUNNING),
        (A.RUNNING, S.ENDED, A.IDLE),
        (A.RUNNING_RETRY_DUE, S.ENDED, A.IDLE),
        (A.RUNNING, S.SETTLED, A.IDLE),
        (A.RETRY_DUE, S.SETTLED, A.IDLE),  # the agent gave up retrying
        (A.IDLE, S.RETRY_ANNOUNCED, A.RETRY_DUE),
        (A.RUNNING, S.RETRY_ANNOUNCED, A.RUNNING_RETRY_DUE),
        (A.RETRY_DUE, S.RETRY_OVER, A.IDLE),
        (A.RUNNING_RETRY_DUE, S.RETRY_OVER, A.RUNNING),
        (A.RUNNING, S.RETRY_OVER, A.RUNNING),  # the usual order: the retry's agent_start first
        (A.RUNNING, S.EXITED, A.EXITED),
        (A.RETRY_DUE, S.EXITED, A.EXITED),
        (A.EXITED, S.RESET, A.IDLE),
        (A.RUNNING, S.RESET, A.IDLE),
    ],
)
def test_each_named_transition(source: Activity, step: Step, target: Activity) -> None:
    assert advance(source, step) is target


def test_every_step_of_the_agent_is_legal_from_every_state() -> None:
    """The agent's events may come in any order; the tracker never refuses one."""
    for activity in Activity:
        for step in AGENT_STEPS:
            advance(activity, step)


@pytest.mark.parametrize("step", AGENT_STEPS)
def test_late_lines_of_an_agent_that_exited_change_nothing(step: Step) -> None:
    assert advance(A.EXITED, step) is A.EXITED


def test_an_illegal_transition_is_a_clear_error() -> None:
    with pytest.raises(IllegalTransition) as info:
        advance(A.EXITED, S.EXITED)  # the agent cannot exit twice with no launch between
    message = str(info.value)
    assert "EXITED" in message and "exited" in message and "RESET" in message


def test_the_table_names_every_state_and_leads_only_to_states() -> None:
    assert set(TRANSITIONS) == set(Activity)
    assert all(set(row.values()) <= set(Activity) for row in TRANSITIONS.values())
    assert all(row[S.RESET] is A.IDLE for row in TRANSITIONS.values())
    assert {A.RUNNING, A.RUNNING_RETRY_DUE} == RUNNING
    assert {A.RETRY_DUE, A.RUNNING_RETRY_DUE} == RETRY_DUE


# --------------------------------------------------------------------------- the tracker


def tracker(line: AgentLine) -> RunTracker:
    return RunTracker(lambda callback: callback(None), line=line)


def event(t: RunTracker, kind: str, **fields: Any) -> None:
    t.on_event(AgentEvent(kind, fields))


def test_the_tracker_follows_a_retry_on_the_old_line() -> None:
    t = tracker(OLD)
    assert t.activity is A.IDLE
    event(t, "agent_start")
    assert t.activity is A.RUNNING
    event(t, "agent_end")
    event(t, "auto_retry_start", attempt=1)
    assert t.activity is A.RETRY_DUE
    event(t, "agent_start")
    event(t, "auto_retry_end", success=True)
    assert t.activity is A.RUNNING
    event(t, "agent_end")
    event(t, "compaction_end", reason="overflow", willRetry=True)
    assert t.activity is A.RETRY_DUE
    t.exited("the agent exited", "error")
    assert t.activity is A.EXITED
    event(t, "agent_start")  # a late line
    assert t.activity is A.EXITED


def test_on_the_current_line_retries_within_a_run_are_not_steps() -> None:
    t = tracker(CURRENT)
    event(t, "agent_start")
    event(t, "auto_retry_start", attempt=1)
    event(t, "compaction_end", reason="overflow", willRetry=True)
    assert t.activity is A.RUNNING  # agent_settled ends the run, whatever comes before
    event(t, "agent_settled")
    assert t.activity is A.IDLE


def test_the_tracker_refuses_an_agent_exiting_twice_until_reset() -> None:
    t = tracker(OLD)
    t.exited("the agent exited", "error")
    with pytest.raises(IllegalTransition):
        t.exited("again", "error")
    t.reset()  # a new launch
    assert t.activity is A.IDLE
    t.exited("the new agent exited", "error")


#: The tracker's state: every read and write of these is under its lock.
STATE = {
    "_line",
    "_settle_seen",
    "_activity",
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
