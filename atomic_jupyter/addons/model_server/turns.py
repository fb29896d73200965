"""What a script answers with: the parts of one assistant turn, or an HTTP failure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Fail", "Part", "Text", "Thinking", "ToolCall", "Turn", "Usage"]


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
    report_usage:
        False to send no usage at all (as a provider that reports none): the agent then
        counts zero tokens.
    finish_reason:
        ``"tool_calls"`` when the turn has tool calls, else ``"stop"``, unless given
        (``"length"`` makes the agent report a truncated response).
    """

    parts: Sequence[Part] | Part | Fail | str = ()
    usage: Usage | None = None
    finish_reason: str | None = None
    report_usage: bool = True

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
