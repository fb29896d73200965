"""The session's parts on their own, with no agent: the facade's methods are its parts',
commands made in one place, the typed commands sent by the one part that sends commands,
the commands sent as runs, prototypes, the redactor of a launch, and a client whose launch
fails."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

import pytest

from atomic_jupyter.errors import AgentStartError, AgentVersionError, PrototypeError
from atomic_jupyter.protocol.agent_line import AgentLine
from atomic_jupyter.protocol.messages import AgentEvent, Response
from atomic_jupyter.session.commands import CommandChannel, as_command
from atomic_jupyter.session.extension_ui import ExtensionUiState
from atomic_jupyter.session.prompts import Prompts
from atomic_jupyter.session.runs import CommandRun
from atomic_jupyter.session.session import AgentSession
from atomic_jupyter.session.settings import SessionSettings
from atomic_jupyter.transport.client import AgentClient
from atomic_jupyter.transport.launch import LaunchSpec

OLD = AgentLine("@mariozechner/pi-coding-agent", "0.73.1")


def test_a_facade_method_is_written_out_with_its_parts_signature_and_docstring() -> None:
    session = AgentSession("parts", LaunchSpec(command=["true"]))
    assert AgentSession.steer.__doc__ == CommandChannel.steer.__doc__
    assert AgentSession.fork.__doc__ == Prompts.fork.__doc__
    assert AgentSession.prompt.__doc__ == Prompts.prompt.__doc__
    for name in ("prompt", "wait", "steer", "bash", "answer_with", "expose"):
        assert inspect.isfunction(getattr(AgentSession, name)), name  # a real method
    assert list(inspect.signature(session.prompt).parameters)[:2] == ["text", "images"]
    session._lifecycle.begin(OLD, None)
    with pytest.raises(AgentVersionError, match="get_tree"):  # called as a function: the same
        AgentSession.get_tree(session)


def test_a_command_is_made_from_its_type_or_a_dict_and_fields() -> None:
    assert as_command("get_state", {}) == {"type": "get_state"}
    given = {"type": "bash", "command": "ls"}
    made = as_command(given, {"id": "x"})
    assert made == {"type": "bash", "command": "ls", "id": "x"} and made is not given
    assert given == {"type": "bash", "command": "ls"}  # left as it was
    assert as_command("fork", {"entryId": None}) == {"type": "fork", "entryId": None}
    assert as_command("fork", {"entryId": None, "x": 1}, given=True) == {"type": "fork", "x": 1}


class Sent:
    """Records the commands a session's parts send; answers every request with ``data``."""

    def __init__(self, session: AgentSession, data: Any = None) -> None:
        self.data = data
        self.requests: list[tuple[dict[str, Any], float | None]] = []
        self.commands: list[dict[str, Any]] = []
        session._commands.request = self.request  # type: ignore[method-assign]
        session._prompts.command = self.command  # type: ignore[method-assign]

    def request(
        self, command: Mapping[str, Any] | str, timeout: float | None = None, **fields: Any
    ) -> Response:
        self.requests.append((as_command(command, fields), timeout))
        return Response("x", True, data=self.data)

    def command(
        self,
        command: Mapping[str, Any] | str,
        *,
        display: bool = True,
        shown: bool | None = None,
        label: str | None = None,
        **fields: Any,
    ) -> CommandRun:
        made = as_command(command, fields)
        self.commands.append(made)
        return CommandRun("r1", made, label or made["type"])


def session_on(agent: AgentLine) -> AgentSession:
    session = AgentSession("parts", LaunchSpec(command=["true"]))
    session._lifecycle.begin(agent, None)
    return session


def test_typed_commands_go_through_the_part_that_sends_commands() -> None:
    session = session_on(AgentLine())
    sent = Sent(session, data={"levels": ["off", "high"]})
    assert session.export_html(timeout=3) == {"levels": ["off", "high"]}
    assert sent.requests == [({"type": "export_html"}, 3)]  # no outputPath: not given
    assert session.thinking_levels() == ["off", "high"]
    run = session.fork("entry-1", display=False)
    assert sent.commands == [{"type": "fork", "entryId": "entry-1"}]
    assert run.kind == "fork"


def test_a_command_the_agents_line_lacks_is_refused_before_it_is_sent() -> None:
    session = session_on(OLD)
    sent = Sent(session)
    with pytest.raises(AgentVersionError, match="get_tree"):
        session.get_tree()
    assert sent.requests == []


def test_bash_output_is_forwarded_until_the_command_is_answered() -> None:
    session = session_on(AgentLine())
    sent = Sent(session)
    listeners = session.event_listeners
    before = len(listeners)
    pieces: list[str] = []
    run = session.bash("ls", on_output=pieces.append, display=False)
    (command,) = sent.commands
    assert command["command"] == "ls" and command["id"].startswith("aj-bash-")
    listeners.emit(AgentEvent("bash_execution_update", {"id": command["id"], "delta": "a"}))
    listeners.emit(AgentEvent("bash_execution_update", {"id": "other", "delta": "b"}))
    run._settle(Response("bash", True, data={"output": "a"}), None)
    listeners.emit(AgentEvent("bash_execution_update", {"id": command["id"], "delta": "c"}))
    assert pieces == ["a"] and len(listeners) == before


def test_prototypes_say_plainly_when_prototyping_is_off() -> None:
    off = AgentSession("parts", LaunchSpec(command=["true"]), config=SessionSettings())
    off._addons.clear()  # no "prototypes" addon: prototyping is off
    assert off.prototypes is None
    with pytest.raises(PrototypeError, match="prototyping is off"):
        off.extensions()


def test_a_new_launch_brings_its_own_redactor() -> None:
    ui = ExtensionUiState()
    ui.diagnose("key sk-123456")
    ui.use_redactor(lambda text: text.replace("sk-123456", "[redacted]"))
    ui.diagnose("key sk-123456")
    assert list(ui.diagnostics) == ["key sk-123456", "key [redacted]"]
    assert ui.redact("sk-123456!") == "[redacted]!"


def test_a_launch_that_cannot_spawn_leaves_the_client_without_a_process() -> None:
    delivered: list[Any] = []
    client = AgentClient(on_message=delivered.append)
    assert client.on_message is not None and client.process is None
    with pytest.raises(AgentStartError, match="not found"):
        client.launch(["/nonexistent/agent-xyz"], cwd=None, env={}, on_exit=lambda code: None)
    assert client.process is None


def test_a_dialog_is_announced_once_by_the_run_it_belongs_to() -> None:
    """A run's dialog is announced by its run (``RunTracker.changed`` with "now"), not by the
    registry too; a dialog of no run is announced by the registry."""
    import json

    from atomic_jupyter.session.runs import PromptRun

    session = AgentSession("announced", LaunchSpec(command=["true"]))
    session.state = "starting"  # never started: bytes go straight to the client
    added: list[str] = []
    runs: list[tuple[str, str]] = []
    session.dialog_registry.added.add(lambda d: added.append(d.title))
    session.tracker.changed.add(lambda run, how: runs.append((run.message, how)))

    def dialog(title: str) -> bytes:
        request = {"type": "extension_ui_request", "id": title, "method": "confirm"}
        return json.dumps({**request, "title": title}).encode() + b"\n"

    session.client.receive_data(dialog("of no run"))
    run = PromptRun("r1", "a prompt")
    session.tracker.sent(run)
    session.client.receive_data(dialog("of the run"))
    assert added == ["of no run"]
    assert runs.count(("a prompt", "now")) == 1
    assert [d.title for d in run.transcript.pending_dialogs()] == ["of the run"]
