"""The agent subprocess: a reader thread, a stderr drain, a serialised writer, an exit watcher.

This is the I/O layer. It knows bytes, pipes and processes: it hands each chunk the agent
writes on stdout to a callback (the client decodes it), writes lines to the agent's stdin in
order, and reports the exit. It knows nothing of messages, sessions, dialogs or widgets.
"""

from __future__ import annotations

import logging
import os
import queue
import shlex
import signal
import subprocess
import threading
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from atomic_jupyter.errors import AgentNotRunningError, AgentStartError

__all__ = ["AgentProcess", "Delivery"]

log = logging.getLogger(__name__)

READ_CHUNK = 1 << 16
#: Seconds an agent that closed its stdout gets to exit by itself before it is stopped.
MUTE_GRACE_S = 1.0
#: How much of the agent's stderr is kept (the tail; older bytes are dropped).
STDERR_TAIL_BYTES = 16 * 1024


@dataclass
class Delivery:
    """The fate of one line written to the agent's stdin.

    ``done`` is set once the line was written (``delivered`` True) or could not be
    (``delivered`` False, ``error`` says why).
    """

    payload: bytes
    done: threading.Event = field(default_factory=threading.Event)
    delivered: bool = False
    error: str | None = None

    def _finish(self, delivered: bool, error: str | None = None) -> None:
        self.delivered = delivered
        self.error = error
        self.done.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the line is written or has failed; return whether it was delivered."""
        self.done.wait(timeout)
        return self.delivered


_STOP = object()


class AgentProcess:
    """One agent process speaking JSONL on stdio.

    Parameters
    ----------
    argv:
        The full command line.
    on_data:
        Called on the reader thread with each chunk of bytes read from the agent's stdout.
    on_eof:
        Called on the reader thread once the agent's stdout has ended.
    on_exit:
        Called once, on the watcher thread, with the exit code, after every chunk the agent
        wrote before exiting has been handed to ``on_data`` (or after one second, if a
        child process keeps the agent's stdout open).
    cwd, env:
        Working directory and complete environment of the agent.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        on_data: Callable[[bytes], None],
        on_eof: Callable[[], None] | None = None,
        on_exit: Callable[[int], None] | None = None,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.argv = list(argv)
        self.cwd = cwd
        self.env = dict(env) if env is not None else None
        self._on_data = on_data
        self._on_eof = on_eof
        self._on_exit = on_exit
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr_tail: deque[bytes] = deque()
        self._stderr_size = 0
        self._stderr_lock = threading.Lock()
        self._writes: queue.Queue[Any] = queue.Queue()
        self._reader_done = threading.Event()
        self._exited = threading.Event()
        self._closing = False
        self._threads: list[threading.Thread] = []
        #: Set when the agent closed its stdout but kept running, and was stopped for it.
        self.closed_output = False

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Spawn the agent and its I/O threads.

        Raises
        ------
        AgentStartError
            When the executable is missing or cannot be run.
        """
        try:
            self._proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self.cwd,
                env=self.env,
                bufsize=0,
                # Its own process group: a kernel interrupt (SIGINT) does not reach the
                # agent, and stop() can end the agent's children with it.
                start_new_session=True,
            )
        except FileNotFoundError as exc:
            missing = exc.filename or self.argv[0]
            raise AgentStartError(
                f"could not start the agent: {missing!r} was not found.\n"
                f"Command: {shlex.join(self.argv)}\n"
                "Install the agent, or name it with --command, the AtomicAgent.command "
                "setting or $ATOMIC_AGENT_COMMAND."
            ) from None
        except (PermissionError, NotADirectoryError, OSError) as exc:
            raise AgentStartError(
                f"could not start the agent: {exc.strerror or exc}.\nCommand: {shlex.join(self.argv)}"
            ) from None
        for target, name in (
            (self._read_stdout, "stdout-reader"),
            (self._drain_stderr, "stderr-drain"),
            (self._write_stdin, "stdin-writer"),
            (self._watch_exit, "exit-watcher"),
        ):
            thread = threading.Thread(
                target=target, name=f"atomic-agent-{name}-{self.pid}", daemon=True
            )
            self._threads.append(thread)
            thread.start()

    @property
    def pid(self) -> int | None:
        """The agent's process id, or None before start."""
        return self._proc.pid if self._proc else None

    @property
    def returncode(self) -> int | None:
        """The exit code once the agent has exited, else None."""
        return self._proc.returncode if self._proc else None

    @property
    def alive(self) -> bool:
        """Whether the agent is running."""
        return self._proc is not None and not self._exited.is_set()

    def exited(self) -> bool:
        """Whether the process has ended (even if the exit watcher has not caught up yet)."""
        return self._proc is not None and self._proc.poll() is not None

    def wait_exit(self, timeout: float | None = None) -> bool:
        """Wait until the agent has exited and ``on_exit`` has run; return whether it did."""
        return self._exited.wait(timeout)

    def stop(self, grace: float = 2.0) -> int | None:
        """End the agent: close its stdin, then SIGTERM its process group, then SIGKILL.

        Returns the exit code (None if it could not be reaped, which should not happen).
        """
        proc = self._proc
        if proc is None:
            return None
        self._closing = True
        self._writes.put(_STOP)
        if not self._exited.is_set():
            for sig, wait in ((None, 0.5), (signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
                if sig is not None:
                    self._signal_group(sig)
                try:
                    proc.wait(timeout=wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
        else:
            # The agent itself has exited; its children may not have.
            self._signal_group(signal.SIGKILL)
        self._exited.wait(5.0)
        return proc.returncode

    def _signal_group(self, sig: int) -> None:
        assert self._proc is not None
        try:
            os.killpg(self._proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    # ------------------------------------------------------------------ writing

    def send(self, line: bytes) -> Delivery:
        """Queue one encoded line for the agent's stdin; never blocks.

        Raises
        ------
        AgentNotRunningError
            When the agent has exited or is being stopped.
        """
        if self._proc is None or self._exited.is_set() or self._closing:
            raise AgentNotRunningError("the agent is not running")
        delivery = Delivery(line)
        self._writes.put(delivery)
        return delivery

    def _write_stdin(self) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        stdin = self._proc.stdin
        broken: str | None = None
        while True:
            item = self._writes.get()
            if item is _STOP:
                break
            if broken is not None:
                item._finish(False, broken)
                continue
            try:
                view = memoryview(item.payload)
                while view:  # a raw pipe may take only part of a write
                    written = stdin.write(view)
                    view = view[written or 0 :]
                item._finish(True)
            except (BrokenPipeError, OSError, ValueError) as exc:
                broken = f"the agent's stdin is closed ({exc.__class__.__name__})"
                item._finish(False, broken)
        try:
            stdin.close()
        except OSError:
            pass
        # Anything queued after the stop is reported as undelivered.
        while True:
            try:
                item = self._writes.get_nowait()
            except queue.Empty:
                break
            if item is not _STOP:
                item._finish(False, "the agent was stopped")

    # ------------------------------------------------------------------ reading

    def _read_stdout(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        try:
            for chunk in _chunks(self._proc.stdout):
                self._hand_over(self._on_data, chunk)
            if self._on_eof is not None:
                self._hand_over(self._on_eof)
        finally:
            self._close_quietly(self._proc.stdout)
            self._reader_done.set()
        if not self._closing and self._proc.poll() is None:
            # Output closed but still running: it can never answer again, so end it.
            threading.Thread(
                target=self._end_mute_agent, name="atomic-agent-mute", daemon=True
            ).start()

    def _end_mute_agent(self) -> None:
        assert self._proc is not None
        try:
            self._proc.wait(MUTE_GRACE_S)
            return  # it was exiting anyway
        except subprocess.TimeoutExpired:
            pass
        self.closed_output = True
        for sig, wait in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 5.0)):
            self._signal_group(sig)
            try:
                self._proc.wait(wait)
                return
            except subprocess.TimeoutExpired:
                continue

    @staticmethod
    def _hand_over(callback: Callable[..., None], *args: Any) -> None:
        try:
            callback(*args)
        except Exception:  # a bug in a handler must not stop the stream
            log.exception("atomic-jupyter: error while handling the agent's output")

    def _drain_stderr(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        for chunk in _chunks(self._proc.stderr):
            with self._stderr_lock:
                self._stderr_tail.append(chunk)
                self._stderr_size += len(chunk)
                while self._stderr_size - len(self._stderr_tail[0]) >= STDERR_TAIL_BYTES:
                    self._stderr_size -= len(self._stderr_tail.popleft())
        self._close_quietly(self._proc.stderr)

    @staticmethod
    def _close_quietly(stream: Any) -> None:
        try:
            stream.close()
        except OSError:
            pass

    def stderr_tail(self, max_chars: int = 4000) -> str:
        """The last part of what the agent wrote on stderr, as text."""
        with self._stderr_lock:
            data = b"".join(self._stderr_tail)
        text = data.decode("utf-8", "replace")
        return text[-max_chars:]

    # ------------------------------------------------------------------ exit

    def _watch_exit(self) -> None:
        assert self._proc is not None
        code = self._proc.wait()
        # Let the reader hand over what the agent wrote before it died; a grandchild that
        # inherited stdout may keep the pipe open, so do not wait for it forever.
        self._reader_done.wait(1.0)
        self._writes.put(_STOP)
        for thread in self._threads:
            if thread.name.startswith("atomic-agent-stderr"):
                thread.join(0.5)
        try:
            if self._on_exit is not None:
                self._on_exit(code)
        except Exception:
            log.exception("atomic-jupyter: error while handling the agent's exit")
        finally:
            self._exited.set()


def _chunks(stream: Any) -> Iterator[bytes]:
    """Chunks read from a pipe as they come, until end of file or a read error."""
    fd = stream.fileno()
    while True:
        try:
            chunk = os.read(fd, READ_CHUNK)
        except OSError:
            return
        if not chunk:
            return
        yield chunk
