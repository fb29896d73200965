"""The scripted OpenAI-compatible model server, on the wire and against the real agent (pi).

The first part talks to the server with ``http.client`` and checks the stream byte for
byte. The second part gives the real pinned agent the server as its model (a ``models.json``
in a fresh agent directory, no API key) and checks what the agent makes of each kind of turn:
streamed text, thinking, tool calls that run real tools, errors (and the agent's retries),
usage and cost, and an abort mid-stream.

Nothing sleeps hoping that something happened: waits are on events with deadlines.
"""

from __future__ import annotations

import http.client
import json
import math
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from atomic_jupyter import AgentSession
from atomic_jupyter.addons.model_server import (
    ChatRequest,
    Fail,
    ScriptedModelServer,
    Text,
    Thinking,
    ToolCall,
    Turn,
    Usage,
    agent_args,
    write_models_json,
)
from atomic_jupyter.protocol.messages import AgentEvent
from atomic_jupyter.transport.launch import LaunchSpec
from tests.harness.support import provider_error

RUN_TIMEOUT = 15.0


# --------------------------------------------------------------------------- wire helpers


def post(
    server: ScriptedModelServer, body: dict[str, Any], path: str = "/v1/chat/completions"
) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection(server.host, server.port, timeout=10)
    try:
        connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def sse_data(raw: bytes) -> list[str]:
    """The ``data:`` payloads of an SSE body, checking that every event is one data line."""
    text = raw.decode()
    assert text.endswith("\n\n")
    events = text[:-2].split("\n\n")
    for event in events:
        assert event.startswith("data: ") and "\n" not in event, event
    return [event[len("data: ") :] for event in events]


def chat(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"model": "scripted", "messages": messages, "stream": True, **extra}


USER = [{"role": "user", "content": "hello"}]


# --------------------------------------------------------------------------- the package


def test_every_name_of_the_package_is_importable_from_it() -> None:
    import atomic_jupyter.addons.model_server as package

    names = {
        "ChatRequest", "DUMMY_API_KEY", "FREE", "Fail", "PRICED", "Part", "REQUESTS_KEPT",
        "Script", "ScriptedModelServer", "Text", "Thinking", "ToolCall", "Turn", "Usage",
        "agent_args", "content_text", "model_entry", "write_models_json",
    }  # fmt: skip
    assert names <= set(package.__all__)
    assert all(hasattr(package, name) for name in package.__all__)


# --------------------------------------------------------------------------- the wire


def test_stream_is_openai_sse_with_usage_and_done() -> None:
    turn = Turn(
        [
            Thinking("ponder", chunk=2),
            Text("Hi there", chunk=3),
            ToolCall("bash", {"command": "ls -la"}, chunk=5),
        ],
        usage=Usage(11, 7),
    )
    with ScriptedModelServer(lambda r: turn) as server:
        status, headers, raw = post(server, chat(USER, stream_options={"include_usage": True}))
    assert status == 200
    assert headers["content-type"] == "text/event-stream"
    data = sse_data(raw)
    assert data[-1] == "[DONE]"
    chunks = [json.loads(d) for d in data[:-1]]
    for chunk in chunks:
        assert chunk["object"] == "chat.completion.chunk"
        assert chunk["id"] == "chatcmpl-scripted-0" and chunk["model"] == "scripted"
        assert isinstance(chunk["created"], int)
    *deltas, finish, usage = chunks
    assert usage["choices"] == []
    assert usage["usage"] == {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    assert finish["choices"] == [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]
    assert all(c["choices"][0]["finish_reason"] is None for c in deltas)
    got = [c["choices"][0]["delta"] for c in deltas]
    assert got[0] == {"role": "assistant"}
    assert [d["reasoning_content"] for d in got if "reasoning_content" in d] == ["po", "nd", "er"]
    assert [d["content"] for d in got if "content" in d] == ["Hi ", "the", "re"]
    calls = [d["tool_calls"][0] for d in got if "tool_calls" in d]
    assert calls[0] == {
        "index": 0,
        "id": "call_0_0",
        "type": "function",
        "function": {"name": "bash", "arguments": ""},
    }
    pieces = [c["function"]["arguments"] for c in calls[1:]]
    assert len(pieces) > 1 and all(len(p) <= 5 for p in pieces)
    assert json.loads("".join(pieces)) == {"command": "ls -la"}


def test_no_usage_chunk_unless_asked_and_finish_reason_stop() -> None:
    with ScriptedModelServer(lambda r: Turn("plain")) as server:
        _, _, raw = post(server, chat(USER))
    chunks = [json.loads(d) for d in sse_data(raw)[:-1]]
    assert all("usage" not in c for c in chunks)
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"


def test_fail_is_an_http_error_the_client_should_not_retry() -> None:
    with ScriptedModelServer(lambda r: Fail(503, "try later")) as server:
        status, headers, raw = post(server, chat(USER))
    assert status == 503
    assert headers["x-should-retry"] == "false"
    assert json.loads(raw)["error"]["message"] == "try later"


def test_models_list_and_non_streaming_completion() -> None:
    turn = Turn([Thinking("t"), Text("a"), Text("b"), ToolCall("read", {"path": "x"}, id="c1")])
    with ScriptedModelServer(lambda r: turn, model_id="m1") as server:
        connection = http.client.HTTPConnection(server.host, server.port, timeout=10)
        connection.request("GET", "/v1/models")
        models = json.loads(connection.getresponse().read())
        connection.close()
        status, _, raw = post(server, chat(USER, stream=False))
    assert [m["id"] for m in models["data"]] == ["m1"]
    assert status == 200
    completion = json.loads(raw)
    assert completion["object"] == "chat.completion"
    message = completion["choices"][0]["message"]
    assert message["content"] == "ab" and message["reasoning_content"] == "t"
    assert message["tool_calls"] == [
        {"id": "c1", "type": "function", "function": {"name": "read", "arguments": '{"path": "x"}'}}
    ]
    assert completion["choices"][0]["finish_reason"] == "tool_calls"


def test_chat_request_views() -> None:
    messages = [
        {"role": "developer", "content": "system prompt"},
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "ok"},
        {
            "role": "user",
            "content": [{"type": "text", "text": "sec"}, {"type": "text", "text": "ond"}],
        },
        {"role": "assistant", "content": None, "tool_calls": [{"id": "a"}, {"id": "b"}]},
        {"role": "tool", "content": "A", "tool_call_id": "a"},
        {"role": "tool", "content": "B", "tool_call_id": "b"},
        {
            "role": "user",
            "content": [{"type": "text", "text": "Attached image(s) from tool result:"}],
        },
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c"}]},
        {"role": "tool", "content": "C", "tool_call_id": "c"},
    ]
    request = ChatRequest(
        {"messages": messages, "tools": [{"type": "function", "function": {"name": "bash"}}]}
    )
    assert request.last_user_text == "second"
    assert request.turn_index == 2
    assert [m["content"] for m in request.tool_results] == ["A", "B", "C"]
    assert request.tool_names == ["bash"]
    empty = ChatRequest({})
    assert (empty.messages, empty.last_user_text, empty.turn_index) == ([], "", 0)


def test_sequence_script_then_over_and_script_errors() -> None:
    with ScriptedModelServer([Turn("one")]) as server:
        assert post(server, chat(USER))[0] == 200
        status, _, raw = post(server, chat(USER))
        assert status == 500 and "script is over" in raw.decode()

    def broken(request: ChatRequest) -> Turn:
        raise KeyError("oops")

    with ScriptedModelServer(broken) as server:
        status, _, raw = post(server, chat(USER))
        assert status == 500 and "KeyError" in raw.decode()
        assert server.errors == ["request 0: KeyError: 'oops'"]
        assert post(server, chat(USER), path="/v1/other")[0] == 404


def test_client_gone_mid_stream_and_stop_mid_stream(capfd: pytest.CaptureFixture[str]) -> None:
    slow = Turn([Text("x" * 200, chunk=1, delay=0.02)])
    with ScriptedModelServer(lambda r: slow) as server:
        sock = socket.create_connection((server.host, server.port), timeout=10)
        body = json.dumps(chat(USER)).encode()
        sock.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        assert b"200 OK" in sock.recv(4096)
        sock.close()  # gone mid-stream
        # The server keeps serving; a second stream is cut by stop() at once.
        second = socket.create_connection((server.host, server.port), timeout=10)
        second.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        assert b"200 OK" in second.recv(4096)
        started = time.monotonic()
        server.stop()
        assert time.monotonic() - started < 2
        while second.recv(4096):
            pass  # the server closed the connection
        second.close()
        assert server.request_count == 2 and server.errors == []
    captured = capfd.readouterr()
    assert captured.err == "" and captured.out == ""


def test_stop_closes_the_port() -> None:
    server = ScriptedModelServer(lambda r: Turn("x")).start()
    port = server.port
    assert server.base_url == f"http://127.0.0.1:{port}/v1"
    post(server, chat(USER))
    server.stop()
    assert not server.running
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    assert [r.last_user_text for r in server.requests] == ["hello"]
    server.stop()  # twice is fine


def test_write_models_json_keeps_other_providers(tmp_path: Path) -> None:
    (tmp_path / "models.json").write_text(json.dumps({"providers": {"other": {"baseUrl": "x"}}}))
    with ScriptedModelServer(lambda r: Turn("x"), provider="p", model_id="m") as server:
        path = write_models_json(tmp_path, server)
        config = json.loads(path.read_text())
        assert set(config["providers"]) == {"other", "p"}
        entry = config["providers"]["p"]
        assert entry["baseUrl"] == server.base_url and entry["api"] == "openai-completions"
        assert entry["models"][0]["id"] == "m" and entry["models"][0]["reasoning"] is True
        assert agent_args(server) == ["--provider", "p", "--model", "m"]


# --------------------------------------------------------------------------- the real agent


class Recorder:
    """Every event of a session, and waits on them with deadlines."""

    def __init__(self, session: AgentSession) -> None:
        self.events: list[AgentEvent] = []
        self._changed = threading.Condition()
        session.on_event(self._on_event)

    def _on_event(self, event: AgentEvent) -> None:
        with self._changed:
            self.events.append(event)
            self._changed.notify_all()

    def mark(self) -> int:
        with self._changed:
            return len(self.events)

    def wait_for(
        self, predicate: Callable[[AgentEvent], bool], start: int = 0, timeout: float = RUN_TIMEOUT
    ) -> int:
        """The index of the first event from ``start`` on that matches; fail on time-out."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                for i in range(start, len(self.events)):
                    if predicate(self.events[i]):
                        return i
                left = deadline - time.monotonic()
                if left <= 0:
                    kinds = [e.type for e in self.events[start:]]
                    pytest.fail(f"timed out after {timeout:g} s; events since start: {kinds}")
                self._changed.wait(left)

    def since(self, start: int) -> list[AgentEvent]:
        with self._changed:
            return list(self.events[start:])


def of_type(kind: str) -> Callable[[AgentEvent], bool]:
    return lambda event: event.type == kind


class Run:
    """One prompt's events, from its start to its ``agent_end``."""

    def __init__(self, recorder: Recorder, events: list[AgentEvent]) -> None:
        self.recorder = recorder
        self.events = events

    def of(self, kind: str) -> list[AgentEvent]:
        return [e for e in self.events if e.type == kind]

    def deltas(self, kind: str) -> list[str]:
        return [
            e.get("assistantMessageEvent")["delta"]
            for e in self.of("message_update")
            if e.get("assistantMessageEvent", {}).get("type") == kind
        ]

    @property
    def assistant(self) -> dict[str, Any]:
        """The last assistant message of the run."""
        messages = self.of("agent_end")[-1].get("messages")
        return [m for m in messages if m["role"] == "assistant"][-1]


def run_prompt(session: AgentSession, recorder: Recorder, text: str) -> Run:
    start = recorder.mark()
    session.prompt(text, display=False)
    end = recorder.wait_for(of_type("agent_end"), start)
    return Run(recorder, recorder.since(start)[: end - start + 1])


def text_of(message: dict[str, Any]) -> str:
    return "".join(b["text"] for b in message["content"] if b["type"] == "text")


MARKDOWN = "\n\n".join(
    f"## Section {i}\n\nSome *emphasis*, some **bold**, `code {i}` and a list:\n\n"
    f"- item {i}.1\n- item {i}.2\n\n```python\nprint({i} * 'é')\n```"
    for i in range(30)
)
TEXT_CHUNKS = 50
NOTES = "line one of the notes\nline two: ünïcode ✓\n"


def file_text(request: ChatRequest) -> str:
    return request.tool_results[0]["content"] if request.tool_results else ""


#: What the module's model answers, by prompt; each is ``turn_index -> Turn``.
SCRIPTS: dict[str, Callable[[ChatRequest], Turn | Fail]] = {
    "markdown please": lambda r: Turn(
        [Text(MARKDOWN, chunk=math.ceil(len(MARKDOWN) / TEXT_CHUNKS))]
    ),
    "think first": lambda r: Turn(
        [Thinking("Weighing the options:\n1. this\n2. that", chunk=7), Text("I choose **this**.")]
    ),
    "run echo": lambda r: (
        Turn([Text("Running it."), ToolCall("bash", {"command": "echo hello-from-tool"})])
        if r.turn_index == 0
        else Turn("done")
    ),
    "read the notes": lambda r: (
        Turn([ToolCall("read", {"path": "notes.txt"})])
        if r.turn_index == 0
        else Turn(f"The notes say:\n{file_text(r)}")
    ),
    "count tokens": lambda r: Turn("counted", usage=Usage(1234, 56)),
    "bad request": lambda r: Fail(400, "scripted bad request"),
    "server error": lambda r: Fail(500, "scripted server failure"),
    "go slowly": lambda r: Turn([Text("slow " * 200, chunk=5, delay=0.02)]),
    "after abort": lambda r: Turn("still here"),
}


def module_script(request: ChatRequest) -> Turn | Fail:
    return SCRIPTS[request.last_user_text](request)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("scripted-work")
    (work / "notes.txt").write_text(NOTES, encoding="utf-8")
    return work


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(module_script) as server:
        yield server
    assert server.errors == []


@pytest.fixture(scope="module")
def agent_dir(tmp_path_factory: pytest.TempPathFactory, server: ScriptedModelServer) -> Path:
    directory = tmp_path_factory.mktemp("scripted-agent-dir")
    write_models_json(directory, server)
    return directory


def start_session(
    agent_command: list[str], server: ScriptedModelServer, agent_dir: Path, cwd: Path
) -> AgentSession:
    spec = LaunchSpec(
        command=agent_command,
        env={"PI_CODING_AGENT_DIR": str(agent_dir)},
        extra_args=tuple(agent_args(server)),
        cwd=str(cwd),
    )
    return AgentSession(f"scripted-{cwd.name}", spec).start(timeout=30)


@pytest.fixture(scope="module")
def agent(
    agent_command: list[str], server: ScriptedModelServer, agent_dir: Path, workdir: Path
) -> Iterator[tuple[AgentSession, Recorder]]:
    session = start_session(agent_command, server, agent_dir, workdir)
    recorder = Recorder(session)
    yield session, recorder
    session.stop()


def requests_for(server: ScriptedModelServer, text: str) -> list[ChatRequest]:
    return [r for r in server.requests if r.last_user_text == text]


@pytest.mark.agent
def test_agent_uses_the_scripted_model(
    agent: tuple[AgentSession, Recorder], server: ScriptedModelServer
) -> None:
    session, _ = agent
    state = session.request("get_state").data
    assert state["model"]["provider"] == "scripted" and state["model"]["id"] == "scripted"


@pytest.mark.agent
def test_markdown_text_streams(
    agent: tuple[AgentSession, Recorder], server: ScriptedModelServer
) -> None:
    session, recorder = agent
    run = run_prompt(session, recorder, "markdown please")
    deltas = run.deltas("text_delta")
    assert len(deltas) == TEXT_CHUNKS
    assert "".join(deltas) == MARKDOWN
    assert text_of(run.assistant) == MARKDOWN
    assert run.assistant["stopReason"] == "stop"
    messages = session.request("get_messages").data["messages"]
    assert text_of(messages[-1]) == MARKDOWN
    (request,) = requests_for(server, "markdown please")
    assert request.stream and request.include_usage
    assert request.headers["authorization"].startswith("Bearer ")
    assert {"read", "bash", "edit", "write"} <= set(request.tool_names)


@pytest.mark.agent
def test_thinking_block_then_text(agent: tuple[AgentSession, Recorder]) -> None:
    session, recorder = agent
    run = run_prompt(session, recorder, "think first")
    thinking = "Weighing the options:\n1. this\n2. that"
    assert "".join(run.deltas("thinking_delta")) == thinking
    content = run.assistant["content"]
    assert [b["type"] for b in content] == ["thinking", "text"]
    assert content[0]["thinking"] == thinking
    assert content[1]["text"] == "I choose **this**."


@pytest.mark.agent
def test_bash_tool_call_runs_and_its_result_goes_back(
    agent: tuple[AgentSession, Recorder], server: ScriptedModelServer
) -> None:
    session, recorder = agent
    run = run_prompt(session, recorder, "run echo")
    (start,) = run.of("tool_execution_start")
    assert start.get("toolName") == "bash"
    assert start.get("args") == {"command": "echo hello-from-tool"}
    (end,) = run.of("tool_execution_end")
    assert end.get("isError") is False
    assert end.get("result")["content"][0]["text"].strip() == "hello-from-tool"
    assert text_of(run.assistant) == "done"
    first, second = requests_for(server, "run echo")
    assert (first.turn_index, second.turn_index) == (0, 1)
    (result,) = second.tool_results
    assert result["tool_call_id"] == start.get("toolCallId")
    assert result["content"].strip() == "hello-from-tool"
    calls = [m for m in second.messages if m.get("tool_calls")][-1]["tool_calls"]
    assert calls[0]["function"]["name"] == "bash"
    assert json.loads(calls[0]["function"]["arguments"]) == {"command": "echo hello-from-tool"}


@pytest.mark.agent
def test_read_tool_call_in_the_working_directory(agent: tuple[AgentSession, Recorder]) -> None:
    session, recorder = agent
    run = run_prompt(session, recorder, "read the notes")
    (end,) = run.of("tool_execution_end")
    assert end.get("toolName") == "read" and end.get("isError") is False
    assert NOTES.strip() in end.get("result")["content"][0]["text"]
    assert NOTES.strip() in text_of(run.assistant)


@pytest.mark.agent
def test_usage_and_cost(agent: tuple[AgentSession, Recorder]) -> None:
    session, recorder = agent
    run = run_prompt(session, recorder, "count tokens")
    usage = run.assistant["usage"]
    assert (usage["input"], usage["output"], usage["totalTokens"]) == (1234, 56, 1290)
    assert usage["cost"]["total"] == pytest.approx((1234 * 1.0 + 56 * 2.0) / 1e6)
    assert usage["cost"]["total"] > 0


@pytest.mark.agent
def test_client_error_ends_the_run_without_retry(
    agent: tuple[AgentSession, Recorder], server: ScriptedModelServer
) -> None:
    session, recorder = agent
    run = run_prompt(session, recorder, "bad request")
    assert run.assistant["stopReason"] == "error"
    assert run.assistant["errorMessage"] == provider_error(400, "scripted bad request")
    assert not run.of("auto_retry_start")
    assert len(requests_for(server, "bad request")) == 1


@pytest.mark.agent
def test_abort_mid_stream(
    agent: tuple[AgentSession, Recorder], server: ScriptedModelServer
) -> None:
    session, recorder = agent
    start = recorder.mark()
    session.prompt("go slowly", display=False)
    recorder.wait_for(
        lambda e: (
            e.type == "message_update"
            and e.get("assistantMessageEvent", {}).get("type") == "text_delta"
        ),
        start,
    )
    session.request("abort")
    end = recorder.wait_for(of_type("agent_end"), start)
    run = Run(recorder, recorder.since(start)[: end - start + 1])
    assert run.assistant["stopReason"] == "aborted"
    assert len(text_of(run.assistant)) < len("slow " * 200)
    # The server shrugged the disconnect off and answers the next prompt.
    assert text_of(run_prompt(session, recorder, "after abort").assistant) == "still here"
    assert server.errors == []


@pytest.mark.agent
def test_server_error_with_auto_retry_off(
    agent_command: list[str], server: ScriptedModelServer, workdir: Path, tmp_path: Path
) -> None:
    """A 500 is retried by the agent (up to 3 times, 2 s, 4 s, 8 s apart) unless turned off."""
    write_models_json(tmp_path, server)
    session = start_session(agent_command, server, tmp_path, workdir)
    try:
        recorder = Recorder(session)
        session.request({"type": "set_auto_retry", "enabled": False})
        run = run_prompt(session, recorder, "server error")
        assert run.assistant["stopReason"] == "error"
        assert run.assistant["errorMessage"] == provider_error(500, "scripted server failure")
        assert not run.of("auto_retry_start")
        # x-should-retry: false kept the agent's OpenAI client from retrying by itself.
        assert len(requests_for(server, "server error")) == 1
    finally:
        session.stop()


@pytest.mark.agent
def test_server_error_is_retried_by_the_agent(
    agent_command: list[str], workdir: Path, tmp_path: Path
) -> None:
    seen: list[int] = []

    def flaky(request: ChatRequest) -> Turn | Fail:
        seen.append(request.number)
        return Fail(503, "overloaded") if len(seen) == 1 else Turn("recovered")

    (tmp_path / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 20}}))
    with ScriptedModelServer(flaky) as flaky_server:
        write_models_json(tmp_path, flaky_server)
        session = start_session(agent_command, flaky_server, tmp_path, workdir)
        try:
            recorder = Recorder(session)
            start = recorder.mark()
            session.prompt("try twice", display=False)
            retry = recorder.wait_for(of_type("auto_retry_start"), start)
            assert recorder.events[retry].get("errorMessage") == provider_error(503, "overloaded")
            done = recorder.wait_for(of_type("auto_retry_end"), retry)
            assert recorder.events[done].get("success") is True
            end = recorder.wait_for(of_type("agent_end"), done)
            run = Run(recorder, recorder.since(start)[: end - start + 1])
            assert text_of(run.assistant) == "recovered"
        finally:
            session.stop()
        assert len(flaky_server.requests) == 2
        port = flaky_server.port
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
