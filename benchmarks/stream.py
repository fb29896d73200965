"""A realistic agent stream, byte for byte in the shape pi's RPC mode writes.

pi serialises every event with ``JSON.stringify`` (no spaces, keys in insertion order,
``type`` first, non-ASCII written as UTF-8) and one ``\\n`` after each. The shapes below were
taken from a capture of the pinned agent (``@mariozechner/pi-coding-agent``) answering a
``ScriptedModelServer``: a thinking block, a bash tool call and a long streamed answer.

What makes the stream heavy is ``message_update``: every delta carries the whole partial
assistant message twice, in ``assistantMessageEvent.partial`` and in ``message``, so an
answer of n deltas costs O(n²) bytes. Tool output updates (``partialResult``) replace the
whole output each time (pi's bash tool keeps the last 50 KB), and extensions may flood
``setStatus`` requests.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import dataclass, field

__all__ = ["Stream", "StreamSpec", "build_stream"]

#: pi's bash tool keeps the tail of the output: at most this many bytes (DEFAULT_MAX_BYTES).
TOOL_OUTPUT_CAP = 50 * 1024
_T0 = 1_795_994_976_000  # a fixed clock, so the stream is the same every run


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class StreamSpec:
    """How big the stream is.

    Attributes
    ----------
    text_deltas:
        Text deltas in each answer turn (the long answer).
    thinking_deltas:
        Thinking deltas before the tool call.
    tool_updates:
        ``tool_execution_update`` events of the bash call, each with the whole output so far.
    status_lines:
        ``extension_ui_request`` ``setStatus`` lines, spread over the run.
    answer_turns:
        How many answer turns follow the tool turn (each with ``text_deltas`` deltas).
    answer_chars:
        Length of each answer (``8 * text_deltas`` when None: deltas of about 8 characters).
    tool_turn:
        Whether the run starts with a thinking + tool call turn.
    prompt:
        The user's prompt, as the agent echoes it.
    """

    text_deltas: int = 4000
    thinking_deltas: int = 400
    tool_updates: int = 100
    status_lines: int = 2000
    answer_turns: int = 1
    answer_chars: int | None = None
    tool_turn: bool = True
    prompt: str = "stream"


@dataclass
class Stream:
    """The bytes of one run's events (after the prompt's response), and what is in them."""

    data: bytes
    spec: StreamSpec
    counts: Counter[str] = field(default_factory=Counter)

    @property
    def lines(self) -> int:
        return sum(self.counts.values())

    @property
    def megabytes(self) -> float:
        return len(self.data) / 1e6


_WORDS = (
    "the quick brown fox jumps over lazy dog session kernel widget stream delta "
    "message event render transcript bounded queue café naïve — résumé"
)


def _answer_text(rng: random.Random, chars: int) -> str:
    """Markdown an assistant might write: headings, prose, lists, code, some non-ASCII."""
    words = _WORDS.split()
    parts: list[str] = []
    size = 0
    section = 0
    while size < chars:
        section += 1
        block = [f"## Step {section}: what the agent found\n\n"]
        for _ in range(rng.randint(2, 4)):
            sentence = " ".join(rng.choice(words) for _ in range(rng.randint(8, 20)))
            block.append(sentence.capitalize() + ", see `src/module.py` and **note** this.\n")
        block.append("\n")
        for i in range(rng.randint(2, 5)):
            block.append(f"- item {i}: " + " ".join(rng.choice(words) for _ in range(6)) + "\n")
        block.append("\n```python\n")
        for i in range(rng.randint(3, 8)):
            block.append(f"    value_{i} = compute({i}, key='{rng.choice(words)}')\n")
        block.append("```\n\n")
        text = "".join(block)
        parts.append(text)
        size += len(text)
    return "".join(parts)[:chars]


def _pieces(rng: random.Random, text: str, count: int) -> list[str]:
    """Split ``text`` into exactly ``count`` pieces of varying length (token-like deltas)."""
    if count <= 1:
        return [text]
    cuts = sorted(rng.sample(range(1, len(text)), count - 1))
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]


class _Writer:
    """Builds the lines; interleaves the setStatus flood evenly between them."""

    def __init__(self, spec: StreamSpec, planned_lines: int) -> None:
        self.lines: list[bytes] = []
        self.counts: Counter[str] = Counter()
        self._status_every = max(1, planned_lines // spec.status_lines) if spec.status_lines else 0
        self._status_left = spec.status_lines
        self._since_status = 0
        self._status_no = 0

    def emit(self, kind: str, text: str) -> None:
        self.lines.append(text.encode("utf-8") + b"\n")
        self.counts[kind] += 1
        if self._status_every and self._status_left:
            self._since_status += 1
            if self._since_status >= self._status_every:
                self._since_status = 0
                self.status()

    def status(self) -> None:
        self._status_no += 1
        self._status_left -= 1
        line = _dumps(
            {
                "type": "extension_ui_request",
                "id": f"6f1c2a9e-{self._status_no:04x}-4b7d-9c1e-3a5b7d9f1e2c",
                "method": "setStatus",
                "statusKey": "tokens",
                "statusText": f"↑1.2k ↓{self._status_no * 3} · {self._status_no / 20:.1f}s",
            }
        )
        self.lines.append(line.encode("utf-8") + b"\n")
        self.counts["extension_ui_request"] += 1

    def flush_status(self) -> None:
        while self._status_left > 0:
            self.status()


def _num(x: float) -> float | int:
    """A number as JSON.stringify writes it: 0, not 0.0."""
    return int(x) if x == int(x) else x


def _usage(inp: int = 0, out: int = 0) -> dict[str, object]:
    return {
        "input": inp,
        "output": out,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": inp + out,
        "cost": {
            "input": _num(inp / 1e6),
            "output": _num(out * 2 / 1e6),
            "cacheRead": 0,
            "cacheWrite": 0,
            "total": _num((inp + out * 2) / 1e6),
        },
    }


def _assistant(
    content: list[dict[str, object]],
    ts: int,
    response_id: str | None,
    usage: dict[str, object],
    stop: str = "stop",
) -> dict[str, object]:
    message: dict[str, object] = {
        "role": "assistant",
        "content": content,
        "api": "openai-completions",
        "provider": "scripted",
        "model": "scripted",
        "usage": usage,
        "stopReason": stop,
        "timestamp": ts,
    }
    if response_id is not None:
        message["responseId"] = response_id
    return message


def _update(w: _Writer, event: dict[str, object], partial: dict[str, object]) -> None:
    """One message_update line: the partial message twice (serialised once, written twice)."""
    p = _dumps(partial)
    head = _dumps(event)[:-1]  # the event without its closing brace
    w.emit(
        "message_update",
        '{"type":"message_update","assistantMessageEvent":'
        + head
        + ',"partial":'
        + p
        + '},"message":'
        + p
        + "}",
    )


def _stream_block(
    w: _Writer,
    rng: random.Random,
    before: list[dict[str, object]],
    kind: str,
    text: str,
    deltas: int,
    ts: int,
    rid: str,
) -> dict[str, object]:
    """start, deltas and end events of one thinking or text block; returns the final block."""
    index = len(before)
    key = "thinking" if kind == "thinking" else "text"
    block: dict[str, object] = {"type": kind, key: ""}
    if kind == "thinking":
        block["thinkingSignature"] = "reasoning_content"
    zero = _usage()

    def partial() -> dict[str, object]:
        return _assistant([*before, block], ts, rid, zero)

    _update(w, {"type": f"{kind}_start", "contentIndex": index}, partial())
    so_far = ""
    for piece in _pieces(rng, text, deltas):
        so_far += piece
        block[key] = so_far
        _update(w, {"type": f"{kind}_delta", "contentIndex": index, "delta": piece}, partial())
    _update(w, {"type": f"{kind}_end", "contentIndex": index, "content": so_far}, partial())
    return dict(block)


def build_stream(spec: StreamSpec, seed: int = 7) -> Stream:
    """The events of one prompt's run, as pi writes them (the prompt's response not included)."""
    rng = random.Random(seed)
    planned = spec.text_deltas * spec.answer_turns + (
        spec.thinking_deltas + spec.tool_updates + 60 if spec.tool_turn else 0
    )
    w = _Writer(spec, planned)
    ts = _T0
    messages: list[dict[str, object]] = []
    user = {"role": "user", "content": [{"type": "text", "text": spec.prompt}], "timestamp": ts}
    w.emit("agent_start", '{"type":"agent_start"}')
    w.emit("turn_start", '{"type":"turn_start"}')
    w.emit("message_start", _dumps({"type": "message_start", "message": user}))
    w.emit("message_end", _dumps({"type": "message_end", "message": user}))
    messages.append(user)
    turn = 0

    if spec.tool_turn:
        ts += 250
        rid = f"chatcmpl-scripted-{turn}"
        w.emit(
            "message_start",
            _dumps({"type": "message_start", "message": _assistant([], ts, None, _usage())}),
        )
        thinking_text = _answer_text(rng, max(spec.thinking_deltas * 6, 1))
        content = [
            _stream_block(w, rng, [], "thinking", thinking_text, spec.thinking_deltas, ts, rid)
        ]
        content.append(
            _stream_block(w, rng, content, "text", "Let me look at the files first.", 6, ts, rid)
        )
        command = "find . -name '*.py' | xargs grep -n 'def ' | head -2000"
        args_json = _dumps({"command": command})
        call: dict[str, object] = {
            "type": "toolCall",
            "id": "call_0_0",
            "name": "bash",
            "arguments": {},
            "partialArgs": "",
            "streamIndex": 0,
        }
        index = len(content)
        zero = _usage()
        _update(
            w,
            {"type": "toolcall_start", "contentIndex": index},
            _assistant([*content, call], ts, rid, zero),
        )
        so_far = ""
        for piece in _pieces(rng, args_json, 12):
            so_far += piece
            call["partialArgs"] = so_far
            try:
                call["arguments"] = json.loads(so_far)
            except ValueError:  # pi parses partial JSON leniently; a prefix is close enough
                call["arguments"] = {"command": command[: max(0, len(so_far) - 13)]}
            _update(
                w,
                {"type": "toolcall_delta", "contentIndex": index, "delta": piece},
                _assistant([*content, call], ts, rid, zero),
            )
        final_call: dict[str, object] = {
            "type": "toolCall",
            "id": "call_0_0",
            "name": "bash",
            "arguments": {"command": command},
        }
        _update(
            w,
            {"type": "toolcall_end", "contentIndex": index, "toolCall": final_call},
            _assistant([*content, final_call], ts, rid, zero),
        )
        assistant = _assistant([*content, final_call], ts, rid, _usage(1200, 180), "toolUse")
        w.emit("message_end", _dumps({"type": "message_end", "message": assistant}))
        messages.append(assistant)

        base = {"toolCallId": "call_0_0", "toolName": "bash"}
        w.emit(
            "tool_execution_start",
            _dumps({"type": "tool_execution_start", **base, "args": {"command": command}}),
        )
        w.emit(
            "tool_execution_update",
            _dumps(
                {
                    "type": "tool_execution_update",
                    **base,
                    "args": {"command": command},
                    "partialResult": {"content": []},
                }
            ),
        )
        output = ""
        line_no = 0
        per_update = max(1, (TOOL_OUTPUT_CAP * 3 // 2) // max(spec.tool_updates, 1))
        for _ in range(spec.tool_updates):
            chunk: list[str] = []
            while sum(len(c) for c in chunk) < per_update:
                line_no += 1
                chunk.append(
                    f"./src/pkg/module_{line_no % 97}.py:{line_no}:def handler_{line_no}(request, *, timeout=30):\n"
                )
            output = (output + "".join(chunk))[-TOOL_OUTPUT_CAP:]
            w.emit(
                "tool_execution_update",
                _dumps(
                    {
                        "type": "tool_execution_update",
                        **base,
                        "args": {"command": command},
                        "partialResult": {
                            "content": [{"type": "text", "text": output}],
                            "details": {},
                        },
                    }
                ),
            )
        result = {"content": [{"type": "text", "text": output}]}
        w.emit(
            "tool_execution_end",
            _dumps({"type": "tool_execution_end", **base, "result": result, "isError": False}),
        )
        tool_message = {
            "role": "toolResult",
            "toolCallId": "call_0_0",
            "toolName": "bash",
            "content": result["content"],
            "isError": False,
            "timestamp": ts + 90,
        }
        w.emit("message_start", _dumps({"type": "message_start", "message": tool_message}))
        w.emit("message_end", _dumps({"type": "message_end", "message": tool_message}))
        messages.append(tool_message)
        w.emit(
            "turn_end",
            _dumps({"type": "turn_end", "message": assistant, "toolResults": [tool_message]}),
        )
        turn += 1

    for n in range(spec.answer_turns):
        ts += 400
        rid = f"chatcmpl-scripted-{turn}"
        if turn:
            w.emit("turn_start", '{"type":"turn_start"}')
        w.emit(
            "message_start",
            _dumps({"type": "message_start", "message": _assistant([], ts, None, _usage())}),
        )
        text = _answer_text(rng, spec.answer_chars or spec.text_deltas * 8)
        block = _stream_block(w, rng, [], "text", text, spec.text_deltas, ts, rid)
        last = n == spec.answer_turns - 1
        assistant = _assistant(
            [block], ts, rid, _usage(1500, spec.text_deltas * 2), "stop" if last else "toolUse"
        )
        w.emit("message_end", _dumps({"type": "message_end", "message": assistant}))
        messages.append(assistant)
        w.emit("turn_end", _dumps({"type": "turn_end", "message": assistant, "toolResults": []}))
        turn += 1

    w.flush_status()
    w.emit("agent_end", _dumps({"type": "agent_end", "messages": messages}))
    return Stream(b"".join(w.lines), spec, w.counts)


if __name__ == "__main__":  # a quick look: python -m benchmarks.stream
    s = build_stream(StreamSpec())
    print(f"{s.megabytes:.1f} MB, {s.lines} lines: {dict(s.counts)}")
