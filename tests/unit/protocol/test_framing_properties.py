"""Property-based tests of the framing and decoding (hypothesis).

Any JSON value, encoded by the agent's rules (compact JSON, raw non-ASCII, LF between records)
and cut into arbitrary chunks, decodes to the same records; arbitrary bytes never raise out of
the decoder and never cost a valid record that follows them.
"""

from __future__ import annotations

import json
from itertools import pairwise

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from atomic_jupyter.protocol.decode import MessageDecoder
from atomic_jupyter.protocol.framing import Diagnostic, JsonlDecoder, Record, encode_line

# Every plane of unicode, U+2028/U+2029, NUL, control characters and lone surrogates.
text = st.text(st.characters(codec=None, exclude_categories=()), max_size=60) | st.sampled_from(
    ["\u2028", "\u2029", "\x00", "\r", "\r\n", "a\u0085b", "\ud800", "\U0001f680" * 3]
)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | text,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(text, children, max_size=5),
    max_leaves=30,
)


def agent_bytes(value: object) -> bytes:
    """How the agent writes a record: JSON.stringify (raw non-ASCII, lone surrogates escaped
    as ``\\uXXXX``, which well-formed JSON.stringify does), then LF."""
    return (
        json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode(
            "utf-8", "backslashreplace"
        )
        + b"\n"
    )


def chunked(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    edges = [0, *points, len(data)]
    return [data[a:b] for a, b in pairwise(edges)]


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(json_values, min_size=1, max_size=6), st.lists(st.integers(min_value=0), max_size=12)
)
def test_any_records_in_any_chunks_decode_to_themselves(
    values: list[object], cuts: list[int]
) -> None:
    data = b"".join(agent_bytes(v) for v in values)
    decoder = JsonlDecoder()
    items = [
        item for chunk in chunked(data, cuts) for item in decoder.feed(chunk)
    ] + decoder.close()
    assert all(isinstance(item, Record) for item in items), [
        i for i in items if isinstance(i, Diagnostic)
    ]
    assert [item.value for item in items] == values


@settings(max_examples=300)
@given(json_values)
def test_encode_line_round_trips_every_value(value: object) -> None:
    (item,) = JsonlDecoder().feed(encode_line(value))
    assert isinstance(item, Record) and item.value == value


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300), st.lists(st.integers(min_value=0), max_size=8))
def test_arbitrary_bytes_never_raise_and_never_cost_the_next_record(
    garbage: bytes, cuts: list[int]
) -> None:
    follower = {"type": "agent_end", "messages": ["after the garbage \u2028"]}
    data = garbage + b"\n" + agent_bytes(follower)
    for decoder in (JsonlDecoder(), MessageDecoder()):
        items = [
            item for chunk in chunked(data, cuts) for item in decoder.feed(chunk)
        ] + decoder.close()
        last = items[-1]
        value = last.value if isinstance(last, Record) else getattr(last, "to_dict", lambda: None)()
        assert value == follower


@settings(max_examples=200)
@given(st.lists(text, min_size=1, max_size=20))
def test_message_update_deltas_survive_the_lean_path(deltas: list[str]) -> None:
    data = b"".join(
        agent_bytes(
            {
                "type": "message_update",
                "message": {"big": "x" * 50},
                "assistantMessageEvent": {
                    "type": "text_delta",
                    "contentIndex": 0,
                    "delta": d,
                    "partial": {},
                },
            }
        )
        for d in deltas
    )
    decoder = MessageDecoder()
    events = decoder.feed(data)
    assert [e.get("assistantMessageEvent")["delta"] for e in events] == deltas  # type: ignore[union-attr]
