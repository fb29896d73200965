"""An agent that sleeps when idle, and a working one that keeps its kernel counted as active:
the idle part of a session (:class:`IdleWatch`).

On a JupyterHub each user's agent holds about 130 MB. One that nobody uses for
``AtomicAgent.idle_sleep_minutes`` (no run, no open dialog, no command waiting for its answer)
is stopped, its conversation kept; the next command (a prompt from a cell or the panel, a
magic) starts it again on the same conversation before it goes out.

The other way round, a Jupyter server counts a kernel as active only when the kernel sends
something. An agent that works for an hour in the background, or waits on a dialog, sends
nothing through the kernel, and JupyterHub's idle culler (or the server's own kernel culler)
would stop the server in the middle of the run. While the agent is busy the watch calls the
activity signal the wiring registers (:func:`use_activity_signal`: a message on the kernel's
IOPub channel) every :func:`beat_interval` seconds; an idle agent sends nothing, so an idle
server is culled as usual.

One daemon thread per launch, waiting on an event with a timeout: it wakes for the next thing
due, and every ten seconds at most while idle (to read the setting again).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping

__all__ = ["IdleWatch", "beat_interval", "use_activity_signal"]

#: How often a busy agent's kernel says it is active, at most: once a minute.
BEAT_SECONDS = 60.0
#: How often an idle agent's watch reads ``idle_sleep_minutes`` again, at most.
RECHECK_SECONDS = 10.0
#: The environment variable JupyterHub gives each server: how often the server reports its
#: activity to the hub (seconds).
HUB_INTERVAL_ENV = "JUPYTERHUB_ACTIVITY_INTERVAL"

_signal: Callable[[], object] | None = None


def use_activity_signal(signal: Callable[[], object] | None) -> None:
    """Register what tells the Jupyter server the kernel is in use (called from any thread;
    the wiring registers the kernel's IOPub message)."""
    global _signal
    _signal = signal


def beat_interval(environ: Mapping[str, str] | None = None) -> float:
    """Seconds between two activity signals of a busy agent: a minute, or JupyterHub's
    activity interval when it is shorter (so every report the server sends the hub has one)."""
    environ = os.environ if environ is None else environ
    try:
        hub = float(environ.get(HUB_INTERVAL_ENV, ""))
    except ValueError:
        hub = BEAT_SECONDS
    return max(0.5, min(BEAT_SECONDS, hub if hub > 0 else BEAT_SECONDS))


class IdleWatch:
    """Puts the agent to sleep after ``minutes`` of idleness; signals activity while it is busy.

    Parameters
    ----------
    minutes:
        Read at each check: minutes of idleness before the agent sleeps (0 or less: never).
    busy:
        Whether the agent is doing something for someone (a run, an open dialog, a command
        waiting for its answer).
    sleep:
        Ends the agent, its conversation kept, unless :meth:`due` says no more once it holds
        what commands wait on (called on the watch's thread); returns whether it did.
    beat:
        How often (seconds) a busy agent signals activity.
    """

    def __init__(
        self,
        *,
        minutes: Callable[[], float],
        busy: Callable[[], bool],
        sleep: Callable[[], bool],
        beat: float | None = None,
    ) -> None:
        self._minutes = minutes
        self._busy = busy
        self._sleep = sleep
        self._beat = beat_interval() if beat is None else beat
        self._lock = threading.Lock()
        self._last = time.monotonic()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        #: How many times the activity signal was sent.
        self.beats = 0
        #: How many checks found the agent busy, or idle for less than its time.
        self.checks = 0

    def due(self) -> bool:
        """Whether the agent has been idle for its time (not busy, no command since)."""
        minutes = self._minutes()
        if minutes <= 0 or self._busy():
            return False
        with self._lock:
            return time.monotonic() - self._last >= minutes * 60

    def touch(self) -> None:
        """Something happened (a command goes out): the idle time starts again."""
        with self._lock:
            self._last = time.monotonic()

    def start(self) -> None:
        """The agent answered its first command: watch it (a thread per launch)."""
        self.stop()
        self.touch()
        stop = self._stop = threading.Event()  # the old thread keeps its own, set
        self._thread = threading.Thread(
            target=self._watch, args=(stop,), name="atomic-idle-watch", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """The agent ended: stop watching (from any thread, the watch's own included; the
        thread ends at its next wake-up, without being waited for)."""
        self._stop.set()
        self._thread = None

    def _watch(self, stop: threading.Event) -> None:
        last_beat = 0.0
        wait = min(self._beat, 1.0)
        while not stop.wait(wait):
            now = time.monotonic()
            if self._busy():
                self.touch()
                if now - last_beat >= self._beat:
                    last_beat = now
                    self._signal()
                # Look again within the idle time too: an agent idle from the next moment
                # sleeps on time, not a beat (a minute) late.
                minutes = self._minutes()
                wait = min(self._beat, max(0.05, minutes * 60)) if minutes > 0 else self._beat
                self.checks += 1
                continue
            minutes = self._minutes()
            with self._lock:
                left = self._last + minutes * 60 - now
            if minutes > 0 and left <= 0:
                if stop.is_set() or self._sleep():
                    return
                left = minutes * 60  # a command came first: the idle time starts again
            # Wake for the next beat (a run may begin meanwhile), when the idle time is up, or
            # to read the setting again (a person may change it).
            wait = min(self._beat, RECHECK_SECONDS, left) if minutes > 0 else RECHECK_SECONDS
            self.checks += 1

    def _signal(self) -> None:
        signal = _signal
        if signal is None:
            return
        try:
            signal()
        except Exception:  # a kernel going away: nothing to tell, nothing to break
            return
        self.beats += 1
