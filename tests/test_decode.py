"""The decoder's lean path for message_update, and the transcript built from deltas."""

from __future__ import annotations

import json

import pytest

from atomic_jupyter.protocol.decode import FAST_PATH, MessageDecoder
from atomic_jupyter.protocol.framing import Diagnostic
from atomic_jupyter.protocol.messages import AgentEvent, Response
from atomic_jupyter.session.transcript import AssistantBlock, Transcript


def line(value: object) -> bytes:
    """A record as the agent writes it (JSON.stringify: no spaces)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def update(text_so_far: str, delta: str, kind: str = "text_delta", index: int = 0) -> bytes:
    partial = {"role": "assistant", "content": [{"type": "text", "text": text_so_far}]}
    return line(
        {
            "type": "message_update",
            "message": partial,
            "assistantMessageEvent": {
                "type": kind,
                "contentIndex": index,
                "delta": delta,
                "partial": partial,
            },
        }
    )


@pytest.mark.parametrize("fast", [True, False])
def test_message_updates_come_out_lean_on_both_paths(fast: bool) -> None:
    decoder = MessageDecoder(fast=fast)
    (event,) = decoder.feed(update("Hello wor", "ld\u2028!"))
    assert event == AgentEvent(
        "message_update",
        {"assistantMessageEvent": {"type": "text_delta", "contentIndex": 0, "delta": "ld\u2028!"}},
    )
    assert decoder.fast_lines == (1 if fast and FAST_PATH else 0)


def test_the_fast_path_is_available_here() -> None:
    assert FAST_PATH, "msgspec is a dependency of the test extras"


def test_other_lines_decode_in_full_and_bad_lines_become_diagnostics() -> None:
    decoder = MessageDecoder()
    data = line(
        {"type": "response", "id": "1", "command": "get_state", "success": True, "data": {"a": 1}}
    )
    data += (
        b'{"type":"message_update", not json\n'
        + b"\xff\xfe\n"
        + line({"type": "agent_end", "messages": []})
    )
    items = decoder.feed(data[:17]) + decoder.feed(data[17:])
    assert isinstance(items[0], Response) and items[0].data == {"a": 1}
    assert isinstance(items[1], Diagnostic) and "not JSON" in items[1].reason
    assert isinstance(items[2], Diagnostic) and "UTF-8" in items[2].reason
    assert items[3] == AgentEvent("agent_end", {"messages": []})


def test_a_message_update_split_across_reads_and_with_crlf() -> None:
    data = update("ab", "c").replace(b"\n", b"\r\n")
    decoder = MessageDecoder()
    items = [item for i in range(len(data)) for item in decoder.feed(data[i : i + 1])]
    assert [i.get("assistantMessageEvent")["delta"] for i in items] == ["c"]  # type: ignore[union-attr]


def test_transcript_adds_up_deltas_and_ends_with_the_exact_final_message() -> None:
    transcript = Transcript("prompt")
    decoder = MessageDecoder()
    final = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "hmm"},
            {"type": "text", "text": "Hello, world\u2029"},
        ],
    }
    stream = line({"type": "message_start", "message": {"role": "user", "content": "prompt"}})
    stream += line({"type": "message_start", "message": {"role": "assistant", "content": []}})
    stream += update("", "hm", "thinking_delta", 0) + update("", "m", "thinking_delta", 0)
    for piece in ["Hel", "lo, ", "world"]:
        stream += update("", piece, "text_delta", 1)
    events = decoder.feed(stream)
    for event in events:
        transcript.apply(event)  # type: ignore[arg-type]
    (block,) = transcript.snapshot()
    assert isinstance(block, AssistantBlock)
    assert (block.thinking, block.text, block.final) == ("hmm", "Hello, world", False)
    for event in decoder.feed(line({"type": "message_end", "message": final})):
        transcript.apply(event)  # type: ignore[arg-type]
    assert (block.thinking, block.text, block.final) == ("hmm", "Hello, world\u2029", True)
