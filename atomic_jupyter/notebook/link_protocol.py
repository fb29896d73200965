"""The notebook link's messages, as data: the kernel's side of ``labextension/src/protocol.ts``.

The names (the comm targets), the version and every message's shape are written here once
for Python and once in ``protocol.ts`` for the page; a test reads the TypeScript and checks
that the two agree. Every message either way carries the version as ``v`` (the page's hello
carries it as ``protocol``, which is how a page of another version is told so). What the page
sends is read by :func:`read_link_message` into one of the frozen dataclasses below, or into
None (logged once per kind) when it is not a message of this version: nothing else of the
kernel reads the page's dictionaries. What the kernel sends is made by :func:`request_message`.
No I/O here.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ANNOUNCE",
    "PAGE_TARGET",
    "PROTOCOL",
    "REQUEST_OPS",
    "Decision",
    "Hello",
    "Here",
    "LinkMessage",
    "Reply",
    "read_hello",
    "linked_message",
    "read_link_message",
    "request_message",
]

log = logging.getLogger(__name__)

#: The version of the link both sides speak (``PROTOCOL`` in ``protocol.ts``).
PROTOCOL = 2
#: The page's comm target the kernel announces itself to.
ANNOUNCE = "atomic-jupyter-announce"
#: The kernel's comm target a page opens its link to.
PAGE_TARGET = "atomic-jupyter-page"
#: What the kernel asks of a page.
REQUEST_OPS = frozenset({"read", "propose", "decide", "withdraw", "run"})


@dataclass(frozen=True)
class Hello:
    """A page's first message (its comm_open's data): which version it speaks, its kernel
    client id (the ``session`` in its messages' headers), its notebook's path, its app."""

    protocol: Any
    client: str
    path: str
    app: str


@dataclass(frozen=True)
class Reply:
    """A page's answer to the request ``id``: ``ok``, else ``error`` in words; ``body`` is the
    whole message (what a request asked for: cells, a change's diff, a run's outputs)."""

    id: int
    ok: bool
    error: str
    body: dict[str, Any]


@dataclass(frozen=True)
class Decision:
    """A person's Accept or Reject of the change ``call``, clicked in a cell."""

    call: str
    accept: bool
    reason: str


@dataclass(frozen=True)
class Here:
    """Sent once over the page's kernel subshell, when its comms use one."""


LinkMessage = Reply | Decision | Here


def read_hello(data: Any) -> Hello | None:
    """The hello in a page's comm_open data, or None when it is none."""
    if not isinstance(data, dict) or data.get("type") != "hello":
        return None
    return Hello(
        protocol=data.get("protocol"),
        client=_text(data.get("client")),
        path=_text(data.get("path")),
        app=_text(data.get("app")),
    )


def read_link_message(data: Any) -> LinkMessage | None:
    """The typed message a linked page sent, or None (logged once per kind) when it is not
    one of this version: another ``v``, an unknown type, a field missing or of the wrong type."""
    if not isinstance(data, dict):
        _refuse("not an object", f"a message that is not an object: {type(data).__name__}")
        return None
    kind = data.get("type")
    if data.get("v") != PROTOCOL:
        _refuse(f"v {data.get('v')!r}", f"a {kind!r} message of version {data.get('v')!r}")
        return None
    if kind == "reply":
        number, ok = data.get("id"), data.get("ok")
        if isinstance(number, int) and not isinstance(number, bool) and isinstance(ok, bool):
            return Reply(number, ok, _text(data.get("error")), dict(data))
    elif kind == "decision":
        call, accept = data.get("call"), data.get("accept")
        if isinstance(call, str) and isinstance(accept, bool):
            return Decision(call, accept, _text(data.get("reason")))
    elif kind == "here":
        return Here()
    _refuse(f"type {kind!r}", f"a malformed or unknown message of type {kind!r}")
    return None


def linked_message() -> dict[str, Any]:
    """What the kernel sends a page once its hello was read and it is linked (before any
    request): the page then says over its kernel subshell, if it has one, that it is there."""
    return {"type": "linked", "v": PROTOCOL}


def request_message(number: int, op: str, fields: dict[str, Any]) -> dict[str, Any]:
    """The request ``number`` asking ``op`` of a page, with its ``fields``."""
    if op not in REQUEST_OPS:
        raise ValueError(f"the notebook link has no request {op!r}")
    return {"type": "request", "v": PROTOCOL, "id": number, "op": op, **fields}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


_refused: set[str] = set()


def _refuse(kind: str, said: str) -> None:
    if kind not in _refused:
        _refused.add(kind)
        log.warning("atomic-jupyter: the notebook page sent %s; it is ignored", said)
