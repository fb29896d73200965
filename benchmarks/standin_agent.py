#!/usr/bin/env python3
"""A stand-in for ``pi --mode rpc`` that replays a recorded stream at full speed (benchmarks only).

It speaks enough of the agent's JSONL RPC protocol for a session to start and run prompts:

* ``get_state`` -> a state response (``isStreaming`` true while a replay runs, as pi's is);
* ``get_commands`` -> ``{"commands": []}``; ``abort`` and other known commands -> success;
* ``prompt`` with message ``replay PATH``: answers the prompt, then writes the file's lines
  to stdout as fast as the pipe takes them, one ``write`` per line as pi does;
* ``prompt`` with message ``dialogs N [GAP_MS]``: writes N ``select`` dialog requests, one at
  a time, each after the previous one was answered (``extension_ui_response`` on stdin) and
  GAP_MS milliseconds more; the arrival of each answer line is stamped as soon as it is read;
* ``prompt`` with message ``paced PATH N_FAST GAP_MS [PID]``: writes the first N_FAST lines
  of PATH at full speed, waits until the kernel has rendered what it got and fallen quiet
  (with PID, the kernel's: until its main thread used less than QUIET_CPU_S of CPU over
  QUIET_WINDOW_S, at least PACED_PAUSE_S; without, PACED_PAUSE_S), then writes the
  ``message_update`` lines that follow one every GAP_MS milliseconds (a model streaming the
  end of a long answer), then the rest at full speed. With PID, the CPU time of that process
  and of its main thread is read from /proc when the paced part starts;
* anything else is answered with an error, as pi answers an unknown command.

A prompt whose file ends with ``agent_settled`` (a stream in the current agent line's shape)
is answered with ``{"disposition": "started"}``, as that line answers it.

Every replay and dialog is logged with ``time.monotonic()`` stamps (CLOCK_MONOTONIC, the same
clock in every process on the machine) as one JSON line in the ``--report`` file.

``--bare PATH`` writes PATH the same way to stdout with no protocol at all and exits: the
baseline of how fast the stream can be produced into a pipe.

Unknown arguments (``--mode rpc``, ``-e hub.ts`` added by the session) are ignored. Standard
library only: it runs with any Python.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import sys
import threading
import time
from typing import Any


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


#: Seconds between the fast and the paced part of a ``paced`` prompt, at least; with the
#: kernel's pid, the pause lasts until its main thread is quiet (at most QUIET_MAX_S).
PACED_PAUSE_S = 0.5
QUIET_WINDOW_S = 0.2
QUIET_CPU_S = 0.02
QUIET_MAX_S = 30.0
_UPDATE_PREFIX = b'{"type":"message_update"'
_CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _cpu_seconds(pid: int, tid: int | None = None) -> float | None:
    """User + system CPU time of a process (or one of its threads) from /proc; None if gone."""
    path = f"/proc/{pid}/stat" if tid is None else f"/proc/{pid}/task/{tid}/stat"
    try:
        with open(path, encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / _CLK_TCK


def _wait_quiet(pid: int | None) -> None:
    """Sleep PACED_PAUSE_S, then (with ``pid``) until the main thread of ``pid`` is quiet."""
    time.sleep(PACED_PAUSE_S)
    if not pid:
        return
    deadline = time.monotonic() + QUIET_MAX_S
    before = _cpu_seconds(pid, pid)
    while before is not None and time.monotonic() < deadline:
        time.sleep(QUIET_WINDOW_S)
        now = _cpu_seconds(pid, pid)
        if now is None or now - before < QUIET_CPU_S:
            return
        before = now


def _ends_settled(path: str) -> bool:
    """Whether the stream in ``path`` ends with ``agent_settled`` (the current line's shape)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 256))
            tail = f.read()
    except OSError:
        return False
    last = tail.rstrip(b"\n").rsplit(b"\n", 1)[-1]
    return last.startswith(b'{"type":"agent_settled"')


def _lines(path: str) -> list[bytes]:
    with open(path, "rb") as f:
        data = f.read()
    return data.splitlines(keepends=True)  # the file holds only \n-separated JSON lines


class StandIn:
    def __init__(self, report: str | None) -> None:
        self.out = sys.stdout.fileno()
        self.lock = threading.Lock()
        self.streaming = False
        # (when the line was read, the decoded answer, the line's size in bytes)
        self.answers: queue.Queue[tuple[float, dict[str, Any], int]] = queue.Queue()
        self.dialogs_sent = 0  # dialog ids must be unique over the whole session
        self.report = report

    def note(self, **fields: object) -> None:
        if self.report:
            with open(self.report, "a", encoding="utf-8") as f:
                f.write(json.dumps(fields) + "\n")

    def send(self, obj: dict[str, Any]) -> None:
        data = (json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        with self.lock:
            _write_all(self.out, data)

    def respond(self, cid: object, command: str, data: object = None) -> None:
        """A success response to command ``cid``, with ``data`` when given."""
        message: dict[str, Any] = {
            "id": cid,
            "type": "response",
            "command": command,
            "success": True,
        }
        if data is not None:
            message["data"] = data
        self.send(message)

    def state(self) -> dict[str, Any]:
        return {
            "model": {
                "id": "standin",
                "name": "Stand-in",
                "api": "openai-completions",
                "provider": "standin",
                "reasoning": False,
                "input": ["text"],
                "contextWindow": 128000,
                "maxTokens": 8192,
            },
            "thinkingLevel": "off",
            "isStreaming": self.streaming,
            "isCompacting": False,
            "steeringMode": "one-at-a-time",
            "followUpMode": "one-at-a-time",
            "sessionId": "standin-session",
            "autoCompactionEnabled": True,
            "messageCount": 0,
            "pendingMessageCount": 0,
        }

    # ------------------------------------------------------------------ scenarios

    def replay(self, path: str) -> None:
        lines = _lines(path)
        size = sum(map(len, lines))
        t_first = time.monotonic()
        for line in lines[:-1]:
            with self.lock:
                _write_all(self.out, line)
        self.streaming = False  # pi is idle once it writes agent_end (the last line)
        with self.lock:
            _write_all(self.out, lines[-1])
        t_last = time.monotonic()
        self.note(
            kind="replay", path=path, bytes=size, lines=len(lines), t_first=t_first, t_last=t_last
        )

    def dialogs(self, count: int, gap: float = 0.0) -> None:
        self.send({"type": "agent_start"})
        for i in range(count):
            if gap:
                time.sleep(gap)
            self.dialogs_sent += 1
            rid = f"bench-dialog-{os.getpid()}-{self.dialogs_sent:06d}"
            request = {
                "type": "extension_ui_request",
                "id": rid,
                "method": "select",
                "title": f"Benchmark dialog {i}: pick one",
                "options": ["Alpha", "Beta", "Gamma"],
            }
            data = (json.dumps(request, separators=(",", ":")) + "\n").encode()
            with self.lock:
                t_written = time.monotonic()
                _write_all(self.out, data)
            try:
                t_answer, answer, answer_bytes = self.answers.get(timeout=120)
            except queue.Empty:
                self.note(kind="dialog", i=i, t_written=t_written, error="no answer")
                break
            self.note(
                kind="dialog",
                i=i,
                t_written=t_written,
                t_answer=t_answer,
                answer=answer,
                request_bytes=len(data),
                response_bytes=answer_bytes,
            )
        self.streaming = False
        self.send({"type": "agent_end", "messages": []})

    def paced(self, path: str, n_fast: int, gap: float, pid: int | None = None) -> None:
        """The first ``n_fast`` lines at once, a pause, then the ``message_update`` lines that
        follow one per ``gap`` seconds, then the rest at once (see the module's text)."""
        lines = _lines(path)
        t_first = time.monotonic()
        for line in lines[:n_fast]:
            with self.lock:
                _write_all(self.out, line)
        _wait_quiet(pid)
        cpu = _cpu_seconds(pid) if pid else None
        main_cpu = _cpu_seconds(pid, pid) if pid else None
        wall_paced = time.time()
        t_paced = time.monotonic()
        end = n_fast
        while end < len(lines) - 1 and lines[end].startswith(_UPDATE_PREFIX):
            with self.lock:
                _write_all(self.out, lines[end])
            end += 1
            time.sleep(gap)
        t_paced_end = time.monotonic()
        for line in lines[end:-1]:
            with self.lock:
                _write_all(self.out, line)
        self.streaming = False  # pi is idle once it writes the last line
        with self.lock:
            _write_all(self.out, lines[-1])
        t_last = time.monotonic()
        self.note(
            kind="paced",
            path=path,
            lines=len(lines),
            paced_lines=end - n_fast,
            t_first=t_first,
            t_paced=t_paced,
            wall_paced=wall_paced,
            t_paced_end=t_paced_end,
            t_last=t_last,
            kernel_cpu=cpu,
            kernel_main_cpu=main_cpu,
        )

    def run_prompt(self, message: str) -> None:
        try:
            if message.startswith("replay "):
                self.replay(message[len("replay ") :].strip())
            elif message.startswith("paced "):
                words = message.split()
                self.paced(
                    words[1],
                    int(words[2]),
                    float(words[3]) / 1000,
                    int(words[4]) if len(words) > 4 else None,
                )
            elif message.startswith("dialogs "):
                words = message.split()
                gap_ms = float(words[2]) if len(words) > 2 else 0.0
                self.dialogs(int(words[1]), gap_ms / 1000)
            else:
                self.send({"type": "agent_start"})
                self.streaming = False
                self.send({"type": "agent_end", "messages": []})
        finally:
            self.streaming = False

    # ------------------------------------------------------------------ the command loop

    def serve(self) -> None:
        stdin = sys.stdin.buffer
        while True:
            raw = stdin.readline()
            if not raw:
                return
            t_read = time.monotonic()
            try:
                command = json.loads(raw)
            except ValueError:
                self.send(
                    {
                        "type": "response",
                        "command": "parse",
                        "success": False,
                        "error": "Failed to parse command",
                    }
                )
                continue
            kind = command.get("type")
            cid = command.get("id")
            if kind == "get_state":
                self.respond(cid, "get_state", self.state())
            elif kind == "get_commands":
                self.respond(cid, "get_commands", {"commands": []})
            elif kind == "prompt":
                if self.streaming:
                    self.send(
                        {
                            "id": cid,
                            "type": "response",
                            "command": "prompt",
                            "success": False,
                            "error": "busy (stand-in)",
                        }
                    )
                    continue
                self.streaming = True
                message = str(command.get("message", ""))
                words = message.split()
                if len(words) > 1 and words[0] in ("replay", "paced") and _ends_settled(words[1]):
                    self.respond(cid, "prompt", {"disposition": "started"})
                else:
                    self.respond(cid, "prompt")
                threading.Thread(target=self.run_prompt, args=(message,), daemon=True).start()
            elif kind == "extension_ui_response":
                self.answers.put((t_read, command, len(raw)))
            elif kind in ("abort", "steer", "follow_up", "set_session_name"):
                self.respond(cid, kind)
            else:
                self.send(
                    {
                        "id": cid,
                        "type": "response",
                        "command": kind,
                        "success": False,
                        "error": f"Unknown command: {kind}",
                    }
                )


def bare(path: str, report: str | None) -> None:
    """Write the stream to stdout with nothing else: the production-speed baseline."""
    out = sys.stdout.fileno()
    lines = _lines(path)
    t_first = time.monotonic()
    for line in lines:
        _write_all(out, line)
    t_last = time.monotonic()
    if report:
        with open(report, "a", encoding="utf-8") as f:
            f.write(
                json.dumps(
                    {
                        "kind": "bare",
                        "path": path,
                        "bytes": sum(map(len, lines)),
                        "lines": len(lines),
                        "t_first": t_first,
                        "t_last": t_last,
                    }
                )
                + "\n"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--report", help="append timing records (JSON lines) to this file")
    parser.add_argument("--bare", metavar="PATH", help="just write PATH to stdout and exit")
    args, _ignored = parser.parse_known_args()
    if args.bare:
        bare(args.bare, args.report)
        return
    StandIn(args.report).serve()


if __name__ == "__main__":
    main()
