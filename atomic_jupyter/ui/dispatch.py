"""Running widget updates on the kernel's thread, never on another one.

ipywidgets must be built and changed where the kernel can send their comm messages: the
kernel's asyncio loop on the main thread. The agent's messages arrive on a reader thread
(and a dialog's countdown on the ticker thread), so widget work is handed to that loop with
``call_soon_threadsafe`` and runs while the kernel is idle (ARCHITECTURE.md, "Which thread
may touch what").

The rules of threads are written in one place, ARCHITECTURE.md ("Which thread may touch
what"); this module carries them out.

A :class:`UiDispatcher` knows its *kernel thread*: the one it was made for, or else the thread
whose event loop it captured (before any capture, the thread that made it: in a kernel, the
main thread, in a cell). Work asked for on that thread runs at once. Work asked for on any other thread is
queued and runs on the kernel thread: through the loop when one was captured, else at the
next :meth:`UiDispatcher.pump` or :meth:`UiDispatcher.flush` there (a blocking wait pumps;
tests pump). It never runs inline on the thread that asked.

Work queued from another thread with no loop to run it is logged, once per kind of work.
Running queued work off the kernel thread (``flush`` or ``pump`` called on another thread)
is refused: in use it is logged, once, and the work stays queued; in strict mode (tests:
:attr:`UiDispatcher.strict`, or ``ATOMIC_JUPYTER_STRICT_THREADS=1``) it raises
:class:`OffThreadWidgetWork` and is listed in :data:`refused`, which the test suite's thread
guard turns into a failure.

The exceptions to "widgets only on the kernel thread" (three, all while a cell keeps the loop
from running, listed in ARCHITECTURE.md) each render an output under that output's own lock
(:class:`~atomic_jupyter.ui.output_base.OutputBase`), inside :func:`thread_safe_update`, which
the test suite's guard respects.

A batch of queued work interrupted part way (a ``KeyboardInterrupt`` raised by one piece, as
an interrupted kernel call re-raises it) keeps the rest: it is queued again, in order, and
runs at the next flush.

Updates are coalesced: many requests for the same refresh before the loop gets to it
become one refresh, so a flood of status updates costs the frontend a few messages.
Throttled calls (:meth:`UiDispatcher.call_throttled`) run at most once per interval per key,
for streams such as a transcript that changes thousands of times a second.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from typing import ClassVar

__all__ = [
    "STRICT_ENV",
    "OffThreadWidgetWork",
    "UiDispatcher",
    "in_thread_safe_update",
    "refused",
    "thread_safe_update",
]

log = logging.getLogger(__name__)

#: The environment variable that turns on strict mode when set to ``"1"`` (the tests set it).
STRICT_ENV = "ATOMIC_JUPYTER_STRICT_THREADS"

#: What strict dispatchers refused (newest last, at most :data:`REFUSED_KEPT`); the test
#: suite's thread guard fails a test that leaves anything here.
refused: list[str] = []
#: How many refusals :data:`refused` keeps.
REFUSED_KEPT = 50

_refused_lock = threading.Lock()
_local = threading.local()


class OffThreadWidgetWork(RuntimeError):
    """Widget work was asked to run on a thread that is not the kernel's (strict mode)."""


@contextlib.contextmanager
def thread_safe_update() -> Iterator[None]:
    """Mark widget work done on another thread in the documented thread-safe way.

    Only while a cell keeps the kernel's loop from running, under the lock of the widgets'
    owner: a live output's trait change (``%atomic_agent bash``), and a waiting kernel call's
    render (:meth:`~atomic_jupyter.ui.session_view.SessionView.render_while_busy`), which may
    build, change and close the widgets of the runs it shows. The test suite's thread guard
    allows widget work inside this block and nothing else off the kernel's thread.

    Yields
    ------
    None
        Inside the block, :func:`in_thread_safe_update` is true on this thread.
    """
    depth = getattr(_local, "depth", 0)
    _local.depth = depth + 1
    try:
        yield
    finally:
        _local.depth = depth


def in_thread_safe_update() -> bool:
    """Whether the calling thread is inside :func:`thread_safe_update`.

    Returns
    -------
    bool
        True inside the block.
    """
    return getattr(_local, "depth", 0) > 0


def _kind(func: Callable[[], None]) -> str:
    """A short name for a piece of work (the function a ``partial`` wraps), for the log."""
    while isinstance(func, functools.partial):
        func = func.func
    return getattr(func, "__qualname__", None) or type(func).__name__


class UiDispatcher:
    """Runs widget work on the kernel's thread: at once there, queued from anywhere else.

    Attributes
    ----------
    errors:
        The last 50 failures of widget work (one failing update must not stop the others).
    """

    #: Refuse (raise) instead of logging when work would run off the kernel thread; ``None``
    #: means: strict when ``ATOMIC_JUPYTER_STRICT_THREADS=1`` (see :data:`STRICT_ENV`).
    strict: ClassVar[bool | None] = None

    def __init__(self, kernel_thread: threading.Thread | None = None) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        #: Given: the kernel thread is that one for good (a loop is captured only there).
        self._bound = kernel_thread
        self._kernel_thread = kernel_thread or threading.current_thread()
        self._lock = threading.Lock()
        self._work_queued = threading.Condition(self._lock)
        self._scheduled: dict[Hashable, Callable[[], None]] = {}
        self._flush_pending = False
        self._throttled: dict[Hashable, tuple[Callable[[], None], float]] = {}
        self._last_run: dict[Hashable, float] = {}
        self._armed: set[Hashable] = set()
        self._logged: set[tuple[str, str]] = set()
        self.errors: list[str] = []

    # ------------------------------------------------------------------ the kernel thread

    @classmethod
    def is_strict(cls) -> bool:
        """Whether dispatchers refuse off-thread widget work by raising.

        Returns
        -------
        bool
            :attr:`strict` when set, else whether ``ATOMIC_JUPYTER_STRICT_THREADS`` is ``"1"``.
        """
        if cls.strict is not None:
            return cls.strict
        return os.environ.get(STRICT_ENV) == "1"

    def capture_loop(self) -> None:
        """Remember the running event loop of the calling thread, if any; that thread becomes
        the kernel thread (in a kernel: the main thread, in a cell). A dispatcher made for a
        given kernel thread captures only that thread's loop."""
        if self._bound is not None and threading.current_thread() is not self._bound:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._loop = loop
        self._kernel_thread = threading.current_thread()

    @property
    def has_loop(self) -> bool:
        """Whether work is handed to a kernel event loop."""
        return self._loop is not None and not self._loop.is_closed()

    @property
    def kernel_thread(self) -> threading.Thread:
        """The thread where widget work runs."""
        return self._kernel_thread

    def on_kernel_thread(self) -> bool:
        """Whether the calling thread is the kernel thread.

        Returns
        -------
        bool
            True on the thread whose loop was captured (or that made the dispatcher).
        """
        return threading.current_thread() is self._kernel_thread

    @property
    def pending(self) -> bool:
        """Whether any work waits to run (queued or throttled)."""
        with self._lock:
            return bool(self._scheduled or self._throttled)

    def wait_for_work(self, timeout: float) -> bool:
        """Block until some work waits to run, or ``timeout`` seconds passed.

        For the kernel thread while it cannot run its loop (a blocking wait, a test): wait
        here, then :meth:`pump`.

        Parameters
        ----------
        timeout : float
            Seconds to wait at most.

        Returns
        -------
        bool
            Whether work is waiting.
        """
        with self._work_queued:
            return self._work_queued.wait_for(
                lambda: bool(self._scheduled or self._throttled), timeout
            )

    # ------------------------------------------------------------------ calls

    def call(self, func: Callable[[], None], key: Hashable | None = None) -> None:
        """Run ``func`` on the kernel thread: now when called there, else queued for it.

        Calls with the same ``key`` that are still waiting are merged into the last one.

        Parameters
        ----------
        func : callable
            The widget work.
        key : hashable, optional
            Coalesces waiting calls: only the newest call per key runs.
        """
        if self.on_kernel_thread():
            if key is not None:
                with self._lock:
                    self._scheduled.pop(key, None)  # this call supersedes a waiting one
            self._run(func)
            return
        loop = self._loop if self.has_loop else None
        with self._lock:
            self._scheduled[key if key is not None else object()] = func
            self._work_queued.notify_all()
            if loop is None or self._flush_pending:
                schedule = False
            else:
                schedule = self._flush_pending = True
        if loop is None:
            self._queued_without_loop(func)
            return
        if not schedule:
            return
        try:
            loop.call_soon_threadsafe(self.flush)
        except RuntimeError:  # the loop closed under us: the kernel is going away
            with self._lock:
                self._flush_pending = False

    def flush(self) -> None:
        """On the kernel thread: run every waiting call, in the order they were first asked
        for. Elsewhere the work stays queued (see the module's notes)."""
        if not self._allowed_here("flush"):
            return
        with self._lock:
            work = list(self._scheduled.items())
            self._scheduled.clear()
            self._flush_pending = False
        for index, (_key, func) in enumerate(work):
            try:
                self._run(func)
            except BaseException:  # an interrupt (KeyboardInterrupt): the rest is not lost
                self._queue_again(work[index + 1 :])
                raise

    def _queue_again(self, rest: list[tuple[Hashable, Callable[[], None]]]) -> None:
        """Queue the work a flush did not get to, ahead of what was asked for since (a newer
        call of the same key wins), and ask the loop for another flush."""
        if not rest:
            return
        loop = self._loop if self.has_loop else None
        with self._lock:
            newer = self._scheduled
            self._scheduled = {key: func for key, func in rest if key not in newer}
            self._scheduled.update(newer)
            self._work_queued.notify_all()
            schedule = loop is not None and not self._flush_pending
            if schedule:
                self._flush_pending = True
        if schedule:
            assert loop is not None
            try:
                loop.call_soon_threadsafe(self.flush)
            except RuntimeError:  # the loop closed under us
                with self._lock:
                    self._flush_pending = False

    # ------------------------------------------------------------------ throttled calls

    def call_throttled(self, func: Callable[[], None], key: Hashable, interval: float) -> None:
        """Run ``func`` on the kernel thread, at most once per ``interval`` seconds for ``key``.

        While a call is waiting for its turn, later calls replace its function, so what runs
        is always the newest. Use :meth:`call_last` for the last, exact update. Without a kernel
        loop there is no frontend to spare: on the kernel thread the call runs at once, from
        another thread at the next :meth:`pump`.

        Parameters
        ----------
        func : callable
            The widget work.
        key : hashable
            What is throttled: one waiting call per key.
        interval : float
            Seconds between two runs for the key.
        """
        now = time.monotonic()
        here = self.on_kernel_thread()
        with self._lock:
            entry = self._throttled.get(key)
            due = entry[1] if entry else max(now, self._last_run.get(key, float("-inf")) + interval)
            self._throttled[key] = (func, due)
            if not here:
                self._work_queued.notify_all()
        if here and (not self.has_loop or due <= now):
            self._run_throttled(key)
        elif self.has_loop:
            self._arm(key, due)
        elif not here:
            self._queued_without_loop(func)

    def _arm(self, key: Hashable, due: float) -> None:
        """Set one loop timer for ``key`` (one at most: a blocked loop must not pile them up)."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        with self._lock:
            if key in self._armed:
                return
            self._armed.add(key)
        try:
            loop.call_soon_threadsafe(self._run_at, key, due)
        except RuntimeError:  # the loop closed under us
            with self._lock:
                self._armed.discard(key)

    def _run_at(self, key: Hashable, due: float) -> None:
        assert self._loop is not None
        self._loop.call_later(max(0.0, due - time.monotonic()), self._on_timer, key)

    def _on_timer(self, key: Hashable) -> None:
        with self._lock:
            self._armed.discard(key)
            entry = self._throttled.get(key)
        if entry is None:
            return
        if entry[1] > time.monotonic():  # pump() ran it meanwhile, and a newer call waits
            self._arm(key, entry[1])
            return
        self._run_throttled(key)

    def _run_throttled(self, key: Hashable) -> None:
        with self._lock:
            entry = self._throttled.pop(key, None)
            if entry is not None:
                self._last_run[key] = time.monotonic()
        if entry is not None:
            self._run(entry[0])

    def call_last(self, func: Callable[[], None], key: Hashable) -> None:
        """Run ``func`` as the last call for ``key``, now if possible, and forget the key.

        Parameters
        ----------
        func : callable
            The final widget work for ``key``.
        key : hashable
            The key of earlier :meth:`call_throttled` calls; their waiting call is dropped.
        """

        def last() -> None:
            with self._lock:
                self._throttled.pop(key, None)
                self._last_run.pop(key, None)
            func()

        self.call(last, key=("finish", key))

    def pump(self) -> None:
        """On the kernel thread while its loop cannot run (a blocking wait, a test): run what
        is waiting and what is due (without a loop, every throttled call: no timer would run
        it later). Elsewhere nothing runs (see the module's notes)."""
        if not self._allowed_here("pump"):
            return
        self.flush()
        now = time.monotonic()
        every = not self.has_loop
        with self._lock:
            due = [key for key, (_, at) in self._throttled.items() if every or at <= now]
        for key in due:
            self._run_throttled(key)

    # ------------------------------------------------------------------ running

    def _run(self, func: Callable[[], None]) -> None:
        try:
            func()
        except Exception as exc:  # one failing update must not stop the others
            log.exception("atomic-jupyter: a widget update failed")
            self.errors.append(f"{type(exc).__name__}: {exc}")
            del self.errors[:-50]

    def _allowed_here(self, what: str) -> bool:
        """Whether queued work may run on the calling thread: only on the kernel thread.

        Raises
        ------
        OffThreadWidgetWork
            In strict mode, on any other thread (the refusal is also kept in :data:`refused`).
        """
        if self.on_kernel_thread():
            return True
        message = (
            f"atomic-jupyter: {what}() called on thread {threading.current_thread().name!r}, "
            f"not on the kernel's ({self._kernel_thread.name!r}); the widget work stays queued"
        )
        if self.is_strict():
            with _refused_lock:
                refused.append(message)
                del refused[:-REFUSED_KEPT]
            raise OffThreadWidgetWork(message)
        self._log_once(("off-thread", what), message)
        return False

    def _queued_without_loop(self, func: Callable[[], None]) -> None:
        """Say (once per kind of work) that work from another thread waits for a pump."""
        kind = _kind(func)
        self._log_once(
            ("no-loop", kind),
            f"atomic-jupyter: widget work ({kind}) asked for on thread "
            f"{threading.current_thread().name!r} with no kernel loop captured; it waits for "
            f"the next pump on the kernel's thread ({self._kernel_thread.name!r})",
        )

    def _log_once(self, key: tuple[str, str], message: str) -> None:
        with self._lock:
            if key in self._logged:
                return
            self._logged.add(key)
        log.warning(message)
