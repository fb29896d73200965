"""What the agent is doing, as the run tracker follows it from the agent's events.

A small state machine, the h11 way: the states (:class:`Activity`), the named transitions
(:class:`Step`) and one table, :data:`TRANSITIONS`, of where each step leads from each state.
A step the table does not list from the current state is an :class:`IllegalTransition`.

The agent's events may come in any order (a retry announced mid-run, an ``agent_end`` with no
``agent_start`` seen), so every step an event triggers is legal from every state the agent can
be in; once the agent has exited, its late lines change nothing. What is illegal is the
tracker's own misuse: the agent exiting twice with no new launch in between.

No threads and no I/O here: :class:`~atomic_jupyter.session.run_tracker.RunTracker` keeps the
state and takes each step under its lock.
"""

from __future__ import annotations

import enum

__all__ = [
    "RETRY_DUE",
    "RUNNING",
    "TRANSITIONS",
    "Activity",
    "IllegalTransition",
    "Step",
    "advance",
]


class Activity(enum.Enum):
    """What the agent is doing, as far as its events tell."""

    #: No agent run is going and no retry is announced.
    IDLE = "idle"
    #: Between an ``agent_start`` and the end of that agent run.
    RUNNING = "running"
    #: Between agent runs, with a retry announced (``auto_retry_start``, or ``compaction_end``
    #: with ``willRetry`` after a context overflow): the prompt goes again.
    RETRY_DUE = "retry due"
    #: A retry was announced while an agent run was still going.
    RUNNING_RETRY_DUE = "running, retry due"
    #: The agent went away; only a new launch (:attr:`Step.RESET`) leaves this state.
    EXITED = "exited"


class Step(enum.Enum):
    """The named transitions: what happened."""

    #: ``agent_start``: an agent run began (a retry that was due has begun).
    STARTED = "agent_start"
    #: ``agent_end``: the agent run ended (a retry may still be announced after it).
    ENDED = "agent_end"
    #: ``agent_settled``: the agent is idle and will not retry.
    SETTLED = "agent_settled"
    #: ``auto_retry_start``, or ``compaction_end`` with ``willRetry``: the prompt goes again.
    RETRY_ANNOUNCED = "retry announced"
    #: ``auto_retry_end``: the retrying is over.
    RETRY_OVER = "auto_retry_end"
    #: The agent process exited.
    EXITED = "exited"
    #: A new agent process: forget what the last one was doing.
    RESET = "reset"


#: The states an agent run is going in.
RUNNING = frozenset({Activity.RUNNING, Activity.RUNNING_RETRY_DUE})
#: The states a retry is announced in and has not begun.
RETRY_DUE = frozenset({Activity.RETRY_DUE, Activity.RUNNING_RETRY_DUE})

_A, _S = Activity, Step

#: Where each step leads from each state; a step missing from a state's row is illegal there.
TRANSITIONS: dict[Activity, dict[Step, Activity]] = {
    _A.IDLE: {
        _S.STARTED: _A.RUNNING,
        _S.ENDED: _A.IDLE,
        _S.SETTLED: _A.IDLE,
        _S.RETRY_ANNOUNCED: _A.RETRY_DUE,
        _S.RETRY_OVER: _A.IDLE,
        _S.EXITED: _A.EXITED,
        _S.RESET: _A.IDLE,
    },
    _A.RUNNING: {
        _S.STARTED: _A.RUNNING,
        _S.ENDED: _A.IDLE,
        _S.SETTLED: _A.IDLE,
        _S.RETRY_ANNOUNCED: _A.RUNNING_RETRY_DUE,
        _S.RETRY_OVER: _A.RUNNING,
        _S.EXITED: _A.EXITED,
        _S.RESET: _A.IDLE,
    },
    _A.RETRY_DUE: {
        _S.STARTED: _A.RUNNING,
        _S.ENDED: _A.IDLE,
        _S.SETTLED: _A.IDLE,
        _S.RETRY_ANNOUNCED: _A.RETRY_DUE,
        _S.RETRY_OVER: _A.IDLE,
        _S.EXITED: _A.EXITED,
        _S.RESET: _A.IDLE,
    },
    _A.RUNNING_RETRY_DUE: {
        _S.STARTED: _A.RUNNING,
        _S.ENDED: _A.IDLE,
        _S.SETTLED: _A.IDLE,
        _S.RETRY_ANNOUNCED: _A.RUNNING_RETRY_DUE,
        _S.RETRY_OVER: _A.RUNNING,
        _S.EXITED: _A.EXITED,
        _S.RESET: _A.IDLE,
    },
    _A.EXITED: {  # late lines of an agent that has exited change nothing
        _S.STARTED: _A.EXITED,
        _S.ENDED: _A.EXITED,
        _S.SETTLED: _A.EXITED,
        _S.RETRY_ANNOUNCED: _A.EXITED,
        _S.RETRY_OVER: _A.EXITED,
        _S.RESET: _A.IDLE,
    },
}


class IllegalTransition(RuntimeError):
    """A step the table does not allow from the current state (a bug in the tracker's use)."""


def advance(activity: Activity, step: Step) -> Activity:
    """The state ``step`` leads to from ``activity``.

    Raises
    ------
    IllegalTransition
        When the table does not list ``step`` from ``activity``.
    """
    try:
        return TRANSITIONS[activity][step]
    except KeyError:
        raise IllegalTransition(
            f"the run tracker cannot take the step {step.name} when the agent is "
            f"{activity.value}; allowed: {', '.join(s.name for s in TRANSITIONS[activity])}"
        ) from None
