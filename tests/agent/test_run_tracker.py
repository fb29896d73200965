"""Which run gets the agent's events, and when a run is over: the hard cases, with the real agent.

Each case was once a bug: a wait that returned before the agent was done (a context overflow
that compacts and retries, the next prompt accepted just as a run ends), a crash reported as
success, a wait stopped by a dialog that a policy was about to answer, a policy that raised,
the Stop button blocking the kernel behind an open dialog, footers summing another cell's
tokens, and an extension command stuck behind a running prompt.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import atomic_jupyter as aj
from atomic_jupyter.addons.model_server import (
    ChatRequest,
    Fail,
    Text,
    ToolCall,
    Turn,
    Usage,
    agent_args,
)
from atomic_jupyter.session.session import AgentSession
from atomic_jupyter.session.transcript import AssistantBlock, DialogBlock
from tests.harness.support import EXTENSIONS, scripted_agent_home, wait_until

pytestmark = pytest.mark.agent

TIMEOUT = 60
OVERFLOW = (
    "This model's maximum context length is 128000 tokens. However, you requested 200000 tokens."
)


class Script:
    """A scripted model whose behaviour each test sets."""

    def __init__(self) -> None:
        self.overflow_once = False

    def __call__(self, request: ChatRequest) -> Turn | Fail:
        prompt = request.last_user_text.lower()
        if self.overflow_once and "overflow" in prompt:
            self.overflow_once = False
            return Fail(400, OVERFLOW)
        if "dangerous" in prompt:
            if request.turn_index == 0:
                return Turn([ToolCall("bash", {"command": "echo dangerous"})], usage=Usage(10, 5))
            return Turn([Text("done")], usage=Usage(10, 1))
        if "slow" in prompt:
            return Turn([Text("slow " * 300, chunk=5, delay=0.01)], usage=Usage(20, 300))
        if "summar" in prompt or "checkpoint" in prompt:  # the agent's compaction request
            return Turn([Text("## Summary\nThe user asked things.")], usage=Usage(50, 10))
        return Turn([Text(f"Answer to: {request.last_user_text[:60]}")], usage=Usage(11, 7))


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Script, Path, list[str]]]:
    script = Script()
    home = tmp_path_factory.mktemp("tracking-home")
    # Compaction keeps about the newest 10 tokens: the overflowing prompt stays whole, the
    # warm-up turns are summarised (the current line compacts nothing below this).
    settings = json.dumps({"retry": {"baseDelayMs": 20}, "compaction": {"keepRecentTokens": 10}})
    with scripted_agent_home(home, script, settings) as server:
        yield script, home, agent_args(server)


@pytest.fixture
def session(
    model: tuple[Script, Path, list[str]], agent_command: list[str], tmp_path: Path
) -> Iterator[AgentSession]:
    _, home, args = model
    s = aj.start(
        command=agent_command,
        env={"PI_CODING_AGENT_DIR": str(home)},
        extra_args=args,
        extensions=[str(EXTENSIONS / "guard.ts"), str(EXTENSIONS / "ui_everything.ts")],
        cwd=str(tmp_path),
        name=f"tracking-{time.monotonic_ns()}",
        display=False,
    )
    yield s
    s.stop()


def streamed(run: aj.PromptRun) -> bool:
    return any(isinstance(b, AssistantBlock) and b.text for b in run.transcript.snapshot())


def test_context_overflow_compacts_and_retries_before_the_run_is_over(
    session: AgentSession, model: Any
) -> None:
    script = model[0]
    for n in range(2):  # something to compact
        session.prompt(f"warm up {n}", display=False)
        assert session.wait(timeout=TIMEOUT, quiet=True).reason == "finished"
    script.overflow_once = True
    log: list[str] = []
    session.on_event(
        lambda e: (
            log.append(f"{e.type}{e.fields.get('willRetry', '')}{e.fields.get('reason', '')}")
            if e.type != "message_update"
            else None
        )
    )
    run = session.prompt("now overflow please", display=False)
    assert session.wait(timeout=TIMEOUT, quiet=True).reason == "finished"
    assert run.text.endswith("Answer to: now overflow please"), (
        run.text,
        " ".join(log),
    )


def test_a_prompt_accepted_as_the_previous_run_ends_is_waited_for(session: AgentSession) -> None:
    second_box: list[aj.PromptRun] = []

    def on_event(event: Any) -> None:  # send the next prompt at the first run's last turn_end
        if event.type == "turn_end" and not second_box:
            second_box.append(session.prompt("the next cell", display=False))

    # Listening before the first prompt goes: its run can end before a listener added after.
    session.on_event(on_event)
    first = session.prompt("a quick one", display=False)
    wait_until(lambda: second_box, "the second prompt")
    second = second_box[0]
    assert session.wait(timeout=TIMEOUT, run=second, quiet=True).reason == "finished"
    assert second.text == "Answer to: the next cell"
    assert first.finished and first.text == "Answer to: a quick one"


def test_a_crash_mid_run_is_reported_as_exited(session: AgentSession) -> None:
    run = session.prompt("slow and doomed", display=False)
    wait_until(lambda: streamed(run), "the first words")
    os.kill(session.pid, signal.SIGKILL)
    result = session.wait(timeout=TIMEOUT, quiet=True)
    assert result.reason == "exited" and not result
    # The wait returns once the agent is not alive; the exit watcher ends the run after that.
    wait_until(lambda: run.finished, "the run to end with the exit", 10)
    assert run.finished and run.exited


def test_wait_does_not_stop_for_a_dialog_a_slow_policy_answers(session: AgentSession) -> None:
    def slow_policy(request: dict[str, Any]) -> bool:
        threading.Event().wait(0.1)  # a policy that takes its time deciding
        return False

    session.answer_with(slow_policy, method="confirm")
    session.prompt("/ui-confirm", display=False)
    result = session.wait(timeout=TIMEOUT, quiet=True)
    assert result.reason == "finished", result
    assert session.dialogs[-1].answered_by == "policy"
    assert session.notifications[-1]["message"] == "got confirm: false"


def test_a_policy_that_raises_leaves_the_dialog_to_a_person_where_it_is_shown(
    session: AgentSession,
) -> None:
    session.answer_with(lambda request: request["no such field"], method="confirm")
    run = session.prompt("/ui-confirm", display=False)
    result = session.wait(timeout=TIMEOUT, quiet=True)
    assert result.reason == "dialog"
    assert any("an answer policy failed" in d and "KeyError" in d for d in session.diagnostics)
    assert [b.dialog for b in run.transcript.snapshot() if isinstance(b, DialogBlock)] == [
        result.dialog
    ]
    result.dialog.respond(True)
    assert session.wait(timeout=TIMEOUT, quiet=True).reason == "finished"


def test_stop_with_an_open_dialog_does_not_block_and_ends_the_run(session: AgentSession) -> None:
    run = session.prompt("run the dangerous command", display=False)
    result = session.wait(timeout=TIMEOUT, quiet=True)
    assert result.reason == "dialog"
    started = time.monotonic()
    session.stop_run(run)
    assert time.monotonic() - started < 1  # it only sends
    assert session.wait(timeout=TIMEOUT, run=run, quiet=True).reason == "finished"
    assert result.dialog.state == "cancelled" and result.dialog.answered_by == "stop"


def test_footers_count_each_cells_own_messages_when_a_prompt_is_queued(
    session: AgentSession,
) -> None:
    first = session.prompt("slow first", display=False)
    wait_until(lambda: streamed(first), "the first words")
    second = session.prompt("queued second", streaming_behavior="followUp", display=False)
    assert session.wait(timeout=TIMEOUT, run=second, quiet=True).reason == "finished"
    assert first.transcript.usage is not None and second.transcript.usage is not None
    assert (first.transcript.usage.turns, first.transcript.usage.output) == (1, 300)
    assert (second.transcript.usage.turns, second.transcript.usage.output) == (1, 7)


def test_an_extension_command_during_a_run_is_over_when_answered(session: AgentSession) -> None:
    long_run = session.prompt("slow and long", display=False)
    wait_until(lambda: streamed(long_run), "the first words")
    command = session.prompt("/ui-confirm", display=False)
    dialog = wait_until(
        lambda: next((d for d in session.pending_dialogs if d.title == "Proceed?"), None),
        "the command's dialog",
    )
    assert dialog.host is command
    dialog.respond(True)
    assert command.wait_done(10) and not long_run.finished
    assert session.wait(timeout=TIMEOUT, run=long_run, quiet=True).reason == "finished"
