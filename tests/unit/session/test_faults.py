"""Faults, floods and bad input from the agent, with a stand-in agent that misbehaves on request.

For each: what the user sees, that the session (and so the kernel) still works, and that no
answer is sent twice or lost.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

import atomic_jupyter as aj
from atomic_jupyter.errors import AgentNotRunningError, DialogNotPendingError
from atomic_jupyter.session.session import AgentSession
from tests.harness.support import STANDIN, wait_until


@pytest.fixture
def session() -> Iterator[AgentSession]:
    s = aj.start(command=STANDIN, name=f"faults-{time.monotonic_ns()}", display=False)
    yield s
    s.stop()


def last_note(session: AgentSession) -> str:
    notes = session.notifications
    return notes[-1]["message"] if notes else ""


def test_a_flood_of_100000_events_is_applied_and_the_session_answers(session: AgentSession) -> None:
    session.prompt("/scenario flood 100000", display=False)
    wait_until(lambda: last_note(session) == "flood done 100000", "the end of the flood", 120)
    assert session.status["flood"] == "100000"
    assert session.get_state()["isStreaming"] is False


def test_a_50_mb_line_of_garbage_is_one_diagnostic_and_the_stream_goes_on(
    session: AgentSession,
) -> None:
    session.prompt("/scenario bigline 50", display=False)
    wait_until(
        lambda: last_note(session) == "after the big line", "the line after the big one", 120
    )
    (diagnostic,) = [d for d in session.diagnostics if "52428800 bytes" in d]
    assert len(diagnostic) < 1000  # a bounded excerpt, not 50 MB


def test_a_50_mb_event_of_an_unknown_type_is_not_kept_in_the_event_log(
    session: AgentSession,
) -> None:
    session.prompt("/scenario bigevent 50", display=False)
    wait_until(
        lambda: last_note(session) == "after the big event", "the line after the big event", 120
    )
    (event,) = [e for e in session.events if e.type == "mystery_event"]
    assert "blob" not in event.fields and "52,428,8" in event.get("omitted")
    assert session.events.nbytes < 5 * 1024 * 1024


def test_a_wait_never_says_still_working_while_the_agent_is_idle(session: AgentSession) -> None:
    """A run whose end the events never announce (here ``agent_settled`` never comes): when
    the wait runs out of time and the agent says it is idle with nothing queued, the run is
    over, not "still working"."""
    run = session.prompt("/scenario noend", display=False)
    result = session.wait(timeout=1, run=run, quiet=True)
    assert result.reason == "finished" and run.finished
    assert "the agent is idle" in str(run.transcript.snapshot()[-1])


def test_invalid_utf8_is_a_diagnostic_and_the_stream_goes_on(session: AgentSession) -> None:
    session.prompt("/scenario badutf8", display=False)
    wait_until(lambda: last_note(session) == "after bad utf-8", "the line after")
    assert any("not valid UTF-8" in d for d in session.diagnostics)


def test_a_response_nobody_asked_for_is_recorded_not_matched(session: AgentSession) -> None:
    session.prompt("/scenario stray", display=False)
    wait_until(lambda: last_note(session) == "after the stray response", "the line after")
    assert any(
        "a response nobody asked for" in d and "nobody-asked" in d for d in session.diagnostics
    )


def test_the_same_dialog_id_twice_makes_one_dialog_and_one_answer(session: AgentSession) -> None:
    session.prompt("/scenario dup", display=False)
    # The second request comes after the first: wait for what is said of it, not for the dialog.
    wait_until(
        lambda: any("same id 'dup-1'" in d for d in session.diagnostics),
        "the diagnostic about the second request",
    )
    assert len([d for d in session.dialogs if d.id == "dup-1"]) == 1
    dialog = session.pending_dialogs[0]
    dialog.respond("B")
    with pytest.raises(DialogNotPendingError):
        dialog.respond("A")
    wait_until(lambda: "received dup-1" in last_note(session), "the stand-in's receipt")
    session.get_state()  # everything sent before it has been read
    assert [n["message"] for n in session.notifications if "received dup-1" in n["message"]] == [
        'received dup-1 x1: {"value": "B"}'
    ]


def test_an_agent_that_stops_reading_does_not_block_and_answers_are_reported_undelivered(
    session: AgentSession,
) -> None:
    session.prompt("/scenario deaf", display=False)
    dialog = wait_until(
        lambda: session.pending_dialogs[0] if session.pending_dialogs else None, "the dialog"
    )
    started = time.monotonic()
    for _ in range(200):  # far more than a pipe holds
        session.client.request({"type": "prompt", "message": "x" * 65536})
    dialog.respond("A")
    assert time.monotonic() - started < 2  # queued, never blocking the caller
    with pytest.raises(Exception, match="did not answer"):
        session.request({"type": "get_state"}, timeout=1)
    code = session.stop()
    assert code is not None and not session.alive
    assert dialog.delivery is not None and dialog.delivery.delivered is False
    assert "not delivered" in dialog.outcome


def test_an_agent_that_closes_its_output_is_stopped_and_says_why(session: AgentSession) -> None:
    session.prompt("/scenario mute", display=False)
    wait_until(lambda: session.state == "exited", "the session to notice", 15)
    # The diagnostic is written on the exit watcher's thread after the state says "exited".
    wait_until(
        lambda: any("closed its output" in d for d in session.diagnostics),
        "the diagnostic about the closed output",
    )
    with pytest.raises(AgentNotRunningError, match="restart"):
        session.get_state()


def test_sigkill_mid_dialog_closes_the_dialog_within_a_second(session: AgentSession) -> None:
    session.prompt("/scenario crash", display=False)
    wait_until(lambda: session.state == "exited", "the exit", 10)
    noticed = time.monotonic()
    (dialog,) = [d for d in session.dialogs if d.id == "crash-1"]
    wait_until(lambda: dialog.state == "closed", "the dialog to close", 1)
    assert time.monotonic() - noticed < 1
    assert session.returncode == -9
    with pytest.raises(DialogNotPendingError):
        dialog.respond("A")


def test_the_known_0_73_crash_on_a_full_pipe_is_explained(session: AgentSession) -> None:
    session.prompt("/scenario enobufs", display=False)
    wait_until(lambda: session.state == "exited", "the exit", 10)
    # The diagnostic is written on the exit watcher's thread after the state says "exited".
    said = wait_until(
        lambda: [d for d in session.diagnostics if "known bug of the agent's 0.73 line" in d],
        "the diagnostic about the known crash",
    )
    assert "issue 4897" in said[0], list(session.diagnostics)


def test_soak_dialogs_are_each_answered_exactly_once(session: AgentSession) -> None:
    rounds = 200
    answered = 0
    for chunk in range(rounds // 50):
        session.prompt("/scenario dialogs 50", display=False)
        wait_until(lambda: len(session.pending_dialogs) == 50, "50 dialogs", 30)
        for dialog in session.pending_dialogs:
            dialog.respond("A")
            answered += 1
        last = f"received soak-{(chunk + 1) * 50} x1"
        wait_until(lambda last=last: last_note(session).startswith(last), "the last receipt", 30)
    receipts = [
        n["message"] for n in session.notifications if n["message"].startswith("received soak-")
    ]
    assert answered == rounds == len(receipts)
    assert all(" x1: " in r for r in receipts), [r for r in receipts if " x1: " not in r]


def test_status_waits_as_long_as_any_command_not_a_fixed_five_seconds(
    session: AgentSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``%atomic_agent status`` asks the agent for its state with ``request_timeout`` (a busy
    agent may take longer than 5 s), like every other command."""
    from atomic_jupyter.notebook.magics import status_text

    asked: list[float | None] = []
    real = session._commands.request  # the one part that sends commands

    def request(command, timeout=None, **fields):
        asked.append(timeout)
        return real(command, timeout=timeout, **fields)

    monkeypatch.setattr(session._commands, "request", request)
    monkeypatch.setattr(session.config, "request_timeout", 42.0)
    assert "streaming" in status_text(session)
    assert asked == [None]  # None: the session's request_timeout (42 s here)
