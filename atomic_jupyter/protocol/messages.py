"""Typed messages of the agent's RPC protocol, with no I/O.

:func:`parse_message` turns one decoded JSON value from the agent's stdout into one of:

* a :class:`UIRequest` subclass for each ``extension_ui_request`` method (dialogs:
  :class:`SelectRequest`, :class:`ConfirmRequest`, :class:`InputRequest`,
  :class:`EditorRequest`; fire-and-forget: :class:`NotifyRequest`, :class:`SetStatusRequest`,
  :class:`SetWidgetRequest`, :class:`SetTitleRequest`, :class:`SetEditorTextRequest`), or
  :class:`UnknownUIRequest` for a method this client does not know;
* a :class:`Response` to a command;
* an :class:`AgentEvent` for every other ``type`` (known or not: nothing is dropped);
* an :class:`UnknownMessage` for a JSON value that is not an object with a string ``type``.

Every message keeps the fields it did not recognise in ``extra`` and turns back into its
wire form with ``to_dict()``; ``parse_message(m.to_dict()) == m``.

What the client sends is built here too: :class:`UIResponse` for dialog answers and
:func:`command` for commands.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Literal

__all__ = [
    "DIALOG_METHODS",
    "KNOWN_EVENT_TYPES",
    "AgentEvent",
    "ConfirmRequest",
    "DialogRequest",
    "EditorRequest",
    "InputRequest",
    "Message",
    "NotifyRequest",
    "Response",
    "SelectRequest",
    "SetEditorTextRequest",
    "SetStatusRequest",
    "SetTitleRequest",
    "SetWidgetRequest",
    "UIRequest",
    "UIResponse",
    "UnknownMessage",
    "UnknownUIRequest",
    "command",
    "parse_message",
]

DIALOG_METHODS = frozenset({"select", "confirm", "input", "editor"})

#: Event types the agent documents (``docs/rpc.md``). Others are kept as events too.
KNOWN_EVENT_TYPES = frozenset(
    {
        "agent_start",
        "agent_end",
        "turn_start",
        "turn_end",
        "message_start",
        "message_update",
        "message_end",
        "tool_execution_start",
        "tool_execution_update",
        "tool_execution_end",
        "queue_update",
        "compaction_start",
        "compaction_end",
        "auto_retry_start",
        "auto_retry_end",
        "extension_error",
        "session_info_changed",
        "thinking_level_changed",
        # the current agent line (1.x) adds these
        "agent_settled",
        "entry_appended",
        "bash_execution_update",
        "summarization_retry_scheduled",
        "summarization_retry_attempt_start",
        "summarization_retry_finished",
    }
)

NotifyType = Literal["info", "warning", "error"]
Placement = Literal["aboveEditor", "belowEditor"]


def _text(value: Any) -> str:
    """A field that should be a string, made one (``None`` becomes ``""``)."""
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def _optional_text(value: Any) -> str | None:
    return None if value is None else _text(value)


def _timeout_ms(value: Any) -> float | None:
    """A usable dialog timeout in milliseconds, or None (absent, zero or nonsense)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        ms = float(value)
    except OverflowError:  # a huge integer is valid JSON
        return None
    if not math.isfinite(ms) or ms <= 0:
        return None
    return value if isinstance(value, int) else ms


def _put(wire: dict[str, Any], key: str, value: Any) -> None:
    if value is not None:
        wire[key] = value


# --------------------------------------------------------------------------- UI requests
#
# Each request is declared once: its dataclass. A field's metadata names its wire key and how
# its value is read (``_READERS``); parsing and writing are derived from the declaration.


def _wire(key: str, read: str, *, default: Any = None, always: bool = True) -> Any:
    """A request field: its wire ``key``, how it is ``read``, and whether it is written when
    None (``always``; optional fields are left out when None)."""
    return field(default=default, metadata={"wire": key, "read": read, "always": always})


def _texts(value: Any) -> tuple[str, ...] | None:
    return tuple(_text(v) for v in value) if isinstance(value, list) else None


_READERS: dict[str, Callable[[Any], Any]] = {
    "text": _text,
    "optional_text": _optional_text,
    "texts": lambda value: _texts(value) or (),
    "optional_texts": _texts,
    "timeout": _timeout_ms,
    "notify_type": lambda value: value if value in ("info", "warning", "error") else "info",
    "placement": lambda value: value if value in ("aboveEditor", "belowEditor") else "aboveEditor",
}
_WRITERS: dict[str, Callable[[Any], Any]] = {"texts": list, "optional_texts": list}


@dataclass(frozen=True)
class _WireFields:
    """A request class's fields as (name, wire key, reader, always written), and every key it
    knows (the rest of a request goes into ``extra``)."""

    fields: tuple[tuple[str, str, str, bool], ...]
    known: frozenset[str]


_WIRE_FIELDS: dict[type, _WireFields] = {}


@dataclass(frozen=True)
class UIRequest:
    """Base of every ``extension_ui_request``.

    Attributes
    ----------
    id:
        The request id; a dialog's answer must carry it.
    extra:
        Fields this client did not recognise, kept as received.
    """

    method: ClassVar[str] = ""

    id: str
    extra: Mapping[str, Any] = field(default_factory=dict, compare=True, kw_only=True)
    #: The request exactly as received (None for a request built in Python); with secrets
    #: taken out when the decoder was given a scrubber.
    raw: Mapping[str, Any] | None = field(default=None, compare=False, repr=False, kw_only=True)
    #: The same request with secrets taken out, for display, when it held any (None: it is
    #: shown as it is). The request's own fields stay exact: an answer echoes them.
    shown: UIRequest | None = field(default=None, compare=False, repr=False, kw_only=True)

    @property
    def is_dialog(self) -> bool:
        """Whether the agent waits for an answer to this request."""
        return self.method in DIALOG_METHODS

    @classmethod
    def _wire_fields(cls) -> _WireFields:
        """The declared wire fields, in the order the agent writes them (timeout last)."""
        found = _WIRE_FIELDS.get(cls)
        if found is None:
            declared = sorted(
                (f for f in fields(cls) if "wire" in f.metadata),
                key=lambda f: f.metadata["wire"] == "timeout",
            )
            found = _WIRE_FIELDS[cls] = _WireFields(
                tuple(
                    (f.name, f.metadata["wire"], f.metadata["read"], f.metadata["always"])
                    for f in declared
                ),
                frozenset({"type", "id", "method", *(f.metadata["wire"] for f in declared)}),
            )
        return found

    @classmethod
    def from_wire(cls, raw: Mapping[str, Any]) -> UIRequest:
        """Read a request of this class from its wire form (never raises)."""
        declared = cls._wire_fields()
        values = {name: _READERS[read](raw.get(key)) for name, key, read, _ in declared.fields}
        extra = {k: v for k, v in raw.items() if k not in declared.known}
        return cls(_text(raw.get("id")), extra=extra, **values)

    def to_dict(self) -> dict[str, Any]:
        """The request as the agent writes it."""
        wire: dict[str, Any] = {
            "type": "extension_ui_request",
            "id": self.id,
            "method": self.method,
        }
        for name, key, read, always in self._wire_fields().fields:
            value = getattr(self, name)
            if value is None and not always:
                continue
            write = _WRITERS.get(read)
            wire[key] = write(value) if write and value is not None else value
        wire.update(self.extra)
        return wire


@dataclass(frozen=True)
class DialogRequest(UIRequest):
    """Base of the four dialog requests; ``timeout`` is in milliseconds or None."""

    title: str = _wire("title", "text", default="")
    timeout: float | None = _wire("timeout", "timeout", always=False)

    @property
    def timeout_seconds(self) -> float | None:
        """The timeout in seconds, or None when the dialog waits indefinitely."""
        return None if self.timeout is None else self.timeout / 1000.0


@dataclass(frozen=True)
class SelectRequest(DialogRequest):
    """``select``: choose one of ``options``; answered with a value or cancelled."""

    method: ClassVar[str] = "select"
    options: tuple[str, ...] = _wire("options", "texts", default=())


@dataclass(frozen=True)
class ConfirmRequest(DialogRequest):
    """``confirm``: yes or no; answered with ``confirmed`` or cancelled."""

    method: ClassVar[str] = "confirm"
    message: str = _wire("message", "text", default="")


@dataclass(frozen=True)
class InputRequest(DialogRequest):
    """``input``: one line of free text; answered with a value or cancelled."""

    method: ClassVar[str] = "input"
    placeholder: str | None = _wire("placeholder", "optional_text", always=False)


@dataclass(frozen=True)
class EditorRequest(DialogRequest):
    """``editor``: multi-line text, prefilled; answered with a value or cancelled."""

    method: ClassVar[str] = "editor"
    prefill: str | None = _wire("prefill", "optional_text", always=False)


@dataclass(frozen=True)
class NotifyRequest(UIRequest):
    """``notify``: a message styled by ``notify_type`` (``info`` when absent)."""

    method: ClassVar[str] = "notify"
    message: str = _wire("message", "text", default="")
    notify_type: str = _wire("notifyType", "notify_type", default="info")


@dataclass(frozen=True)
class SetStatusRequest(UIRequest):
    """``setStatus``: set the status entry ``key`` to ``text``, or clear it when None."""

    method: ClassVar[str] = "setStatus"
    key: str = _wire("statusKey", "text", default="")
    text: str | None = _wire("statusText", "optional_text", always=False)


@dataclass(frozen=True)
class SetWidgetRequest(UIRequest):
    """``setWidget``: set the block ``key`` to ``lines`` at ``placement``, or clear it."""

    method: ClassVar[str] = "setWidget"
    key: str = _wire("widgetKey", "text", default="")
    lines: tuple[str, ...] | None = _wire("widgetLines", "optional_texts", always=False)
    placement: str = _wire("widgetPlacement", "placement", default="aboveEditor")


@dataclass(frozen=True)
class SetTitleRequest(UIRequest):
    """``setTitle``: the session's title."""

    method: ClassVar[str] = "setTitle"
    title: str = _wire("title", "text", default="")


@dataclass(frozen=True)
class SetEditorTextRequest(UIRequest):
    """``set_editor_text``: put ``text`` in the session's editor."""

    method: ClassVar[str] = "set_editor_text"
    text: str = _wire("text", "text", default="")


@dataclass(frozen=True)
class UnknownUIRequest(UIRequest):
    """An ``extension_ui_request`` whose method this client does not know; kept whole."""

    unknown_method: str = ""

    @property
    def is_dialog(self) -> bool:
        return False

    def to_dict(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"type": "extension_ui_request", "id": self.id}
        wire["method"] = self.unknown_method
        wire.update(self.extra)
        return wire


def _parse_ui_request(raw: Mapping[str, Any]) -> UIRequest:
    method = raw.get("method")
    cls = _UI_REQUEST_CLASSES.get(method) if isinstance(method, str) else None
    if cls is None:
        extra = {k: v for k, v in raw.items() if k not in ("type", "id", "method")}
        return UnknownUIRequest(_text(raw.get("id")), unknown_method=_text(method), extra=extra)
    return cls.from_wire(raw)


_UI_REQUEST_CLASSES: dict[str, type[UIRequest]] = {
    cls.method: cls
    for cls in (
        SelectRequest,
        ConfirmRequest,
        InputRequest,
        EditorRequest,
        NotifyRequest,
        SetStatusRequest,
        SetWidgetRequest,
        SetTitleRequest,
        SetEditorTextRequest,
    )
}

# --------------------------------------------------------------------------- responses, events


@dataclass(frozen=True)
class Response:
    """The agent's answer to a command (``type: "response"``)."""

    command: str
    success: bool
    id: str | None = None
    data: Any = None
    error: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, kw_only=True)

    def to_dict(self) -> dict[str, Any]:
        """The response as the agent writes it."""
        wire: dict[str, Any] = {}
        _put(wire, "id", self.id)
        wire.update(type="response", command=self.command, success=self.success)
        _put(wire, "data", self.data)
        _put(wire, "error", self.error)
        wire.update(self.extra)
        return wire


@dataclass(frozen=True)
class AgentEvent:
    """Any other typed message from the agent, such as ``agent_start`` or ``message_update``.

    Attributes
    ----------
    type:
        The event type; see :data:`KNOWN_EVENT_TYPES` (unknown types are kept too).
    fields:
        Every field but ``type``, as received.
    size:
        The length in bytes of the line it came in (0 when not decoded from a line).
    """

    type: str
    fields: Mapping[str, Any] = field(default_factory=dict)
    size: int = field(default=0, compare=False)

    @property
    def known(self) -> bool:
        """Whether the agent's documentation describes this event type."""
        return self.type in KNOWN_EVENT_TYPES

    def get(self, key: str, default: Any = None) -> Any:
        """One field of the event."""
        return self.fields.get(key, default)

    def to_dict(self) -> dict[str, Any]:
        """The event as the agent writes it."""
        return {"type": self.type, **self.fields}


@dataclass(frozen=True)
class UnknownMessage:
    """A JSON value that is not an object with a string ``type``; kept as received."""

    value: Any

    def to_dict(self) -> Any:
        """The value as received."""
        return self.value


Message = UIRequest | Response | AgentEvent | UnknownMessage


def parse_message(value: Any) -> Message:
    """Turn one decoded JSON value from the agent into a typed message. Never raises."""
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        return UnknownMessage(value)
    kind = value["type"]
    if kind == "extension_ui_request":
        request = _parse_ui_request(value)
        object.__setattr__(request, "raw", value)
        return request
    if kind == "response":
        rid = value.get("id")
        error = value.get("error")
        success = value.get("success")
        return Response(
            command=_text(value.get("command")),
            success=success is True,
            id=None if rid is None else _text(rid),
            data=value.get("data"),
            error=None if error is None else _text(error),
            extra={
                k: v
                for k, v in value.items()
                if k not in ("type", "id", "command", "success", "data", "error")
            },
        )
    return AgentEvent(kind, {k: v for k, v in value.items() if k != "type"})


# --------------------------------------------------------------------------- client to agent


@dataclass(frozen=True)
class UIResponse:
    """An ``extension_ui_response``: exactly one of value, confirmed or cancelled.

    Build one with :meth:`value_of`, :meth:`confirmation` or :meth:`cancellation`.
    """

    id: str
    value: str | None = None
    confirmed: bool | None = None
    cancelled: bool = False

    @classmethod
    def value_of(cls, request_id: str, value: str) -> UIResponse:
        """The answer to a ``select``, ``input`` or ``editor`` dialog."""
        return cls(request_id, value=value)

    @classmethod
    def confirmation(cls, request_id: str, confirmed: bool) -> UIResponse:
        """The answer to a ``confirm`` dialog."""
        return cls(request_id, confirmed=confirmed)

    @classmethod
    def cancellation(cls, request_id: str) -> UIResponse:
        """Dismiss any dialog."""
        return cls(request_id, cancelled=True)

    def to_dict(self) -> dict[str, Any]:
        """The response as the agent expects it on stdin."""
        wire: dict[str, Any] = {"type": "extension_ui_response", "id": self.id}
        if self.cancelled:
            wire["cancelled"] = True
        elif self.confirmed is not None:
            wire["confirmed"] = self.confirmed
        else:
            wire["value"] = self.value
        return wire

    @classmethod
    def from_dict(cls, wire: Mapping[str, Any]) -> UIResponse:
        """Parse a response, as a stand-in agent reads it."""
        if wire.get("cancelled") is True:
            return cls.cancellation(_text(wire.get("id")))
        if "confirmed" in wire:
            return cls.confirmation(_text(wire.get("id")), wire["confirmed"] is True)
        return cls.value_of(_text(wire.get("id")), _text(wire.get("value")))


def command(kind: str, /, **fields: Any) -> dict[str, Any]:
    """A command for the agent's stdin, such as ``command("get_state")``; None fields dropped."""
    return {**{k: v for k, v in fields.items() if v is not None}, "type": kind}
