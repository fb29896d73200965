"""A sans-IO RPC connection, in the manner of h11: bytes in, events out, commands out as bytes.

:class:`RpcConnection` holds what one conversation with an agent needs to remember and
nothing else: the ids of the commands waiting for an answer, the ids of commands whose
caller gave up, and the ids of recent dialogs. It never touches a pipe, a thread or a clock.

* :meth:`RpcConnection.send_command` gives a command its id, remembers it and returns the
  bytes to write;
* :meth:`RpcConnection.receive_data` takes bytes from the agent's stdout in any chunking and
  returns what they mean, in stream order: a :class:`Reply` for an answer to a waiting
  command, a :class:`LateReply` for one whose caller gave up, a :class:`StrayReply` for one
  nobody asked for, a :class:`DuplicateDialog` for a dialog id seen before, and otherwise the
  typed message itself (an :class:`~atomic_jupyter.protocol.messages.AgentEvent`, a
  :class:`~atomic_jupyter.protocol.messages.UIRequest`, an
  :class:`~atomic_jupyter.protocol.messages.UnknownMessage`) or a
  :class:`~atomic_jupyter.protocol.framing.Diagnostic` for a line that is not JSON.

The caller serialises access (the transport's client holds a lock around each call).
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from atomic_jupyter.protocol.decode import MessageDecoder, Scrubber
from atomic_jupyter.protocol.framing import Diagnostic, encode_line
from atomic_jupyter.protocol.messages import (
    AgentEvent,
    DialogRequest,
    Response,
    UIRequest,
    UIResponse,
    UnknownMessage,
)

__all__ = [
    "ConnectionEvent",
    "DuplicateDialog",
    "LateReply",
    "OutgoingCommand",
    "Reply",
    "RpcConnection",
    "StrayReply",
]

#: Dialog ids remembered to spot a repeated one.
DIALOG_IDS_KEPT = 5000
#: Ids of abandoned commands remembered to recognise their late answers.
ABANDONED_KEPT = 100


@dataclass(frozen=True)
class OutgoingCommand:
    """A command ready to be written: its id, its type, and its bytes (one JSON line)."""

    id: str
    command: str
    data: bytes


@dataclass(frozen=True)
class Reply:
    """The agent's answer to a command that is waiting for it."""

    id: str
    command: str
    response: Response


@dataclass(frozen=True)
class LateReply:
    """An answer that came after its caller gave up waiting (:meth:`RpcConnection.abandon`)."""

    response: Response


@dataclass(frozen=True)
class StrayReply:
    """An answer to no command this connection sent."""

    response: Response


@dataclass(frozen=True)
class DuplicateDialog:
    """A dialog request whose id was seen before; it must not be shown or answered twice."""

    request: DialogRequest


ConnectionEvent = (
    Reply
    | LateReply
    | StrayReply
    | DuplicateDialog
    | AgentEvent
    | UIRequest
    | UnknownMessage
    | Diagnostic
)


class RpcConnection:
    """One conversation with an agent, as state: commands out, events in.

    Parameters
    ----------
    id_prefix:
        Prefix of the ids this connection gives to commands (``aj-1``, ``aj-2``, ...).
    scrubber:
        Takes secrets out of every line of the agent that holds one, before it is decoded
        into a message (None: lines are taken as they are).
    """

    def __init__(self, *, id_prefix: str = "aj-", scrubber: Scrubber | None = None) -> None:
        self._prefix = id_prefix
        self._ids = itertools.count(1)
        self._decoder = MessageDecoder(scrubber=scrubber)
        #: Command id -> command type, for every command waiting for its answer (oldest first).
        self._pending: dict[str, str] = {}
        self._abandoned: deque[str] = deque(maxlen=ABANDONED_KEPT)
        # Ids of recent dialogs (an ordered set, trimmed).
        self._dialog_ids: dict[str, None] = {}

    @property
    def pending(self) -> dict[str, str]:
        """Command id -> type of every command waiting for its answer."""
        return dict(self._pending)

    # ------------------------------------------------------------------ client to agent

    def send_command(self, command: Mapping[str, Any]) -> OutgoingCommand:
        """Give ``command`` an id (unless it has one), remember it, and encode it.

        Raises
        ------
        TypeError
            When the command is not a dict with a string ``type``.
        ValueError
            When a command with the same id is still waiting, or the command is not JSON.
        """
        if not isinstance(command, Mapping) or not isinstance(command.get("type"), str):
            raise TypeError(
                'a command is a dict with a string "type", such as {"type": "get_state"}'
            )
        payload = dict(command)
        cid = str(payload.get("id") or f"{self._prefix}{next(self._ids)}")
        payload["id"] = cid
        if cid in self._pending:
            raise ValueError(f"a command with id {cid!r} is already waiting for its answer")
        data = encode_line(payload)
        self._pending[cid] = payload["type"]
        return OutgoingCommand(cid, payload["type"], data)

    def send_ui_response(self, response: UIResponse) -> bytes:
        """Encode a dialog's answer."""
        return encode_line(response.to_dict())

    def abandon(self, cid: str) -> None:
        """The caller of ``cid`` stopped waiting; its answer, if it comes, is a LateReply."""
        if self._pending.pop(cid, None) is not None:
            self._abandoned.append(cid)

    def forget(self, cid: str) -> None:
        """``cid`` was never written (the agent had gone): no answer is expected."""
        self._pending.pop(cid, None)

    def close(self) -> dict[str, str]:
        """The agent is gone: return the commands that were waiting, and forget them."""
        pending, self._pending = self._pending, {}
        return pending

    # ------------------------------------------------------------------ agent to client

    def receive_data(self, data: bytes) -> list[ConnectionEvent]:
        """Bytes from the agent's stdout; return the events of every line they complete."""
        return [self._event(item) for item in self._decoder.feed(data)]

    def receive_eof(self) -> list[ConnectionEvent]:
        """End of the agent's stdout: the events of a last line without a newline, if any."""
        return [self._event(item) for item in self._decoder.close()]

    def _event(self, item: Any) -> ConnectionEvent:
        if isinstance(item, Response):
            return self._reply(item)
        if isinstance(item, DialogRequest):
            if item.id in self._dialog_ids:
                return DuplicateDialog(item)
            self._dialog_ids[item.id] = None
            if len(self._dialog_ids) > DIALOG_IDS_KEPT:
                del self._dialog_ids[next(iter(self._dialog_ids))]
        return item  # type: ignore[no-any-return]

    def _reply(self, response: Response) -> ConnectionEvent:
        if response.id is not None:
            command = self._pending.pop(response.id, None)
            if command is not None:
                return Reply(response.id, command, response)
            if response.id in self._abandoned:
                return LateReply(response)
            return StrayReply(response)
        cid = self._unidentified(response)
        if cid is not None:
            return Reply(cid, self._pending.pop(cid), response)
        return StrayReply(response)

    def _unidentified(self, response: Response) -> str | None:
        """The command an id-less failure answers, if one can be told.

        The agent drops the id when it cannot read a command: an unknown ``type`` is answered
        with ``command`` set to that type, a line it cannot parse with ``command: "parse"``.
        Such a failure goes to the oldest waiting command of that type (or, for ``parse``, the
        oldest waiting command), so the caller gets the agent's error instead of a timeout.
        """
        if response.success:
            return None
        for cid, command in self._pending.items():
            if response.command in (command, "parse"):
                return cid
        return None
