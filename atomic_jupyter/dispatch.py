"""Running widget updates on the kernel's event loop.

ipywidgets must be built and changed where the kernel can send their comm messages: the
kernel's asyncio loop on the main thread. The agent's messages arrive on a reader thread,
so widget work is handed to that loop with ``call_soon_threadsafe`` and runs while the
kernel is idle (see DESIGN.md, "Hard facts about the kernel"). Outside a kernel (plain
Python, unit tests) there is no such loop and the work runs at once, on the calling thread.

Updates are coalesced: many requests for the same refresh before the loop gets to it
become one refresh, so a flood of status updates costs the frontend a few messages.
"""

from __future__ import annotations

import asyncio
import logging
import threading
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
            with self._lock:
                self._scheduled.pop(key, None) if key is not None else None
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

    def _run(self, func: Callable[[], None]) -> None:
        try:
            func()
        except Exception as exc:  # one failing update must not stop the others
            log.exception("atomic-jupyter: a widget update failed")
            self.errors.append(f"{type(exc).__name__}: {exc}")
            del self.errors[:-50]
