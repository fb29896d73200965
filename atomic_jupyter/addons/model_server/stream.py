"""The shapes a turn is sent in: the stream's deltas, the usage, the whole completion."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

from atomic_jupyter.addons.model_server.request import ChatRequest
from atomic_jupyter.addons.model_server.turns import Text, Thinking, Turn

__all__ = ["completion", "events", "usage"]


def _pieces(text: str, size: int) -> Iterator[str]:
    size = max(1, size)
    for start in range(0, len(text), size):
        yield text[start : start + size]


def _estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def events(turn: Turn, number: int) -> Iterator[tuple[float, dict[str, Any]]]:
    """``(delay, delta)`` pairs for the turn's parts, in order.

    Parameters
    ----------
    turn:
        The turn.
    number:
        The request's number (in the tool calls' default ids).
    """
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


def usage(turn: Turn, request: ChatRequest) -> dict[str, int]:
    """The ``usage`` object: the turn's own counts, else estimated (four characters a token)."""
    if turn.usage is not None:
        prompt, completion_tokens = turn.usage.input, turn.usage.output
    else:
        prompt = _estimate_tokens(json.dumps(request.messages))
        completion_tokens = sum(
            _estimate_tokens(
                p.text if isinstance(p, (Text, Thinking)) else json.dumps(dict(p.arguments))
            )
            for p in turn.items
        )
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt + completion_tokens,
    }


def completion(turn: Turn, request: ChatRequest, model: str, created: int) -> dict[str, Any]:
    """The whole turn as one (non-streamed) ``chat.completion`` object."""
    message: dict[str, Any] = {"role": "assistant", "content": None}
    calls: list[dict[str, Any]] = []
    for _, delta in events(turn, request.number):
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
        **({"usage": usage(turn, request)} if turn.report_usage else {}),
    }
