"""The bundled demo extension, through the real pinned agent (pi) and the Python API.

The first half drives the extension's ``/demo-*`` commands (no model needed) and answers their
dialogs with ``session.pending_dialogs[0].respond(...)``; the extension reports every answer
back with ``notify("/<command> received <JSON>")``. The second half runs the agent on the
offline demo model (``demo_script`` behind a ``ScriptedModelServer``), in a scratch folder
with a few files: the guard's ``select`` on ``rm -rf``, a tool card listing the files, a
``read``, thinking and streamed Markdown.

Nothing here sleeps hoping something happened: commands and prompts end in
``AgentSession.wait``, which returns on a dialog or at the run's end.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import atomic_jupyter as aj
from atomic_jupyter import AgentSession
from atomic_jupyter.addons.demo import demo_script, intent_of, runtime
from atomic_jupyter.addons.demo.script import FALLBACK, MARKDOWN, SCRATCH_COMMAND, THINKING, THOUGHT
from atomic_jupyter.addons.model_server import (
    ChatRequest,
    ScriptedModelServer,
    Text,
    ToolCall,
    Turn,
    agent_args,
)
from atomic_jupyter.session.runs import PromptRun
from atomic_jupyter.session.transcript import AssistantBlock, Block, DialogBlock, ToolBlock
from tests.harness.support import (
    PINNED_AGENT,
    cancel_pending,
    scripted_agent_home,
    stop_quietly,
    unique_name,
    wait_until,
)

pytestmark = pytest.mark.agent

DEMO_EXTENSION = str(runtime.DEMO_EXTENSION)
TITLE = "atomic-jupyter demo"
WAIT = 60
GUARD_TITLE = f"Dangerous command (rm -rf): {SCRATCH_COMMAND}"
DEMO_COMMANDS = {
    "demo-confirm",
    "demo-select",
    "demo-input",
    "demo-editor",
    "demo-notify",
    "demo-prefill",
    "demo-status",
    "demo-widget",
}


# --------------------------------------------------------------------------- helpers


class Sent:
    """A prompt or command sent to a session, and the notifications that came after it."""

    def __init__(self, session: AgentSession, text: str) -> None:
        self.session = session
        self.notes_before = len(session.notifications)
        self.run: PromptRun = session.prompt(text, display=False)

    def dialog(self, method: str) -> aj.Dialog:
        """Wait for the dialog the prompt raises; it must be of ``method``."""
        result = self.session.wait(timeout=WAIT, run=self.run, quiet=True)
        assert result.reason == "dialog", (result, self.session.stderr_tail)
        dialog = self.session.pending_dialogs[0]
        assert dialog is result.dialog and dialog.method == method, dialog.request
        return dialog

    def finish(self) -> PromptRun:
        """Wait until the run ended (no dialog on the way), and check it went well."""
        result = self.session.wait(timeout=WAIT, run=self.run, quiet=True)
        assert result.reason == "finished", (result, self.session.stderr_tail)
        assert self.run.error is None, self.run.error
        return self.run

    def notes(self) -> list[dict[str, str]]:
        return self.session.notifications[self.notes_before :]

    def messages(self) -> list[str]:
        return [n["message"] for n in self.notes()]


def blocks_of(run: PromptRun, kind: type[Block]) -> list[Any]:
    return [b for b in run.transcript.snapshot() if isinstance(b, kind)]


#: The demo extension's status entry before its count: the model turns of the conversation.
TURNS = "model turns in this conversation: "


def turns_status(session: AgentSession) -> int:
    text = session.status["demo-turns"]
    assert text.startswith(TURNS), text
    return int(text.removeprefix(TURNS))


# --------------------------------------------------------------------------- commands


@pytest.fixture(scope="module")
def demo(agent_command: list[str]) -> Iterator[tuple[AgentSession, dict[str, Any]]]:
    """A session with only the demo extension, and what it looked like right after start()."""
    session = aj.start(
        command=agent_command,
        extensions=[DEMO_EXTENSION],
        name=unique_name("demo-extension"),
        display=False,
    )
    try:
        snapshot = {"title": session.title, "status": session.status, "widgets": session.widgets}
        yield session, snapshot
    finally:
        stop_quietly(session)


@pytest.fixture
def session(demo: tuple[AgentSession, dict[str, Any]]) -> Iterator[AgentSession]:
    """The shared session; each test must leave it idle with no pending dialog."""
    session = demo[0]
    assert session.alive, session.stderr_tail
    assert not session.pending_dialogs, session.pending_dialogs
    yield session
    cancel_pending(session)


def test_start_sets_title_turn_status_and_both_widget_blocks(
    demo: tuple[AgentSession, dict[str, Any]],
) -> None:
    _, snapshot = demo
    assert snapshot["title"] == TITLE
    assert snapshot["status"] == {"demo-turns": f"{TURNS}0"}
    widgets = snapshot["widgets"]
    assert set(widgets) == {"demo-above", "demo-below"}
    assert widgets["demo-above"]["placement"] == "aboveEditor"
    assert widgets["demo-below"]["placement"] == "belowEditor"
    above = "\n".join(widgets["demo-above"]["lines"])
    for command in DEMO_COMMANDS:
        assert f"/{command}" in above
    below = "\n".join(widgets["demo-below"]["lines"])
    assert "list the files here" in below and "clean up the scratch files" in below


def test_every_demo_command_is_registered(session: AgentSession) -> None:
    commands = {c["name"]: c for c in session.get_commands()["commands"]}
    assert set(commands) >= DEMO_COMMANDS
    for name in DEMO_COMMANDS:
        assert commands[name]["description"], name


@pytest.mark.parametrize("answer", [True, False])
def test_demo_confirm(session: AgentSession, answer: bool) -> None:
    sent = Sent(session, "/demo-confirm")
    dialog = sent.dialog("confirm")
    assert dialog.title == "Do you like this demo?"
    assert dialog.request["message"] == "Answer Yes or No; nothing else happens."
    dialog.respond(answer)
    sent.finish()
    assert sent.notes() == [
        {"message": f"/demo-confirm received {'true' if answer else 'false'}", "type": "info"}
    ]
    assert dialog.state == "answered" and dialog.answered_by == "code"


def test_demo_select(session: AgentSession) -> None:
    sent = Sent(session, "/demo-select")
    dialog = sent.dialog("select")
    assert dialog.title == "Pick a planet"
    assert dialog.request["options"] == ["Mercury", "Venus", "Earth"]
    dialog.respond("Venus")
    sent.finish()
    assert sent.messages() == ['/demo-select received "Venus"']


def test_demo_input_with_a_placeholder(session: AgentSession) -> None:
    sent = Sent(session, "/demo-input")
    dialog = sent.dialog("input")
    assert dialog.title == "What is your name?"
    assert dialog.request["placeholder"] == "e.g. Ada Lovelace"
    dialog.respond("Ada")
    sent.finish()
    assert sent.messages() == ['/demo-input received "Ada"']


def test_demo_input_cancelled(session: AgentSession) -> None:
    sent = Sent(session, "/demo-input")
    sent.dialog("input").cancel()
    sent.finish()
    assert sent.messages() == ["/demo-input received nothing (cancelled)"]


def test_demo_editor_with_a_multi_line_prefill(session: AgentSession) -> None:
    sent = Sent(session, "/demo-editor")
    dialog = sent.dialog("editor")
    assert dialog.title == "Edit the shopping list"
    assert dialog.request["prefill"] == "apples\nbread\ncoffee"
    dialog.respond("apples\nbread\ncoffee\ndates")
    sent.finish()
    assert sent.messages() == ['/demo-editor received "apples\\nbread\\ncoffee\\ndates"']


def test_demo_notify_sends_each_type(session: AgentSession) -> None:
    sent = Sent(session, "/demo-notify")
    sent.finish()
    assert [n["type"] for n in sent.notes()] == ["info", "warning", "error"]
    assert sent.messages() == [
        "An info notification from the demo",
        "A warning notification from the demo",
        "An error notification from the demo (nothing is wrong)",
    ]


def test_demo_prefill_puts_a_prompt_the_demo_model_understands(session: AgentSession) -> None:
    sent = Sent(session, "/demo-prefill")
    sent.finish()
    assert session.editor_text == "list the files here"
    assert intent_of(session.editor_text) == "files"
    assert sent.messages() == ['/demo-prefill set the editor text to "list the files here"']

    sent = Sent(session, "/demo-prefill hello there")
    sent.finish()
    assert session.editor_text == "hello there"
    session.set_editor_text("")


def test_demo_status_sets_then_clears_its_entry(session: AgentSession) -> None:
    sent = Sent(session, "/demo-status")
    sent.finish()
    assert session.status["demo-status"] == "a status entry set by /demo-status"
    assert session.status["demo-turns"] == f"{TURNS}0"  # the turn counter is left alone
    assert sent.messages() == [
        '/demo-status set the demo-status entry to "a status entry set by /demo-status"'
    ]

    sent = Sent(session, "/demo-status")
    sent.finish()
    assert "demo-status" not in session.status
    assert sent.messages() == ["/demo-status cleared the demo-status entry"]

    Sent(session, "/demo-status building…").finish()
    assert session.status["demo-status"] == "building…"
    Sent(session, "/demo-status").finish()
    assert "demo-status" not in session.status


def test_demo_widget_sets_then_clears_its_block(session: AgentSession) -> None:
    sent = Sent(session, "/demo-widget")
    sent.finish()
    widget = session.widgets["demo-widget"]
    assert widget == {
        "lines": ["A widget block set by /demo-widget", "Run /demo-widget again to clear it"],
        "placement": "aboveEditor",
    }
    assert sent.messages()[0].startswith("/demo-widget set the demo-widget block to [")

    sent = Sent(session, "/demo-widget")
    sent.finish()
    assert "demo-widget" not in session.widgets
    assert {"demo-above", "demo-below"} <= set(session.widgets)  # the start-up blocks stay
    assert sent.messages() == ["/demo-widget cleared the demo-widget block"]

    Sent(session, "/demo-widget first line | second line").finish()
    assert session.widgets["demo-widget"]["lines"] == ["first line", "second line"]
    Sent(session, "/demo-widget").finish()
    assert "demo-widget" not in session.widgets


# --------------------------------------------------------------------------- on the demo model


def guard_probe_script(request: ChatRequest) -> Turn:
    """``run: <command>`` makes one bash call, then says "done"; anything else: the demo."""
    prompt = request.last_user_text
    if prompt.startswith("run: "):
        if request.turn_index == 0:
            return Turn([ToolCall("bash", {"command": prompt.removeprefix("run: ")})])
        return Turn([Text("done")])
    return demo_script(request)


@pytest.fixture(scope="module")
def demo_model(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[ScriptedModelServer, Path]]:
    """The demo model (with a ``run: <command>`` probe) and an agent home that selects it."""
    home = tmp_path_factory.mktemp("demo-agent-home")
    with scripted_agent_home(
        home, guard_probe_script, provider="demo", model_id="offline-demo"
    ) as server:
        yield server, home


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A folder with a couple of files, a notebook and the demo's scratch folder."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "README.md").write_text("# Demo project\n\nA folder for the demo.\n")
    (work / "analysis.ipynb").write_text('{\n "cells": [],\n "nbformat": 4\n}\n')
    (work / "data.csv").write_text("x,y\n1,2\n")
    scratch = work / "demo-scratch"
    scratch.mkdir()
    (scratch / "junk.txt").write_text("junk\n")
    return work


@pytest.fixture
def modelled(
    agent_command: list[str],
    demo_model: tuple[ScriptedModelServer, Path],
    workdir: Path,
) -> Iterator[AgentSession]:
    """A session on the demo model with the demo extension, working in ``workdir``."""
    server, home = demo_model
    session = aj.start(
        command=agent_command,
        env={"PI_CODING_AGENT_DIR": str(home)},
        extra_args=agent_args(server),
        extensions=[DEMO_EXTENSION],
        cwd=str(workdir),
        name=unique_name("demo-model"),
        display=False,
    )
    try:
        yield session
    finally:
        cancel_pending(session)
        stop_quietly(session)
        assert server.errors == []


def test_blocking_the_guarded_command(modelled: AgentSession, workdir: Path) -> None:
    session = modelled
    assert session.status == {"demo-turns": f"{TURNS}0"}
    sent = Sent(session, "clean up the scratch files")
    dialog = sent.dialog("select")
    assert dialog.title == GUARD_TITLE
    assert dialog.request["options"] == ["Allow", "Block"]
    assert dialog.request["timeout"] == 120000 and dialog.deadline is not None
    # The select holds up the tool card it guards.
    (tool,) = blocks_of(sent.run, ToolBlock)
    assert tool.name == "bash" and tool.args == {"command": SCRATCH_COMMAND}
    assert not tool.done
    assert session.status["demo-turns"] == "model turn 1 of this conversation running…"

    session.pending_dialogs[0].respond("Block")
    run = sent.finish()
    assert tool.done and tool.is_error
    assert tool.result == "Blocked by the demo guard: the user chose Block"
    assert tool.dialogs == [dialog] and dialog.answer == "Block"  # in the card it guards
    assert blocks_of(run, DialogBlock) == []
    final = blocks_of(run, AssistantBlock)[-1]
    assert final.final and "**blocked**" in final.text and "nothing was deleted" in final.text
    assert sent.notes() == [
        {
            "message": f"demo guard: blocked {SCRATCH_COMMAND} (the user chose Block)",
            "type": "warning",
        }
    ]
    assert (workdir / "demo-scratch" / "junk.txt").exists()
    assert turns_status(session) == 2  # the tool call's turn and the answer's turn
    usage = run.transcript.usage
    # The demo model counts nothing: the agent gets no usage, so no figures are shown.
    assert usage is not None and usage.turns == 2 and not usage.reported


def test_the_turn_count_is_the_conversations_a_continued_one_included(
    agent_command: list[str],
    demo_model: tuple[ScriptedModelServer, Path],
    workdir: Path,
    tmp_path: Path,
) -> None:
    """The status counts what a run's footer counts ("1 model turn"), over the conversation:
    an agent started again on the same conversation goes on from its count, not from 0."""
    server, home = demo_model
    kept = tmp_path / "conversation.jsonl"

    def started() -> AgentSession:
        return aj.start(
            command=[str(PINNED_AGENT)],  # no --no-session: the conversation is kept in ``kept``
            env={"PI_CODING_AGENT_DIR": str(home)},
            extra_args=[*agent_args(server), "--session", str(kept)],
            extensions=[DEMO_EXTENSION],
            cwd=str(workdir),
            name=unique_name("demo-turns"),
            display=False,
        )

    first = started()
    try:
        run = Sent(first, "think about a plan").finish()
        assert run.transcript.usage is not None and run.transcript.usage.turns == 1
        wait_until(
            lambda: first.status.get("demo-turns") == f"{TURNS}1", "the first conversation's count"
        )
    finally:
        stop_quietly(first)
    again = started()
    try:
        wait_until(
            lambda: again.status.get("demo-turns") == f"{TURNS}1",
            "the continued conversation's count",
        )
        Sent(again, "hello!").finish()
        wait_until(
            lambda: again.status.get("demo-turns") == f"{TURNS}2", "the count after one more turn"
        )
    finally:
        stop_quietly(again)
    assert server.errors == []


def test_allowing_the_guarded_command(modelled: AgentSession, workdir: Path) -> None:
    session = modelled
    sent = Sent(session, "delete the scratch folder")
    sent.dialog("select").respond("Allow")
    run = sent.finish()
    (tool,) = blocks_of(run, ToolBlock)
    assert tool.done and not tool.is_error
    assert "**ran**" in run.text
    assert sent.messages() == [f"demo guard: allowed {SCRATCH_COMMAND}"]
    assert not (workdir / "demo-scratch").exists()
    assert (workdir / "README.md").exists()


def test_listing_the_files_shows_a_tool_card_with_them(
    modelled: AgentSession, workdir: Path
) -> None:
    session = modelled
    run = Sent(session, "list the files here").finish()
    blocks = run.transcript.snapshot()
    assert [type(b) for b in blocks] == [AssistantBlock, ToolBlock, AssistantBlock], blocks
    tool = blocks[1]
    assert isinstance(tool, ToolBlock)
    assert tool.name == "bash" and tool.args == {"command": "ls -la"}
    assert tool.done and not tool.is_error and tool.result is not None
    for name in ("README.md", "analysis.ipynb", "data.csv", "demo-scratch"):
        assert name in tool.result
    last = blocks[2]
    assert isinstance(last, AssistantBlock) and last.final
    assert "3 file(s) and 1 folder(s)" in last.text
    assert "`README.md`" in last.text and "`analysis.ipynb`" in last.text
    assert not session.pending_dialogs  # ls is not guarded
    assert turns_status(session) == 2


def test_reading_a_file_after_listing_them(modelled: AgentSession) -> None:
    run = Sent(modelled, "read a file from this folder").finish()
    tools = blocks_of(run, ToolBlock)
    assert [t.name for t in tools] == ["bash", "read"]
    read = tools[1]
    assert read.args == {"path": "analysis.ipynb", "limit": 40}
    assert read.done and not read.is_error and '"nbformat": 4' in (read.result or "")
    assert "I read `analysis.ipynb`: the tool showed 4 line(s)." in run.text
    assert len(blocks_of(run, AssistantBlock)) == 3


def test_thinking_markdown_and_the_fallback_stream_through_the_agent(
    modelled: AgentSession,
) -> None:
    run = Sent(modelled, "think about a plan").finish()
    (block,) = blocks_of(run, AssistantBlock)
    assert block.thinking == THINKING and block.text == THOUGHT

    run = Sent(modelled, "hello!").finish()
    assert run.text == MARKDOWN
    elapsed = run.transcript.elapsed
    assert elapsed is not None and elapsed < 5

    run = Sent(modelled, "What is the weather like?").finish()
    assert run.text == FALLBACK
    usage = run.transcript.usage
    assert usage is not None and usage.turns == 1 and not usage.reported
    assert turns_status(modelled) == 3


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("sudo -n true", "sudo"),
        ("echo this is dangerous", 'contains "dangerous"'),
        ("rm -r -f ./not-there", "rm -rf"),
        ("rm -fR ./not-there", "rm -rf"),
    ],
)
@pytest.mark.one_line  # our guard's matcher; its hook and select run on both lines below
def test_the_guard_asks_about_each_kind_of_dangerous_command(
    modelled: AgentSession, command: str, why: str
) -> None:
    sent = Sent(modelled, f"run: {command}")
    dialog = sent.dialog("select")
    assert dialog.title == f"Dangerous command ({why}): {command}"
    dialog.respond("Block")
    run = sent.finish()
    (tool,) = blocks_of(run, ToolBlock)
    assert tool.is_error and tool.result == "Blocked by the demo guard: the user chose Block"


@pytest.mark.parametrize("command", ["echo pseudo safe", "rm -f ./not-there", "ls -rf"])
@pytest.mark.one_line  # our guard's matcher, as above
def test_the_guard_lets_harmless_commands_through(modelled: AgentSession, command: str) -> None:
    run = Sent(modelled, f"run: {command}").finish()
    assert [d for d in modelled.dialogs] == []
    (tool,) = blocks_of(run, ToolBlock)
    assert tool.done and not tool.is_error, tool.result


def test_a_cancelled_guard_blocks_too(modelled: AgentSession) -> None:
    sent = Sent(modelled, "run: echo dangerous")
    sent.dialog("select").cancel()
    run = sent.finish()
    (tool,) = blocks_of(run, ToolBlock)
    assert tool.is_error and tool.result == "Blocked by the demo guard: no answer"
    assert sent.notes() == [
        {"message": "demo guard: blocked echo dangerous (no answer)", "type": "warning"}
    ]
