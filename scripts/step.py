#!/usr/bin/env python3
"""Run one set-up step and show that it is alive: ``scripts/step.py [--pip] NAME COMMAND...``.

Prints ``==> NAME`` and the command, then the command's output (stdout and stderr) indented, a
heartbeat line ``… still NAME (20 s)`` whenever the command has said nothing for 5 s, and at the
end how long the step took (or that it failed, with the command's exit status, which is also
ours).

``--pip`` shortens pip's output to what a person reads: its ``Collecting ...`` and
``Processing ...`` lines become a count every few seconds, ``Installing collected packages:
...`` (one very long line) and ``Successfully installed ...`` the number of packages, and the
downloads' bars go; uv's (``uv pip install``) keeps its summary lines (``Resolved 181 packages
in 2.3s``) but not its line per package (`` + name==version``); anything else (warnings,
errors) is shown as written. ``--log FILE`` keeps the command's whole output there.

Only the standard library: ``make`` runs it with the system Python, before the venv exists.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
import threading
import time
from typing import TextIO

#: Seconds of silence before "… still ..." (STEP_HEARTBEAT: the tests of this script say it
#: sooner).
HEARTBEAT = float(os.environ.get("STEP_HEARTBEAT", "5"))
PIP_NOISE = re.compile(
    r"\s*(Using cached|Downloading|Processing|Obtaining|Requirement already satisfied|"
    r"Installing build dependencies|Checking if build backend|Getting requirements|"
    r"Preparing (editable )?metadata|Building (editable|wheel)|Created wheel|Stored in directory|"
    r"Attempting uninstall|Found existing installation|Uninstalling|Successfully uninstalled|"
    r"Successfully built|Looking in indexes|Looking in links|"
    r"[━╸╺─ ]+ \S+/\S+ |"  # a download's bar: one per file, and without the file's name
    r"[-+~] \S+==|Using Python \S+ environment at)"  # uv: a package it added or removed
)


class Shower:
    """Writes the step's lines, indented, and remembers when it last wrote one."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.lock = threading.Lock()
        self.last = time.monotonic()

    def line(self, text: str) -> None:
        with self.lock:
            self.out.write(f"    {text}\n")
            self.out.flush()
            self.last = time.monotonic()


class PipFilter:
    """pip's lines to a few: the count of packages collected (every 3 s at most), then how
    many it installs and installed; everything else unchanged."""

    def __init__(self, show: Shower) -> None:
        self.show = show
        self.collected = 0
        self.latest = ""
        self.said = 0.0
        self.told = 0

    def __call__(self, text: str) -> None:
        if text.startswith(("Collecting ", "Processing ")):  # from an index, or a local file
            self.collected += 1
            name = os.path.basename(text.split()[1])  # a requirement, or a wheel's path
            self.latest = re.split(r"[-<>=!~;\[]", name)[0]
            if time.monotonic() - self.said >= 3:
                self.tell()
        elif text.startswith("Installing collected packages:"):
            self.tell()
            names = text.split(":", 1)[1].split(",")
            self.show.line(f"unpacking and installing {packages(len(names))}")
        elif text.startswith("Successfully installed "):
            installed = text.split()[2:]
            which = installed[0] if len(installed) == 1 else packages(len(installed))
            self.show.line(f"installed {which}")
        elif not PIP_NOISE.match(text) and text.strip():
            self.show.line(text)

    def tell(self) -> None:
        if self.collected > self.told:
            self.show.line(f"found {packages(self.collected)} so far (latest: {self.latest})")
            self.told = self.collected
            self.said = time.monotonic()


def packages(count: int) -> str:
    return f"{count} package" if count == 1 else f"{count} packages"


def seconds(took: float) -> str:
    return f"{took:.1f} s" if took < 10 else f"{took:.0f} s"


def main() -> int:
    top = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    top.add_argument("--pip", action="store_true", help="shorten pip's output")
    top.add_argument("--log", help="write the command's whole output to this file")
    top.add_argument("name", help='what the step does, e.g. "installing JupyterLab"')
    top.add_argument("command", nargs=argparse.REMAINDER)
    args = top.parse_args()
    if not args.command:
        top.error("no command")
    out = sys.stdout
    show = Shower(out)
    title = args.name[0].upper() + args.name[1:]
    out.write(f"==> {title}\n    $ {shlex.join(args.command)}\n")
    out.flush()
    start = time.monotonic()
    child = subprocess.Popen(
        args.command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert child.stdout is not None
    log = open(args.log, "wb") if args.log else None  # noqa: SIM115 (closed below)
    handle = PipFilter(show) if args.pip else show.line
    done = threading.Event()

    def beat() -> None:
        while not done.wait(0.5):
            now = time.monotonic()
            if now - show.last >= HEARTBEAT:
                show.line(f"… still {args.name} ({now - start:.0f} s)")

    threading.Thread(target=beat, daemon=True).start()
    try:
        for raw in child.stdout:
            if log is not None:
                log.write(raw)
            for text in re.split(r"\r", raw.decode(errors="replace").rstrip("\r\n")):
                handle(text.rstrip())
        status = child.wait()
    except KeyboardInterrupt:  # Ctrl-C reached the command too: let it stop, then say so
        status = child.wait() or 130
    done.set()
    if status < 0:  # killed by a signal: the shell's way of saying so
        status = 128 - status
    if log is not None:
        log.close()
    took = seconds(time.monotonic() - start)
    if status == 0:
        out.write(f"    done in {took}\n")
    else:
        where = f"; its whole output is in {args.log}" if args.log else ""
        out.write(f"==> {title}: failed after {took} (exit status {status}){where}\n")
    out.flush()
    return status


if __name__ == "__main__":
    sys.exit(main())
