"""What one launch of the agent needs besides its command: working directory, environment,
the addons' additions, which agent it is and the Node.js that runs it, and the error text when
it does not come up. No I/O but checks and the look-ups of :mod:`~atomic_jupyter.transport.
agent_package`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from atomic_jupyter.errors import AgentNotInstalledError, AgentStartError, AgentVersionError
from atomic_jupyter.protocol.agent_line import AgentLine
from atomic_jupyter.session.plugins import Addon
from atomic_jupyter.transport.agent_install import pin_of
from atomic_jupyter.transport.agent_package import PreparedAgent, prepare_agent
from atomic_jupyter.transport.launch import LaunchSpec, ResolvedCommand, build_argv

__all__ = [
    "Launch",
    "exit_reason",
    "how_it_ended",
    "known_crash",
    "not_installed_text",
    "plan_launch",
    "start_failure",
]


@dataclass(frozen=True)
class Launch:
    """A launch ready to spawn, and which agent it runs (``line``, ``prepared``)."""

    argv: list[str]
    cwd: str | None
    env: dict[str, str]
    line: AgentLine
    prepared: PreparedAgent


def plan_launch(
    resolved: ResolvedCommand,
    spec: LaunchSpec,
    addons: Sequence[Addon],
    environ: Mapping[str, str],
) -> Launch:
    """The command line, directory and environment of a launch of the ``resolved`` command;
    addons add theirs in order.

    Raises
    ------
    AgentNotInstalledError
        When no agent was found: the message says how to install the pinned one.
    AgentStartError
        When the working directory does not exist, or project trust is asked of an agent
        that does not accept ``--approve``.
    """
    if resolved.nothing_found:
        raise AgentNotInstalledError(not_installed_text(resolved.why_not_pinned))
    cwd = spec.cwd
    if cwd is not None:
        cwd = os.path.abspath(os.path.expanduser(cwd))
        if not os.path.isdir(cwd):
            raise AgentStartError(f"the working directory {cwd!r} does not exist")
    env = dict(environ)
    env.update({str(k): str(v) for k, v in spec.env.items()})
    argv = build_argv(resolved.argv, spec)
    for addon in addons:
        additions = addon.launch()
        env.update(additions.env)
        argv += list(additions.args)
    prepared = prepare_agent(argv, env)
    line = agent_line(prepared)
    argv = list(prepared.argv)
    if spec.trust_project:
        try:
            line.require_project_trust()
        except AgentVersionError as exc:
            raise AgentStartError(str(exc)) from None
        argv.append("--approve")
    return Launch(argv, cwd, prepared.env, line, prepared)


def not_installed_text(why_not_pinned: str = "") -> str:
    """What to do when no agent is installed, in one short paragraph."""
    pin = pin_of("current")
    return (
        f"the agent is not installed. atomic-jupyter runs {pin.package} {pin.version}, "
        "pinned by this version: install it with `%atomic_agent install` in a notebook or "
        "`atomic-jupyter install-agent` in a terminal (npm downloads it, about a minute), "
        "or name an agent you have with --command, AtomicAgent.command or "
        f"$ATOMIC_AGENT_COMMAND." + (f"\n({why_not_pinned})" if why_not_pinned else "")
    )


def agent_line(prepared: PreparedAgent) -> AgentLine:
    """The :class:`AgentLine` of a prepared agent command."""
    node = prepared.node
    runtime = f"Node.js {node.version_text} ({node.source})" if node else None
    return AgentLine(prepared.name, prepared.version, runtime)


def how_it_ended(state: str, exit_code: int | None) -> str:
    """Why an agent is not running, as the end of a sentence ("... was stopped")."""
    if state == "stopped":
        return "was stopped"
    return "is not running" if exit_code is None else f"exited with code {exit_code}"


#: Crashes of the agent whose cause is known, by what its stderr says: (marker, explanation).
_KNOWN_CRASHES = (
    (
        "ENOBUFS",
        "a known bug of the agent's 0.73 line: it exits when it writes a long answer faster "
        "than its output pipe takes it (fixed in @earendil-works/pi-coding-agent 1.x, "
        "earendil-works/pi issue 4897). Update the agent, or ask for shorter answers",
    ),
)


def known_crash(stderr_tail: str) -> str | None:
    """What is known about a crash whose stderr ends with ``stderr_tail``, or None."""
    for marker, explanation in _KNOWN_CRASHES:
        if marker in stderr_tail:
            return explanation
    return None


def exit_reason(code: int, stopped: bool, stderr_tail: str) -> tuple[str, bool]:
    """Why the agent is gone, as the end of a sentence, and whether its crash is a known one."""
    if stopped:
        return "session stopped", False
    known = known_crash(stderr_tail)
    reason = f"the agent exited with code {code}"
    return (f"{reason}: {known}", True) if known else (reason, False)


def start_failure(
    command_line: str, exit_code: int | None, error: Exception, stderr_tail: str, timed_out: bool
) -> AgentStartError:
    """The error for an agent that did not become ready, with its command and stderr."""
    if exit_code is not None and not timed_out:
        reason = f"exited during start-up with code {exit_code}"
    else:
        reason = f"did not become ready: {error}"
    tail = stderr_tail.strip()
    return AgentStartError(
        f"the agent {reason}.\nCommand: {command_line}\n"
        + (f"Its stderr:\n{tail}" if tail else "It wrote nothing on stderr.")
    )
