"""The sessions running in this interpreter, by name, and their clean-up at exit."""

from __future__ import annotations

import atexit
import threading
from typing import TYPE_CHECKING

from atomic_jupyter.errors import SessionNotFoundError
from atomic_jupyter.session.launch_env import how_it_ended

if TYPE_CHECKING:
    from atomic_jupyter.session.session import AgentSession

__all__ = ["all_sessions", "get", "put", "stop_all"]

_sessions: dict[str, AgentSession] = {}
_lock = threading.Lock()


def put(session: AgentSession) -> AgentSession | None:
    """Register ``session`` under its name; return the session it replaces, if any."""
    with _lock:
        previous = _sessions.get(session.name)
        _sessions[session.name] = session
    return previous if previous is not session else None


def get(name: str = "default", *, running: bool = True) -> AgentSession:
    """The session called ``name``.

    Raises
    ------
    SessionNotFoundError
        When there is none, or (with ``running``) when its agent is not running (an agent
        asleep counts as running: the next command starts it again).
    """
    with _lock:
        session = _sessions.get(name)
    flag = "" if name == "default" else f" --name {name}"
    if session is None:
        known = ", ".join(sorted(_sessions)) or "none"
        raise SessionNotFoundError(
            f"no agent session called {name!r} (sessions: {known}); start one with `%atomic_agent start{flag}`"
        )
    if running and not session.alive and session.state != "asleep":
        what = how_it_ended(session.state, session.returncode)
        raise SessionNotFoundError(
            f"the agent of session {name!r} {what}; run `%atomic_agent restart{flag}` to start it again"
        )
    return session


def all_sessions() -> list[AgentSession]:
    """Every registered session."""
    with _lock:
        return list(_sessions.values())


def stop_all() -> None:
    """Stop every running session (at interpreter exit, and on kernel shutdown)."""
    for session in all_sessions():
        try:
            session.stop()
        except Exception:  # exit must go on
            pass


atexit.register(stop_all)
