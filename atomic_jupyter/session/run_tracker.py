"""Which prompt run the agent's events and dialogs belong to, and when each run has ended.

The agent's events carry no prompt id, so a client has to follow the conversation:

* a prompt sent while the agent is idle becomes the *current* run at once; its events and
  dialogs go into its transcript;
* a prompt sent while a run is going is *queued* (``streamingBehavior``) or refused; a queued
  prompt's run becomes current when the agent delivers its user message (matched by text, else
  the oldest queued run, leaving out the texts sent with ``steer``/``follow_up``);
* an extension command (``/name`` of a registered command) runs at once, even during a run,
  and is over when the agent answers it;
* on the current agent line a run is over when the agent says so: the prompt's answer says
  whether a run ``started`` (or was ``queued``, or an extension ``handled`` it), and
  ``agent_settled`` comes once the agent is idle after a run, retries and compaction included.
  A handled prompt and a manual compaction get no ``agent_settled``: for those the tracker
  asks, as below. The 0.73 line has no such event (the tracker asks
  :class:`~atomic_jupyter.protocol.agent_line.AgentLine`):
* there, a run is over when the agent is idle after it. ``agent_end`` alone does not say so: the
  agent may retry after a transient error (``auto_retry_start``), compact after a context
  overflow and try again, or already be working on the next prompt. So after ``agent_end``,
  after a prompt's answer, and after compaction or a failed retry, the tracker asks
  ``get_state``; the agent sets its streaming flag before it answers a prompt and announces a
  retry before it reads its next command, so the reply tells the truth.

No widgets and no I/O here: the tracker is given a way to send that probe, and announces every
change of a run on :attr:`RunTracker.changed` with how it should be shown: ``"stream"`` (a
streaming update: a view may throttle it), ``"now"`` (a dialog joined the transcript: show it
at once), ``"final"`` (the run is over: the exact last render) or ``"state"`` (the run was
answered: nothing to render, but a waiter may want to look).

The tracker's own state is kept in one place, under one lock: the runs and the routing. What
the agent is doing is a phase of the session's one state machine
(:class:`~atomic_jupyter.session.lifecycle.Lifecycle`: named phases, named transitions, one
table), whose steps the tracker takes from the agent's events.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from typing import Any

from atomic_jupyter.errors import AtomicAgentError
from atomic_jupyter.protocol.agent_line import AgentLine
from atomic_jupyter.protocol.messages import AgentEvent, Response
from atomic_jupyter.session.lifecycle import RETRY_DUE, RUNNING, Lifecycle, Phase, Step
from atomic_jupyter.session.observers import Listeners
from atomic_jupyter.session.runs import PromptRun
from atomic_jupyter.session.transcript import content_text
from atomic_jupyter.session.weight import newest_within
from atomic_jupyter.transport.heap import note_freed

__all__ = ["RUNS_KEPT", "RUN_BYTES_KEPT", "RunTracker", "newest_kept", "state_probe"]

#: How many runs are kept (the newest).
RUNS_KEPT = 100
#: How much the runs kept may weigh together (:attr:`PromptRun.weight`, characters of their
#: transcripts): beyond it the oldest runs that are over are let go, the newest always kept.
RUN_BYTES_KEPT = 32 << 20
#: Why a dialog still pending when its run ended with the agent idle is closed.
NO_LONGER_AWAITED = "no longer awaited (the run ended without an answer)"

ProbeCallback = Callable[[dict[str, Any] | None], None]
Probe = Callable[[ProbeCallback], None]
RunListener = Callable[[PromptRun, str], None]
#: What is left to do once the tracker's state has changed (run outside its lock).
Then = Callable[[], None] | None


def newest_kept(runs: Sequence[PromptRun], count: int, budget: int) -> list[PromptRun]:
    """Of ``runs`` (oldest first), those a session keeps: the newest ``count``, and of those
    that are over, the newest that weigh ``budget`` together (the newest run always, however
    heavy; a run not over weighs nothing yet).

    Parameters
    ----------
    runs:
        The runs, oldest first.
    count, budget:
        How many runs at most, and how much the runs that are over may weigh together.

    Returns
    -------
    list of PromptRun
        The runs kept, oldest first.
    """
    return newest_within(
        runs[-count:], lambda run: run.weight if run.finished else None, budget, always_newest=True
    )


def _keep_newest(runs: list[PromptRun]) -> tuple[list[PromptRun], int]:
    """The runs a session keeps of ``runs`` (:func:`newest_kept` with the session's bounds),
    and the weight of those it lets go."""
    kept = newest_kept(runs, RUNS_KEPT, RUN_BYTES_KEPT)
    ids = {id(run) for run in kept}
    return kept, sum(run.weight for run in runs if id(run) not in ids)


def state_probe(request: Callable[[Mapping[str, Any]], Future[Response]]) -> Probe:
    """A probe that sends ``get_state`` with ``request`` (a client's) and hands on its data."""

    def probe(callback: ProbeCallback) -> None:
        try:
            pending = request({"type": "get_state"})
        except AtomicAgentError:
            callback(None)
            return

        def settle(future: Future[Response]) -> None:
            response = None if future.exception() is not None else future.result()
            callback(response.data if response is not None and response.success else None)

        pending.add_done_callback(settle)

    return probe


def _idle(data: dict[str, Any] | None) -> bool:
    return isinstance(data, dict) and not data.get("isStreaming") and not data.get("isCompacting")


class RunTracker:
    """Routes events and dialogs to prompt runs and decides when runs end.

    Its state (the runs, the routing, whether the agent settles its runs) is read and written
    under one lock; listeners, probes and the ends of runs are called outside it.

    Parameters
    ----------
    probe:
        ``probe(callback)`` sends ``get_state`` and later calls ``callback(data)`` (None when
        there is no answer).
    busy:
        Whether a command other than ``get_state`` still waits for the agent's answer (an
        extension's handler may be awaiting a dialog for it).
    line:
        The agent's line (see :attr:`line`).
    lifecycle:
        The session's state machine: the tracker takes its steps from the agent's events (on
        its own, the tracker follows one that begins idle).
    state_changed:
        Called, outside the lock, after an event changed the state the session shows.

    Attributes
    ----------
    changed:
        Listeners called with ``(run, how)`` whenever a run changes (see the module's text).
    ending:
        Listeners called with a run about to be marked over, after its last event and before
        anything can show it finished: what adds a last line to its transcript does it here.
    """

    def __init__(
        self,
        probe: Probe,
        busy: Callable[[], bool] = lambda: False,
        line: AgentLine | None = None,
        lifecycle: Lifecycle | None = None,
        state_changed: Callable[[], None] = lambda: None,
    ) -> None:
        self._probe = probe
        self._lifecycle = lifecycle or Lifecycle(Phase.IDLE)
        self._state_changed = state_changed
        self._busy = busy
        self.changed: Listeners[RunListener] = Listeners()
        self.ending: Listeners[Callable[[PromptRun], None]] = Listeners()
        self._ending: set[int] = set()  # ids of the runs being finished (claimed once)
        self._lock = threading.RLock()
        self._line = line or AgentLine()
        self._settle_seen = False  # the agent showed it speaks the settling protocol
        self._runs: list[PromptRun] = []
        self._latest: PromptRun | None = None
        self._current: PromptRun | None = None
        self._extension_commands: frozenset[str] = frozenset()
        self._injected: deque[str] = deque(maxlen=50)
        self._ends = 0  # how many agent_end events came
        self._sent = 0  # how many prompts were sent (a run's number)

    # ------------------------------------------------------------------ state

    @property
    def runs(self) -> list[PromptRun]:
        """The runs kept, oldest first (a copy): the newest :data:`RUNS_KEPT`, and of those
        over, the newest weighing :data:`RUN_BYTES_KEPT` together (:func:`newest_kept`)."""
        with self._lock:
            return list(self._runs)

    @property
    def latest(self) -> PromptRun | None:
        """The newest run sent."""
        with self._lock:
            return self._latest

    @property
    def current(self) -> PromptRun | None:
        """The run the agent's events go to."""
        with self._lock:
            return self._current

    @property
    def line(self) -> AgentLine:
        """The agent's line: whether its runs end with ``agent_settled`` (set at each start)."""
        with self._lock:
            return self._line

    @line.setter
    def line(self, line: AgentLine) -> None:
        with self._lock:
            self._line = line

    @property
    def extension_commands(self) -> frozenset[str]:
        """The names of the commands the agent's extensions registered."""
        with self._lock:
            return self._extension_commands

    @extension_commands.setter
    def extension_commands(self, names: set[str] | frozenset[str]) -> None:
        with self._lock:
            self._extension_commands = frozenset(names)

    def _take(self, step: Step) -> bool:
        """Take a step of the session's state machine; whether the state it shows changed."""
        return self._lifecycle.take(step)

    def _retry_due(self) -> bool:
        return self._lifecycle.phase in RETRY_DUE

    def reset(self) -> None:
        """Forget the routing (a new agent process); the runs stay listed."""
        with self._lock:
            self._latest = self._current = None
            self._injected.clear()
            self._settle_seen = False

    # ------------------------------------------------------------------ prompts

    def is_extension_command(self, text: str) -> bool:
        """Whether ``text`` invokes a registered extension command (which runs at once)."""
        if not text.startswith("/"):
            return False
        name = text[1:].split(None, 1)[0] if len(text) > 1 else ""
        return name in self.extension_commands

    def sent(self, run: PromptRun) -> None:
        """A prompt was sent."""
        with self._lock:
            self._sent += 1
            run.number = self._sent
            self._runs, dropped = _keep_newest([*self._runs, run])
            self._latest = run
            run.is_command = run.is_command or self.is_extension_command(run.message)
            current = self._current
            if current is None or current.finished:
                self._current = run
            elif not run.is_command:
                run.queued = True  # waits in the agent's queue, or will be refused
        note_freed(dropped)

    def discard(self, run: PromptRun) -> None:
        """A prompt that could not be written after all: forget it."""
        with self._lock:
            if run in self._runs:
                self._runs.remove(run)
            if self._latest is run:
                self._latest = self._runs[-1] if self._runs else None
            if self._current is run:
                self._current = None

    def answered(self, run: PromptRun, response: Response | None, error: str | None) -> None:
        """The agent answered (or could not answer) a prompt."""
        if response is not None and not response.success:
            what = "the prompt" if run.kind == "prompt" else repr(run.kind)
            error = f"the agent refused {what}: {response.error or 'no reason given'}"
        data = response.data if response is not None else None
        disposition = data.get("disposition") if isinstance(data, dict) else None
        with self._lock:
            run.answered_after = self._ends
            run._settle(response, error)
            current = self._current
            going = current is not None and current is not run and not current.finished
            settles = (
                error is None
                and not (run.is_command and going)
                and disposition in ("started", "queued")
            )
            if settles:  # a run began or waits in the queue: agent_settled ends it
                self._settle_seen = True
                run.awaits_settle = True
        if error is not None:
            run.queued = False
            self.finish([run], note=(error, "error"))
        elif run.is_command and going:
            self.finish([run])  # done when answered; the other run goes on
        elif not settles and not run.queued:
            self._probe(lambda data: self._after_answer(run, data))
        self.changed.emit(run, "state")

    def injected(self, text: str) -> None:
        """A ``steer`` or ``follow_up`` message was sent (it is not a prompt of its own)."""
        with self._lock:
            self._injected.append(text)

    def dialog_host(self) -> PromptRun | None:
        """Where a new dialog goes: the newest prompt while the agent is still handling it
        (an extension command is answered only when its handler is done), else the run
        whose events are streaming."""
        with self._lock:
            latest = self._latest
            if latest is not None and not latest.answered:
                return latest
            return self._current or latest

    # ------------------------------------------------------------------ events

    def on_event(self, event: AgentEvent) -> bool:
        """Route one agent event to the current run's transcript; follow the run's end.
        Return whether a run's transcript took it."""
        if event.type == "message_start":
            self._maybe_switch(event)
        run = self.current
        taken = run is not None and run.transcript.apply(event)
        if taken:
            self.changed.emit(run, "stream")
        then, shown = self._follow(event)
        if then is not None:
            then()
        if shown:
            self._state_changed()
        return taken

    def _follow(self, event: AgentEvent) -> tuple[Then, bool]:
        """Take the step ``event`` means; return what is left to do (outside the lock), and
        whether the state the session shows changed."""
        with self._lock:
            kind = event.type
            settling = self._settling()  # as it was before this event
            if kind == "agent_settled":
                self._settle_seen = True
                shown = self._take(Step.SETTLED)  # idle, and no retry comes
                done = [r for r in self._runs if r.answered and not r.finished]
                return lambda: self.finish(done, idle=True), shown
            if kind == "agent_end":
                self._ends += 1
                shown = self._take(Step.ENDED_TO_SETTLE if settling else Step.ENDED)
                return None if settling else self._probe_end(self._ends), shown
            if kind == "agent_start":  # a retry that was due has begun; its agent_end decides
                return None, self._take(Step.STARTED)
            return self._follow_retry(event, settling), False

    def _follow_retry(self, event: AgentEvent, settling: bool) -> Then:
        """Follow a retry or a compaction (the lock held); neither changes the shown state."""
        with self._lock:
            kind = event.type
            will_retry = bool(event.get("willRetry"))
            running = self._lifecycle.phase in RUNNING
            if kind == "compaction_end" and not running and not will_retry:
                # A compaction of its own (``compact``, an extension's ``ctx.compact()``): no
                # agent run, so no agent_end or agent_settled follows. Once the agent is idle,
                # every run waiting only for that is over.
                return lambda: self._probe(self._after_idle_event)
            if settling and kind in ("auto_retry_start", "auto_retry_end", "compaction_end"):
                return None  # retries and compaction within a run: agent_settled ends the run
            if kind == "auto_retry_start" or (kind == "compaction_end" and will_retry):
                self._take(Step.RETRY_ANNOUNCED)  # an overflow compacts, and the prompt goes again
            elif kind == "auto_retry_end":
                self._take(Step.RETRY_OVER)
                return None if event.get("success") else self._probe_end(self._ends)
            elif kind == "compaction_end":
                return self._probe_end(self._ends)
            return None

    def _probe_end(self, end: int) -> Then:
        return lambda: self._probe(lambda data: self._after_end(end, data))

    def _maybe_switch(self, event: AgentEvent) -> None:
        message = event.get("message")
        if not isinstance(message, dict) or message.get("role") != "user":
            return
        text = content_text(message.get("content"))
        with self._lock:
            if text in self._injected:
                self._injected.remove(text)
                return
            queued = [r for r in self._runs if r.queued and not r.finished]
            if not queued:
                return
            run = next((r for r in queued if r.message == text), queued[0])
            run.queued = False
            previous, self._current = self._current, run
        if previous is not None and previous is not run:
            previous.transcript.note("continued below, in the cell of the queued prompt")
            self.changed.emit(previous, "stream")

    # ------------------------------------------------------------------ ends

    def _settling(self) -> bool:
        with self._lock:
            return self._line.settles_runs or self._settle_seen

    @property
    def settling(self) -> bool:
        """Whether runs end on ``agent_settled``: the agent's line is known to send it, or the
        agent has shown it does (a prompt's ``disposition``, an ``agent_settled``)."""
        return self._settling()

    @property
    def idle_after(self) -> str:
        """The event after which the agent is idle (retries may follow ``agent_end``)."""
        return "agent_settled" if self._settling() else "agent_end"

    def _after_answer(self, run: PromptRun, data: dict[str, Any] | None) -> None:
        if data is None:
            self.finish([run])
        elif _idle(data) and not self._retry_due():
            self.finish([run], idle=True)

    def _after_idle_event(self, data: dict[str, Any] | None) -> None:
        """After something that ended outside an agent run (a compaction of its own): if the
        agent is idle, every answered run is over, except those the agent has still to
        settle (a run answered ``started`` may not have begun yet)."""
        with self._lock:
            if not _idle(data) or self._retry_due():
                return
            settling = self._settling()
            done = [
                r
                for r in self._runs
                if r.answered and not r.finished and not (settling and r.awaits_settle)
            ]
        self.finish(done, idle=True)

    def _after_end(self, end: int, data: dict[str, Any] | None) -> None:
        with self._lock:
            candidates = [
                r for r in self._runs if r.answered and not r.finished and r.answered_after < end
            ]
            newer = any(
                r.answered and r.error is None and r.answered_after >= end for r in self._runs
            )
            retrying = self._retry_due()
        if not candidates:
            return
        busy_with_next = (
            newer and not retrying and isinstance(data, dict) and not data.get("isCompacting")
        )
        if data is None or busy_with_next:
            self.finish(candidates)
        elif _idle(data) and not retrying:
            self.finish(candidates, idle=True)

    def finish(
        self,
        runs: list[PromptRun],
        note: tuple[str, str] | None = None,
        exited: bool = False,
        *,
        idle: bool = False,
    ) -> None:
        """Mark runs over, hand on their final transcripts, then wake waiters.

        ``idle``: the agent is known to be idle; see :meth:`close_abandoned`.
        """
        for run in runs:
            with self._lock:
                if run.finished or id(run) in self._ending:
                    continue
                self._ending.add(id(run))  # one finish per run, however many threads try
                if note is not None:
                    run.transcript.note(*note)
            self.ending.emit(run)  # outside the lock, before anything can show it finished
            with self._lock:
                self._ending.discard(id(run))
                run.transcript.close()
                run.exited = exited
                run._finish()
                self._runs, dropped = _keep_newest(self._runs)
            note_freed(dropped)
            self.changed.emit(run, "final")
            run._final_shown()

        if idle:
            self.close_abandoned()

    def close_abandoned(self) -> None:
        """The agent is idle: a dialog of a run that is over is no longer awaited by anyone
        (an extension gave up on it, e.g. a confirm aborted by its ``AbortSignal``, which the
        agent settles without a word), unless a command still waits for its answer (its
        handler, or an extension's hook on it, may be the one asking). Close those dialogs:
        a late answer is refused instead of being recorded."""
        if self._busy():
            return
        with self._lock:
            over = [run for run in self._runs if run.finished]
        for run in over:
            for dialog in run.transcript.pending_dialogs():
                dialog.close(NO_LONGER_AWAITED)

    def end_if_idle(self, run: PromptRun) -> None:
        """Ask the agent whether it is idle with nothing queued; if so, ``run`` is over
        (a way to end that the events did not announce). The answer is taken on the reader
        thread, in order with the agent's events."""

        def decide(data: dict[str, Any] | None) -> None:
            if (
                isinstance(data, dict)
                and run.answered
                and not self._retry_due()
                and not any(
                    data.get(key) for key in ("isStreaming", "isCompacting", "pendingMessageCount")
                )
            ):
                self.finish([run], note=("the agent is idle: the run is over", "info"))

        self._probe(decide)

    def exited(self, reason: str, level: str) -> None:
        """The agent went away: every run still going is over."""
        with self._lock:
            going = [r for r in self._runs if not r.finished]
        self.finish(going, note=(reason, level), exited=True)
