"""The session's parts on their own, with no agent: the facade's delegated methods, commands
made in one place, the typed commands over any sender, prototypes, the redactor of a launch,
and a client whose launch fails."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from atomic_jupyter.errors import AgentStartError, AgentVersionError, PrototypeError
from atomic_jupyter.protocol.agent_line import AgentLine
from atomic_jupyter.protocol.messages import AgentEvent, Response
from atomic_jupyter.session.channel import as_command
from atomic_jupyter.session.commands import AgentCommands
from atomic_jupyter.session.delegation import Delegated
from atomic_jupyter.session.extension_ui import ExtensionUiState
from atomic_jupyter.session.observers import Listeners, Subscription
from atomic_jupyter.session.prompts import Prompts
from atomic_jupyter.session.prototyping import Prototypes
from atomic_jupyter.session.runs import CommandRun
from atomic_jupyter.session.session import AgentSession
from atomic_jupyter.transport.client import AgentClient
from atomic_jupyter.transport.launch import LaunchSpec

OLD = AgentLine("@mariozechner/pi-coding-agent", "0.73.1")


def test_a_delegated_method_is_its_parts_bound_method() -> None:
    session = AgentSession("parts", LaunchSpec(command=["true"]))
    assert isinstance(vars(AgentSession)["steer"], Delegated)
    assert AgentSession.steer.__doc__ == AgentCommands.steer.__doc__
    bound = session.steer
    assert bound.__self__ is session._commands and bound.__func__ is AgentCommands.steer
    prompt = session.prompt
    assert prompt.__self__ is session._prompts
    assert inspect.signature(prompt) == inspect.signature(Prompts.prompt.__get__(session._prompts))
    assert "text" in inspect.signature(prompt).parameters
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


class Sender:
    """Records what :class:`AgentCommands` sends; answers every request with ``data``."""

    def __init__(self, agent: AgentLine, data: Any = None) -> None:
        self.agent = agent
        self.data = data
        self.requests: list[tuple[dict[str, Any], float | None]] = []
        self.commands: list[dict[str, Any]] = []
        self.listeners: Listeners[Callable[[AgentEvent], None]] = Listeners()

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

    def on_event(self, callback: Callable[[AgentEvent], None]) -> Subscription:
        return self.listeners.add(callback)


def test_typed_commands_go_through_their_sender() -> None:
    sender = Sender(AgentLine(), data={"levels": ["off", "high"]})
    commands = AgentCommands(sender)
    assert commands.export_html(timeout=3) == {"levels": ["off", "high"]}
    assert sender.requests == [({"type": "export_html"}, 3)]  # no outputPath: not given
    assert commands.thinking_levels() == ["off", "high"]
    run = commands.fork("entry-1", display=False)
    assert sender.commands == [{"type": "fork", "entryId": "entry-1"}]
    assert run.kind == "fork"


def test_a_command_the_agents_line_lacks_is_refused_before_it_is_sent() -> None:
    sender = Sender(OLD)
    with pytest.raises(AgentVersionError, match="get_tree"):
        AgentCommands(sender).get_tree()
    assert sender.requests == []


def test_bash_output_is_forwarded_until_the_command_is_answered() -> None:
    sender = Sender(AgentLine())
    pieces: list[str] = []
    run = AgentCommands(sender).bash("ls", on_output=pieces.append, display=False)
    (sent,) = sender.commands
    assert sent["command"] == "ls" and sent["id"].startswith("aj-bash-")
    sender.listeners.emit(AgentEvent("bash_execution_update", {"id": sent["id"], "delta": "a"}))
    sender.listeners.emit(AgentEvent("bash_execution_update", {"id": "other", "delta": "b"}))
    run._settle(Response("bash", True, data={"output": "a"}), None)
    sender.listeners.emit(AgentEvent("bash_execution_update", {"id": sent["id"], "delta": "c"}))
    assert pieces == ["a"] and len(sender.listeners) == 0


def test_prototypes_say_plainly_when_prototyping_is_off() -> None:
    off = Prototypes(None)
    assert off.manager is None
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
