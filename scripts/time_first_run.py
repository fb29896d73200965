#!/usr/bin/env python3
"""Time a first ``make lab``: how long until it prints the URL, and the longest silence.

Run it on a fresh clone (nothing installed in it yet)::

    git clone -q . /tmp/lab1 && python3 scripts/time_first_run.py /tmp/lab1

It runs ``make lab`` there in a session of its own, prints each output line with the seconds
since the start (a carriage-return redraw counts as a line: it is what a terminal shows), and
once the URL line appears waits for the server to answer on it, then stops everything it
started (SIGTERM to the session, SIGKILL after 15 s) and prints:

- seconds to the URL line (the banner's ``http://127.0.0.1:PORT/...``),
- seconds until the server answers on that URL (``/api/status``),
- the longest silent gap before the URL line (from the start to the first line included), and
  the line that ended it.

Only the standard library: it runs with the system Python, before the clone has a venv.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

URL = re.compile(r"http://127\.0\.0\.1:(\d+)/\S*?token=([0-9A-Za-z]+)")


def session_pids(sid: int) -> list[int]:
    """The processes of session ``sid`` (Linux /proc): kernels the server started sit in their
    own process group but in the same session."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # state, ppid, pgrp, session, ...
        if int(fields[3]) == sid and fields[0] != "Z":  # a zombie is gone but for its parent
            pids.append(int(entry.name))
    return pids


def stop_session(sid: int) -> list[int]:
    """SIGTERM every process of the session, SIGKILL what is left after 15 s; the pids that
    needed SIGKILL."""
    for pid in session_pids(sid):
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 15
    while session_pids(sid) and time.monotonic() < deadline:
        time.sleep(0.2)
    killed = session_pids(sid)
    for pid in killed:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return killed


def answers(port: str, token: str) -> bool:
    try:
        with urllib.request.urlopen(
            f"http://127.0.0.1:{port}/api/status?token={token}", timeout=2
        ) as reply:
            return bool(reply.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def main() -> int:
    top = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    top.add_argument("clone", type=Path, help="a fresh clone of the repository")
    top.add_argument("--target", default="lab", help="the make target (default: lab)")
    top.add_argument("--timeout", type=float, default=900, help="give up after this many s")
    top.add_argument("--quiet", action="store_true", help="print only the summary")
    top.add_argument("--json", type=Path, help="also write the figures (and lines) here")
    args = top.parse_args()
    clone = args.clone.resolve()
    if not (clone / "Makefile").is_file():
        top.error(f"{clone} has no Makefile")
    if (clone / ".venv").exists() or (clone / ".agents").exists():
        print(f"warning: {clone} has a .venv or .agents: not a first run", file=sys.stderr)

    start = time.monotonic()
    proc = subprocess.Popen(
        ["make", args.target],
        cwd=clone,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    assert proc.stdout is not None
    lines: list[tuple[float, str]] = []
    found = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        pending = b""
        while chunk := os.read(proc.stdout.fileno(), 65536):
            pending += chunk
            *whole, pending = re.split(rb"\r\n|\r|\n", pending)
            now = time.monotonic() - start
            for raw in whole:
                text = raw.decode(errors="replace")
                lines.append((now, text))
                if not args.quiet:
                    print(f"[{now:6.1f} s] {text}", flush=True)
                if URL.search(text):
                    found.set()
        if pending:
            lines.append((time.monotonic() - start, pending.decode(errors="replace")))
        found.set()  # the end of the output: no URL is coming

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    found.wait(args.timeout)
    url_at = ready_at = None
    url_line = next(((t, text) for t, text in lines if URL.search(text)), None)
    if url_line is not None:
        url_at = url_line[0]
        match = URL.search(url_line[1])
        assert match is not None
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            if answers(match.group(1), match.group(2)):
                ready_at = time.monotonic() - start
                break
            time.sleep(0.1)
    killed = stop_session(proc.pid)
    proc.wait()
    reader.join(5)

    upto = [t for t, text in lines if url_at is None or t <= url_at]
    stamps = [0.0, *upto]
    gaps = [(b - a, i) for i, (a, b) in enumerate(zip(stamps, stamps[1:], strict=False))]
    gap, gap_index = max(gaps, default=(0.0, 0))
    print()
    print(f"make {args.target} in {clone}")
    if url_at is None:
        print(f"  no URL line (make exited {proc.returncode}); last lines:")
        for t, text in lines[-15:]:
            print(f"  [{t:6.1f} s] {text}")
    else:
        print(f"  seconds to the URL line:          {url_at:6.1f}")
        if ready_at is not None:
            print(f"  seconds until the server answers: {ready_at:6.1f}")
        else:
            print("  the server did not answer within 120 s")
    ended = lines[gap_index][1] if lines else ""
    print(f"  longest silent gap before it:     {gap:6.1f}  (ended by: {ended.strip()[:70]!r})")
    print(f"  output lines before it:           {len(upto):6d}")
    if killed:
        print(f"  needed SIGKILL: {killed}")
    if args.json:
        figures = {
            "clone": str(clone),
            "target": args.target,
            "seconds_to_url": url_at,
            "seconds_to_answer": ready_at,
            "longest_gap": gap,
            "gap_ended_by": ended,
            "lines": lines,
        }
        args.json.write_text(json.dumps(figures, indent=1))
    return 0 if url_at is not None else 1


if __name__ == "__main__":
    sys.exit(main())
