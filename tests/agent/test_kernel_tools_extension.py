"""The kernel-tools extension (``addons/kernel_tools/kernel_tools.ts``) and its addon, through
the real agent of the line under test and a scripted model of this module's own.

The kernel side is left out: each test takes the session's own handling of kernel calls away
and answers the ``editor`` dialog of a call itself, as the kernel would, then reads what the
model was given back (the tool result in the model's next request).
"""

from __future__ import annotations

import json
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from atomic_jupyter import AgentSession
from atomic_jupyter.addons.kernel_tools import KERNEL_TOOLS_EXTENSION, KernelToolsAddon
from atomic_jupyter.addons.model_server import (
    ChatRequest,
    ScriptedModelServer,
    Text,
    ToolCall,
    Turn,
    agent_args,
    content_text,
)
from atomic_jupyter.session.dialogs import Dialog
from atomic_jupyter.transport.launch import LaunchSpec
from tests.harness.support import (
    CURRENT_LINE,
    abort_unfinished,
    cancel_pending,
    scripted_agent_home,
    stop_quietly,
    unique_name,
)

pytestmark = pytest.mark.agent

RUN_TIMEOUT = 60.0
#: ``call NAME {json}``: the scripted model calls tool NAME with those arguments.
CALL = re.compile(r"call (\w+) (\{.*\})")

DOUBLE = {
    "name": "double",
    "description": "Double a number.",
    "parameters": {
        "type": "object",
        "properties": {"x": {"type": "number"}},
        "required": ["x"],
        "additionalProperties": False,
    },
    "approval": False,
}


def script(request: ChatRequest) -> Turn:
    """Call the tool the prompt names, then say what it answered."""
    call = CALL.search(request.last_user_text)
    if call is None:
        return Turn([Text("Nothing to call.")])
    if request.turn_index == 0:
        return Turn([ToolCall(call.group(1), json.loads(call.group(2)))])
    results = request.tool_results
    said = content_text(results[-1].get("content")) if results else ""
    return Turn([Text(f"The tool answered: {said}")])


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ScriptedModelServer, Path]]:
    """This module's scripted model, and an agent home that selects it."""
    home = tmp_path_factory.mktemp("kernel-tools-agent-home")
    with scripted_agent_home(home, script) as server:
        yield server, home


def make_session(
    agent_command: list[str], model: tuple[ScriptedModelServer, Path], prefix: str, cwd: Path
) -> AgentSession:
    """A session (not started) on the scripted model whose kernel calls the test answers,
    working in ``cwd`` (the 0.73 line writes a session file there on ``new_session``)."""
    server, home = model
    session = AgentSession(
        unique_name(prefix),
        LaunchSpec(
            command=agent_command,
            env={"PI_CODING_AGENT_DIR": str(home)},
            extra_args=tuple(agent_args(server)),
            cwd=str(cwd),
        ),
    )
    kernel_side = getattr(session, "_kernel_tools", None)
    if kernel_side is not None:  # the session's own kernel side would answer the calls
        kernel_side.claims = lambda _request: False
    return session


@pytest.fixture(scope="module")
def shared(
    agent_command: list[str],
    model: tuple[ScriptedModelServer, Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[AgentSession]:
    cwd = tmp_path_factory.mktemp("kernel-tools-work")
    session = make_session(agent_command, model, "kernel-tools", cwd)
    try:
        yield session.start()
    finally:
        stop_quietly(session)


@pytest.fixture
def session(shared: AgentSession) -> Iterator[AgentSession]:
    """The shared session, running, with only ``double`` published; no dialog left over."""
    if not shared.alive:
        shared.start()
    addon(shared).publish([DOUBLE])
    yield shared
    cancel_pending(shared)
    abort_unfinished(shared)


@pytest.fixture
def own_session(
    agent_command: list[str],
    model: tuple[ScriptedModelServer, Path],
    tmp_path: Path,
) -> Iterator[AgentSession]:
    """A session of the test's own, not started; stopped at the end."""
    session = make_session(agent_command, model, "kernel-tools-own", tmp_path)
    try:
        yield session
    finally:
        cancel_pending(session)
        stop_quietly(session)


# --------------------------------------------------------------------------- helpers


def addon(session: AgentSession) -> KernelToolsAddon:
    found = session.addon("kernel-tools")
    assert isinstance(found, KernelToolsAddon)
    return found


def ask(session: AgentSession, tool: str, args: dict[str, Any]) -> Any:
    """Make the model call ``tool`` with ``args``; return the run."""
    return session.prompt(f"call {tool} {json.dumps(args)}", display=False)


def next_dialog(session: AgentSession, run: Any, method: str) -> Dialog:
    """The dialog the run waits for (it must be a ``method`` dialog)."""
    result = session.wait(timeout=RUN_TIMEOUT, run=run, quiet=True)
    assert result.reason == "dialog", (result, session.stderr_tail)
    assert result.dialog is not None and result.dialog.method == method, result.dialog
    return result.dialog


def finish(session: AgentSession, run: Any) -> None:
    result = session.wait(timeout=RUN_TIMEOUT, run=run, quiet=True)
    assert result.reason == "finished", (result, session.stderr_tail)


def tool_result(server: ScriptedModelServer) -> str:
    """The text of the tool result the model was given last."""
    results = server.requests[-1].tool_results
    assert results, "the model's last request carries no tool result"
    return content_text(results[-1].get("content"))


def answer_call(session: AgentSession, dialog: Dialog, reply: dict[str, Any]) -> dict[str, Any]:
    """Check that ``dialog`` is a kernel call of this launch, answer it; return the call."""
    assert dialog.request["title"] == f"atomic-kernel-call {addon(session).secret}"
    call: dict[str, Any] = json.loads(dialog.request["prefill"])
    dialog.respond(json.dumps(reply))
    return call


def offered(server: ScriptedModelServer) -> dict[str, Any]:
    """The tools of the model's last request, by name."""
    tools = server.requests[-1].body.get("tools") or []
    return {t["function"]["name"]: t["function"] for t in tools}


# --------------------------------------------------------------------------- tests


def test_the_secret_is_private_to_the_launch_and_deleted_once_read(
    session: AgentSession,
) -> None:
    folder = addon(session).folder
    assert folder is not None
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    secret = addon(session).secret
    assert secret is not None and re.fullmatch(r"[0-9a-f]{32}", secret)
    assert not (folder / "secret").exists(), "the extension did not delete the secret file"
    assert json.loads((folder / "tools.json").read_text()) == [DOUBLE]
    i = session.argv.index(str(KERNEL_TOOLS_EXTENSION))
    assert session.argv[i - 1] == "-e"
    assert addon(session).status == {"registered": ["double"], "active": ["double"], "skipped": {}}


def test_a_call_goes_to_the_kernel_as_an_editor_dialog_and_its_text_to_the_model(
    session: AgentSession, model: tuple[ScriptedModelServer, Path]
) -> None:
    server, _home = model
    updates: list[Any] = []
    listening = session.on_event(
        lambda event: (
            updates.append(event.get("partialResult"))
            if event.type == "tool_execution_update"
            else None
        )
    )
    try:
        run = ask(session, "double", {"x": 21})
        dialog = next_dialog(session, run, "editor")
        call = answer_call(session, dialog, {"ok": True, "text": "42"})
        finish(session, run)
    finally:
        listening.remove()
    assert call == {"tool": "double", "id": call["id"], "args": {"x": 21}}
    assert isinstance(call["id"], str) and call["id"]
    assert updates and updates[0]["content"] == [
        {"type": "text", "text": "waiting for the kernel…"}
    ]
    assert tool_result(server) == "42"
    assert run.text.endswith("The tool answered: 42")
    # The model was offered the tool with the schema as published.
    declared = offered(server)["double"]
    assert declared["description"] == "Double a number."
    assert declared["parameters"]["properties"] == {"x": {"type": "number"}}
    assert declared["parameters"]["required"] == ["x"]


def test_a_failure_in_the_kernel_reaches_the_model_as_the_tools_error(
    session: AgentSession, model: tuple[ScriptedModelServer, Path]
) -> None:
    server, _home = model
    run = ask(session, "double", {"x": 1})
    answer_call(session, next_dialog(session, run, "editor"), {"ok": False, "error": "boom: x"})
    finish(session, run)
    assert tool_result(server) == "boom: x"


def test_a_cancelled_call_tells_the_model_the_kernel_did_not_answer(
    session: AgentSession, model: tuple[ScriptedModelServer, Path]
) -> None:
    server, _home = model
    run = ask(session, "double", {"x": 2})
    next_dialog(session, run, "editor").cancel()
    finish(session, run)
    assert "The kernel did not answer" in tool_result(server)


def test_arguments_that_break_the_schema_never_reach_the_kernel(
    session: AgentSession, model: tuple[ScriptedModelServer, Path]
) -> None:
    server, _home = model
    dialogs_before = len(session.dialogs)
    run = ask(session, "double", {"y": 2})
    finish(session, run)
    assert len(session.dialogs) == dialogs_before, "the kernel was asked to run bad arguments"
    said = tool_result(server)
    assert said.startswith('Validation failed for tool "double"'), said


def test_a_tool_needing_approval_asks_first_and_a_refusal_reaches_the_model(
    session: AgentSession, model: tuple[ScriptedModelServer, Path]
) -> None:
    server, _home = model
    addon(session).publish([{**DOUBLE, "approval": True}])
    dialogs_before = len(session.dialogs)
    run = ask(session, "double", {"x": 5})
    confirm = next_dialog(session, run, "confirm")
    assert confirm.request["title"] == "Run double in the kernel?"
    assert json.loads(confirm.request["message"]) == {"x": 5}
    assert confirm.request["message"] == json.dumps({"x": 5}, indent=2)
    confirm.respond(False)
    finish(session, run)
    assert tool_result(server) == "The person declined to run double in the kernel."
    assert len(session.dialogs) == dialogs_before + 1, "the kernel was asked after a refusal"

    run = ask(session, "double", {"x": 5})
    next_dialog(session, run, "confirm").respond(True)
    answer_call(session, next_dialog(session, run, "editor"), {"ok": True, "text": "10"})
    finish(session, run)
    assert tool_result(server) == "10"


def test_a_tool_no_longer_published_is_not_offered_and_cannot_be_called(
    session: AgentSession, model: tuple[ScriptedModelServer, Path]
) -> None:
    server, _home = model
    triple = {**DOUBLE, "name": "triple", "description": "Triple a number."}
    addon(session).publish([triple])
    assert addon(session).status["registered"] == ["triple"]
    dialogs_before = len(session.dialogs)
    run = ask(session, "double", {"x": 3})
    finish(session, run)
    assert len(session.dialogs) == dialogs_before, "the kernel was asked for a withdrawn tool"
    assert "double" not in offered(server)
    assert "triple" in offered(server)
    said = tool_result(server)
    assert "double" in said and "not found" in said.lower(), said
    # Published again, it is back (and active) without a restart.
    addon(session).publish([DOUBLE])
    run = ask(session, "double", {"x": 4})
    answer_call(session, next_dialog(session, run, "editor"), {"ok": True, "text": "8"})
    finish(session, run)
    assert tool_result(server) == "8"
    assert "double" in offered(server) and "triple" not in offered(server)


def test_tools_published_while_a_call_waits_for_the_kernel_are_taken_at_once(
    session: AgentSession, model: tuple[ScriptedModelServer, Path]
) -> None:
    """An exposed function may expose another: the agent takes the list during the call."""
    server, _home = model
    triple = {**DOUBLE, "name": "triple", "description": "Triple a number."}
    run = ask(session, "double", {"x": 3})
    dialog = next_dialog(session, run, "editor")
    addon(session).publish([DOUBLE, triple])
    assert dialog.pending
    answer_call(session, dialog, {"ok": True, "text": "6"})
    finish(session, run)
    assert tool_result(server) == "6"
    if CURRENT_LINE:  # offered in the run's very next request (0.73: from the next prompt)
        assert {"double", "triple"} <= set(offered(server))
    run = ask(session, "triple", {"x": 3})
    call = answer_call(session, next_dialog(session, run, "editor"), {"ok": True, "text": "9"})
    finish(session, run)
    assert call["tool"] == "triple" and tool_result(server) == "9"


def test_a_changed_description_is_registered_again(
    session: AgentSession, model: tuple[ScriptedModelServer, Path]
) -> None:
    server, _home = model
    addon(session).publish([{**DOUBLE, "description": "Twice a number, exactly."}])
    run = ask(session, "double", {"x": 1})
    answer_call(session, next_dialog(session, run, "editor"), {"ok": True, "text": "2"})
    finish(session, run)
    assert offered(server)["double"]["description"] == "Twice a number, exactly."


def test_a_tool_named_like_a_built_in_one_is_not_offered_and_the_built_in_stays(
    session: AgentSession, model: tuple[ScriptedModelServer, Path]
) -> None:
    server, _home = model
    notes_before = len(session.notifications)
    addon(session).publish([DOUBLE, {**DOUBLE, "name": "read", "description": "Shadow read."}])
    status = addon(session).status
    assert status["registered"] == ["double"]
    assert "already has a tool" in status["skipped"]["read"]
    notes = [n["message"] for n in session.notifications[notes_before:]]
    assert any("read" in n and "not offered" in n for n in notes), notes
    run = ask(session, "double", {"x": 1})
    answer_call(session, next_dialog(session, run, "editor"), {"ok": True, "text": "2"})
    finish(session, run)
    assert offered(server)["read"]["description"] != "Shadow read."


def test_the_tools_survive_a_reload_of_the_extensions(
    session: AgentSession, model: tuple[ScriptedModelServer, Path]
) -> None:
    server, _home = model
    if session.prototypes is None:
        pytest.skip("prototyping (and its reload command) is off")
    secret = addon(session).secret
    status_file = addon(session).folder / "status.json"  # type: ignore[operator]
    applied = status_file.stat().st_mtime_ns
    session.request({"type": "prompt", "message": "/atomic-jupyter-reload"}, timeout=60)
    assert status_file.stat().st_mtime_ns != applied, "the extension was not loaded again"
    run = ask(session, "double", {"x": 6})
    call = answer_call(session, next_dialog(session, run, "editor"), {"ok": True, "text": "12"})
    assert call["args"] == {"x": 6}
    finish(session, run)
    assert tool_result(server) == "12"
    assert addon(session).secret == secret
    assert not (addon(session).folder / "secret").exists()  # type: ignore[operator]


def test_the_tools_survive_a_new_conversation(
    session: AgentSession, model: tuple[ScriptedModelServer, Path]
) -> None:
    server, _home = model
    secret = addon(session).secret
    assert session.new_session(display=False).result(30) == {"cancelled": False}
    run = ask(session, "double", {"x": 9})
    answer_call(session, next_dialog(session, run, "editor"), {"ok": True, "text": "18"})
    finish(session, run)
    assert tool_result(server) == "18"
    assert addon(session).secret == secret
    assert not (addon(session).folder / "secret").exists()  # type: ignore[operator]


def test_tools_published_before_the_start_are_there_and_stay_after_a_restart(
    own_session: AgentSession, model: tuple[ScriptedModelServer, Path]
) -> None:
    server, _home = model
    session = own_session
    addon(session).publish([DOUBLE])  # the agent is not running: written for its start
    session.start()
    first = addon(session).secret
    run = ask(session, "double", {"x": 7})
    answer_call(session, next_dialog(session, run, "editor"), {"ok": True, "text": "14"})
    finish(session, run)
    assert tool_result(server) == "14"

    folder = addon(session).folder
    session.restart()
    assert addon(session).folder == folder
    assert addon(session).secret not in (None, first)
    run = ask(session, "double", {"x": 8})  # nothing published again
    answer_call(session, next_dialog(session, run, "editor"), {"ok": True, "text": "16"})
    finish(session, run)
    assert tool_result(server) == "16"

    session.stop()
    assert folder is not None and not folder.exists()
    assert addon(session).folder is None and addon(session).secret is None
