"""Listeners that can be removed: how views and other parts observe session state."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

__all__ = ["Listeners", "Subscription", "WakeSignal"]

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])


class Subscription:
    """One registered listener; :meth:`remove` unregisters it (a second call does nothing)."""

    def __init__(self, owner: Listeners[Any], callback: Callable[..., Any]) -> None:
        self._owner: Listeners[Any] | None = owner
        self.callback = callback

    def remove(self) -> None:
        """Stop calling the listener."""
        owner, self._owner = self._owner, None
        if owner is not None:
            owner._discard(self)


class Listeners(Generic[F]):
    """Callbacks called with the same arguments, in the order they were added.

    One failing callback does not stop the others: its error goes to ``on_error`` (a
    function taking the text), or to the log.
    """

    def __init__(self, on_error: Callable[[str], None] | None = None) -> None:
        self._subscriptions: list[Subscription] = []
        self._lock = threading.Lock()
        self.on_error = on_error

    def __len__(self) -> int:
        return len(self._subscriptions)

    def add(self, callback: F) -> Subscription:
        """Call ``callback`` on every :meth:`emit` until the subscription is removed."""
        subscription = Subscription(self, callback)
        with self._lock:
            self._subscriptions = [*self._subscriptions, subscription]
        return subscription

    def _discard(self, subscription: Subscription) -> None:
        with self._lock:
            self._subscriptions = [s for s in self._subscriptions if s is not subscription]

    def clear(self) -> None:
        """Remove every listener."""
        with self._lock:
            subscriptions, self._subscriptions = self._subscriptions, []
        for subscription in subscriptions:
            subscription._owner = None

    def emit(self, *args: Any) -> None:
        """Call every listener with ``args``."""
        for subscription in self._subscriptions:  # a copy: replaced, never changed in place
            try:
                subscription.callback(*args)
            except Exception as exc:
                if self.on_error is None:
                    log.exception("atomic-jupyter: a listener failed")
                else:
                    self.on_error(f"a listener failed: {type(exc).__name__}: {exc}")


class WakeSignal(threading.Event):
    """What a blocking wait clears and waits on; :meth:`ping` wakes it, cheaply when it is
    already awake (a stream of changes costs one ``set`` per look of the waiter)."""

    def ping(self, *_ignored: Any) -> None:
        """Wake the waiter (takes and ignores any arguments, to serve as a listener)."""
        if not self.is_set():
            self.set()
