"""Benchmark 1: stream decode and dispatch, in this process, against a plain json.loads client.

Every variant gets the same bytes in the same 64 KiB chunks the session's reader thread reads
from the pipe (``process.READ_CHUNK``), and the variants take turns within each repetition.

(a) baseline: a plain client that splits lines on ``\\n`` and calls ``json.loads`` on each;
(b) ``MessageDecoder()``: the project's framing and decoding (msgspec fast path);
(c) ``AgentClient.receive_data``: (b) plus the session's dispatch, with a prompt run in flight so
    every event goes through the run tracker into the transcript;
(d) ``MessageDecoder(fast=False)``: the standard-library fallback;
(e) ``MessageDecoder(scrubber=Redactor([one secret]))``: (b) with the secret scan every line
    goes through when the session knows a secret (none of the lines holds it), against (b).

The same variants (but the scrubber) also run on the stream in the current agent line's shape
(``message_update`` with only the delta, ``StreamSpec(shape="current")``), as extra rows.
"""

from __future__ import annotations

import gc
import json
import tracemalloc
from collections.abc import Callable
from dataclasses import replace
from functools import partial

from atomic_jupyter.protocol.decode import FAST_PATH, MessageDecoder
from atomic_jupyter.session.runs import PromptRun
from atomic_jupyter.session.session import AgentSession
from atomic_jupyter.transport.launch import LaunchSpec
from atomic_jupyter.transport.secrets import Redactor

from .common import Config, Results, fmt_count, fmt_s, median, memory_streams, timed
from .stream import Stream, StreamSpec, build_stream

try:
    from atomic_jupyter.transport.process import READ_CHUNK
except ImportError:  # pragma: no cover
    READ_CHUNK = 1 << 16


def chunks_of(data: bytes, size: int = READ_CHUNK) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def plain_client(chunks: list[bytes]) -> int:
    """The baseline: what a straightforward client does with the agent's stdout."""
    pending = b""
    count = 0
    loads = json.loads
    for chunk in chunks:
        lines = (pending + chunk).split(b"\n") if pending else chunk.split(b"\n")
        pending = lines.pop()
        for line in lines:
            loads(line)
            count += 1
    if pending:
        loads(pending)
        count += 1
    return count


#: The one secret of variant (e): an API key the session was given (no line holds it).
SECRET = "sk-bench-0123456789abcdefghijklmnopqrstuvwxyz"


def decoder_only(chunks: list[bytes], fast: bool = True, scrubber: Redactor | None = None) -> int:
    """Lines decoded by the project's decoder alone (framing and decoding)."""
    decoder = MessageDecoder(fast=fast, scrubber=scrubber)
    count = 0
    for chunk in chunks:
        count += len(decoder.feed(chunk))
    return count + len(decoder.close())


def new_session() -> tuple[AgentSession, PromptRun]:
    """A session that was never started, with a prompt run in flight (as after ``prompt``)."""
    session = AgentSession("bench", LaunchSpec(command=["true"]))
    run = PromptRun("x", "prompt")
    session.tracker.sent(run)
    return session, run


def session_feed(session: AgentSession, chunks: list[bytes]) -> None:
    for chunk in chunks:
        session.client.receive_data(chunk)


def _check(stream: Stream, chunks: list[bytes]) -> dict[str, object]:
    """Sanity: every variant sees every line, and the transcript ends with the exact answer."""
    lines = stream.lines
    assert plain_client(chunks) == lines
    assert decoder_only(chunks) == lines
    assert decoder_only(chunks, fast=False) == lines
    assert decoder_only(chunks, scrubber=Redactor([SECRET])) == lines
    decoder = MessageDecoder()
    for chunk in chunks:
        decoder.feed(chunk)
    session, run = new_session()
    session_feed(session, chunks)
    assert run.transcript.text().endswith(stream.answer), "the transcript lost the final answer"
    assert not session.diagnostics, list(session.diagnostics)[:3]
    return {"fast_lines": decoder.fast_lines}


def retained_bytes(*streams: Stream) -> int:
    """Python heap still held after one session handled ``streams``, one prompt run each
    (tracemalloc, after gc)."""
    chunked = [chunks_of(stream.data) for stream in streams]
    gc.collect()
    tracemalloc.start()
    try:
        session, run = new_session()
        for n, chunks in enumerate(chunked):
            if n:
                session.tracker.finish([run])
                run = PromptRun(f"x{n}", "prompt")
                session.tracker.sent(run)
            session_feed(session, chunks)
        del chunked, chunks
        gc.collect()
        current, _peak = tracemalloc.get_traced_memory()
        keep = (session, run)  # what is measured: everything these still hold
    finally:
        tracemalloc.stop()
    del keep
    return current


def run(cfg: Config, results: Results) -> Stream:
    print("1. stream decode and dispatch", flush=True)
    spec = StreamSpec(
        text_deltas=cfg.text_deltas,
        thinking_deltas=cfg.thinking_deltas,
        tool_updates=cfg.tool_updates,
        status_lines=cfg.status_lines,
    )
    stream = build_stream(spec)
    chunks = chunks_of(stream.data)
    info = _check(stream, chunks)
    # The same run in the current agent line's shape (delta-only message_update).
    current = build_stream(replace(spec, shape="current"))
    current_chunks = chunks_of(current.data)
    current_info = _check(current, current_chunks)
    scrubber = Redactor([SECRET])
    lines = stream.lines
    mb = stream.megabytes
    print(
        f"  stream: {mb:.1f} MB, {lines} lines ({stream.counts['message_update']} "
        f"message_update, {stream.counts['extension_ui_request']} setStatus, "
        f"{stream.counts['tool_execution_update']} tool updates); "
        f"fast path {'on' if FAST_PATH else 'OFF (msgspec missing)'}, "
        f"{info['fast_lines']} lines took it; in the current line's shape "
        f"{current.megabytes:.1f} MB, {current.lines} lines, {current_info['fast_lines']} "
        "took the fast path",
        flush=True,
    )

    # Keys with "+" are the current line's shape; "e" is (b) with the secret scan.
    variants: dict[str, Callable[[], object]] = {
        "a": lambda: plain_client(chunks),
        "b": lambda: decoder_only(chunks),
        "d": lambda: decoder_only(chunks, fast=False),
        "e": lambda: decoder_only(chunks, scrubber=scrubber),
        "a+": lambda: plain_client(current_chunks),
        "b+": lambda: decoder_only(current_chunks),
        "d+": lambda: decoder_only(current_chunks, fast=False),
    }
    times: dict[str, list[float]] = {k: [] for k in (*variants, "c", "c+")}
    for rep in range(cfg.reps + 1):  # the first round warms up and is not counted
        for key, func in variants.items():
            t = timed(func)
            if rep:
                times[key].append(t)
        for key, data in (("c", chunks), ("c+", current_chunks)):
            session, _run = new_session()
            t = timed(partial(session_feed, session, data))
            del session, _run
            if rep:
                times[key].append(t)

    med = {k: median(v) for k, v in times.items()}
    results.facts["decode"] = {
        "megabytes": mb,
        "lines": lines,
        "counts": dict(stream.counts),
        "current_megabytes": current.megabytes,
        "current_lines": current.lines,
        "medians_s": med,
        "all_s": times,
    }

    def speed(key: str) -> str:
        size, count = (current.megabytes, current.lines) if key.endswith("+") else (mb, lines)
        return f"{size / med[key]:.0f} MB/s · {fmt_count(count / med[key])} ev/s"

    base = speed("a")
    size = f"{mb:.0f} MB, {fmt_count(lines)} lines, {cfg.reps} reps"
    results.add(
        "1 stream decode",
        "(b) MessageDecoder (msgspec fast path)",
        speed("b"),
        f"(a) json.loads per line: {base}",
        f"{med['a'] / med['b']:.1f}× faster",
        f"{size}; time {fmt_s(med['b'])} vs {fmt_s(med['a'])}",
    )
    results.add(
        "1 stream decode",
        "(c) MessageDecoder + AgentClient.receive_data dispatch",
        speed("c"),
        f"(a) {base}",
        f"{med['a'] / med['c']:.1f}× faster",
        f"prompt run in flight, transcript updated; time {fmt_s(med['c'])}",
    )
    results.add(
        "1 stream decode",
        "(d) MessageDecoder(fast=False), stdlib fallback",
        speed("d"),
        f"(a) {base}",
        f"{med['a'] / med['d']:.2f}× faster",
        f"no msgspec: json.loads + partial dropped; time {fmt_s(med['d'])}",
    )
    results.add(
        "1 stream decode",
        "(e) MessageDecoder with a one-secret scrubber",
        speed("e"),
        f"(b) without: {speed('b')}",
        f"{med['e'] / med['b']:.2f}× time",
        f"transport.secrets.Redactor of one {len(SECRET)}-character secret that no line "
        f"holds: every line is searched for it; time {fmt_s(med['e'])} vs {fmt_s(med['b'])}",
    )
    current_size = (
        f"{current.megabytes:.1f} MB, {fmt_count(current.lines)} lines: the same run with "
        "message_update carrying only the delta"
    )
    results.add(
        "1 stream decode",
        "(b) MessageDecoder, current line's shape",
        speed("b+"),
        f"(a) json.loads per line: {speed('a+')}",
        f"{med['a+'] / med['b+']:.1f}× faster",
        f"{current_size}; time {fmt_s(med['b+'])} vs {fmt_s(med['a+'])}; (d) stdlib "
        f"fallback {fmt_s(med['d+'])}, {med['a+'] / med['d+']:.2f}× faster",
    )
    results.add(
        "1 stream decode",
        "(c) MessageDecoder + dispatch, current line's shape",
        speed("c+"),
        f"(a) {speed('a+')}",
        f"{med['a+'] / med['c+']:.1f}× faster",
        f"time {fmt_s(med['c+'])}",
    )

    # Memory held by a session after a run: the same content in 1× or memory_factor× events.
    short, long = memory_streams(cfg)
    held_short = retained_bytes(short)
    held_long = retained_bytes(long)
    held_two = retained_bytes(long, long)
    results.facts["session_heap"] = {
        "short_lines": short.lines,
        "long_lines": long.lines,
        "short_bytes": held_short,
        "long_bytes": held_long,
        "two_long_runs_bytes": held_two,
    }
    results.add(
        "5 memory",
        "session heap held after a run (tracemalloc, after gc)",
        f"{held_long / 1e6:.2f} MB after {fmt_count(long.lines)} events ({long.megabytes:.0f} MB)",
        f"{held_short / 1e6:.2f} MB after {fmt_count(short.lines)} events",
        f"{held_long / max(held_short, 1):.2f}× for {long.lines / short.lines:.1f}× events",
        "AgentClient.receive_data, never started; same answer and tool output, "
        f"{cfg.memory_factor}× the deltas, tool updates and setStatus lines; "
        f"after two long runs {held_two / 1e6:.2f} MB",
    )
    return stream
