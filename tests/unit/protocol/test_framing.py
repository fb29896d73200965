"""JsonlDecoder and encode_line: strict LF-only JSONL framing, bytes in, records out."""

from __future__ import annotations

import json

import pytest

from atomic_jupyter.protocol.framing import (
    DIAGNOSTIC_EXCERPT_CHARS,
    Diagnostic,
    JsonlDecoder,
    Record,
    encode_line,
)

MB = 1024 * 1024

#: A realistic stream as the agent writes it: events, a UI request, a response, unicode.
STREAM_VALUES = [
    {"type": "agent_start"},
    {
        "type": "message_update",
        "assistantMessageEvent": {"type": "text_delta", "delta": "Grüße, 世界 🎉 — “quotes”"},
    },
    {
        "type": "extension_ui_request",
        "id": "uuid-1",
        "method": "select",
        "title": "Allow dangerous command?",
        "options": ["Allow", "Block"],
        "timeout": 10000,
    },
    {
        "id": "req-1",
        "type": "response",
        "command": "get_state",
        "success": True,
        "data": {"n": 1.5},
    },
    {"type": "agent_end", "messages": []},
]


def raw_line(value: object) -> bytes:
    """One record as the agent's JSON.stringify writes it: non-ASCII raw, compact, LF."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def stream_bytes() -> bytes:
    return b"".join(raw_line(v) for v in STREAM_VALUES)


def decode_all(*chunks: bytes, close: bool = True) -> list:
    """Feed every chunk to one decoder; return all items (and those of close())."""
    decoder = JsonlDecoder()
    items: list = []
    for chunk in chunks:
        items.extend(decoder.feed(chunk))
    if close:
        items.extend(decoder.close())
    return items


def values(items: list) -> list:
    assert all(isinstance(i, Record) for i in items), items
    return [i.value for i in items]


# --------------------------------------------------------------------------- splitting


def test_records_are_split_on_lf_only():
    items = decode_all(b'{"a":1}\n{"b":2}\n[3]\n"four"\n')
    assert values(items) == [{"a": 1}, {"b": 2}, [3], "four"]


def test_one_trailing_cr_is_stripped_from_each_record():
    items = decode_all(b'{"a":1}\r\n{"b":2}\r\n')
    assert values(items) == [{"a": 1}, {"b": 2}]
    # The stripped line is what a diagnostic measures: "bad" is 3 bytes, not 4.
    (diag,) = decode_all(b"bad\r\n")
    assert isinstance(diag, Diagnostic)
    assert diag.excerpt == "bad"
    assert diag.length == 3


def test_only_one_trailing_cr_is_stripped():
    (diag,) = decode_all(b"bad\r\r\n")
    assert isinstance(diag, Diagnostic)
    assert diag.excerpt == "bad\r"
    assert diag.length == 4
    # A JSON record with "\r\r" still decodes (the remaining \r is JSON whitespace).
    assert values(decode_all(b'{"a":1}\r\r\n')) == [{"a": 1}]


def test_cr_in_the_middle_of_a_line_does_not_split():
    (diag,) = decode_all(b'{"a":\r1}x\n')
    assert isinstance(diag, Diagnostic)  # one line, one item: \r alone is no separator
    assert values(decode_all(b'{"a":\r1}\n')) == [{"a": 1}]


def test_partial_lines_are_joined_across_feeds():
    decoder = JsonlDecoder()
    assert decoder.feed(b'{"type":"mess') == []
    assert decoder.buffered == len(b'{"type":"mess')
    assert decoder.feed(b'age_update","n"') == []
    assert decoder.feed(b':7}\n{"b"') == [Record({"type": "message_update", "n": 7})]
    assert decoder.buffered == len(b'{"b"')
    assert decoder.feed(b":2}\r") == []
    assert decoder.feed(b"\n") == [Record({"b": 2})]
    assert decoder.buffered == 0
    assert decoder.close() == []


def test_feeding_one_byte_at_a_time_gives_the_same_records_as_one_feed():
    data = stream_bytes()
    assert any(b >= 0x80 for b in data)  # the stream really holds multi-byte UTF-8
    whole = decode_all(data)
    assert values(whole) == STREAM_VALUES
    bytewise = decode_all(*(data[i : i + 1] for i in range(len(data))))
    assert bytewise == whole


def test_feeding_in_odd_chunks_gives_the_same_records_as_one_feed():
    data = stream_bytes().replace(b"\n", b"\r\n")
    for size in (2, 3, 7, 64):
        chunks = [data[i : i + size] for i in range(0, len(data), size)]
        assert values(decode_all(*chunks)) == STREAM_VALUES, size


@pytest.mark.parametrize(
    "char",
    ["\u2028", "\u2029", "\u0085"],
    ids=["U+2028", "U+2029", "U+0085"],
)
def test_unicode_line_separators_inside_strings_are_preserved_and_do_not_split(char):
    text = f"before{char}after{char}"
    line = b'{"type":"message_update","delta":"' + text.encode("utf-8") + b'"}\n'
    assert char.encode("utf-8") in line  # raw, not a \u escape
    items = decode_all(line + b'{"next":true}\n')
    assert values(items) == [{"type": "message_update", "delta": text}, {"next": True}]


@pytest.mark.parametrize("char", ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e"])
def test_raw_ascii_separators_inside_strings_do_not_split_the_stream(char):
    # str.splitlines() breaks on these. Raw (unescaped) control characters are not valid
    # JSON (RFC 8259 section 7; the agent's JSON.stringify always escapes them), so the
    # line may be rejected, but it must stay exactly one item and the stream goes on.
    line = b'{"delta":"a' + char.encode("ascii") + b'b"}\n'
    items = decode_all(line + b'{"next":true}\n')
    assert len(items) == 2, items
    assert items[1] == Record({"next": True})
    if isinstance(items[0], Diagnostic):
        assert items[0].length == len(line) - 1
        assert items[0].excerpt == line[:-1].decode("ascii")
    else:
        assert items[0] == Record({"delta": f"a{char}b"})


@pytest.mark.parametrize("char", ["\x0b", "\x0c", "\u2028", "\u2029", "\u0085"])
def test_escaped_separators_as_the_agent_writes_them_decode_to_the_raw_character(char):
    line = f'{{"delta":"a\\u{ord(char):04x}b"}}\n'.encode("ascii")
    assert values(decode_all(line)) == [{"delta": f"a{char}b"}]


def test_multibyte_utf8_character_split_across_two_feeds_decodes():
    line = raw_line({"text": "€🎉"})
    euro = line.index("€".encode())
    party = line.index("🎉".encode())
    for cut in (euro + 1, euro + 2, party + 1, party + 2, party + 3):
        assert values(decode_all(line[:cut], line[cut:])) == [{"text": "€🎉"}], cut


def test_a_line_of_several_megabytes_decodes():
    big = "x" * (8 * MB)
    line = b'{"type":"tool_execution_update","output":"' + big.encode("ascii") + b'"}\n'
    items = decode_all(line[: 3 * MB], line[3 * MB : 5 * MB], line[5 * MB :] + b'{"n":2}\n')
    assert len(items) == 2
    assert isinstance(items[0], Record)
    assert items[0].value["output"] == big
    assert items[1] == Record({"n": 2})


# --------------------------------------------------------------------------- bad input


def test_non_json_line_yields_a_diagnostic_and_the_next_record_is_decoded():
    items = decode_all(b'{"a":1}\nnot json at all\n{"b":2}\n')
    assert items[0] == Record({"a": 1})
    assert isinstance(items[1], Diagnostic)
    assert items[1].reason.startswith("not JSON")
    assert items[1].excerpt == "not json at all"
    assert items[1].length == len(b"not json at all")
    assert items[2] == Record({"b": 2})
    assert len(items) == 3


def test_truncated_json_yields_a_diagnostic_and_the_stream_goes_on():
    items = decode_all(b'{"a":\n{"b":2}\n')
    assert isinstance(items[0], Diagnostic)
    assert items[1:] == [Record({"b": 2})]


def test_invalid_utf8_yields_a_diagnostic_and_the_stream_goes_on():
    bad = b'{"text":"\xff\xfe bad"}'
    items = decode_all(bad + b"\n" + raw_line({"ok": "ü"}))
    assert len(items) == 2
    diag = items[0]
    assert isinstance(diag, Diagnostic)
    assert "UTF-8" in diag.reason
    assert diag.length == len(bad)
    assert "\ufffd" in diag.excerpt  # decoded with replacement characters
    assert items[1] == Record({"ok": "ü"})


def test_blank_line_yields_an_empty_line_diagnostic_and_does_not_stop_the_stream():
    items = decode_all(b'{"a":1}\n\n\r\n   \n{"b":2}\n')
    assert items[0] == Record({"a": 1})
    assert items[-1] == Record({"b": 2})
    diags = items[1:-1]
    assert len(diags) == 3
    for diag in diags:
        assert isinstance(diag, Diagnostic)
        assert diag.reason == "empty line"


def test_close_returns_a_final_unterminated_record():
    decoder = JsonlDecoder()
    assert decoder.feed(b'{"a":1}\n' + '{"last":"ü"}'.encode()) == [Record({"a": 1})]
    assert decoder.close() == [Record({"last": "ü"})]
    assert decoder.buffered == 0
    assert decoder.close() == []


def test_close_strips_a_trailing_cr_and_reports_a_bad_tail():
    decoder = JsonlDecoder()
    decoder.feed(b'{"a":1}\r')
    assert decoder.close() == [Record({"a": 1})]
    decoder.feed(b"garbage")
    (diag,) = decoder.close()
    assert isinstance(diag, Diagnostic)
    assert diag.excerpt == "garbage"


def test_close_with_nothing_buffered_returns_nothing():
    decoder = JsonlDecoder()
    decoder.feed(b'{"a":1}\n')
    assert decoder.close() == []


def test_diagnostic_excerpt_is_bounded_for_a_huge_garbage_line():
    garbage = b"<" * (5 * MB)
    items = decode_all(garbage + b"\n" + b'{"b":2}\n')
    diag = items[0]
    assert isinstance(diag, Diagnostic)
    assert len(diag.excerpt) <= DIAGNOSTIC_EXCERPT_CHARS
    assert diag.excerpt == "<" * DIAGNOSTIC_EXCERPT_CHARS
    assert diag.length == 5 * MB
    assert len(diag.reason) < 1000  # the reason does not quote the whole line either
    assert items[1:] == [Record({"b": 2})]


def test_diagnostic_excerpt_is_bounded_for_huge_multibyte_and_invalid_lines():
    for line in ("日本" * MB).encode("utf-8"), b"\xff" * MB:
        (diag,) = decode_all(line + b"\n")
        assert isinstance(diag, Diagnostic)
        assert 0 < len(diag.excerpt) <= DIAGNOSTIC_EXCERPT_CHARS
        assert diag.length == len(line)


# --------------------------------------------------------------------------- encode_line

AWKWARD = {
    "newline": "a\nb\r\nc",
    "separators": "x\u2028y\u2029z\u0085\x0b\x0c",
    "lone": "\ud800",
    "low": "\udfff tail",
    "emoji": "🎉",
    "nul": "\x00",
}


def test_encode_line_ends_with_exactly_one_newline_and_holds_no_other():
    line = encode_line(AWKWARD)
    assert line.endswith(b"\n")
    assert line.count(b"\n") == 1
    assert b"\r" not in line


def test_encode_line_escapes_unicode_separators_and_lone_surrogates():
    line = encode_line({"s": "x\u2028y", "lone": "\ud800"})
    assert line == b'{"s":"x\\u2028y","lone":"\\ud800"}\n'


def test_encode_line_bytes_are_valid_utf8_even_for_lone_surrogates():
    line = encode_line(AWKWARD)
    text = line.decode("utf-8")  # strict: raises on invalid UTF-8
    assert all(ord(c) < 0x80 for c in text)
    assert "\u2028" not in text and "\u2029" not in text and "\x85" not in text


def test_encode_line_is_compact():
    assert encode_line({"type": "get_state", "n": [1, 2]}) == b'{"type":"get_state","n":[1,2]}\n'


@pytest.mark.parametrize(
    "value",
    [
        AWKWARD,
        {"type": "extension_ui_response", "id": "uuid-1", "value": "Line 1\nLine 2 ✓"},
        ["nested", {"a": [None, True, False, 0, -1.5, 1e300]}],
        "just a string\u2028",
        12345,
        None,
        {"big": "y" * MB},
    ],
    ids=["awkward", "ui-response", "nested", "string", "number", "null", "big"],
)
def test_encode_line_then_decoder_round_trips(value):
    assert values(decode_all(encode_line(value))) == [value]


def test_many_encoded_lines_round_trip_through_one_decoder_bytewise():
    data = b"".join(encode_line(v) for v in [*STREAM_VALUES, AWKWARD])
    items = decode_all(*(data[i : i + 1] for i in range(len(data))))
    assert values(items) == [*STREAM_VALUES, AWKWARD]


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_encode_line_refuses_values_that_are_not_json(bad):
    with pytest.raises(ValueError):
        encode_line({"type": "set_thing", "x": bad})
