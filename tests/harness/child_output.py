"""A child process's stdout, read line by line on a thread, with deadlines (no sleeps)."""

from __future__ import annotations

import queue
import subprocess
import threading
import time


class ChildOutput:
    """Reads ``process``'s stdout (text mode) as it comes; ``next_line`` and ``until`` wait for
    it with a deadline."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        self.process = process
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def next_line(self, timeout: float = 30) -> str:
        """The next line; fails when the output ends or nothing comes for ``timeout`` s."""
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"the child said nothing for {timeout} s") from None
        if line is None:
            raise AssertionError("the child's output ended")
        self.seen.append(line)
        return line

    def until(self, text: str, timeout: float) -> str:
        """The first line holding ``text``; fails when output ends or ``timeout`` passes."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self.next_line(left)
            except AssertionError:
                break
            if text in line:
                return line
        raise AssertionError(f"no line with {text!r} in:\n" + "\n".join(self.seen))
