"""The agent events a session keeps for inspection, bounded in count and in bytes. No I/O."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterator

from atomic_jupyter.protocol.messages import AgentEvent

__all__ = ["EventLog"]


class EventLog:
    """The newest agent events, oldest first (``session.events``).

    At most ``count`` events and about ``max_bytes`` of their lines are kept; an event whose
    line is longer than ``max_event_bytes`` is kept as a stand-in with its type and its size
    (``{"omitted": "..."}``), so one huge event (50 MB of an unknown type) is not held.

    Parameters
    ----------
    count, max_bytes, max_event_bytes:
        The bounds.
    """

    def __init__(
        self, count: int = 200, max_bytes: int = 4 << 20, max_event_bytes: int = 256 << 10
    ) -> None:
        self.count = count
        self.max_bytes = max_bytes
        self.max_event_bytes = max_event_bytes
        self._events: deque[AgentEvent] = deque()
        self._bytes = 0
        self._lock = threading.Lock()

    def append(self, event: AgentEvent) -> None:
        """Keep ``event`` (or its stand-in), dropping the oldest beyond the bounds."""
        if event.size > self.max_event_bytes:
            event = AgentEvent(
                event.type,
                {
                    "omitted": f"an event of {event.size:,} bytes is not kept (the limit is "
                    f"{self.max_event_bytes:,})"
                },
            )
        with self._lock:
            self._events.append(event)
            self._bytes += event.size
            while self._events and (len(self._events) > self.count or self._bytes > self.max_bytes):
                self._bytes -= self._events.popleft().size

    @property
    def nbytes(self) -> int:
        """The size of the kept events' lines, in bytes."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._events)

    def __iter__(self) -> Iterator[AgentEvent]:
        with self._lock:
            return iter(list(self._events))

    def __getitem__(self, index: int) -> AgentEvent:
        with self._lock:
            return self._events[index]

    def __repr__(self) -> str:
        return f"<EventLog {len(self)} events, {self._bytes:,} bytes>"
