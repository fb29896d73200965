"""A session's state from one launch of its agent to the next, and how each launch ended.

``"new"`` -> ``"starting"`` -> ``"idle"`` <-> ``"working"`` -> ``"exited"`` or ``"stopped"``.

Several threads change it (the main thread starts and stops, the reader thread follows the
agent's events, the exit watcher records the exit), so every change is a check-and-set under
one lock: an event that comes late cannot overwrite the end of the agent. ``"exited"`` and
``"stopped"`` are final until the next :meth:`Lifecycle.begin`.
"""

from __future__ import annotations

import threading

from atomic_jupyter.protocol.agent_line import AgentLine
from atomic_jupyter.transport.agent_package import PreparedAgent

__all__ = ["ENDED", "STATES", "Lifecycle"]

#: Every state, in the order a launch goes through them.
STATES = ("new", "starting", "idle", "working", "exited", "stopped")
#: The states a launch ends in; only :meth:`Lifecycle.begin` leaves them.
ENDED = frozenset({"exited", "stopped"})


class Lifecycle:
    """The state of a session, which agent it launched, and how that agent ended.

    Each method that changes the state returns whether it did; the caller announces it.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state = "new"
        self._agent = AgentLine()
        self._install: PreparedAgent | None = None
        self._exit_code: int | None = None
        self._stop_requested = False

    @property
    def state(self) -> str:
        """``"new"``, ``"starting"``, ``"idle"``, ``"working"``, ``"exited"`` or ``"stopped"``."""
        with self._lock:
            return self._state

    @property
    def agent(self) -> AgentLine:
        """Which agent the last launch runs (an unknown line before the first)."""
        with self._lock:
            return self._agent

    @property
    def install(self) -> PreparedAgent | None:
        """How the last launch's agent was found (its npm package), None before the first."""
        with self._lock:
            return self._install

    @property
    def exit_code(self) -> int | None:
        """The agent's exit code, once it exited (None while it runs)."""
        with self._lock:
            return self._exit_code

    @property
    def ended(self) -> bool:
        """Whether the last launch is over (``"exited"`` or ``"stopped"``)."""
        with self._lock:
            return self._state in ENDED

    @property
    def stop_requested(self) -> bool:
        """Whether the session is ending (or has ended) the agent of the last launch."""
        with self._lock:
            return self._stop_requested

    def begin(self, agent: AgentLine, install: PreparedAgent | None) -> None:
        """A launch of ``agent`` begins: ``"starting"``, with no exit code or stop request."""
        with self._lock:
            self._state = "starting"
            self._agent, self._install = agent, install
            self._exit_code = None
            self._stop_requested = False

    def _move(self, sources: frozenset[str] | tuple[str, ...], target: str) -> bool:
        with self._lock:
            if self._state not in sources:
                return False
            self._state = target
            return True

    def launch_failed(self) -> bool:
        """The agent could not be spawned: ``"starting"`` -> ``"exited"``."""
        return self._move(("starting",), "exited")

    def started(self) -> bool:
        """The agent answered its first command: ``"starting"`` -> ``"idle"``."""
        return self._move(("starting",), "idle")

    def run_started(self) -> bool:
        """An agent run began: ``"idle"`` or ``"starting"`` -> ``"working"``."""
        return self._move(("idle", "starting"), "working")

    def run_ended(self) -> bool:
        """The agent is idle again: ``"working"`` -> ``"idle"``."""
        return self._move(("working",), "idle")

    def request_stop(self) -> None:
        """The session is ending the agent: its exit will say ``"stopped"``."""
        with self._lock:
            self._stop_requested = True

    def exited(self, code: int) -> bool:
        """The agent exited with ``code``: ``"stopped"`` when the session ended it, else
        ``"exited"``, from any state. Return whether the session ended it."""
        with self._lock:
            self._exit_code = code
            self._state = "stopped" if self._stop_requested else "exited"
            return self._stop_requested

    def force(self, state: str) -> None:
        """Set the state whatever it is (a test feeding a session that never started).

        Raises
        ------
        ValueError
            When ``state`` is not one of :data:`STATES`.
        """
        if state not in STATES:
            raise ValueError(f"a session's state is one of {', '.join(STATES)}, not {state!r}")
        with self._lock:
            self._state = state
