"""A session's state from one launch of its agent to the next, and what the agent is doing
meanwhile: one state machine, the h11 way.

The phases (:class:`Phase`), the named transitions (:class:`Step`) and one table,
:data:`TRANSITIONS`, of where each step leads from each phase; a step the table does not list
from the current phase is an :class:`IllegalTransition`. What a session shows as its
``state`` is a phase's name (:data:`SHOWN`)::

    "new" -> "starting" -> "idle" <-> "working" -> "exited", "stopped" or "asleep"

"asleep" is a stop the session made because the agent was idle (its conversation kept): the
next command starts it again (:mod:`~atomic_jupyter.session.idle`).

Within "idle" and "working" the phases follow the agent's events for the run tracker
(:class:`~atomic_jupyter.session.run_tracker.RunTracker`): whether an agent run is going,
whether a retry is announced (the 0.73 line retries after ``agent_end``), whether the agent
has still to settle a run that ended (the current line ends a run with ``agent_settled``).

The agent's events may come in any order (a retry announced mid-run, an ``agent_end`` with no
``agent_start`` seen), so every step an event triggers is legal from every phase; once the agent
has exited, its late lines change nothing, and so does a launch step that comes late. What is
illegal is misuse: the agent exiting twice with no new launch in between.

Several threads take steps (the main thread starts and stops, the reader thread follows the
agent's events, the exit watcher records the exit), so every step is a check-and-set under
one lock: an event that comes late cannot overwrite the end of the agent.
"""

from __future__ import annotations

import enum
import threading

from atomic_jupyter.protocol.agent_line import AgentLine
from atomic_jupyter.transport.agent_package import PreparedAgent

__all__ = [
    "ENDED",
    "RETRY_DUE",
    "RUNNING",
    "SHOWN",
    "STATES",
    "TRANSITIONS",
    "IllegalTransition",
    "Lifecycle",
    "Phase",
    "Step",
    "advance",
]


class Phase(enum.Enum):
    """Where a launch is, and what its agent is doing as far as its events tell."""

    #: Never launched.
    NEW = "new"
    #: Launched; the agent has not answered its first command.
    STARTING = "starting"
    #: No agent run is going and no retry is announced.
    IDLE = "idle"
    #: Between an ``agent_start`` and the end of that agent run.
    WORKING = "working"
    #: Between agent runs, with a retry announced (``auto_retry_start``, or ``compaction_end``
    #: with ``willRetry`` after a context overflow): the prompt goes again.
    RETRY_DUE = "idle, retry due"
    #: A retry was announced while an agent run was still going.
    WORKING_RETRY_DUE = "working, retry due"
    #: The agent run ended on an agent that settles its runs: ``agent_settled`` is due.
    SETTLING = "working, to settle"
    #: The agent exited by itself; only a new launch (:attr:`Step.BEGIN`) leaves it.
    EXITED = "exited"
    #: The session ended the agent; only a new launch leaves it.
    STOPPED = "stopped"
    #: The session ended an idle agent, to start it again at the next command.
    ASLEEP = "asleep"


class Step(enum.Enum):
    """The named transitions: what happened."""

    #: A launch begins.
    BEGIN = "begin"
    #: The agent could not be spawned.
    LAUNCH_FAILED = "launch failed"
    #: The agent answered its first command.
    ANSWERED = "answered"
    #: ``agent_start``: an agent run began (a retry that was due has begun).
    STARTED = "agent_start"
    #: ``agent_end`` on an agent that does not settle its runs: it is idle, unless a retry
    #: is announced after it.
    ENDED = "agent_end"
    #: ``agent_end`` on an agent that settles its runs: ``agent_settled`` says when it is idle.
    ENDED_TO_SETTLE = "agent_end, to settle"
    #: ``agent_settled``: the agent is idle and will not retry.
    SETTLED = "agent_settled"
    #: ``auto_retry_start``, or ``compaction_end`` with ``willRetry``: the prompt goes again.
    RETRY_ANNOUNCED = "retry announced"
    #: ``auto_retry_end``: the retrying is over.
    RETRY_OVER = "auto_retry_end"
    #: The agent process exited by itself.
    EXITED = "exited"
    #: The agent process exited, ended by the session.
    STOPPED = "stopped"
    #: The agent process exited, ended by the session because it was idle.
    SLEPT = "slept"


_P, _S = Phase, Step

#: What a session shows as its ``state`` in each phase.
SHOWN: dict[Phase, str] = {
    _P.NEW: "new",
    _P.STARTING: "starting",
    _P.IDLE: "idle",
    _P.RETRY_DUE: "idle",
    _P.WORKING: "working",
    _P.WORKING_RETRY_DUE: "working",
    _P.SETTLING: "working",
    _P.EXITED: "exited",
    _P.STOPPED: "stopped",
    _P.ASLEEP: "asleep",
}
#: Every state a session shows, in the order a launch goes through them.
STATES = ("new", "starting", "idle", "working", "exited", "stopped", "asleep")
#: The phases a launch ends in; only :attr:`Step.BEGIN` leaves them.
ENDED = frozenset({_P.EXITED, _P.STOPPED, _P.ASLEEP})
#: The phases an agent run is going in.
RUNNING = frozenset({_P.WORKING, _P.WORKING_RETRY_DUE})
#: The phases a retry is announced in and has not begun.
RETRY_DUE = frozenset({_P.RETRY_DUE, _P.WORKING_RETRY_DUE})


def _row(**steps: Phase) -> dict[Step, Phase]:
    return {_S[name]: phase for name, phase in steps.items()}


#: Where the agent's steps lead from a phase the agent's events move (the same for every
#: launched phase, so a row lists only where that phase differs).
_AGENT = _row(
    STARTED=_P.WORKING,
    ENDED=_P.IDLE,
    ENDED_TO_SETTLE=_P.IDLE,
    SETTLED=_P.IDLE,
    RETRY_ANNOUNCED=_P.RETRY_DUE,
    RETRY_OVER=_P.IDLE,
)
#: Where the agent's exit and a new launch lead from every phase the agent has not left.
_EXIT = _row(EXITED=_P.EXITED, STOPPED=_P.STOPPED, SLEPT=_P.ASLEEP, BEGIN=_P.STARTING)


def _stays(phase: Phase, *steps: Step) -> dict[Step, Phase]:
    return {step: phase for step in steps}


#: The steps of a launch under way: once it is past them, they change nothing.
_LAUNCH_STEPS = (_S.ANSWERED, _S.LAUNCH_FAILED)
_AGENT_STEPS = tuple(_AGENT)

#: Where each step leads from each phase; a step missing from a phase's row is illegal there.
TRANSITIONS: dict[Phase, dict[Step, Phase]] = {
    # A session that never started (a test feeding one) shows "new" whatever its agent does.
    _P.NEW: {**_stays(_P.NEW, *_AGENT_STEPS, *_LAUNCH_STEPS), **_EXIT},
    _P.STARTING: {
        **_stays(_P.STARTING, *_AGENT_STEPS),
        _S.STARTED: _P.WORKING,  # an agent_start during start-up
        _S.ANSWERED: _P.IDLE,
        _S.LAUNCH_FAILED: _P.EXITED,
        **_EXIT,
    },
    _P.IDLE: {**_AGENT, **_stays(_P.IDLE, *_LAUNCH_STEPS), **_EXIT},
    _P.RETRY_DUE: {**_AGENT, **_stays(_P.RETRY_DUE, *_LAUNCH_STEPS), **_EXIT},
    _P.WORKING: {
        **_AGENT,
        **_stays(_P.WORKING, *_LAUNCH_STEPS),
        _S.ENDED_TO_SETTLE: _P.SETTLING,
        _S.RETRY_ANNOUNCED: _P.WORKING_RETRY_DUE,
        _S.RETRY_OVER: _P.WORKING,  # the usual order: the retry's agent_start first
        **_EXIT,
    },
    _P.WORKING_RETRY_DUE: {
        **_AGENT,
        **_stays(_P.WORKING_RETRY_DUE, *_LAUNCH_STEPS),
        _S.ENDED_TO_SETTLE: _P.SETTLING,
        _S.RETRY_ANNOUNCED: _P.WORKING_RETRY_DUE,
        _S.RETRY_OVER: _P.WORKING,
        **_EXIT,
    },
    _P.SETTLING: {
        **_AGENT,
        # A settling agent's retries are within its run: agent_settled ends it.
        **_stays(_P.SETTLING, _S.ENDED_TO_SETTLE, _S.RETRY_ANNOUNCED, _S.RETRY_OVER),
        **_stays(_P.SETTLING, *_LAUNCH_STEPS),
        **_EXIT,
    },
    # Late lines of an agent that has exited change nothing; it cannot exit again.
    _P.EXITED: {**_stays(_P.EXITED, *_AGENT_STEPS, *_LAUNCH_STEPS), _S.BEGIN: _P.STARTING},
    _P.STOPPED: {**_stays(_P.STOPPED, *_AGENT_STEPS, *_LAUNCH_STEPS), _S.BEGIN: _P.STARTING},
    # Asleep: a new launch wakes it; a stop (the session's end) makes it stopped for good.
    _P.ASLEEP: {
        **_stays(_P.ASLEEP, *_AGENT_STEPS, *_LAUNCH_STEPS),
        _S.BEGIN: _P.STARTING,
        _S.STOPPED: _P.STOPPED,
    },
}


class IllegalTransition(RuntimeError):
    """A step the table does not allow from the current phase (a bug in its use)."""


def advance(phase: Phase, step: Step) -> Phase:
    """The phase ``step`` leads to from ``phase``.

    Raises
    ------
    IllegalTransition
        When the table does not list ``step`` from ``phase``.
    """
    try:
        return TRANSITIONS[phase][step]
    except KeyError:
        raise IllegalTransition(
            f"a session cannot take the step {step.name} when it is {phase.value}; "
            f"allowed: {', '.join(s.name for s in TRANSITIONS[phase])}"
        ) from None


class Lifecycle:
    """The phase of a session, which agent it launched, and how that agent ended.

    Each method that takes a step returns whether the state the session shows changed; the
    caller announces it.

    Parameters
    ----------
    phase:
        Where it begins (a run tracker used on its own begins idle).
    """

    def __init__(self, phase: Phase = Phase.NEW) -> None:
        self._lock = threading.Lock()
        self._phase = phase
        self._agent = AgentLine()
        self._install: PreparedAgent | None = None
        self._exit_code: int | None = None
        self._stop_requested = False
        self._sleep_requested = False

    @property
    def phase(self) -> Phase:
        """The phase: the state and what the agent is doing."""
        with self._lock:
            return self._phase

    @property
    def state(self) -> str:
        """``"new"``, ``"starting"``, ``"idle"``, ``"working"``, ``"exited"``, ``"stopped"`` or
        ``"asleep"``."""
        return SHOWN[self.phase]

    @property
    def agent(self) -> AgentLine:
        """Which agent the last launch runs (an unknown line before the first)."""
        with self._lock:
            return self._agent

    @property
    def install(self) -> PreparedAgent | None:
        """How the last launch's agent was found (its npm package), None before the first."""
        with self._lock:
            return self._install

    @property
    def exit_code(self) -> int | None:
        """The agent's exit code, once it exited (None while it runs)."""
        with self._lock:
            return self._exit_code

    @property
    def ended(self) -> bool:
        """Whether the last launch is over (``"exited"``, ``"stopped"`` or ``"asleep"``)."""
        with self._lock:
            return self._phase in ENDED

    @property
    def stop_requested(self) -> bool:
        """Whether the session is ending (or has ended) the agent of the last launch."""
        with self._lock:
            return self._stop_requested

    def take(self, step: Step) -> bool:
        """Take ``step``; return whether the state the session shows changed.

        Raises
        ------
        IllegalTransition
            When the table does not allow ``step`` from the current phase.
        """
        with self._lock:
            before = self._phase
            self._phase = advance(before, step)
            return SHOWN[self._phase] != SHOWN[before]

    def begin(self, agent: AgentLine, install: PreparedAgent | None) -> None:
        """A launch of ``agent`` begins: ``"starting"``, with no exit code or stop request."""
        with self._lock:
            self._phase = advance(self._phase, Step.BEGIN)
            self._agent, self._install = agent, install
            self._exit_code = None
            self._stop_requested = self._sleep_requested = False

    def launch_failed(self) -> bool:
        """The agent could not be spawned: ``"starting"`` -> ``"exited"``."""
        return self.take(Step.LAUNCH_FAILED)

    def started(self) -> bool:
        """The agent answered its first command: ``"starting"`` -> ``"idle"``."""
        return self.take(Step.ANSWERED)

    def request_stop(self, *, sleep: bool = False) -> None:
        """The session is ending the agent: its exit will say ``"stopped"`` (``"asleep"``
        with ``sleep``, unless a plain stop was asked for too)."""
        with self._lock:
            plain_stop_asked = self._stop_requested and not self._sleep_requested
            self._sleep_requested = sleep and not plain_stop_asked
            self._stop_requested = True

    def exited(self, code: int) -> bool:
        """The agent exited with ``code``: ``"stopped"`` when the session ended it, else
        ``"exited"``. Return whether the session ended it.

        Raises
        ------
        IllegalTransition
            When the agent already exited and no new launch began.
        """
        with self._lock:
            step = Step.STOPPED if self._stop_requested else Step.EXITED
            if self._sleep_requested:
                step = Step.SLEPT
            self._phase = advance(self._phase, step)
            self._exit_code = code
            return self._stop_requested

    def force(self, state: str) -> None:
        """Set the state whatever it is (a test feeding a session that never started).

        Raises
        ------
        ValueError
            When ``state`` is not one of :data:`STATES`.
        """
        if state not in STATES:
            raise ValueError(f"a session's state is one of {', '.join(STATES)}, not {state!r}")
        with self._lock:
            self._phase = Phase(state)
