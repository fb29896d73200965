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

The exceptions to "widgets only on the kernel thread" (listed in ARCHITECTURE.md) each render
an output under that output's own lock (:class:`~atomic_jupyter.ui.output_base.OutputBase`),
inside :func:`thread_safe_update`, which the test suite's guard respects. One of them lives
here: the *stand-in*. When work queued from another thread finds the kernel's loop blocked (a
person's cell computing: a probe put on the loop has not run :data:`STAND_IN_AFTER` seconds
later), a thread of the dispatcher's own (``atomic-ui-stand-in``) calls the render it was given
(:meth:`UiDispatcher.set_stand_in`: the view's outputs brought in line with the session), at
most every :data:`STAND_IN_INTERVAL` seconds, until the loop runs again; the queued work still
runs on the loop afterwards and finds nothing left to send. So what a page's message did (a
dialog answered over a kernel subshell) and what the agent streams next are drawn while the
cell runs.

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
    "STAND_IN_AFTER",
    "STAND_IN_INTERVAL",
    "STRICT_ENV",
    "OffThreadWidgetWork",
    "UiDispatcher",
    "in_thread_safe_update",
    "refused",
    "remember_main_loop",
    "thread_safe_update",
]

log = logging.getLogger(__name__)

#: The environment variable that turns on strict mode when set to ``"1"`` (the tests set it).
STRICT_ENV = "ATOMIC_JUPYTER_STRICT_THREADS"

#: Seconds the kernel's loop may take to run a probe before the stand-in renders (an idle
#: kernel runs it within a millisecond or two).
STAND_IN_AFTER = 0.02
#: Seconds between two renders of the stand-in, at least (a stream is drawn 20 times a second).
STAND_IN_INTERVAL = 0.05

#: What strict dispatchers refused (newest last, at most :data:`REFUSED_KEPT`); the test
#: suite's thread guard fails a test that leaves anything here.
refused: list[str] = []
#: How many refusals :data:`refused` keeps.
REFUSED_KEPT = 50

_refused_lock = threading.Lock()
_local = threading.local()
#: The main thread's running loop, as last seen there (see :func:`remember_main_loop`).
_main_loop: asyncio.AbstractEventLoop | None = None


def remember_main_loop() -> None:
    """On the main thread, with its event loop running (in a cell: ``%load_ext``, any
    capture there): remember that loop, for dispatchers of the main thread made or asked on
    another thread (a click handled over a kernel subshell that starts a session)."""
    global _main_loop
    if threading.current_thread() is not threading.main_thread():
        return
    try:
        _main_loop = asyncio.get_running_loop()
    except RuntimeError:
        return


def _remembered_main_loop() -> asyncio.AbstractEventLoop | None:
    loop = _main_loop
    return loop if loop is not None and not loop.is_closed() else None


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
        self._stand_in: _StandIn | None = None
        #: When the kernel thread last pumped (a blocking wait does the work itself).
        self._pumped_at = float("-inf")
        self._probe: threading.Event | None = None

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
        here = threading.current_thread()
        if self._bound is not None and here is not self._bound:
            if self._bound is threading.main_thread() and not self.has_loop:
                self._loop = _remembered_main_loop()  # the main thread's, seen there before
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._loop = loop
        self._kernel_thread = here
        remember_main_loop()

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
        self._wake_stand_in()
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
            if not here:
                self._wake_stand_in()
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
        self._pumped_at = time.monotonic()
        self.flush()
        now = time.monotonic()
        every = not self.has_loop
        with self._lock:
            due = [key for key, (_, at) in self._throttled.items() if every or at <= now]
        for key in due:
            self._run_throttled(key)

    # ------------------------------------------------------------------ the stand-in

    def set_stand_in(self, render: Callable[[], None] | None) -> None:
        """Give the render the stand-in calls while the kernel's loop is blocked (see the
        module's notes), or ``None`` to stop it. ``render`` runs on the stand-in's thread: it
        must render each output under that output's lock, inside :func:`thread_safe_update`,
        and build, display or close nothing.

        Parameters
        ----------
        render : callable or None
            Brings every output shown in line with what it shows.
        """
        with self._lock:
            old, self._stand_in = self._stand_in, None
            if render is not None:
                self._stand_in = _StandIn(self, render)
        if old is not None:
            old.stop()

    def _wake_stand_in(self) -> None:
        stand_in = self._stand_in
        if stand_in is not None:
            stand_in.asked()

    def loop_is_blocked(self, within: float) -> bool:
        """Whether the kernel's loop did not run a probe within ``within`` seconds, and the
        kernel thread did not pump meanwhile (a person's cell computing). From any thread but
        the kernel's; without a loop, False.

        Parameters
        ----------
        within : float
            Seconds the probe is given.

        Returns
        -------
        bool
            True when the loop is blocked.
        """
        loop = self._loop if self.has_loop else None
        if loop is None or self.on_kernel_thread():
            return False
        with self._lock:  # one probe on the loop at a time: a blocked loop piles none up
            ran = self._probe
            if ran is None or ran.is_set():
                ran = self._probe = threading.Event()
                try:
                    loop.call_soon_threadsafe(ran.set)
                except RuntimeError:  # the loop closed under us
                    return False
        if ran.wait(within):
            return False
        return time.monotonic() - self._pumped_at > within

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


class _StandIn:
    """The stand-in of one dispatcher: a thread that renders while the kernel's loop is
    blocked (see the module's notes). Started with the first request, a daemon; stopped with
    :meth:`stop` (or when its dispatcher is given another)."""

    def __init__(self, dispatcher: UiDispatcher, render: Callable[[], None]) -> None:
        self._dispatcher = dispatcher
        self._render = render
        self._changed = threading.Condition()
        self._asked = 0
        self._done = 0
        self._stopped = False
        self._thread: threading.Thread | None = None

    def asked(self) -> None:
        """Work was queued from another thread: look whether the loop runs it."""
        with self._changed:
            if self._stopped:
                return
            self._asked += 1
            self._changed.notify_all()
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._serve, name="atomic-ui-stand-in", daemon=True
                )
                self._thread.start()

    def stop(self) -> None:
        """Render no more (a render under way ends first, unwaited)."""
        with self._changed:
            self._stopped = True
            self._changed.notify_all()

    def _serve(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: self._stopped or self._asked > self._done)
                if self._stopped:
                    return
                target = self._asked
            if self._dispatcher.loop_is_blocked(STAND_IN_AFTER):
                try:
                    self._render()
                except Exception:  # one failing render must not end the stand-in
                    log.exception("atomic-jupyter: the stand-in's render failed")
                with self._changed:
                    self._done = target
                    self._changed.wait_for(lambda: self._stopped, STAND_IN_INTERVAL)
            else:
                with self._changed:
                    self._done = target
