"""The exceptions atomic-jupyter raises, each saying whose fault it is and what to do."""

from __future__ import annotations


class AtomicAgentError(Exception):
    """Base class of every error raised by atomic-jupyter.

    IPython shows these without a long traceback (see ``_render_traceback_``), because the
    message already says what happened and what to do.
    """

    def _render_traceback_(self) -> list[str]:
        red, reset = "\x1b[31m", "\x1b[0m"
        return [f"{red}{type(self).__name__}{reset}: {self}"]


class AgentStartError(AtomicAgentError):
    """The agent could not be started: missing executable, or it exited during start-up."""


class AgentNotInstalledError(AgentStartError):
    """No agent command was given or found, and the pinned agent is not installed.

    Attributes
    ----------
    line:
        The agent line that would be installed (``"current"``).
    """

    def __init__(self, message: str, line: str = "current") -> None:
        super().__init__(message)
        self.line = line


class AgentInstallError(AtomicAgentError):
    """The pinned agent could not be installed; nothing half-installed is left.

    Attributes
    ----------
    kind:
        What failed: ``"registry"`` (unreachable), ``"integrity"`` (a download does not match
        the lock file), ``"lock"`` (the lock file does not match its manifest), ``"node"`` (no
        Node.js or npm), ``"permission"``, ``"check"`` (the result does not run),
        ``"interrupted"``, or ``"npm"`` (anything else npm reported).
    """

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class AgentVersionError(AtomicAgentError):
    """The running agent's version lacks what was asked (a newer agent line has it)."""


class AgentNotRunningError(AtomicAgentError):
    """A command was sent to an agent that has exited or was stopped."""


class CommandError(AtomicAgentError):
    """The agent answered a command with ``success: false``.

    Attributes
    ----------
    command:
        The command type, such as ``"set_model"``.
    error:
        The agent's own ``error`` text.
    """

    def __init__(self, command: str, error: str) -> None:
        super().__init__(f"the agent refused {command!r}: {error}")
        self.command = command
        self.error = error


class CommandTimeoutError(AtomicAgentError, TimeoutError):
    """The agent did not answer a command before its deadline."""


class DialogNotPendingError(AtomicAgentError):
    """An answer was given to a dialog that is no longer waiting for one; nothing was sent."""


class CitationError(AtomicAgentError):
    """A value cited in a prompt (``$`name```) cannot be given: an unknown name, a failing
    expression, or no such cell or error. Nothing was sent."""


class PrototypeError(AtomicAgentError):
    """A prototype extension could not be defined (bad name, busy agent, no agent, or
    prototyping is off)."""


class SessionNotFoundError(AtomicAgentError, KeyError):
    """No session of that name is running in this kernel."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""
