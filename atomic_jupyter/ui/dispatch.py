"""Running widget updates on the kernel's event loop.

ipywidgets must be built and changed where the kernel can send their comm messages: the
kernel's asyncio loop on the main thread. The agent's messages arrive on a reader thread,
so widget work is handed to that loop with ``call_soon_threadsafe`` and runs while the
kernel is idle (see DESIGN.md, "Hard facts about the kernel"). Outside a kernel (plain
Python, unit tests) there is no such loop and the work runs at once, on the calling thread.

Updates are coalesced: many requests for the same refresh before the loop gets to it
become one refresh, so a flood of status updates costs the frontend a few messages.
Throttled calls (:meth:`UiDispatcher.call_throttled`) run at most once per interval per key,
for streams such as a transcript that changes thousands of times a second.

While a cell blocks (``AgentSession.wait``), the loop cannot run; the waiting code calls
:meth:`UiDispatcher.pump` on the main thread instead, which does the same work there.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Hashable

__all__ = ["UiDispatcher"]

log = logging.getLogger(__name__)


class UiDispatcher:
    """Hands callables to the kernel's event loop, or runs them at once without one."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self._lock = threading.Lock()
        self._scheduled: dict[Hashable, Callable[[], None]] = {}
        self._flush_pending = False
        self._throttled: dict[Hashable, tuple[Callable[[], None], float]] = {}
        self._last_run: dict[Hashable, float] = {}
        self._armed: set[Hashable] = set()
        self.errors: list[str] = []

    def capture_loop(self) -> None:
        """Remember the running event loop of the calling (main) thread, if any."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._loop = loop
        self._loop_thread = threading.get_ident()

    @property
    def has_loop(self) -> bool:
        """Whether work is handed to a kernel event loop."""
        return self._loop is not None and not self._loop.is_closed()

    def _inline(self) -> bool:
        loop = self._loop
        return loop is None or loop.is_closed() or threading.get_ident() == self._loop_thread

    def call(self, func: Callable[[], None], key: Hashable | None = None) -> None:
        """Run ``func`` on the kernel loop (now, if already there or if there is none).

        Calls with the same ``key`` that are still waiting are merged into the last one.
        """
        if self._inline():
            if key is not None:
                with self._lock:
                    self._scheduled.pop(key, None)  # this call supersedes a waiting one
            self._run(func)
            return
        with self._lock:
            self._scheduled[key if key is not None else object()] = func
            if self._flush_pending:
                return
            self._flush_pending = True
        assert self._loop is not None
        try:
            self._loop.call_soon_threadsafe(self.flush)
        except RuntimeError:  # the loop closed under us: the kernel is going away
            with self._lock:
                self._flush_pending = False

    def flush(self) -> None:
        """Run every waiting call, in the order they were first asked for."""
        with self._lock:
            work = list(self._scheduled.values())
            self._scheduled.clear()
            self._flush_pending = False
        for func in work:
            self._run(func)

    # ------------------------------------------------------------------ throttled calls

    def call_throttled(self, func: Callable[[], None], key: Hashable, interval: float) -> None:
        """Run ``func`` on the loop, at most once per ``interval`` seconds for ``key``.

        While a call is waiting for its turn, later calls replace its function, so what runs
        is always the newest. Use :meth:`finish` for the last, exact update.
        """
        now = time.monotonic()
        with self._lock:
            entry = self._throttled.get(key)
            due = entry[1] if entry else max(now, self._last_run.get(key, float("-inf")) + interval)
            self._throttled[key] = (func, due)
        if not self.has_loop or (due <= now and self._inline()):
            # Without a kernel loop there is no frontend to spare and no timer to run later.
            self._run_throttled(key)
        else:
            self._arm(key, due)

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

    def finish(self, func: Callable[[], None], key: Hashable) -> None:
        """Run ``func`` as the last call for ``key``, now if possible, and forget the key."""

        def last() -> None:
            with self._lock:
                self._throttled.pop(key, None)
                self._last_run.pop(key, None)
            func()

        self.call(last, key=("finish", key))

    def pump(self) -> None:
        """On the loop's thread while it is blocked: run what is waiting and what is due."""
        self.flush()
        now = time.monotonic()
        with self._lock:
            due = [key for key, (_, at) in self._throttled.items() if at <= now]
        for key in due:
            self._run_throttled(key)

    def _run(self, func: Callable[[], None]) -> None:
        try:
            func()
        except Exception as exc:  # one failing update must not stop the others
            log.exception("atomic-jupyter: a widget update failed")
            self.errors.append(f"{type(exc).__name__}: {exc}")
            del self.errors[:-50]
