"""Strict JSONL framing for the agent's RPC stream, with no I/O.

The agent writes one JSON value per line, separated by ``\\n`` only. JSON strings may hold
U+2028, U+2029, U+0085 and other characters that :meth:`str.splitlines` treats as line
breaks, so records are split on the byte ``\\n`` and nothing else, and one trailing ``\\r``
is stripped from each record.

:class:`JsonlDecoder` takes bytes in any chunking (:meth:`~JsonlDecoder.feed`) and hands
out :class:`Record` (a decoded JSON value) and :class:`Diagnostic` (a line that was not
JSON, or not UTF-8) in stream order. Nothing is ever raised for bad input: the stream goes
on after a bad line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Diagnostic",
    "JsonlDecoder",
    "Line",
    "LineSplitter",
    "Record",
    "decode_line",
    "encode_line",
]

#: How much of a bad line a diagnostic keeps, so a 50 MB garbage line costs no memory.
DIAGNOSTIC_EXCERPT_CHARS = 200


@dataclass(frozen=True)
class Record:
    """One JSON value decoded from one line of the stream."""

    value: Any


@dataclass(frozen=True)
class Diagnostic:
    """A line that could not be decoded.

    Attributes
    ----------
    reason:
        Why the line was rejected, in plain words.
    excerpt:
        The start of the offending line (decoded with replacement characters).
    length:
        The length of the whole line in bytes.
    """

    reason: str
    excerpt: str
    length: int


Item = Record | Diagnostic

#: One line of the stream: ``bytes``, or the ``bytearray`` a line spanning chunks was gathered in.
Line = bytes | bytearray


class JsonlDecoder:
    """Incremental, sans-IO decoder of an LF-delimited JSON stream.

    Examples
    --------
    >>> d = JsonlDecoder()
    >>> d.feed(b'{"a": 1}\\n{"b"')
    [Record(value={'a': 1})]
    >>> d.feed(b': 2}\\r\\n')
    [Record(value={'b': 2})]
    """

    def __init__(self) -> None:
        self._lines = LineSplitter()

    @property
    def buffered(self) -> int:
        """Number of bytes held for a line that has not ended yet."""
        return self._lines.buffered

    def feed(self, data: bytes) -> list[Item]:
        """Add bytes from the stream; return the records of every line they complete."""
        return [decode_line(line) for line in self._lines.feed(data)]

    def close(self) -> list[Item]:
        """End of stream: decode a final line that had no ``\\n`` after it, if any."""
        return [decode_line(line) for line in self._lines.close()]


class LineSplitter:
    """Incremental, sans-IO splitter of a byte stream into ``\\n``-terminated lines.

    Lines come out without their ``\\n``; a trailing ``\\r`` is left for the decoder. A line
    that spans chunks is gathered in one ``bytearray``, which is handed out as the line itself
    (no second copy of a 50 MB line is made to join its pieces).
    """

    def __init__(self) -> None:
        self._pending = bytearray()

    @property
    def buffered(self) -> int:
        """Number of bytes held for a line that has not ended yet."""
        return len(self._pending)

    def feed(self, data: bytes) -> list[Line]:
        """Add bytes; return every line they complete."""
        lines: list[Line] = []
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                break
            if self._pending:
                self._pending += memoryview(data)[start:end]
                lines.append(self._pending)
                self._pending = bytearray()
            else:
                lines.append(data[start:end])
            start = end + 1
        if start < len(data):
            self._pending += memoryview(data)[start:]
        return lines

    def close(self) -> list[Line]:
        """End of stream: a final line that had no ``\\n`` after it, if any."""
        if not self._pending:
            return []
        piece, self._pending = self._pending, bytearray()
        return [piece]


def decode_line(line: Line) -> Item:
    """Decode one line (without its ``\\n``) into a :class:`Record` or :class:`Diagnostic`."""
    if line.endswith(b"\r"):
        line = line[:-1]
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _diagnostic(f"not valid UTF-8 ({exc.reason} at byte {exc.start})", line)
    if not text.strip():
        return _diagnostic("empty line", line)
    try:
        return Record(json.loads(text))
    except (ValueError, RecursionError) as exc:
        return _diagnostic(f"not JSON ({exc})", line)


def _diagnostic(reason: str, line: Line) -> Diagnostic:
    excerpt = line[: DIAGNOSTIC_EXCERPT_CHARS * 4].decode("utf-8", "replace")
    return Diagnostic(reason, excerpt[:DIAGNOSTIC_EXCERPT_CHARS], len(line))


def encode_line(value: Any) -> bytes:
    """Encode one JSON value as a record: compact JSON, UTF-8, ending in ``\\n``.

    ``json.dumps`` escapes every control character, so no raw ``\\n`` can end the record
    early, and with ``ensure_ascii`` every non-ASCII character (lone surrogates included)
    travels as a ``\\u`` escape, so the bytes are always valid UTF-8. NaN and infinities,
    which are not JSON, raise ``ValueError`` before anything is written.
    """
    return (
        json.dumps(value, ensure_ascii=True, allow_nan=False, separators=(",", ":")) + "\n"
    ).encode("utf-8")
