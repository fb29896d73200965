"""The settings a session reads. The notebook layer's traitlets class provides the same names."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from atomic_jupyter.transport.reader_turns import DEFAULT_TURN_S

__all__ = ["SessionSettings", "Settings"]


class Settings(Protocol):
    """What a session needs from its settings (``AtomicAgent`` has these attributes)."""

    command: str | Sequence[str] | None
    startup_timeout: float
    request_timeout: float
    prototyping: bool
    agent_home: str | None
    conversations_dir: str | None
    kernel_code: str
    notebook_edits: str
    kernel_code_when_read_only: bool
    idle_sleep_minutes: float
    reader_turn_ms: float


@dataclass
class SessionSettings:
    """Plain settings, with the defaults of ``AtomicAgent``.

    Attributes
    ----------
    command:
        The agent command (None: resolved from the environment).
    startup_timeout:
        Seconds to wait for a new agent to answer its first command.
    request_timeout:
        Seconds to wait for the agent to answer a command sent with ``request()``.
    prototyping:
        Load the prototype hub extension, so cell-defined extensions load without a restart.
    agent_home:
        An agent home looked in first for the pinned agent (None: only the usual ones).
    conversations_dir:
        Where notebooks' conversations are saved (None: ``$ATOMIC_JUPYTER_CONVERSATIONS``,
        else the per-user data folder).
    kernel_code:
        Whether the agent's ``python`` tool runs code in the kernel: ``"ask"`` (before each
        call), ``"allow"`` or ``"off"``.
    notebook_edits:
        Whether the agent's ``notebook_edit`` tool changes the open notebook: ``"ask"`` (each
        change shown as a diff a person accepts or rejects), ``"allow"`` (applied at once, still
        shown in the card) or ``"off"`` (the notebook tools are not offered).
    kernel_code_when_read_only:
        Keep the tools that can change files or the kernel (``python``, ``notebook_edit``,
        ``notebook_run``) on while another extension has made the agent read-only (its
        ``edit`` and ``write`` off, as the agent's plan mode does). False: they are off then,
        and come back with ``edit`` and ``write``.
    idle_sleep_minutes:
        Minutes with no run, no open dialog and no command waiting before the agent is
        stopped, its conversation kept; the next command starts it again (0: never).
    reader_turn_ms:
        While the agent writes faster than the kernel reads, the thread reading it lets the
        kernel's own thread (cells, outputs) run at least every this many milliseconds.
        Smaller: cells answer sooner during such a stream; larger: the stream is read sooner.
        Read when an agent starts.
    """

    command: str | Sequence[str] | None = None
    startup_timeout: float = 60.0
    request_timeout: float = 30.0
    prototyping: bool = True
    agent_home: str | None = None
    conversations_dir: str | None = None
    kernel_code: str = "ask"
    notebook_edits: str = "ask"
    kernel_code_when_read_only: bool = False
    idle_sleep_minutes: float = 30.0
    reader_turn_ms: float = DEFAULT_TURN_S * 1000
