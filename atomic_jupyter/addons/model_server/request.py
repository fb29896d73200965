"""One chat-completions request as the server received it, and what a script reads of it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ChatRequest", "content_text"]

#: The text of the user message the agent adds after tool results that carry images.
_TOOL_IMAGES_TEXT = "Attached image(s) from tool result:"


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
