"""Conversations through the real pinned agent (pi) and the scripted model server.

The model's turns come from ``conversation_script`` in ``tests/harness/support.py``, chosen by
keywords in the prompt ("long answer", "think", "dangerous", "tool", "fail", "payload", "slow";
anything else is echoed back as "You said: ..."), so every prompt here avoids the keywords it
does not mean. ``tests/extensions/guard.ts`` asks for a confirm before any bash command that contains
"dangerous" and reports its decision with ``notify("guard: allowed|blocked <command>")``.

Tests that leave the agent idle with no pending dialog share one module-wide session; tests
that steer, abort, queue or reset the conversation start their own. Nothing here sleeps
hoping that something happened: every wait polls an observable condition under a deadline,
or blocks in ``AgentSession.wait``.
"""

from __future__ import annotations

import base64
import struct
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import atomic_jupyter as aj
from atomic_jupyter import AgentSession, CommandError
from atomic_jupyter.addons.model_server import ChatRequest, ScriptedModelServer, content_text
from atomic_jupyter.session.runs import PromptRun
from atomic_jupyter.session.transcript import (
    AssistantBlock,
    Block,
    DialogBlock,
    NoteBlock,
    ToolBlock,
    UserBlock,
)
from tests.harness.support import (
    EXTENSIONS,
    LONG_ANSWER,
    MARKDOWN_PAYLOAD,
    QUEUED,
    abort_unfinished,
    cancel_pending,
    provider_error,
    stop_quietly,
    unique_name,
    wait_until,
)

pytestmark = pytest.mark.agent

GUARD = str(EXTENSIONS / "guard.ts")
GUARD_TITLE = "Run a dangerous command?"
DANGEROUS_COMMAND = "echo dangerous-but-fine"
#: What the scripted model streams for a prompt with "slow" in it (about 4 s).
SLOW_TEXT = "slow " * 400
#: How long one run may take here, at most.
RUN_TIMEOUT = 30

ScriptedModel = tuple[ScriptedModelServer, Path, list[str]]


# --------------------------------------------------------------------------- helpers


def start_session(
    agent_command: list[str], scripted_model: ScriptedModel, cwd: Path
) -> AgentSession:
    """A session on the scripted model, with the guard, working in ``cwd``.

    The working directory matters: pi 0.73.1's ``new_session`` starts a *persisted* session
    even under ``--no-session``, writing ``<timestamp>_<id>.jsonl`` into the agent's cwd.
    """
    _, home, args = scripted_model
    return aj.start(
        command=agent_command,
        env={"PI_CODING_AGENT_DIR": str(home)},
        extra_args=args,
        extensions=[GUARD],
        cwd=str(cwd),
        name=unique_name("conversation"),
        display=False,
    )


def run_to_end(session: AgentSession, text: str, **kwargs: Any) -> PromptRun:
    """Send a prompt and wait until its run finished (failing on a dialog or an exit)."""
    run = session.prompt(text, display=False, **kwargs)
    result = session.wait(timeout=RUN_TIMEOUT, run=run, quiet=True)
    assert result.reason == "finished", (result, session.stderr_tail)
    assert run.error is None, run.error
    return run


def blocks_of(run: PromptRun, kind: type[Block]) -> list[Any]:
    return [b for b in run.transcript.snapshot() if isinstance(b, kind)]


def first_text_arrived(run: PromptRun) -> bool:
    return any(b.text for b in blocks_of(run, AssistantBlock))


def requests_for(server: ScriptedModelServer, text: str) -> list[ChatRequest]:
    return [r for r in server.requests if r.last_user_text == text]


def user_texts(messages: list[dict[str, Any]]) -> list[str]:
    return [content_text(m.get("content")) for m in messages if m.get("role") == "user"]


def notes_since(session: AgentSession, before: int) -> list[str]:
    return [n["message"] for n in session.notifications[before:]]


def png_bytes(rgb: tuple[int, int, int] = (255, 0, 0)) -> bytes:
    """A valid 1x1 RGB PNG."""

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00" + bytes(rgb))
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


def image_urls(request: ChatRequest) -> list[str]:
    """The ``image_url`` URLs of the request's last user message."""
    user = [m for m in request.messages if m.get("role") == "user"][-1]
    content = user.get("content")
    assert isinstance(content, list), content
    return [
        p["image_url"]["url"]
        for p in content
        if isinstance(p, dict) and p.get("type") == "image_url"
    ]


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def shared_session(
    agent_command: list[str],
    scripted_model: ScriptedModel,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[AgentSession]:
    session = start_session(agent_command, scripted_model, tmp_path_factory.mktemp("shared"))
    try:
        yield session
    finally:
        stop_quietly(session)


@pytest.fixture
def conversation(shared_session: AgentSession) -> Iterator[AgentSession]:
    """The shared session; each test must leave it idle, with no pending dialog or policy."""
    session = shared_session
    assert session.alive, f"the shared agent is not running: {session.stderr_tail}"
    assert not session.pending_dialogs, session.pending_dialogs
    yield session
    session.remove_policy()
    cancel_pending(session)  # a failed test must not block the next one
    abort_unfinished(session)


@pytest.fixture
def own_session(
    agent_command: list[str], scripted_model: ScriptedModel, tmp_path: Path
) -> Iterator[AgentSession]:
    """A session of the test's own (working in the test's tmp_path), stopped at the end."""
    work = tmp_path / "work"
    work.mkdir()
    session = start_session(agent_command, scripted_model, work)
    try:
        yield session
    finally:
        cancel_pending(session)
        stop_quietly(session)


@pytest.fixture
def server(scripted_model: ScriptedModel) -> ScriptedModelServer:
    return scripted_model[0]


# --------------------------------------------------------------------------- transcripts


def test_long_answer_streams_into_one_exact_final_block(conversation: AgentSession) -> None:
    deltas = {"count": 0, "on": True}

    def count(event: Any) -> None:
        kind = (event.get("assistantMessageEvent") or {}).get("type")
        if deltas["on"] and event.type == "message_update" and kind == "text_delta":
            deltas["count"] += 1

    conversation.on_event(count)
    try:
        run = run_to_end(conversation, "give me the long answer")
    finally:
        deltas["on"] = False
    assert deltas["count"] > 3000  # the stream really came in thousands of pieces
    assert run.text == LONG_ANSWER
    (block,) = run.transcript.snapshot()
    assert isinstance(block, AssistantBlock)
    assert block.final and block.error is None and block.thinking == ""
    usage = run.transcript.usage
    assert usage is not None
    assert (usage.turns, usage.input, usage.output) == (1, 1200, 9000)
    assert usage.cost == pytest.approx((1200 * 1.0 + 9000 * 2.0) / 1e6)
    elapsed = run.transcript.elapsed
    assert isinstance(elapsed, float) and 0 < elapsed < RUN_TIMEOUT
    assert run.transcript.ended and run.finished and run.answered


def test_thinking_is_kept_apart_from_the_text(conversation: AgentSession) -> None:
    run = run_to_end(conversation, "think it over")
    (block,) = blocks_of(run, AssistantBlock)
    assert block.thinking == "Let me think step by step."
    assert block.text == "Thought it through."
    assert run.text == "Thought it through."
    assert block.final


def test_tool_call_card_between_the_two_assistant_messages(conversation: AgentSession) -> None:
    run = run_to_end(conversation, "use a tool please")
    blocks = run.transcript.snapshot()
    assert [type(b) for b in blocks] == [AssistantBlock, ToolBlock, AssistantBlock], blocks
    first, tool, last = blocks
    assert isinstance(first, AssistantBlock) and isinstance(last, AssistantBlock)
    assert isinstance(tool, ToolBlock)
    assert first.text == "Let me check." and first.final
    assert tool.name == "bash"
    assert tool.args == {"command": "echo hello-from-tool"}
    assert tool.done and not tool.is_error
    assert tool.result is not None and "hello-from-tool" in tool.result
    assert tool.call_id
    assert last.text == "The tool said hello." and last.final
    assert run.text == "Let me check.\n\nThe tool said hello."
    usage = run.transcript.usage
    assert usage is not None and usage.turns == 2
    assert (usage.input, usage.output) == (100 + 150, 20 + 12)


def test_model_error_ends_the_run_with_the_error(conversation: AgentSession) -> None:
    run = conversation.prompt("now fail on purpose", display=False)
    result = conversation.wait(timeout=RUN_TIMEOUT, quiet=True)
    assert result.reason == "finished" and result.run is run and bool(result)
    assert run.finished and run.error is None  # the prompt was accepted; the model failed
    block = blocks_of(run, AssistantBlock)[-1]
    assert block.final
    assert block.error is not None and "scripted failure" in block.error
    assert block.error == provider_error(400, "scripted failure for the test")
    assert run.text == ""
    # The session is still usable.
    assert run_to_end(conversation, "hello after the error").text == (
        "You said: hello after the error"
    )


def test_markdown_payload_is_kept_raw_in_the_transcript(conversation: AgentSession) -> None:
    run = run_to_end(conversation, "send the payload")
    assert run.text == MARKDOWN_PAYLOAD
    (block,) = blocks_of(run, AssistantBlock)
    assert block.text == MARKDOWN_PAYLOAD and block.final


# --------------------------------------------------------------------------- dialogs and wait


def test_wait_returns_early_on_a_dialog_then_at_the_end(conversation: AgentSession) -> None:
    notes = len(conversation.notifications)
    run = conversation.prompt("run the dangerous command", display=False)
    result = conversation.wait(timeout=RUN_TIMEOUT, quiet=True)
    assert result.reason == "dialog" and not result
    assert result.run is run
    dialog = result.dialog
    assert dialog is not None and dialog.pending
    assert dialog.method == "confirm" and dialog.title == GUARD_TITLE
    assert dialog.request["message"] == DANGEROUS_COMMAND
    assert not run.finished

    # The dialog sits in the card of the tool call it holds up (issue 16).
    assert blocks_of(run, DialogBlock) == []
    (tool,) = blocks_of(run, ToolBlock)
    assert tool.dialogs == [dialog]
    assert tool.name == "bash" and tool.args == {"command": DANGEROUS_COMMAND}
    assert not tool.done  # the confirm holds the tool up

    # Waiting again while it is still pending stops at once, with the same dialog.
    again = conversation.wait(timeout=RUN_TIMEOUT, quiet=True)
    assert again.reason == "dialog" and again.dialog is dialog
    assert dialog is not None  # (for mypy: `is` above widened it again)

    dialog.respond(True)
    result = conversation.wait(timeout=RUN_TIMEOUT, quiet=True)
    assert result.reason == "finished" and run.finished
    assert dialog.state == "answered" and dialog.answered_by == "code"
    assert f"guard: allowed {DANGEROUS_COMMAND}" in notes_since(conversation, notes)
    assert tool.done and not tool.is_error
    assert tool.result is not None and "dangerous-but-fine" in tool.result
    assert run.text == "The command ran (or was blocked)."


def test_wait_prints_why_it_stopped_unless_quiet(
    conversation: AgentSession, capsys: pytest.CaptureFixture[str]
) -> None:
    conversation.prompt("run the dangerous command again", display=False)
    result = conversation.wait(timeout=RUN_TIMEOUT)
    assert result.reason == "dialog" and result.dialog is not None
    out = capsys.readouterr().out
    assert "confirm dialog needs your answer" in out and GUARD_TITLE in out
    result.dialog.respond(False)
    assert conversation.wait(timeout=RUN_TIMEOUT).reason == "finished"
    assert capsys.readouterr().out == ""


def test_a_value_policy_answers_without_stopping_the_wait(conversation: AgentSession) -> None:
    notes = len(conversation.notifications)
    policy = conversation.answer_with(False, method="confirm", title="dangerous")
    assert conversation.policies == [policy]
    run = conversation.prompt("run the dangerous command, policy says no", display=False)
    result = conversation.wait(timeout=RUN_TIMEOUT, quiet=True)
    assert result.reason == "finished" and run.finished
    (tool,) = blocks_of(run, ToolBlock)
    (dialog,) = tool.dialogs  # in the card of the call it decided
    assert dialog.title == GUARD_TITLE
    assert dialog.state == "answered" and dialog.answer is False
    assert dialog.answered_by == "policy"
    assert dialog.outcome.endswith("(answer policy: confirm titled /dangerous/ → No)"), (
        dialog.outcome
    )
    assert tool.done and tool.is_error
    assert tool.result is not None and "Blocked by the user" in tool.result
    assert f"guard: blocked {DANGEROUS_COMMAND}" in notes_since(conversation, notes)
    conversation.remove_policy(policy)
    assert conversation.policies == []


def test_a_callable_policy_gets_the_request(conversation: AgentSession) -> None:
    seen: list[dict[str, Any]] = []

    def allow(request: dict[str, Any]) -> bool:
        seen.append(request)
        return True

    notes = len(conversation.notifications)
    conversation.answer_with(allow, method="confirm", title=r"^Run a dangerous")
    run = run_to_end(conversation, "run the dangerous command, policy says yes")
    (request,) = seen
    assert request["method"] == "confirm" and request["title"] == GUARD_TITLE
    assert request["message"] == DANGEROUS_COMMAND
    (tool,) = blocks_of(run, ToolBlock)
    (dialog,) = tool.dialogs
    assert dialog.answer is True and dialog.answered_by == "policy"
    assert tool.done and not tool.is_error and "dangerous-but-fine" in (tool.result or "")
    assert f"guard: allowed {DANGEROUS_COMMAND}" in notes_since(conversation, notes)
    conversation.remove_policy()
    assert conversation.policies == []


def test_a_policy_added_later_answers_the_pending_dialog(conversation: AgentSession) -> None:
    run = conversation.prompt("run the dangerous command, then decide", display=False)
    result = conversation.wait(timeout=RUN_TIMEOUT, quiet=True)
    assert result.reason == "dialog" and result.dialog is not None
    conversation.answer_with(True, method="confirm")
    assert result.dialog.state == "answered" and result.dialog.answered_by == "policy"
    assert conversation.wait(timeout=RUN_TIMEOUT, quiet=True).reason == "finished"
    assert run.finished


def test_a_policy_answer_that_does_not_fit_leaves_the_dialog_pending(
    conversation: AgentSession,
) -> None:
    diagnostics = conversation.diagnostic_count
    conversation.answer_with("yes", method="confirm")  # a str cannot answer a confirm
    run = conversation.prompt("run the dangerous command, with a bad policy", display=False)
    result = conversation.wait(timeout=RUN_TIMEOUT, quiet=True)
    assert result.reason == "dialog" and result.dialog is not None
    assert result.dialog.pending and result.dialog.title == GUARD_TITLE
    assert conversation.diagnostic_count == diagnostics + 1
    assert "does not fit" in conversation.diagnostics[-1]
    assert GUARD_TITLE in conversation.diagnostics[-1]
    conversation.remove_policy()
    result.dialog.respond(False)
    assert conversation.wait(timeout=RUN_TIMEOUT, quiet=True).reason == "finished"
    assert run.finished


# --------------------------------------------------------------------------- during a run


def test_steer_mid_run(own_session: AgentSession, server: ScriptedModelServer) -> None:
    session = own_session
    run = session.prompt("slow, to be steered", display=False)
    wait_until(lambda: first_text_arrived(run), "the first text delta", RUN_TIMEOUT)
    assert session.steer("steer: change course") == QUEUED
    result = session.wait(timeout=RUN_TIMEOUT, quiet=True)
    assert result.reason == "finished" and run.finished
    blocks = run.transcript.snapshot()
    users = [b for b in blocks if isinstance(b, UserBlock)]
    assert [u.text for u in users] == ["steer: change course"]
    after = blocks[blocks.index(users[0]) + 1 :]
    replies = [b for b in after if isinstance(b, AssistantBlock)]
    assert replies and replies[-1].text == "You said: steer: change course"
    slow = requests_for(server, "slow, to be steered")
    steered = [r for r in server.requests if "change course" in r.last_user_text]
    assert slow and steered and steered[-1].number > slow[-1].number
    # The steering message came after the whole slow answer (it waits for the turn's end).
    first = blocks_of(run, AssistantBlock)[0]
    assert first.final and first.text == SLOW_TEXT
    assert run.transcript.usage is not None and run.transcript.usage.turns == 2


def test_follow_ups_are_delivered_after_the_run(
    own_session: AgentSession, server: ScriptedModelServer
) -> None:
    session = own_session
    seen_while: dict[str, bool] = {}
    runs: list[PromptRun] = []

    def watch(event: Any) -> None:
        message = event.get("message")
        if (
            event.type == "message_start"
            and isinstance(message, dict)
            and message.get("role") == "user"
        ):
            # (no run yet: the first prompt, which cannot have finished)
            seen_while[content_text(message.get("content"))] = bool(runs) and runs[0].finished

    session.on_event(watch)
    first = session.prompt("slow, then follow-ups", display=False)
    runs.append(first)
    wait_until(lambda: first_text_arrived(first), "the first text delta", RUN_TIMEOUT)
    assert session.follow_up("first follow-up") == QUEUED
    second = session.prompt("second follow-up", streaming_behavior="followUp", display=False)
    assert second.wait_answered(10) and second.error is None
    assert not first.finished and not second.finished
    assert session.wait(timeout=RUN_TIMEOUT, run=first, quiet=True).reason == "finished"
    assert session.wait(timeout=RUN_TIMEOUT, run=second, quiet=True).reason == "finished"
    # Both were delivered while the first run was still going, after its answer.
    assert seen_while == {
        "slow, then follow-ups": False,
        "first follow-up": False,
        "second follow-up": False,
    }
    messages = session.get_messages()["messages"]
    assert user_texts(messages) == ["slow, then follow-ups", "first follow-up", "second follow-up"]
    assistants = [content_text(m.get("content")) for m in messages if m.get("role") == "assistant"]
    assert assistants == [
        SLOW_TEXT,
        "You said: first follow-up",
        "You said: second follow-up",
    ]
    slow = requests_for(server, "slow, then follow-ups")[-1]
    assert requests_for(server, "first follow-up")[-1].number > slow.number
    assert requests_for(server, "second follow-up")[-1].number > slow.number


def test_a_queued_prompt_leaves_the_running_transcript_whole(own_session: AgentSession) -> None:
    session = own_session
    first = session.prompt("slow, then a queued prompt", display=False)
    wait_until(lambda: first_text_arrived(first), "the first text delta", RUN_TIMEOUT)
    second = session.prompt("queued prompt", streaming_behavior="followUp", display=False)
    assert second.wait_answered(10) and second.error is None
    assert session.wait(timeout=RUN_TIMEOUT, run=second, quiet=True).reason == "finished"
    # The first run's answer streamed on after the second prompt was queued: all of it
    # belongs in the first run's transcript, complete and final.
    (answer,) = [b for b in blocks_of(first, AssistantBlock)]
    assert answer.final and answer.text == SLOW_TEXT
    # And the queued prompt's own answer is in the queued run's transcript.
    assert second.text == "You said: queued prompt"


def test_abort_mid_run(own_session: AgentSession, server: ScriptedModelServer) -> None:
    session = own_session
    run = session.prompt("slow, to be aborted", display=False)
    wait_until(lambda: first_text_arrived(run), "the first text delta", RUN_TIMEOUT)
    started = time.monotonic()
    assert session.abort() is None
    result = session.wait(timeout=RUN_TIMEOUT, quiet=True)
    assert result.reason == "finished" and run.finished
    assert time.monotonic() - started < 3  # promptly, not after the 4 s stream
    block = blocks_of(run, AssistantBlock)[-1]
    assert block.final
    assert block.error is not None and "abort" in block.error.lower(), block.error
    assert len(block.text) < len(SLOW_TEXT)
    after = run_to_end(session, "hello after the abort")
    assert after.text == "You said: hello after the abort"


def test_prompt_while_running_without_streaming_behavior_is_refused(
    own_session: AgentSession,
) -> None:
    session = own_session
    first = session.prompt("slow, then an impatient prompt", display=False)
    wait_until(lambda: first_text_arrived(first), "the first text delta", RUN_TIMEOUT)
    refused = session.prompt("an impatient prompt", display=False)
    assert refused.wait_answered(10)
    assert refused.finished
    assert refused.error is not None
    assert refused.error.startswith("the agent refused the prompt: ")
    assert "Agent is already processing" in refused.error
    assert "streamingBehavior" in refused.error
    assert refused.response is not None and not refused.response.success
    notes = blocks_of(refused, NoteBlock)
    assert notes and notes[0].level == "error" and notes[0].text == refused.error
    # wait() on a refused run returns at once.
    assert session.wait(timeout=1, run=refused, quiet=True).reason == "finished"
    session.abort()
    assert session.wait(timeout=RUN_TIMEOUT, run=first, quiet=True).reason == "finished"


def test_a_refused_prompt_leaves_the_running_transcript_alone(own_session: AgentSession) -> None:
    session = own_session
    first = session.prompt("slow, then a refused prompt", display=False)
    wait_until(lambda: first_text_arrived(first), "the first text delta", RUN_TIMEOUT)
    refused = session.prompt("a refused prompt", display=False)
    assert refused.wait_answered(10) and refused.error is not None
    session.abort()
    assert session.wait(timeout=RUN_TIMEOUT, run=first, quiet=True).reason == "finished"
    # The rest of the first run (here: its aborted end) belongs to the first run.
    block = blocks_of(first, AssistantBlock)[-1]
    assert block.final and block.error is not None and "abort" in block.error.lower()
    assert first.transcript.ended
    assert blocks_of(refused, AssistantBlock) == []


# --------------------------------------------------------------------------- commands


def test_commands_return_the_agents_data(own_session: AgentSession, tmp_path: Path) -> None:
    session = own_session
    run_to_end(session, "hello commands")
    run_to_end(session, "hello again")

    state = session.get_state()
    assert isinstance(state, dict)
    assert state["model"]["id"] == "scripted" and state["model"]["provider"] == "scripted"
    assert state["isStreaming"] is False

    models = session.get_available_models()["models"]
    assert any(m["provider"] == "scripted" and m["id"] == "scripted" for m in models)

    assert session.set_thinking_level("high") is None
    assert session.get_state()["thinkingLevel"] == "high"
    with pytest.raises(ValueError, match="nonsense"):
        session.set_thinking_level("nonsense")
    assert session.get_state()["thinkingLevel"] == "high"  # nothing was sent
    cycled = session.cycle_thinking_level()
    assert isinstance(cycled, dict) and "level" in cycled
    assert session.get_state()["thinkingLevel"] == cycled["level"]

    assert session.set_session_name("my name") is None
    assert session.get_state()["sessionName"] == "my name"

    commands = session.get_commands()
    assert isinstance(commands["commands"], list)

    out = session.bash("echo bash-out", display=False).result(timeout=60)
    assert "bash-out" in out["output"] and out["exitCode"] == 0

    stats = session.get_session_stats()
    assert "tokens" in stats and stats["tokens"]["input"] > 0

    messages = session.get_messages()["messages"]
    texts = user_texts(messages)
    assert "hello commands" in texts and "hello again" in texts

    # With --no-session the conversation lives in memory only, and pi will not export it.
    with pytest.raises(CommandError) as export_error:
        session.export_html(str(tmp_path / "s.html"))
    assert export_error.value.command == "export_html"
    assert export_error.value.error == "Cannot export in-memory session to HTML"
    assert not (tmp_path / "s.html").exists()

    with pytest.raises(CommandError) as model_error:
        session.set_model("nope", "nope")
    assert "Model not found" in model_error.value.error
    assert "Model not found" in str(model_error.value)

    assert session.cycle_model() is None  # only one model is configured

    compacted = session.compact(display=False).result(timeout=120)
    assert isinstance(compacted, dict) and isinstance(compacted.get("summary"), str)
    assert compacted["summary"]

    assert session.new_session(display=False).result(timeout=30) == {"cancelled": False}
    assert session.get_messages()["messages"] == []
    assert run_to_end(session, "hello new session").text == "You said: hello new session"


def test_a_command_error_carries_the_agents_text(own_session: AgentSession) -> None:
    with pytest.raises(CommandError) as error:
        own_session.set_session_name("   ")
    assert error.value.error == "Session name cannot be empty"


# --------------------------------------------------------------------------- images


def test_images_are_sent_as_image_content(
    conversation: AgentSession, server: ScriptedModelServer, tmp_path: Path
) -> None:
    red = png_bytes((255, 0, 0))
    run = run_to_end(conversation, "describe this image", images=[red])
    assert run.text == "You said: describe this image"
    (request,) = requests_for(server, "describe this image")
    assert image_urls(request) == ["data:image/png;base64," + base64.b64encode(red).decode()]

    green = png_bytes((0, 255, 0))
    path = tmp_path / "green.png"
    path.write_bytes(green)
    run_to_end(conversation, "describe this picture file", images=str(path))
    (request,) = requests_for(server, "describe this picture file")
    assert image_urls(request) == ["data:image/png;base64," + base64.b64encode(green).decode()]

    runs, count = len(conversation.runs), server.request_count
    with pytest.raises(ValueError):
        conversation.prompt("not an image", images=[b"plain bytes, no image"], display=False)
    text_file = tmp_path / "notes.txt"
    text_file.write_text("not an image")
    with pytest.raises(ValueError):
        conversation.prompt("not an image either", images=[str(text_file)], display=False)
    with pytest.raises(TypeError):
        conversation.prompt("not an image at all", images=[12345], display=False)
    assert len(conversation.runs) == runs and server.request_count == count
