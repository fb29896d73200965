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


# --------------------------------------------------------------------------- huge lines

HUGE = 50 * 1024 * 1024


def chunks(data: bytes, size: int = 1 << 16) -> list[bytes]:
    """``data`` in the pieces the reader thread hands over."""
    return [data[i : i + size] for i in range(0, len(data), size)]


def test_a_huge_event_of_an_unknown_type_is_neither_decoded_nor_kept() -> None:
    """50 MB of an event nobody reads: the session holds (almost) nothing of it afterwards,
    and decoding it never held more than about one copy of the line."""
    import gc
    import tracemalloc

    from atomic_jupyter import AgentSession
    from atomic_jupyter.transport.launch import LaunchSpec

    session = AgentSession("huge-line", LaunchSpec(command=["never-started"]))
    blob = b'{"type":"mystery_dump","blob":"' + b"x" * HUGE + b'"}\n'
    after = line({"type": "agent_start"})
    pieces = chunks(blob)
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for piece in pieces:
            session.client.receive_data(piece)
        session.client.receive_data(after)
        gc.collect()
        retained, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert retained - base < 5 << 20, f"{(retained - base) / 1e6:.1f} MB retained"
    assert peak - base < 1.5 * len(blob), f"peak {(peak - base) / 1e6:.0f} MB"
    kept = [e for e in session.events if e.type == "mystery_dump"]
    assert len(kept) == 1 and f"{len(blob) - 1:,} bytes" in kept[0].get("omitted")
    assert session.events[-1].type == "agent_start", "the stream did not go on after it"


def test_a_huge_event_of_an_unknown_type_comes_out_with_its_type_and_size() -> None:
    decoder = MessageDecoder()
    blob = line({"type": "mystery_dump", "blob": "x" * (2 << 20)})
    (event,) = [item for piece in chunks(blob) for item in decoder.feed(piece)]
    assert isinstance(event, AgentEvent) and event.type == "mystery_dump"
    assert event.size == len(blob) - 1 and "not decoded" in event.get("omitted")


def test_a_huge_line_of_a_known_type_decodes_exactly_as_a_small_one() -> None:
    text = 'line \u2028 "quoted" \\ é 😀\n' * 100_000  # about 3 MB
    value = {
        "type": "message_end",
        "message": {"role": "assistant", "content": [{"type": "text", "text": text}]},
    }
    decoder = MessageDecoder()
    items = [item for piece in chunks(line(value)) for item in decoder.feed(piece)]
    assert items == [AgentEvent("message_end", {"message": value["message"]})]
    assert items[0].size == len(line(value)) - 1


def test_a_huge_line_that_is_not_json_is_a_diagnostic_and_the_stream_goes_on() -> None:
    decoder = MessageDecoder()
    bad = b'{"type":"mystery","blob":"' + b"x" * (2 << 20) + b"\n"  # never closed
    items = [
        item for piece in chunks(bad + line({"type": "agent_end"})) for item in decoder.feed(piece)
    ]
    assert isinstance(items[0], Diagnostic) and items[0].length == len(bad) - 1
    assert items[1] == AgentEvent("agent_end", {})


def test_a_secret_in_a_huge_known_line_is_taken_out() -> None:
    from atomic_jupyter.transport.secrets import REDACTED, Redactor

    secret = "sk-test-0123456789abcdef"
    text = ("a" * 1000 + f" {secret} ") * 2000
    decoder = MessageDecoder(scrubber=Redactor([secret]))
    value = {"type": "tool_execution_end", "toolCallId": "t1", "result": {"text": text}}
    (event,) = [item for piece in chunks(line(value)) for item in decoder.feed(piece)]
    assert isinstance(event, AgentEvent)
    shown = event.get("result")["text"]
    assert secret not in shown and shown.count(REDACTED) == 2000
