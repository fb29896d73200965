"""The HTTP side: a request handler that answers chat-completions requests from a script.

The handler knows its server only as a :class:`ScriptHost` (what
:class:`~atomic_jupyter.addons.model_server.server.ScriptedModelServer` offers it), so this
module does not import the server's.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

from atomic_jupyter.addons.model_server.request import ChatRequest
from atomic_jupyter.addons.model_server.stream import completion, events, usage
from atomic_jupyter.addons.model_server.turns import Turn

__all__ = ["ScriptHTTPServer", "ScriptHost"]


class ScriptHost(Protocol):
    """What the handler asks of the server it answers for.

    Attributes
    ----------
    model_id, provider:
        The model served.
    created:
        When the server was made (seconds since the epoch).
    """

    model_id: str
    provider: str
    created: int

    @property
    def stopping(self) -> threading.Event:
        """Set while the server stops: streams are cut."""

    def track_connection(self, connection: socket.socket, open_: bool) -> None:
        """Note that a connection opened (``open_``) or closed."""

    def receive_request(self, body: dict[str, Any], headers: Mapping[str, str]) -> ChatRequest:
        """Number and keep one chat-completions request."""

    def play(self, request: ChatRequest) -> Turn:
        """The script's turn for ``request`` (raises what the script raises)."""

    def note_error(self, text: str) -> None:
        """Keep an error of the script's."""


class ScriptHTTPServer(ThreadingHTTPServer):
    """A threading HTTP server whose handlers answer for ``host``."""

    daemon_threads = True
    block_on_close = False

    def __init__(self, address: tuple[str, int], host: ScriptHost) -> None:
        super().__init__(address, _Handler)
        self.host = host

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that went away is not news; the script's errors are kept by the host


class _ClientGone(Exception):
    """The client closed the connection."""


class _Handler(BaseHTTPRequestHandler):
    server: ScriptHTTPServer
    protocol_version = "HTTP/1.1"
    timeout = 60  # idle keep-alive connections end after a minute

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def setup(self) -> None:
        super().setup()
        self.server.host.track_connection(self.connection, True)

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass
        finally:
            self.server.host.track_connection(self.connection, False)

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
        host = self.server.host
        try:
            if self.path.rstrip("/") in ("/v1/models", "/models"):
                model = {
                    "id": host.model_id,
                    "object": "model",
                    "created": host.created,
                    "owned_by": host.provider,
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
        host = self.server.host
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
        request = host.receive_request(parsed, headers)
        try:
            turn = host.play(request)
        except Exception as exc:  # the script's bug: answer it, keep serving
            host.note_error(f"request {request.number}: {type(exc).__name__}: {exc}")
            self._send_error(500, f"the script failed: {type(exc).__name__}: {exc}")
            return
        failure = turn.failure
        if failure is not None:
            self._send_error(failure.status, failure.message, failure.client_retry)
            return
        model = request.model or host.model_id
        if not request.stream:
            self._send_json(200, completion(turn, request, model, int(time.time())))
            return
        self._stream(turn, request, model)

    def _stream(self, turn: Turn, request: ChatRequest, model: str) -> None:
        stopping = self.server.host.stopping
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

        for delay, delta in events(turn, request.number):
            if delay > 0 and stopping.wait(delay):
                raise _ClientGone  # the server is stopping: cut the stream
            send(chunk(delta))
        send(chunk({}, turn.finish))
        if request.include_usage and turn.report_usage:
            send(json.dumps({**base, "choices": [], "usage": usage(turn, request)}))
        send("[DONE]")
        self._write(b"0\r\n\r\n")
