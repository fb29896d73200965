"""The server: scripted turns played over HTTP on a port of its own, in a daemon thread."""

from __future__ import annotations

import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from atomic_jupyter.addons.model_server.handler import ScriptHTTPServer
from atomic_jupyter.addons.model_server.request import ChatRequest
from atomic_jupyter.addons.model_server.turns import Fail, Turn

__all__ = ["REQUESTS_KEPT", "Script", "ScriptedModelServer"]

#: How many requests a server remembers (the newest).
REQUESTS_KEPT = 200

#: ``script(request) -> Turn`` (or a :class:`Fail`, or a string), or the turns in order.
Script = Callable[[ChatRequest], Turn | Fail | str] | Sequence[Turn]


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
        self._server: ScriptHTTPServer | None = None
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
        server = ScriptHTTPServer((self.host, self._port), self)
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

    # --------------------------------------------------------------- for the handler (ScriptHost)

    @property
    def stopping(self) -> threading.Event:
        """Set while the server stops: streams in progress are cut."""
        return self._stopping

    def track_connection(self, connection: socket.socket, open_: bool) -> None:
        """Note that a connection opened (``open_``) or closed, to cut it on :meth:`stop`."""
        with self._lock:
            if open_:
                self._connections.add(connection)
            else:
                self._connections.discard(connection)

    def receive_request(self, body: dict[str, Any], headers: Mapping[str, str]) -> ChatRequest:
        """Number and keep one chat-completions request (the handler calls this)."""
        with self._lock:
            request = ChatRequest(body, headers, self._count)
            self._count += 1
            self._requests.append(request)
        return request

    def note_error(self, text: str) -> None:
        """Keep an error of the script's in :attr:`errors` (the newest 200)."""
        with self._lock:
            self.errors.append(text)
            del self.errors[:-REQUESTS_KEPT]

    def play(self, request: ChatRequest) -> Turn:
        """The script's turn for ``request``.

        Raises
        ------
        TypeError
            When the script returns something that is not a turn; and what the script raises.
        """
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
