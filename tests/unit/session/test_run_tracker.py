"""The run tracker alone, with a recorded probe: when each agent line's runs end."""

from __future__ import annotations

from typing import Any

import pytest

from atomic_jupyter.protocol.agent_line import AgentLine
from atomic_jupyter.protocol.messages import AgentEvent, Response
from atomic_jupyter.session import run_tracker
from atomic_jupyter.session.run_tracker import RunTracker
from atomic_jupyter.session.runs import PromptRun

CURRENT = AgentLine("@earendil-works/pi-coding-agent", "1.6.0")
OLD = AgentLine("@mariozechner/pi-coding-agent", "0.73.1")
UNKNOWN = AgentLine()


class Probe:
    """Records each ``get_state`` the tracker asks for; the test answers them."""

    def __init__(self) -> None:
        self.calls: list[Any] = []

    def __call__(self, callback: Any) -> None:
        self.calls.append(callback)

    def answer(self, streaming: bool) -> None:
        for callback in self.calls:
            callback({"isStreaming": streaming, "isCompacting": False})
        self.calls.clear()


def tracker(line: AgentLine) -> tuple[RunTracker, Probe]:
    probe = Probe()
    t = RunTracker(probe)
    t.line = line
    return t, probe


def prompt(t: RunTracker, text: str, disposition: str | None) -> PromptRun:
    run = PromptRun(f"r-{text}", text)
    t.sent(run)
    data = {"disposition": disposition} if disposition else None
    t.answered(run, Response("prompt", True, data=data), None)
    return run


def event(t: RunTracker, kind: str, **fields: Any) -> None:
    t.on_event(AgentEvent(kind, fields))


def test_current_line_a_started_run_ends_at_agent_settled_not_before() -> None:
    t, probe = tracker(CURRENT)
    run = prompt(t, "hello", "started")
    assert probe.calls == []  # no idle check: the agent will say when it has settled
    event(t, "agent_start")
    event(t, "agent_end", willRetry=True)
    event(t, "auto_retry_start", attempt=1)
    event(t, "agent_start")
    event(t, "auto_retry_end", success=True)
    event(t, "agent_end", willRetry=False)
    assert probe.calls == [] and not run.finished
    event(t, "agent_settled", aborted=False)
    assert run.finished


def test_current_line_a_handled_prompt_is_checked_for_idle() -> None:
    t, probe = tracker(CURRENT)
    run = prompt(t, "/cmd", "handled")  # no agent_settled comes for it
    assert len(probe.calls) == 1
    probe.answer(streaming=False)
    assert run.finished


def test_old_line_runs_end_when_the_agent_is_idle_after_agent_end() -> None:
    t, probe = tracker(OLD)
    run = prompt(t, "hello", None)
    probe.answer(streaming=True)  # the prompt's own check: busy
    assert not run.finished
    event(t, "agent_start")
    event(t, "agent_end")
    assert len(probe.calls) == 1
    probe.answer(streaming=False)
    assert run.finished


@pytest.mark.parametrize("line", [OLD, UNKNOWN], ids=["0.73", "unknown"])
def test_agent_settled_ends_runs_on_any_line_that_sends_it(line: AgentLine) -> None:
    t, probe = tracker(line)
    run = prompt(t, "hello", "started" if line is UNKNOWN else None)
    probe.answer(streaming=True)
    event(t, "agent_end")
    probe.answer(streaming=True)
    assert not run.finished
    event(t, "agent_settled")
    assert run.finished


def test_an_unsettled_prompt_is_not_ended_by_an_earlier_runs_settle() -> None:
    t, _probe = tracker(CURRENT)
    first = prompt(t, "first", "started")
    second = PromptRun("r-second", "second")
    t.sent(second)  # written, not yet answered
    event(t, "agent_settled")
    assert first.finished and not second.finished


def test_another_agents_version_number_says_nothing_about_settling() -> None:
    """A wrapper's (or docker's) ``--version`` is not the reference agent's: its runs end by
    the idle check until the agent itself shows it settles."""
    wrapped = AgentLine("docker", "24.0.7")
    assert not wrapped.known and not wrapped.settles_runs
    t, probe = tracker(wrapped)
    run = prompt(t, "hello", None)  # a 0.73-like agent: no disposition
    probe.answer(streaming=True)
    assert t.idle_after == "agent_end"
    event(t, "agent_end")
    assert len(probe.calls) == 1
    probe.answer(streaming=False)
    assert run.finished


def test_an_agent_that_answers_with_a_disposition_is_followed_to_agent_settled() -> None:
    t, probe = tracker(UNKNOWN)
    run = prompt(t, "hello", "started")
    assert t.settling and t.idle_after == "agent_settled"
    event(t, "agent_end", willRetry=True)
    event(t, "compaction_end", reason="overflow", willRetry=True)
    event(t, "agent_end", willRetry=False)
    assert probe.calls == [] and not run.finished
    event(t, "agent_settled")
    assert run.finished
    t.reset()  # a new agent process: learnt again
    assert not t.settling


class BusyProbe(Probe):
    def answer_compacting(self) -> None:
        for callback in self.calls:
            callback({"isStreaming": False, "isCompacting": True})
        self.calls.clear()


@pytest.mark.parametrize("line", [CURRENT, OLD], ids=["current", "0.73"])
def test_a_command_that_starts_a_compaction_ends_when_the_compaction_does(
    line: AgentLine,
) -> None:
    """``/trigger-compact`` (the agent's own example) answers at once and compacts in the
    background: no agent run, so no ``agent_end`` or ``agent_settled``; the run ends once the
    agent is idle after ``compaction_end``."""
    probe = BusyProbe()
    t = RunTracker(probe)
    t.line = line
    run = prompt(t, "/trigger-compact", "handled" if line is CURRENT else None)
    event(t, "compaction_start", reason="manual")
    probe.answer_compacting()  # the answer's own check: still compacting
    assert not run.finished
    event(t, "compaction_end", reason="manual", willRetry=False, aborted=False)
    assert len(probe.calls) == 1
    probe.answer(streaming=False)
    assert run.finished


def test_a_compaction_of_its_own_does_not_end_a_started_run_before_it_settles() -> None:
    t, probe = tracker(CURRENT)
    run = prompt(t, "hello", "started")  # answered before its agent_start
    event(t, "compaction_end", reason="manual", willRetry=False)
    probe.answer(streaming=False)
    assert not run.finished
    event(t, "agent_start")
    event(t, "agent_end")
    event(t, "agent_settled", aborted=False)
    assert run.finished


class FakeDialog:
    def __init__(self) -> None:
        self.pending = True
        self.closed_with: str | None = None

    def close(self, reason: str) -> bool:
        self.pending, self.closed_with = False, reason
        return True


@pytest.mark.parametrize("line", [CURRENT, OLD], ids=["current", "0.73"])
def test_a_dialog_still_pending_when_its_run_ends_idle_is_no_longer_awaited(
    line: AgentLine,
) -> None:
    """``/timed-signal`` aborts its confirm with an AbortSignal: the agent settles it itself
    and sends nothing; the command's handler ends and the agent is idle."""
    t, probe = tracker(line)
    run = PromptRun("r-1", "/timed-signal")
    t.sent(run)
    dialog = FakeDialog()
    run.transcript.add_dialog(dialog)  # type: ignore[arg-type]
    t.answered(run, Response("prompt", True, data={"disposition": "handled"}), None)
    probe.answer(streaming=False)
    assert run.finished
    assert not dialog.pending and dialog.closed_with is not None
    assert "no longer awaited" in dialog.closed_with


def test_a_run_ended_by_the_agent_exiting_does_not_call_its_dialogs_abandoned() -> None:
    t, probe = tracker(OLD)
    run = prompt(t, "hello", None)
    dialog = FakeDialog()
    run.transcript.add_dialog(dialog)  # type: ignore[arg-type]
    t.exited("the agent exited with code 1", "error")
    assert run.finished and dialog.pending  # the session closes it with the exit's reason


def test_a_dialog_is_not_closed_while_a_command_still_waits_for_its_answer() -> None:
    """A ``steer`` whose extension ``input`` hook asks first: the agent answers the steer
    only once the dialog is answered, so the dialog is awaited though every run is over."""
    probe = Probe()
    waiting = ["steer"]
    t = RunTracker(probe, busy=lambda: bool(waiting))
    t.line = CURRENT
    run = prompt(t, "hello", "started")
    dialog = FakeDialog()
    run.transcript.add_dialog(dialog)  # type: ignore[arg-type]
    event(t, "agent_settled", aborted=False)
    assert run.finished and dialog.pending
    waiting.clear()
    t.close_abandoned()
    assert not dialog.pending


def test_a_dialog_of_a_command_run_during_another_run_is_closed_when_the_agent_is_idle() -> None:
    """``/timed-signal`` sent while a prompt streams: the command ends (answered) while the
    other run goes on; its aborted dialog is closed once the agent is idle."""
    t, _probe = tracker(CURRENT)
    streaming = prompt(t, "hello", "started")
    command = PromptRun("r-cmd", "/timed-signal")
    t.extension_commands = {"timed-signal"}
    t.sent(command)
    dialog = FakeDialog()
    command.transcript.add_dialog(dialog)  # type: ignore[arg-type]
    t.answered(command, Response("prompt", True, data={"disposition": "handled"}), None)
    assert command.finished and dialog.pending  # the agent is not idle yet
    event(t, "agent_settled", aborted=False)
    assert streaming.finished and not dialog.pending


def test_end_if_idle_does_not_end_a_run_during_a_retry() -> None:
    t, probe = tracker(OLD)
    run = prompt(t, "hello", None)
    probe.answer(streaming=True)
    event(t, "agent_end")
    event(t, "auto_retry_start", attempt=1)  # waiting out the backoff: not streaming
    probe.answer(streaming=False)
    t.end_if_idle(run)
    probe.answer(streaming=False)
    assert not run.finished


def heavy_run(t: RunTracker, name: str, output_chars: int) -> PromptRun:
    """A run on the current line whose one tool call returned ``output_chars`` characters."""
    run = prompt(t, name, "started")
    text = "x" * output_chars
    event(t, "agent_start")
    event(t, "tool_execution_start", toolCallId=f"c-{name}", toolName="bash", args={})
    event(
        t,
        "tool_execution_end",
        toolCallId=f"c-{name}",
        toolName="bash",
        result={"content": [{"type": "text", "text": text}]},
        isError=False,
    )
    event(t, "agent_end", willRetry=False)
    event(t, "agent_settled", aborted=False)
    assert run.finished
    return run


def test_a_runs_weight_is_what_its_transcript_holds_and_is_kept_once_it_is_over() -> None:
    t, _probe = tracker(CURRENT)
    run = heavy_run(t, "big", 1_000_000)
    assert 1_000_000 <= run.weight < 1_001_000
    run.transcript.note("said after the end")  # the weight of a run that is over is kept
    assert run.weight < 1_001_000 + len("said after the end")


def test_runs_that_are_over_are_let_go_oldest_first_beyond_the_bytes_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(run_tracker, "RUN_BYTES_KEPT", 3_500_000)
    t, _probe = tracker(CURRENT)
    light = heavy_run(t, "light", 10)
    heavy = [heavy_run(t, f"heavy-{i}", 1_000_000) for i in range(5)]
    # The newest runs that are over and weigh 3.5 MB together: three of 1 MB; the older
    # ones go, the light one too (older than what fits).
    assert t.runs == heavy[2:]
    assert light not in t.runs
    going = prompt(t, "going", "started")  # not over: kept, and weighs nothing yet
    assert t.runs == [*heavy[2:], going]


def test_the_newest_run_is_kept_however_heavy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_tracker, "RUN_BYTES_KEPT", 100)
    t, _probe = tracker(CURRENT)
    first = heavy_run(t, "first", 1_000)
    second = heavy_run(t, "second", 1_000)
    assert t.runs == [second] and first.finished
