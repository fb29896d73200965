"""The agent subprocess: a reader thread, a stderr drain, a serialised writer, an exit watcher.

This is the I/O layer. It knows bytes, pipes and processes: it hands each chunk the agent
writes on stdout to a callback (the client decodes it), writes lines to the agent's stdin in
order, reports the exit, and ends the agent's whole process tree. It knows nothing of
messages, sessions, dialogs or widgets.

How the agent's whole process tree is ended: :mod:`atomic_jupyter.transport.process_tree`;
what a delivered line is: :mod:`atomic_jupyter.transport.delivery`.
"""

from __future__ import annotations

import logging
import os
import queue
import select
import shlex
import signal
import subprocess
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from atomic_jupyter.errors import AgentNotRunningError, AgentStartError
from atomic_jupyter.transport.delivery import Delivery, PipeCount
from atomic_jupyter.transport.process_tree import (
    TREE_DEADLINE_S,
    TREE_ENV,
    end_tree,
)
from atomic_jupyter.transport.reader_turns import DEFAULT_TURN_S, ReaderTurns

__all__ = ["AgentProcess", "Delivery"]

log = logging.getLogger(__name__)

READ_CHUNK = 1 << 16
#: Seconds an agent that closed its stdout gets to exit by itself before it is stopped.
MUTE_GRACE_S = 1.0
#: How much of the agent's stderr is kept (the tail; older bytes are dropped).
STDERR_TAIL_BYTES = 16 * 1024

_STOP = object()

#: Lines up to this size (the pipe's atomic write size) are written at once by the thread
#: that sends them, when nothing is queued ahead and the pipe has room (see ``send``).
FAST_WRITE_MAX = getattr(select, "PIPE_BUF", 512)


class AgentProcess:
    """One agent process speaking JSONL on stdio, and the processes it starts.

    Threads: a stdout reader, a stderr drain, a stdin writer (it writes what is queued, in
    order, and counts it; a short line with nothing queued ahead of it is written at once by
    the thread sending it, see :meth:`send`), and an exit watcher, which, once the agent has exited, ends what is left of
    its tree (on a thread of its own, at once) and then reports the exit.

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
        child process keeps the agent's stdout open). By then whether a written line was
        delivered is final (see :class:`Delivery`); lines still queued are settled by the
        writer right after.
    cwd, env:
        Working directory and complete environment of the agent (the agent also gets
        :data:`TREE_ENV`).
    reader_turn_s:
        While the agent writes faster than it is read, the reader lets the kernel's own
        thread run at least this often (:class:`~atomic_jupyter.transport.reader_turns.ReaderTurns`).
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
        reader_turn_s: float = DEFAULT_TURN_S,
    ) -> None:
        self.argv = list(argv)
        #: When the reader lets the kernel's own thread run (see ``reader_turns``).
        self.reader_turns = ReaderTurns(reader_turn_s)
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
        # Guards ``_queued``: items put in ``_writes`` and not yet handled by the writer (a
        # queued stop is never handled away, so nothing is written directly after one).
        self._order = threading.Lock()
        self._queued = 0
        self._writer_done = threading.Event()
        self._count: PipeCount | None = None
        self._reader_done = threading.Event()
        self._reaped = threading.Event()
        self._reaped_at: float | None = None
        self._exited = threading.Event()
        self._tree_lock = threading.Lock()
        self._closing = False
        self._threads: list[threading.Thread] = []
        #: The value of :data:`TREE_ENV` in the agent's environment (its tree's mark).
        self.tree_id = f"{os.getpid()}-{uuid.uuid4().hex}"
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
        env = dict(os.environ if self.env is None else self.env)
        env[TREE_ENV] = self.tree_id
        try:
            self._proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self.cwd,
                env=env,
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
        self._count = PipeCount(self._proc.stdin, self._reaped.is_set)
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
        return self._proc is not None and (self._reaped.is_set() or self._proc.poll() is not None)

    def wait_exit(self, timeout: float | None = None) -> bool:
        """Wait until the agent has exited and ``on_exit`` has run; return whether it did."""
        return self._exited.wait(timeout)

    def stop(self, grace: float = 2.0) -> int | None:
        """End the agent and what is left of its process tree.

        SIGTERM to the agent alone (both agent lines then kill their tools' process groups
        and exit); if it still runs after ``grace`` seconds its stdin is closed, 0.5 s later
        its group gets SIGTERM, 1 s later SIGKILL. Once it has exited (now or before), what
        is left of its tree (see the module's notes) gets SIGTERM, then SIGKILL, within
        :data:`TREE_DEADLINE_S`. An idle agent is gone in a few tens of milliseconds.

        Parameters
        ----------
        grace:
            Seconds the agent gets to clean up and exit after SIGTERM.

        Returns
        -------
        int or None
            The exit code (143 for an agent line that exits on SIGTERM); None if the agent
            could not be reaped, which should not happen.
        """
        proc = self._proc
        if proc is None:
            return None
        self._closing = True
        self._terminate(grace)
        self._enqueue(_STOP)  # the agent has exited: the writer counts, then closes stdin
        if self._reaped.is_set():
            self._end_tree()
        self._exited.wait(5.0)
        return proc.returncode

    def _terminate(self, grace: float) -> None:
        """Ask the agent to exit, then make it: SIGTERM to it, stdin closed, SIGTERM and
        SIGKILL to its group; each step only while it has not exited."""
        steps: tuple[tuple[Callable[[], None], float], ...] = (
            (lambda: self._signal_agent(signal.SIGTERM), grace),
            (lambda: self._enqueue(_STOP), 0.5),  # an agent that ends at end of input
            (lambda: self._signal_group(signal.SIGTERM), 1.0),
            (lambda: self._signal_group(signal.SIGKILL), 5.0),
        )
        for step, wait in steps:
            if self._reaped.is_set():
                return
            step()
            if self._reaped.wait(wait):
                return

    def _signal_agent(self, sig: int) -> None:
        assert self._proc is not None
        if self._reaped.is_set():  # its pid may belong to another process now
            return
        try:
            os.kill(self._proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def _signal_group(self, sig: int) -> None:
        assert self._proc is not None
        if self._reaped.is_set():  # the group may be gone, its id taken: see _end_tree
            return
        try:
            os.killpg(self._proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def _end_tree(self) -> bool:
        """End what is left of the exited agent's tree (see
        :func:`~atomic_jupyter.transport.process_tree.end_tree`)."""
        assert self._proc is not None
        soon = self._reaped_at is not None and (
            time.monotonic() - self._reaped_at < 2 * TREE_DEADLINE_S
        )
        return end_tree(self._proc.pid, self.tree_id, soon, self._tree_lock)

    # ------------------------------------------------------------------ writing

    def send(self, line: bytes) -> Delivery:
        """Write one encoded line to the agent's stdin, or queue it; never blocks.

        A line of at most :data:`FAST_WRITE_MAX` bytes with nothing queued ahead of it is
        written at once, on the calling thread, when the pipe takes it whole without waiting
        (a dialog's answer is on the agent's stdin before the click's view work starts).
        Anything else goes to the writer thread, which writes in order; the order of lines
        is the order of ``send`` calls either way.

        Raises
        ------
        AgentNotRunningError
            When the agent has exited or is being stopped.
        """
        if self._proc is None or self._exited.is_set() or self._closing:
            raise AgentNotRunningError("the agent is not running")
        delivery = Delivery(line, self._count)
        with self._order:
            if self._queued == 0 and len(line) <= FAST_WRITE_MAX and self._write_now(delivery):
                return delivery
            self._queued += 1
            self._writes.put(delivery)
        if self._writer_done.is_set():  # the writer has closed stdin: nothing more is written
            self._fail_queued()
        return delivery

    def _enqueue(self, item: Any) -> None:
        with self._order:
            self._queued += 1
            self._writes.put(item)

    def _write_now(self, delivery: Delivery) -> bool:
        """Write ``delivery`` whole without waiting, if the pipe has room; return whether it
        was. Called under ``_order`` with nothing queued, so the writer thread is not writing
        and stdin is open (it is closed only after a queued stop)."""
        assert self._proc is not None and self._proc.stdin is not None
        assert self._count is not None
        try:
            fd = self._proc.stdin.fileno()
            os.set_blocking(fd, False)
            try:
                # At most PIPE_BUF bytes: the pipe takes all of them or none.
                written = os.write(fd, delivery.payload)
            finally:
                os.set_blocking(fd, True)
        except (OSError, ValueError):
            return False  # full (or broken: the writer finds out and says so)
        if written != len(delivery.payload):  # pragma: no cover - PIPE_BUF writes are atomic
            delivery.sent = written
            self._count.add(written)
            return False
        delivery._written(self._count.add(written))
        return True

    def _fail_queued(self) -> None:
        """Settle every line still queued as not written (the writer has ended)."""
        while True:
            try:
                item = self._writes.get_nowait()
            except queue.Empty:
                return
            if item is not _STOP:
                item._fail("the agent was stopped")

    def _write_stdin(self) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        assert self._count is not None
        stdin, count = self._proc.stdin, self._count
        broken: str | None = None
        while True:
            item = self._writes.get()
            if item is _STOP:
                break
            if broken is not None:
                item._fail(broken)
            else:
                try:
                    view = memoryview(item.payload)[item.sent :]
                    while view:  # a raw pipe may take only part of a write
                        written = stdin.write(view) or 0
                        count.add(written)
                        view = view[written:]
                    item._written(count.written)
                except (BrokenPipeError, OSError, ValueError) as exc:
                    broken = f"the agent's stdin is closed ({exc.__class__.__name__})"
                    item._fail(broken)
            with self._order:
                self._queued -= 1
        # The final count: the agent has exited (or is being made to) and reads no more.
        count.settle()
        # Anything queued after the stop is reported as not written (send() does the same
        # for what comes later).
        self._writer_done.set()
        self._fail_queued()

    # ------------------------------------------------------------------ reading

    def _read_stdout(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        try:
            turns = self.reader_turns
            for chunk in _chunks(self._proc.stdout):
                self._hand_over(self._on_data, chunk)
                turns.after_chunk()
            if self._on_eof is not None:
                self._hand_over(self._on_eof)
        finally:
            self._close_quietly(self._proc.stdout)
            self._reader_done.set()
        if not self._closing and not self.exited():
            # Output closed but still running: it can never answer again, so end it.
            threading.Thread(
                target=self._end_mute_agent, name="atomic-agent-mute", daemon=True
            ).start()

    def _end_mute_agent(self) -> None:
        if self._reaped.wait(MUTE_GRACE_S):
            return  # it was exiting anyway
        self.closed_output = True
        self._terminate(grace=2.0)  # the watcher ends the rest of the tree

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
        self._reaped_at = time.monotonic()
        self._reaped.set()
        # What the agent leaves behind goes at once (a crash leaves its tools running, and
        # a child holding its stdout or stdin open would hold up the reader and the writer).
        tree = threading.Thread(
            target=self._end_tree, name=f"atomic-agent-tree-{self._proc.pid}", daemon=True
        )
        tree.start()
        # Let the reader hand over what the agent wrote before it died; a grandchild that
        # inherited stdout may keep the pipe open, so do not wait for it forever.
        self._reader_done.wait(1.0)
        self._enqueue(_STOP)  # the writer takes the final count and closes stdin
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
