"""A realistic agent stream, byte for byte in the shape pi's RPC mode writes.

pi serialises every event with ``JSON.stringify`` (no spaces, keys in insertion order,
``type`` first, non-ASCII written as UTF-8) and one ``\\n`` after each. Two shapes are
generated (``StreamSpec.shape``), each taken from a capture of that line of the agent
answering a ``ScriptedModelServer`` (a thinking block, a bash tool call, a streamed answer):

``"0.73"`` (``@mariozechner/pi-coding-agent`` 0.73, the default)
    Every ``message_update`` carries the whole partial assistant message twice, in
    ``assistantMessageEvent.partial`` and in ``message``, so an answer of n deltas costs
    O(n²) bytes.
``"current"`` (``@earendil-works/pi-coding-agent`` 1.6, ``dist/modes/json-event.js``)
    ``message_update`` is ``{"type", "usage", "assistantMessageEvent"}``: the latest usage
    and the delta event without its ``partial`` (``toolcall_start`` gains ``id`` and
    ``toolName``), so the stream grows linearly. The run also starts with the system
    prompt as a ``system`` message, assistant messages start with ``stopReason:
    "pending"`` and end with ``rawStopReason``, ``durationMs`` and ``thinkingLevel``, tool
    results carry ``durationMs`` (and the bash tool a ``structuredContent`` copy of its
    output), ``agent_end`` has ``willRetry`` and ``agent_settled`` ends the run.

In both, tool output updates (``partialResult``) replace the whole output each time (pi's
bash tool keeps the last 50 KB), and extensions may flood ``setStatus`` requests.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import dataclass, field

__all__ = ["SHAPES", "Stream", "StreamSpec", "build_stream"]

#: The agent lines whose serialisation can be generated (see the module's text).
SHAPES = ("0.73", "current")

#: pi's bash tool keeps the tail of the output: at most this many bytes (DEFAULT_MAX_BYTES).
TOOL_OUTPUT_CAP = 50 * 1024
_T0 = 1_795_994_976_000  # a fixed clock, so the stream is the same every run


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class StreamSpec:
    """How big the stream is, and in which agent line's shape.

    Attributes
    ----------
    text_deltas:
        Text deltas in each answer turn (the long answer); with ``tail_deltas``, the deltas
        of the answer's head only.
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
    shape:
        Which agent line's serialisation: ``"0.73"`` or ``"current"`` (see :data:`SHAPES`).
    varied:
        Whether the answer is the varied Markdown of :func:`varied_answer_text` (tables,
        numbered lists that run long, quotes, several code languages) instead of the
        plain one of :func:`_answer_text`.
    tool_output_bytes:
        How much of the bash call's output is kept (pi's bash tool keeps the last
        :data:`TOOL_OUTPUT_CAP` bytes; a tool of another kind can return more).
    tail_chars, tail_deltas:
        The last ``tail_chars`` characters of the last answer come in ``tail_deltas`` deltas
        of their own (after the head's ``text_deltas``), for a stand-in that writes the head
        at once and paces the tail (``Stream.marks["tail"]`` is its first line).
    """

    text_deltas: int = 4000
    thinking_deltas: int = 400
    tool_updates: int = 100
    status_lines: int = 2000
    answer_turns: int = 1
    answer_chars: int | None = None
    tool_turn: bool = True
    prompt: str = "stream"
    shape: str = "0.73"
    varied: bool = False
    tail_chars: int = 0
    tail_deltas: int = 0
    tool_output_bytes: int = TOOL_OUTPUT_CAP

    def __post_init__(self) -> None:
        if self.shape not in SHAPES:
            raise ValueError(f"unknown shape {self.shape!r}, expected one of {SHAPES}")


@dataclass
class Stream:
    """The bytes of one run's events (after the prompt's response), and what is in them.

    Attributes
    ----------
    data:
        The lines, each ending in ``\\n``.
    spec:
        What was asked for.
    counts:
        Lines per event type.
    answer:
        The text of the last answer (what the transcript must end up showing).
    marks:
        Line numbers (0-based) of notable lines: ``"tail"``, the first delta of the paced
        tail (when the spec asks for one).
    """

    data: bytes
    spec: StreamSpec
    counts: Counter[str] = field(default_factory=Counter)
    answer: str = ""
    marks: dict[str, int] = field(default_factory=dict)

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


def _sentence(rng: random.Random, words: list[str], low: int = 8, high: int = 20) -> str:
    return " ".join(rng.choice(words) for _ in range(rng.randint(low, high))).capitalize()


def varied_answer_text(rng: random.Random, chars: int) -> str:
    """Long, varied Markdown: what a long answer looks like, to render in pieces.

    Sections of headings, paragraphs with inline code, emphasis, links and characters that
    must be escaped (``<``, ``>``, ``&``), bullet lists with nested items, numbered lists
    that run to dozens of items (a list split across chunks must keep its numbering), code
    fences in several languages (some long, some with blank lines inside), tables of a few
    to 40 rows, block quotes and rules, and some non-ASCII. Cut at exactly ``chars``
    characters (so the end may be half a construct, as a streamed answer's is).
    """
    words = _WORDS.split()
    parts: list[str] = []
    size = 0
    section = 0
    number = 0  # numbered items continue from one list to the next within a section
    while size < chars:
        section += 1
        block = [f"## {section}. {_sentence(rng, words, 3, 6)}\n\n"]
        for _ in range(rng.randint(1, 3)):
            block.append(
                f"{_sentence(rng, words)}: `pkg/mod_{section}.py` is **{rng.choice(words)}**, "
                f"_{rng.choice(words)}_ & a < b > c, see [the docs](https://example.org/{section}). "
                f"{_sentence(rng, words)}.\n\n"
            )
        kind = rng.randrange(6)
        if kind == 0:  # a long numbered list
            number = 0
            for _ in range(rng.randint(8, 40)):
                number += 1
                block.append(f"{number}. {_sentence(rng, words, 4, 12)}\n")
            block.append("\n")
        elif kind == 1:  # bullets with nested items
            for i in range(rng.randint(3, 12)):
                block.append(f"- item {i}: {_sentence(rng, words, 4, 10)}\n")
                for j in range(rng.randint(0, 3)):
                    block.append(f"  - sub {i}.{j} with `code_{j}()`\n")
            block.append("\n")
        elif kind == 2:  # a table
            columns = rng.randint(3, 5)
            block.append("| " + " | ".join(f"col {c}" for c in range(columns)) + " |\n")
            block.append("|" + "---|" * columns + "\n")
            for r in range(rng.randint(3, 40)):
                cells = [f"{rng.choice(words)} {r}.{c}" for c in range(columns)]
                block.append("| " + " | ".join(cells) + " |\n")
            block.append("\n")
        elif kind == 3:  # a long code fence, with blank lines inside
            lang = rng.choice(("python", "bash", "json", "text"))
            block.append(f"```{lang}\n")
            for i in range(rng.randint(10, 60)):
                block.append(
                    ""
                    if i % 9 == 8
                    else f"    value_{i} = compute({i}, key='{rng.choice(words)}')  # <{i}> & co"
                )
                block.append("\n")
            block.append("```\n\n")
        elif kind == 4:  # a quote and a rule
            for _ in range(rng.randint(1, 4)):
                block.append(f"> {_sentence(rng, words)}\n")
            block.append("\n---\n\n")
        else:  # numbered items continuing the previous list's count after a paragraph
            for _ in range(rng.randint(3, 10)):
                number += 1
                block.append(f"{number}. {_sentence(rng, words, 4, 12)}\n")
            block.append("\n")
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


def _usage(inp: int = 0, out: int = 0, shape: str = "0.73") -> dict[str, object]:
    """A usage object; the current line adds ``reasoning`` and ``cost.totalFromProvider``
    once the provider reported usage (a zero usage has neither)."""
    reported = shape == "current" and (inp or out)
    usage: dict[str, object] = {"input": inp, "output": out, "cacheRead": 0, "cacheWrite": 0}
    if reported:
        usage["reasoning"] = 0
    usage["totalTokens"] = inp + out
    cost: dict[str, object] = {
        "input": _num(inp / 1e6),
        "output": _num(out * 2 / 1e6),
        "cacheRead": 0,
        "cacheWrite": 0,
        "total": _num((inp + out * 2) / 1e6),
    }
    if reported:
        cost["totalFromProvider"] = False
    usage["cost"] = cost
    return usage


def _assistant(
    content: list[dict[str, object]],
    ts: int,
    response_id: str | None,
    usage: dict[str, object],
    stop: str = "stop",
    shape: str = "0.73",
) -> dict[str, object]:
    """An assistant message; in the current line's shape a started one (``response_id``
    None) has ``stopReason: "pending"`` and a finished one ``rawStopReason``, ``durationMs``
    and ``thinkingLevel`` after its ``responseId``."""
    message: dict[str, object] = {
        "role": "assistant",
        "content": content,
        "api": "openai-completions",
        "provider": "scripted",
        "model": "scripted",
        "usage": usage,
        "stopReason": "pending" if shape == "current" and response_id is None else stop,
        "timestamp": ts,
    }
    if response_id is not None:
        message["responseId"] = response_id
        if shape == "current":
            message["rawStopReason"] = "tool_calls" if stop == "toolUse" else stop
            message["durationMs"] = 51
            message["thinkingLevel"] = "medium"
    return message


def _update(w: _Writer, event: dict[str, object], partial: dict[str, object]) -> None:
    """One 0.73 message_update line: the partial message twice (serialised once, written
    twice)."""
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


def _delta_update(w: _Writer, event: dict[str, object], usage_json: str) -> None:
    """One message_update line of the current line: the latest usage and the event without
    its partial message (``toJsonEvent`` in pi's ``dist/modes/json-event.js``)."""
    w.emit(
        "message_update",
        '{"type":"message_update","usage":'
        + usage_json
        + ',"assistantMessageEvent":'
        + _dumps(event)
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
    shape: str = "0.73",
    tail: tuple[int, int] = (0, 0),
    marks: dict[str, int] | None = None,
    end_usage: dict[str, object] | None = None,
) -> dict[str, object]:
    """start, deltas and end events of one thinking or text block; returns the final block.

    ``tail`` is ``(chars, deltas)``: the last ``chars`` characters come in ``deltas`` deltas
    of their own, and ``marks["tail"]`` is set to the line of the first of them. In the
    current line's shape the deltas carry a zero usage and the end event ``end_usage`` (the
    provider's report, as the capture shows for a text-only turn).
    """
    index = len(before)
    key = "thinking" if kind == "thinking" else "text"
    block: dict[str, object] = {"type": kind, key: ""}
    if kind == "thinking":
        block["thinkingSignature"] = "reasoning_content"
    tail_chars, tail_deltas = tail
    if tail_chars and tail_deltas:
        head_text, tail_text = text[:-tail_chars], text[-tail_chars:]
        head = _pieces(rng, head_text, deltas) if head_text else []
        pieces = head + _pieces(rng, tail_text, tail_deltas)
        first_tail = len(head)
    else:
        pieces = _pieces(rng, text, deltas)
        first_tail = -1

    if shape == "current":
        zero = _dumps(_usage(shape=shape))
        _delta_update(w, {"type": f"{kind}_start", "contentIndex": index}, zero)
        for n, piece in enumerate(pieces):
            if n == first_tail and marks is not None:
                marks["tail"] = len(w.lines)
            _delta_update(w, {"type": f"{kind}_delta", "contentIndex": index, "delta": piece}, zero)
        _delta_update(
            w,
            {"type": f"{kind}_end", "contentIndex": index, "content": text},
            _dumps(end_usage) if end_usage is not None else zero,
        )
        block[key] = text
        return dict(block)

    zero_usage = _usage()

    def partial() -> dict[str, object]:
        return _assistant([*before, block], ts, rid, zero_usage)

    _update(w, {"type": f"{kind}_start", "contentIndex": index}, partial())
    so_far = ""
    for n, piece in enumerate(pieces):
        if n == first_tail and marks is not None:
            marks["tail"] = len(w.lines)
        so_far += piece
        block[key] = so_far
        _update(w, {"type": f"{kind}_delta", "contentIndex": index, "delta": piece}, partial())
    _update(w, {"type": f"{kind}_end", "contentIndex": index, "content": so_far}, partial())
    return dict(block)


def _system_message(ts: int) -> dict[str, object]:
    """The current line's first message of a run: its system prompt, in sections, with the
    tools it offers (about 5 KB, like the capture's; the texts here are stand-ins)."""
    filler = "Use the tools to inspect files, run commands and change code; answer in Markdown. "
    sections = {
        "preamble": "You are a coding assistant running inside pi, a coding agent harness.",
        "tools": "<tools>\n" + "".join(f"- {t}: {filler}\n" for t in _TOOLS) + "</tools>",
        "rules": "<rules>\n" + "".join(f"- rule {i}: {filler}\n" for i in range(6)) + "</rules>",
        "docs": "<docs>\n" + "".join(f"- doc {i}: {filler}\n" for i in range(14)) + "</docs>",
        "cwd": "<cwd>\n/tmp/bench\n</cwd>",
    }
    tools = [
        {
            "name": name,
            "description": filler * 4,
            "parameters": {
                "type": "object",
                "required": ["path"],
                "properties": {
                    "path": {"type": "string", "description": "Path to the file"},
                    "content": {"type": "string", "description": filler},
                },
            },
            "constrainedSampling": {"type": "json_schema", "strict": "prefer"},
        }
        for name in _TOOLS
    ]
    return {
        "role": "system",
        "content": "",
        "sections": sections,
        "timestamp": ts,
        "toolsAdded": tools,
    }


_TOOLS = ("read", "bash", "edit", "write")


def build_stream(spec: StreamSpec, seed: int = 7) -> Stream:
    """The events of one prompt's run, as pi writes them (the prompt's response not included)."""
    rng = random.Random(seed)
    current = spec.shape == "current"
    planned = spec.text_deltas * spec.answer_turns + (
        spec.thinking_deltas + spec.tool_updates + 60 if spec.tool_turn else 0
    )
    w = _Writer(spec, planned)
    ts = _T0
    marks: dict[str, int] = {}
    messages: list[dict[str, object]] = []
    user = {"role": "user", "content": [{"type": "text", "text": spec.prompt}], "timestamp": ts}
    w.emit("agent_start", '{"type":"agent_start"}')
    w.emit("turn_start", '{"type":"turn_start"}')
    if current:
        system = _system_message(ts)
        w.emit("message_start", _dumps({"type": "message_start", "message": system}))
        w.emit("message_end", _dumps({"type": "message_end", "message": system}))
        messages.append(system)
    w.emit("message_start", _dumps({"type": "message_start", "message": user}))
    w.emit("message_end", _dumps({"type": "message_end", "message": user}))
    messages.append(user)
    turn = 0
    shape = spec.shape

    def started(ts: int) -> dict[str, object]:
        return _assistant([], ts, None, _usage(shape=shape), shape=shape)

    if spec.tool_turn:
        ts += 250
        rid = f"chatcmpl-scripted-{turn}"
        w.emit("message_start", _dumps({"type": "message_start", "message": started(ts)}))
        thinking_text = _answer_text(rng, max(spec.thinking_deltas * 6, 1))
        content = [
            _stream_block(
                w, rng, [], "thinking", thinking_text, spec.thinking_deltas, ts, rid, shape
            )
        ]
        content.append(
            _stream_block(
                w, rng, content, "text", "Let me look at the files first.", 6, ts, rid, shape
            )
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
        zero_json = _dumps(_usage(shape=shape))
        if current:
            _delta_update(
                w,
                {
                    "type": "toolcall_start",
                    "contentIndex": index,
                    "id": "call_0_0",
                    "toolName": "bash",
                },
                zero_json,
            )
        else:
            _update(
                w,
                {"type": "toolcall_start", "contentIndex": index},
                _assistant([*content, call], ts, rid, zero),
            )
        so_far = ""
        for piece in _pieces(rng, args_json, 12):
            so_far += piece
            if current:
                _delta_update(
                    w, {"type": "toolcall_delta", "contentIndex": index, "delta": piece}, zero_json
                )
                continue
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
        final_usage = _usage(1200, 180, shape)
        if current:
            _delta_update(
                w,
                {"type": "toolcall_end", "contentIndex": index, "toolCall": final_call},
                _dumps(final_usage),
            )
        else:
            _update(
                w,
                {"type": "toolcall_end", "contentIndex": index, "toolCall": final_call},
                _assistant([*content, final_call], ts, rid, zero),
            )
        assistant = _assistant([*content, final_call], ts, rid, final_usage, "toolUse", shape)
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
        cap = spec.tool_output_bytes
        per_update = max(1, (cap * 3 // 2) // max(spec.tool_updates, 1))
        for _ in range(spec.tool_updates):
            chunk: list[str] = []
            size = 0
            while size < per_update:
                line_no += 1
                chunk.append(
                    f"./src/pkg/module_{line_no % 97}.py:{line_no}:def handler_{line_no}(request, *, timeout=30):\n"
                )
                size += len(chunk[-1])
            output = (output + "".join(chunk))[-cap:]
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
        result: dict[str, object] = {"content": [{"type": "text", "text": output}]}
        end: dict[str, object] = {"type": "tool_execution_end", **base}
        if current:
            result["structuredContent"] = {
                "output": output,
                "truncated": False,
                "exit_code": 0,
                "wall_time_seconds": 0,
            }
            end.update(result=result, isError=False, durationMs=18)
        else:
            end.update(result=result, isError=False)
        w.emit("tool_execution_end", _dumps(end))
        tool_message: dict[str, object] = {
            "role": "toolResult",
            "toolCallId": "call_0_0",
            "toolName": "bash",
            "content": result["content"],
            "isError": False,
        }
        if current:
            tool_message["durationMs"] = 18
        tool_message["timestamp"] = ts + 90
        w.emit("message_start", _dumps({"type": "message_start", "message": tool_message}))
        w.emit("message_end", _dumps({"type": "message_end", "message": tool_message}))
        messages.append(tool_message)
        w.emit(
            "turn_end",
            _dumps({"type": "turn_end", "message": assistant, "toolResults": [tool_message]}),
        )
        turn += 1

    text = ""
    for n in range(spec.answer_turns):
        ts += 400
        rid = f"chatcmpl-scripted-{turn}"
        if turn:
            w.emit("turn_start", '{"type":"turn_start"}')
        w.emit("message_start", _dumps({"type": "message_start", "message": started(ts)}))
        chars = spec.answer_chars or spec.text_deltas * 8
        text = varied_answer_text(rng, chars) if spec.varied else _answer_text(rng, chars)
        last = n == spec.answer_turns - 1
        final_usage = _usage(1500, spec.text_deltas * 2, shape)
        block = _stream_block(
            w,
            rng,
            [],
            "text",
            text,
            spec.text_deltas,
            ts,
            rid,
            shape,
            (spec.tail_chars, spec.tail_deltas) if last else (0, 0),
            marks,
            final_usage,
        )
        assistant = _assistant([block], ts, rid, final_usage, "stop" if last else "toolUse", shape)
        w.emit("message_end", _dumps({"type": "message_end", "message": assistant}))
        messages.append(assistant)
        w.emit("turn_end", _dumps({"type": "turn_end", "message": assistant, "toolResults": []}))
        turn += 1

    w.flush_status()
    if current:
        w.emit("agent_end", _dumps({"type": "agent_end", "messages": messages, "willRetry": False}))
        w.emit("agent_settled", '{"type":"agent_settled","aborted":false}')
    else:
        w.emit("agent_end", _dumps({"type": "agent_end", "messages": messages}))
    return Stream(b"".join(w.lines), spec, w.counts, text, marks)


if __name__ == "__main__":  # a quick look: python -m benchmarks.stream
    for shape in SHAPES:
        s = build_stream(StreamSpec(shape=shape))
        print(f"{shape}: {s.megabytes:.1f} MB, {s.lines} lines: {dict(s.counts)}")
