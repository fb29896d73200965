#!/usr/bin/env python3
"""Run one set-up step and show that it is alive: ``scripts/step.py [--pip] NAME COMMAND...``.

Prints ``==> NAME`` and the command, then the command's output (stdout and stderr) indented, a
heartbeat line ``… still NAME (20 s)`` whenever the command has said nothing for 5 s, and at the
end how long the step took (or that it failed, with the command's exit status, which is also
ours).

``--beside NAME2 'COMMAND LINE'`` (repeatable) runs a shell command line at the same time, as a
step of its own that shares the machine (one waiting on the network or the disk while the
other computes): its output is kept while the first step runs, then shown after it under its
own ``==> NAME2``, and from then on as it comes, with its heartbeat and its time. Our exit
status is the first failed step's.

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
import queue
import re
import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Callable
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
    """Writes the step's lines, indented."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.lock = threading.Lock()

    def line(self, text: str) -> None:
        with self.lock:
            self.out.write(f"    {text}\n")
            self.out.flush()

    def raw(self, text: str) -> None:
        with self.lock:
            self.out.write(f"{text}\n")
            self.out.flush()


class Running:
    """A step's command, started: its output's lines (split at carriage returns too) come
    through :attr:`lines` as they are written, then None once it has closed its output."""

    def __init__(self, name: str, argv: list[str], log: str | None = None) -> None:
        self.name = name
        self.argv = argv
        self.start = time.monotonic()
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.child = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        self.log = log
        #: When its output closed (it has ended, or is about to).
        self.ended: float | None = None
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.child.stdout is not None
        log = open(self.log, "wb") if self.log else None  # noqa: SIM115 (closed below)
        try:
            for raw in self.child.stdout:
                if log is not None:
                    log.write(raw)
                for text in re.split(r"\r", raw.decode(errors="replace").rstrip("\r\n")):
                    self.lines.put(text.rstrip())
        finally:
            if log is not None:
                log.close()
            self.ended = time.monotonic()
            self.lines.put(None)

    def follow(self, show: Shower, handle: Callable[[str], None]) -> int:
        """Pass each line to ``handle`` as it comes, with a heartbeat whenever the command has
        said nothing for :data:`HEARTBEAT` seconds; its exit status once it has ended."""
        last = time.monotonic()
        try:
            while True:
                try:
                    text = self.lines.get(timeout=0.5)
                except queue.Empty:
                    now = time.monotonic()
                    if now - last >= HEARTBEAT:
                        show.line(f"… still {self.name} ({now - self.start:.0f} s)")
                        last = now
                    continue
                if text is None:
                    break
                handle(text)
                last = time.monotonic()
            status = self.child.wait()
        except KeyboardInterrupt:  # Ctrl-C reached the command too: let it stop, then say so
            status = self.child.wait() or 130
        if status < 0:  # killed by a signal: the shell's way of saying so
            status = 128 - status
        return status


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


def title_of(name: str) -> str:
    return name[0].upper() + name[1:]


def finish(show: Shower, step: Running, status: int, log: str | None = None) -> None:
    """Say how long the step took, or that it failed."""
    took = seconds((step.ended or time.monotonic()) - step.start)
    if status == 0:
        show.line(f"done in {took}")
    else:
        where = f"; its whole output is in {log}" if log else ""
        show.raw(f"==> {title_of(step.name)}: failed after {took} (exit status {status}){where}")


def main() -> int:
    top = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    top.add_argument("--pip", action="store_true", help="shorten pip's output")
    top.add_argument("--log", help="write the command's whole output to this file")
    top.add_argument(
        "--beside",
        nargs=2,
        action="append",
        default=[],
        metavar=("NAME", "COMMAND_LINE"),
        help="a shell command line run at the same time, shown after the step as its own",
    )
    top.add_argument("name", help='what the step does, e.g. "installing JupyterLab"')
    top.add_argument("command", nargs=argparse.REMAINDER)
    args = top.parse_args()
    if not args.command:
        top.error("no command")
    show = Shower(sys.stdout)
    show.raw(f"==> {title_of(args.name)}")
    show.line(f"$ {shlex.join(args.command)}")
    besides = [Running(name, ["sh", "-c", line]) for name, line in args.beside]
    step = Running(args.name, args.command, args.log)
    handle = PipFilter(show) if args.pip else show.line
    status = step.follow(show, handle)
    finish(show, step, status, args.log)
    for beside in besides:
        show.raw(f"==> {title_of(beside.name)} (beside the step above)")
        show.line(f"$ {beside.argv[-1]}")
        ended = beside.follow(show, show.line)
        finish(show, beside, ended)
        status = status or ended
    return status


if __name__ == "__main__":
    sys.exit(main())
