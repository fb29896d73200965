"""A scripted, OpenAI-compatible chat-completions server, for tests and offline demos.

The agent (pi) talks to any server that speaks the OpenAI *chat completions* API
(``api: "openai-completions"`` in its ``models.json``). :class:`ScriptedModelServer` is such
a server, in the standard library only: for every ``POST /v1/chat/completions`` it calls a
*script* with the parsed request and streams the :class:`Turn` the script returns, as
server-sent events in the shape the agent parses:

- ``choices[0].delta.content`` for :class:`Text`,
- ``choices[0].delta.reasoning_content`` for :class:`Thinking` (the agent also reads
  ``reasoning`` and ``reasoning_text``),
- ``choices[0].delta.tool_calls[{index, id, type, function: {name, arguments}}]`` for
  :class:`ToolCall`, the arguments' JSON split across several chunks,
- ``choices[0].finish_reason`` (``"tool_calls"`` -> the agent runs the tools, ``"stop"``),
- a last chunk with ``usage`` (``prompt_tokens``, ``completion_tokens``, ``total_tokens``)
  when the request asks for it (``stream_options.include_usage``, which the agent sends),
- then ``data: [DONE]``.

:class:`Fail` answers with an HTTP error instead, which the agent reports as an assistant
message with ``stopReason: "error"``.

Example::

    def script(request):
        if request.turn_index == 0:
            return Turn([ToolCall("bash", {"command": "echo hi"})])
        return Turn([Text("done")])

    with ScriptedModelServer(script) as server:
        write_models_json(agent_dir, server)       # then run the agent with
        argv = ["pi", *agent_args(server)]         # PI_CODING_AGENT_DIR=agent_dir
"""

from __future__ import annotations

import json
import math
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

__all__ = [
    "ChatRequest",
    "Fail",
    "ScriptedModelServer",
    "Text",
    "Thinking",
    "ToolCall",
    "Turn",
    "Usage",
    "agent_args",
    "content_text",
    "model_entry",
    "write_models_json",
]

#: How many requests a server remembers (the newest).
REQUESTS_KEPT = 200

#: The API key written into ``models.json``; the server accepts any key, and the agent only
#: needs one to be configured. (The agent would read it as an environment variable's name
#: first, so it is a name no one sets.)
DUMMY_API_KEY = "scripted-model-server-no-key-needed"


# --------------------------------------------------------------------------- turns


@dataclass(frozen=True)
class Text:
    """Assistant text, streamed as ``delta.content`` pieces.

    Attributes
    ----------
    text:
        The text (Markdown is fine).
    chunk:
        Characters per streamed piece.
    delay:
        Seconds to wait before each piece (to act mid-stream, e.g. abort or steer).
    """

    text: str
    chunk: int = 16
    delay: float = 0.0


@dataclass(frozen=True)
class Thinking:
    """Reasoning, streamed as ``delta.<field>`` pieces; the agent shows a thinking block.

    Attributes
    ----------
    text:
        The reasoning text.
    chunk:
        Characters per streamed piece.
    delay:
        Seconds to wait before each piece.
    field:
        The delta field: ``"reasoning_content"`` (llama.cpp, DeepSeek), ``"reasoning"`` or
        ``"reasoning_text"``; the agent reads the first of these that is non-empty, and
        sends the thinking back under the same name in later requests.
    """

    text: str
    chunk: int = 16
    delay: float = 0.0
    field: str = "reasoning_content"


@dataclass(frozen=True)
class ToolCall:
    """A tool call, streamed as ``delta.tool_calls`` pieces.

    Attributes
    ----------
    name:
        The tool's name (``"bash"``, ``"read"``, ``"edit"``, ``"write"``, ...).
    arguments:
        The tool's arguments; sent as JSON split into pieces of ``chunk`` characters.
    id:
        The call id; ``call_<request number>_<index>`` when None.
    chunk:
        Characters of the arguments' JSON per streamed piece.
    delay:
        Seconds to wait before each piece.
    """

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    id: str | None = None
    chunk: int = 12
    delay: float = 0.0


@dataclass(frozen=True)
class Fail:
    """An HTTP error response instead of a stream; the agent ends the turn with an error.

    The agent reports ``"<status> <message>"``. It retries by itself on some errors: its
    OpenAI client on 408/409/429/5xx, unless the response says ``x-should-retry: false``
    (sent unless ``client_retry``), and the agent session on messages matching 429, 5xx,
    "overloaded", "rate limit", "server error", "timeout", ... (unless auto-retry is off:
    RPC ``{"type": "set_auto_retry", "enabled": false}``). A 400 with a plain message is
    not retried at all.

    Attributes
    ----------
    status:
        The HTTP status, e.g. 400 or 500.
    message:
        The error message (``{"error": {"message": ...}}`` in the body).
    client_retry:
        Whether to let the agent's OpenAI client retry the request by itself.
    """

    status: int = 500
    message: str = "scripted failure"
    client_retry: bool = False


@dataclass(frozen=True)
class Usage:
    """Token counts reported in the stream's last chunk.

    Attributes
    ----------
    input:
        ``prompt_tokens``; the agent's ``usage.input``.
    output:
        ``completion_tokens``; the agent's ``usage.output``.
    """

    input: int = 0
    output: int = 0


Part = Text | Thinking | ToolCall


@dataclass(frozen=True)
class Turn:
    """One assistant response: its parts, streamed in order.

    Attributes
    ----------
    parts:
        :class:`Text`, :class:`Thinking` and :class:`ToolCall` parts (a single part or a
        string, which means ``Text(string)``, is accepted too); or a :class:`Fail`.
    usage:
        The reported usage; None to estimate it (about four characters a token).
    finish_reason:
        ``"tool_calls"`` when the turn has tool calls, else ``"stop"``, unless given
        (``"length"`` makes the agent report a truncated response).
    """

    parts: Sequence[Part] | Part | Fail | str = ()
    usage: Usage | None = None
    finish_reason: str | None = None

    @property
    def items(self) -> tuple[Part, ...]:
        """The parts as a tuple (empty for a :class:`Fail`)."""
        parts = self.parts
        if isinstance(parts, str):
            return (Text(parts),)
        if isinstance(parts, (Text, Thinking, ToolCall)):
            return (parts,)
        if isinstance(parts, Fail):
            return ()
        return tuple(Text(p) if isinstance(p, str) else p for p in parts)

    @property
    def failure(self) -> Fail | None:
        """The :class:`Fail` this turn stands for, if it is one."""
        return self.parts if isinstance(self.parts, Fail) else None

    @property
    def finish(self) -> str:
        """The finish reason sent."""
        if self.finish_reason is not None:
            return self.finish_reason
        return "tool_calls" if any(isinstance(p, ToolCall) for p in self.items) else "stop"


# --------------------------------------------------------------------------- requests


def content_text(content: Any) -> str:
    """The text of an OpenAI-style message content: a string, or its text parts joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


#: The text of the user message the agent adds after tool results that carry images.
_TOOL_IMAGES_TEXT = "Attached image(s) from tool result:"


@dataclass(frozen=True)
class ChatRequest:
    """One chat-completions request as the server received it.

    Attributes
    ----------
    body:
        The parsed JSON body.
    headers:
        The HTTP headers (names lower-cased).
    number:
        The request's number on this server, from 0.
    """

    body: Mapping[str, Any]
    headers: Mapping[str, str] = field(default_factory=dict)
    number: int = 0

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The ``messages`` (system/developer, user, assistant and tool messages)."""
        messages = self.body.get("messages")
        return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []

    @property
    def model(self) -> str:
        """The requested model id."""
        return str(self.body.get("model", ""))

    @property
    def stream(self) -> bool:
        """Whether the client asked for a stream."""
        return bool(self.body.get("stream"))

    @property
    def include_usage(self) -> bool:
        """Whether the client asked for a usage chunk (``stream_options.include_usage``)."""
        options = self.body.get("stream_options")
        return isinstance(options, dict) and bool(options.get("include_usage"))

    @property
    def tool_names(self) -> list[str]:
        """The names of the tools offered."""
        tools = self.body.get("tools")
        if not isinstance(tools, list):
            return []
        return [
            str(t["function"].get("name", ""))
            for t in tools
            if isinstance(t, dict) and isinstance(t.get("function"), dict)
        ]

    def _last_user_index(self) -> int:
        messages = self.messages
        for i in range(len(messages) - 1, -1, -1):
            message = messages[i]
            if message.get("role") != "user":
                continue
            after_tool = i > 0 and messages[i - 1].get("role") == "tool"
            if after_tool and content_text(message.get("content")) == _TOOL_IMAGES_TEXT:
                continue  # not the user's: the images of the tool results before it
            return i
        return -1

    @property
    def last_user_text(self) -> str:
        """The text of the last user message (string or text parts), "" when none."""
        i = self._last_user_index()
        return content_text(self.messages[i].get("content")) if i >= 0 else ""

    @property
    def tool_results(self) -> list[dict[str, Any]]:
        """The ``tool`` messages after the last user message, oldest first."""
        return [m for m in self.messages[self._last_user_index() + 1 :] if m.get("role") == "tool"]

    @property
    def turn_index(self) -> int:
        """Which response to the last user message is asked for: 0 first, 1 after tools..."""
        after = self.messages[self._last_user_index() + 1 :]
        return sum(1 for m in after if m.get("role") == "assistant")


Script = Callable[[ChatRequest], Turn | Fail | str] | Sequence[Turn]


# --------------------------------------------------------------------------- streaming


def _pieces(text: str, size: int) -> Iterator[str]:
    size = max(1, size)
    for start in range(0, len(text), size):
        yield text[start : start + size]


def _estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def _events(turn: Turn, number: int) -> Iterator[tuple[float, dict[str, Any]]]:
    """``(delay, delta)`` pairs for the turn's parts, in order."""
    yield 0.0, {"role": "assistant"}
    tool_index = 0
    for part in turn.items:
        if isinstance(part, Text):
            for piece in _pieces(part.text, part.chunk):
                yield part.delay, {"content": piece}
        elif isinstance(part, Thinking):
            for piece in _pieces(part.text, part.chunk):
                yield part.delay, {part.field: piece}
        else:
            call_id = part.id or f"call_{number}_{tool_index}"
            arguments = json.dumps(dict(part.arguments), ensure_ascii=False)
            head = {"index": tool_index, "id": call_id, "type": "function"}
            yield (
                part.delay,
                {"tool_calls": [{**head, "function": {"name": part.name, "arguments": ""}}]},
            )
            for piece in _pieces(arguments, part.chunk):
                yield (
                    part.delay,
                    {"tool_calls": [{"index": tool_index, "function": {"arguments": piece}}]},
                )
            tool_index += 1


def _usage(turn: Turn, request: ChatRequest) -> dict[str, int]:
    if turn.usage is not None:
        prompt, completion = turn.usage.input, turn.usage.output
    else:
        prompt = _estimate_tokens(json.dumps(request.messages))
        completion = sum(
            _estimate_tokens(
                p.text if isinstance(p, (Text, Thinking)) else json.dumps(dict(p.arguments))
            )
            for p in turn.items
        )
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _completion(turn: Turn, request: ChatRequest, model: str, created: int) -> dict[str, Any]:
    """The whole turn as one (non-streamed) ``chat.completion`` object."""
    message: dict[str, Any] = {"role": "assistant", "content": None}
    calls: list[dict[str, Any]] = []
    for _, delta in _events(turn, request.number):
        for key, value in delta.items():
            if key == "tool_calls":
                for call in value:
                    if "id" in call:
                        calls.append({k: v for k, v in call.items() if k != "index"})
                    else:
                        calls[-1]["function"]["arguments"] += call["function"]["arguments"]
            elif key != "role":
                message[key] = (message.get(key) or "") + value
    if calls:
        message["tool_calls"] = calls
    return {
        "id": f"chatcmpl-scripted-{request.number}",
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": turn.finish}],
        "usage": _usage(turn, request),
    }


class _ClientGone(Exception):
    """The client closed the connection."""


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer
    protocol_version = "HTTP/1.1"
    timeout = 60  # idle keep-alive connections end after a minute

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def setup(self) -> None:
        super().setup()
        self.server.owner._track(self.connection, True)

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass
        finally:
            self.server.owner._track(self.connection, False)

    # --------------------------------------------------------------- plumbing

    def _write(self, data: bytes) -> None:
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except (OSError, ValueError) as exc:  # ValueError: the file was closed by stop()
            raise _ClientGone from exc

    def _send_json(
        self, status: int, payload: Any, headers: Mapping[str, str] | None = None
    ) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self._write(body)

    def _send_error(self, status: int, message: str, retry: bool = False) -> None:
        error = {"message": message, "type": "scripted_error", "code": status}
        self._send_json(status, {"error": error}, {"x-should-retry": "true" if retry else "false"})

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            parts: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    # --------------------------------------------------------------- methods

    def do_GET(self) -> None:
        owner = self.server.owner
        try:
            if self.path.rstrip("/") in ("/v1/models", "/models"):
                model = {
                    "id": owner.model_id,
                    "object": "model",
                    "created": owner.created,
                    "owned_by": owner.provider,
                }
                self._send_json(200, {"object": "list", "data": [model]})
            else:
                self._send_error(404, f"no such path: {self.path}")
        except _ClientGone:
            self.close_connection = True

    def do_POST(self) -> None:
        try:
            self._post()
        except _ClientGone:
            self.close_connection = True

    def _post(self) -> None:
        owner = self.server.owner
        body = self._read_body()
        if not self.path.split("?")[0].rstrip("/").endswith("/chat/completions"):
            self._send_error(404, f"no such path: {self.path}")
            return
        try:
            parsed = json.loads(body or b"null")
        except ValueError as exc:
            self._send_error(400, f"the body is not JSON: {exc}")
            return
        if not isinstance(parsed, dict):
            self._send_error(400, "the body is not a JSON object")
            return
        headers = {name.lower(): value for name, value in self.headers.items()}
        request = owner._record(parsed, headers)
        try:
            turn = owner._play(request)
        except Exception as exc:  # the script's bug: answer it, keep serving
            owner._note_error(f"request {request.number}: {type(exc).__name__}: {exc}")
            self._send_error(500, f"the script failed: {type(exc).__name__}: {exc}")
            return
        failure = turn.failure
        if failure is not None:
            self._send_error(failure.status, failure.message, failure.client_retry)
            return
        model = request.model or owner.model_id
        if not request.stream:
            self._send_json(200, _completion(turn, request, model, int(time.time())))
            return
        self._stream(turn, request, model)

    def _stream(self, turn: Turn, request: ChatRequest, model: str) -> None:
        owner = self.server.owner
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        base = {
            "id": f"chatcmpl-scripted-{request.number}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
        }

        def send(data: str) -> None:
            event = f"data: {data}\n\n".encode()
            self._write(f"{len(event):x}\r\n".encode() + event + b"\r\n")

        def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
            choice = {"index": 0, "delta": delta, "finish_reason": finish}
            return json.dumps({**base, "choices": [choice]}, ensure_ascii=False)

        for delay, delta in _events(turn, request.number):
            if delay > 0 and owner._stopping.wait(delay):
                raise _ClientGone  # the server is stopping: cut the stream
            send(chunk(delta))
        send(chunk({}, turn.finish))
        if request.include_usage:
            send(json.dumps({**base, "choices": [], "usage": _usage(turn, request)}))
        send("[DONE]")
        self._write(b"0\r\n\r\n")


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    owner: ScriptedModelServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that went away is not news; the script's errors are kept in .errors


# --------------------------------------------------------------------------- the server


class ScriptedModelServer:
    """An OpenAI-compatible chat-completions server that plays scripted turns.

    Parameters
    ----------
    script:
        ``script(request) -> Turn`` called for every chat-completions request (a
        :class:`Fail` or a string may be returned for ``Turn(fail)``/``Turn(Text(s))``);
        or a sequence of turns, played one per request (then 500s: "the script is over").
        If the script raises, the request is answered with a 500 and the error is kept in
        :attr:`errors`.
    host, port:
        Where to listen; port 0 picks a free port.
    model_id, provider:
        The model id and provider name to register with the agent.

    Attributes
    ----------
    errors:
        Messages of the exceptions the script raised.
    created:
        When the server was made (seconds since the epoch).
    """

    def __init__(
        self,
        script: Script,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        model_id: str = "scripted",
        provider: str = "scripted",
    ) -> None:
        self.script = script
        self.host = host
        self.model_id = model_id
        self.provider = provider
        self.created = int(time.time())
        self.errors: list[str] = []
        self._port = port
        self._lock = threading.Lock()
        self._requests: deque[ChatRequest] = deque(maxlen=REQUESTS_KEPT)
        self._count = 0
        self._connections: set[socket.socket] = set()
        self._stopping = threading.Event()
        self._server: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    def __repr__(self) -> str:
        where = self.base_url if self._server is not None else "stopped"
        return f"<ScriptedModelServer {self.provider}/{self.model_id} {where}>"

    def __enter__(self) -> ScriptedModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --------------------------------------------------------------- lifecycle

    def start(self) -> ScriptedModelServer:
        """Bind the port and serve in a daemon thread; return self."""
        if self._server is not None:
            raise RuntimeError("the server is already running")
        self._stopping.clear()
        server = _HTTPServer((self.host, self._port), _Handler)
        server.owner = self
        self._server = server
        self._port = server.server_address[1]
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"scripted-model-server-{self._port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop serving, cut open connections and close the listening socket."""
        server, thread = self._server, self._thread
        if server is None:
            return
        self._stopping.set()
        server.shutdown()
        server.server_close()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if thread is not None:
            thread.join(timeout)
        self._server = self._thread = None

    @property
    def running(self) -> bool:
        """Whether the server is serving."""
        return self._server is not None

    @property
    def port(self) -> int:
        """The port (the one bound, once started)."""
        return self._port

    @property
    def base_url(self) -> str:
        """The OpenAI base URL, ``http://HOST:PORT/v1``."""
        if self._server is None:
            raise RuntimeError("the server is not running; call start() first")
        return f"http://{self.host}:{self._port}/v1"

    @property
    def requests(self) -> list[ChatRequest]:
        """The chat-completions requests received (the newest 200), oldest first."""
        with self._lock:
            return list(self._requests)

    @property
    def request_count(self) -> int:
        """How many chat-completions requests were received in all."""
        with self._lock:
            return self._count

    # --------------------------------------------------------------- for the handler

    def _track(self, connection: socket.socket, add: bool) -> None:
        with self._lock:
            if add:
                self._connections.add(connection)
            else:
                self._connections.discard(connection)

    def _record(self, body: dict[str, Any], headers: Mapping[str, str]) -> ChatRequest:
        with self._lock:
            request = ChatRequest(body, headers, self._count)
            self._count += 1
            self._requests.append(request)
        return request

    def _note_error(self, text: str) -> None:
        with self._lock:
            self.errors.append(text)
            del self.errors[:-REQUESTS_KEPT]

    def _play(self, request: ChatRequest) -> Turn:
        script = self.script
        if callable(script):
            turn: Any = script(request)
        elif request.number < len(script):
            turn = script[request.number]
        else:
            turn = Fail(500, f"the script is over (it has {len(script)} turns)")
        if isinstance(turn, (Fail, str)):
            turn = Turn(turn)
        if not isinstance(turn, Turn):
            raise TypeError(f"the script returned {type(turn).__name__}, not a Turn")
        return turn


# --------------------------------------------------------------------------- agent set-up


#: What the scripted model costs per million tokens (a price, so footers show a cost).
PRICED = {"input": 1.0, "output": 2.0, "cacheRead": 0.1, "cacheWrite": 1.25}
#: A free model (the offline demo's).
FREE = {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0}


def model_entry(server: ScriptedModelServer, free: bool = False) -> dict[str, Any]:
    """The provider entry of ``models.json`` for ``server`` (priced, unless ``free``)."""
    return {
        "baseUrl": server.base_url,
        "api": "openai-completions",
        "apiKey": DUMMY_API_KEY,
        "models": [
            {
                "id": server.model_id,
                "name": f"Scripted ({server.model_id})",
                "reasoning": True,
                "input": ["text", "image"],
                "contextWindow": 128000,
                "maxTokens": 8192,
                "cost": dict(FREE if free else PRICED),
            }
        ],
    }


def write_models_json(
    agent_dir: str | Path, server: ScriptedModelServer, free: bool = False
) -> Path:
    """Register ``server`` in ``<agent_dir>/models.json`` as provider ``server.provider``.

    Other providers already in the file are kept. Run the agent with
    ``PI_CODING_AGENT_DIR=agent_dir`` and :func:`agent_args` to use it.

    Returns
    -------
    Path
        The file written.
    """
    path = Path(agent_dir) / "models.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    config: dict[str, Any] = {}
    if path.exists():
        try:
            config = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            config = {}
        if not isinstance(config, dict):
            config = {}
    providers = config.get("providers")
    if not isinstance(providers, dict):
        providers = config["providers"] = {}
    providers[server.provider] = model_entry(server, free)
    path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return path


def agent_args(server: ScriptedModelServer) -> list[str]:
    """``["--provider", server.provider, "--model", server.model_id]``."""
    return ["--provider", server.provider, "--model", server.model_id]
