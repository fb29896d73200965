"""Bytes from the agent to typed messages, decoding only what the client needs. No I/O.

Most of the agent's stream is ``message_update`` events, and each carries the whole partial
message twice (in ``message`` and in ``assistantMessageEvent.partial``), so decoding them in
full costs time that grows with the square of an answer's length. The client needs only the
delta: the transcript adds it up, and takes the exact final message from ``message_end``.
So :class:`MessageDecoder` recognises a ``message_update`` line by its first bytes (the agent
writes ``type`` first) and decodes it with msgspec into a small typed struct that skips the
partial messages without building them. Every other line is decoded in full. Without msgspec
(an optional speed-up), the standard library decodes the whole line and the partial messages
are dropped afterwards, so the result is the same, only slower.

A line over :data:`LARGE_LINE_BYTES` is first looked at for its ``type`` only (msgspec skips
the rest without building it). An event of a type the agent does not document is then not
decoded at all: it comes out as an :class:`~atomic_jupyter.protocol.messages.AgentEvent` with
its type, its size and an ``omitted`` note, so a 50 MB event nobody reads costs no more than
its line. Any other large line is decoded by msgspec straight from the line's bytes (no
decoded copy of the text is made on the way).
"""

from __future__ import annotations

from typing import Any, Protocol

from atomic_jupyter.protocol.framing import Diagnostic, Line, LineSplitter, Record, decode_line
from atomic_jupyter.protocol.messages import (
    KNOWN_EVENT_TYPES,
    AgentEvent,
    DialogRequest,
    Message,
    parse_message,
)

__all__ = ["FAST_PATH", "LARGE_LINE_BYTES", "MessageDecoder", "Scrubber"]

_UPDATE_PREFIX = b'{"type":"message_update"'

#: Lines longer than this are looked at for their type before they are decoded.
LARGE_LINE_BYTES = 1 << 20

#: Message types decoded in full however large: documented events, answers and UI requests.
_DECODED_TYPES = KNOWN_EVENT_TYPES | {"response", "extension_ui_request"}

try:  # pragma: no branch - which branch runs depends on what is installed
    import msgspec

    class _AssistantEvent(msgspec.Struct):
        type: str = ""
        contentIndex: int = 0  # noqa: N815 - the agent's field name
        delta: str | None = None

    class _MessageUpdate(msgspec.Struct):
        type: str = ""
        assistantMessageEvent: _AssistantEvent | None = None  # noqa: N815

    class _TypeOnly(msgspec.Struct):
        type: str = ""

    _update_decoder: Any = msgspec.json.Decoder(_MessageUpdate)
    _type_decoder: Any = msgspec.json.Decoder(_TypeOnly)
    _any_decoder: Any = msgspec.json.Decoder()
    FAST_PATH = True
except ImportError:  # pragma: no cover - the standard library fallback
    _update_decoder = _type_decoder = _any_decoder = None
    FAST_PATH = False


def _large_line(line: Line) -> AgentEvent | Record | None:
    """A large line as an unread event (a type nobody reads) or a decoded record; None when
    msgspec cannot tell (not JSON, not an object, ...): the standard path decides then."""
    body = memoryview(line)
    if line.endswith(b"\r"):
        body = body[:-1]
    try:
        kind = _type_decoder.decode(body).type
        if kind and kind not in _DECODED_TYPES:
            return AgentEvent(
                kind,
                {
                    "omitted": f"an event of {len(line):,} bytes of a type this client does "
                    "not use; it was not decoded"
                },
            )
        return Record(_any_decoder.decode(body))
    except Exception:
        return None


def _lean_update(event: Any) -> AgentEvent:
    """A ``message_update`` event reduced to its delta (msgspec struct or plain dict)."""
    if isinstance(event, dict):
        ame = event.get("assistantMessageEvent")
        ame = ame if isinstance(ame, dict) else {}
        kind, index, delta = ame.get("type", ""), ame.get("contentIndex", 0), ame.get("delta")
    else:
        ame = event.assistantMessageEvent
        kind, index, delta = (
            (ame.type, ame.contentIndex, ame.delta) if ame is not None else ("", 0, None)
        )
    fields: dict[str, Any] = {"type": kind, "contentIndex": index}
    if delta is not None:
        fields["delta"] = delta
    return AgentEvent("message_update", {"assistantMessageEvent": fields})


class Scrubber(Protocol):
    """Takes secrets out of the agent's lines (see ``transport.secrets.Redactor``)."""

    def touches(self, line: bytes | bytearray) -> bool:
        """Whether the raw line may hold a secret."""

    def scrub(self, value: Any) -> Any:
        """The decoded value with the secrets taken out of every string."""


class MessageDecoder:
    """Incremental decoder: bytes in, :class:`~atomic_jupyter.protocol.messages.Message` and
    :class:`~atomic_jupyter.protocol.framing.Diagnostic` out, in stream order.

    ``message_update`` events come out lean: ``assistantMessageEvent`` with only ``type``,
    ``contentIndex`` and ``delta``; the partial messages are never built.
    """

    def __init__(self, *, fast: bool = True, scrubber: Scrubber | None = None) -> None:
        self._lines = LineSplitter()
        self._fast = fast and FAST_PATH
        self._scrubber = scrubber
        #: How many message_update lines went through the fast path (for benchmarks).
        self.fast_lines = 0

    def feed(self, data: bytes) -> list[Message | Diagnostic]:
        """Add bytes from the stream; return the messages of every line they complete."""
        return [self._decode(line) for line in self._lines.feed(data)]

    def close(self) -> list[Message | Diagnostic]:
        """End of stream: decode a final line without a newline, if any."""
        return [self._decode(line) for line in self._lines.close()]

    def _decode(self, line: Line) -> Message | Diagnostic:
        message = self._decode_line(line)
        if isinstance(message, AgentEvent):
            object.__setattr__(message, "size", len(line))  # for logs bounded in bytes
        return message

    def _decode_line(self, line: Line) -> Message | Diagnostic:
        scrubber = self._scrubber
        if self._fast and len(line) > LARGE_LINE_BYTES and not line.startswith(_UPDATE_PREFIX):
            large = _large_line(line)
            if isinstance(large, AgentEvent):
                if scrubber is not None:  # only its type is read
                    object.__setattr__(large, "type", scrubber.scrub(large.type))
                return large
            if large is not None:
                return self._message(line, large, scrubber is not None and scrubber.touches(line))
        scrubbed = scrubber is not None and scrubber.touches(line)
        if self._fast and not scrubbed and line.startswith(_UPDATE_PREFIX):
            try:
                event = _update_decoder.decode(line[:-1] if line.endswith(b"\r") else line)
            except Exception:  # not valid after all: the full decoder says why
                pass
            else:
                self.fast_lines += 1
                return _lean_update(event)
        item = decode_line(line)
        if isinstance(item, Diagnostic):
            return item
        return self._message(line, item, scrubbed)

    def _message(self, line: Line, item: Record, scrubbed: bool) -> Message:
        """The message of a decoded line: with its secrets taken out when ``scrubbed`` (it may
        hold one), lean when it is a ``message_update``."""
        value = item.value
        if scrubbed:
            assert self._scrubber is not None
            value = self._scrubber.scrub(value)
        if line.startswith(_UPDATE_PREFIX) and isinstance(value, dict):
            return _lean_update(value)
        message = parse_message(value)
        if scrubbed and isinstance(message, DialogRequest):
            # A dialog's answer echoes its options and prefill: keep them exact, and show
            # the scrubbed copy.
            exact = parse_message(item.value)
            assert isinstance(exact, DialogRequest)
            object.__setattr__(exact, "raw", value)
            object.__setattr__(exact, "shown", message)
            return exact
        return message
