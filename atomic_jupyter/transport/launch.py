"""Which agent command to run, and with which arguments. Pure functions, no I/O but lookups."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["LaunchSpec", "ResolvedCommand", "build_argv", "pinned_agent_paths", "resolve_command"]

#: The environment variable that names the agent command when nothing more specific does.
COMMAND_ENV_VAR = "ATOMIC_AGENT_COMMAND"


@dataclass(frozen=True)
class ResolvedCommand:
    """An agent command and where it came from (for error messages)."""

    argv: tuple[str, ...]
    source: str


@dataclass(frozen=True)
class LaunchSpec:
    """Everything needed to start one agent, as given by the user.

    Attributes
    ----------
    command:
        The command as given (``--command``); None to resolve it.
    provider, model:
        Passed on as ``--provider`` and ``--model``.
    extensions:
        Extension paths, passed on as ``-e`` with absolute paths.
    cwd:
        The agent's working directory (None: the kernel's).
    env:
        Extra environment variables for the agent only.
    extra_args:
        More arguments for the agent, after everything else.
    demo:
        Run on the offline demo model, with the bundled demo extension.
    trust_project:
        Let the agent load the working directory's own ``.pi`` extensions and settings
        (``--approve``; the current agent line skips them in RPC mode otherwise).
    """

    command: str | Sequence[str] | None = None
    provider: str | None = None
    model: str | None = None
    extensions: tuple[str, ...] = ()
    cwd: str | None = None
    env: Mapping[str, str] = field(default_factory=dict, repr=False)  # may hold API keys
    extra_args: tuple[str, ...] = ()
    demo: bool = False
    trust_project: bool = False


def _split(command: str | Sequence[str]) -> tuple[str, ...]:
    if isinstance(command, str):
        return tuple(shlex.split(command))
    return tuple(str(part) for part in command)


def pinned_agent_paths() -> list[Path]:
    """Where the project's own pinned agent (the current line) may be installed, most specific
    first."""
    package_dir = Path(__file__).resolve().parents[1]
    return [
        package_dir.parent / "agent" / "node_modules" / ".bin" / "pi",
        Path(sys.prefix) / "share" / "atomic-jupyter" / "agent" / "node_modules" / ".bin" / "pi",
    ]


def pinned_agent_folders() -> list[Path]:
    """The folders of the pinned installs (``agent/`` and beside it), most specific first:
    where tools the agent's own install may lack (TypeScript) are found."""
    return [path.parents[2] for path in pinned_agent_paths()]


def resolve_command(
    explicit: str | Sequence[str] | None = None,
    configured: str | Sequence[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> ResolvedCommand:
    """Choose the agent command.

    The order is: ``explicit`` (``--command``), ``configured`` (``AtomicAgent.command``),
    ``$ATOMIC_AGENT_COMMAND``, ``atomic`` on PATH, ``pi`` on PATH, then the project's pinned
    install. When none is found the result is plain ``atomic``, so the error names it.
    """
    environ = os.environ if environ is None else environ
    for value, source in (
        (explicit, "--command"),
        (configured, "AtomicAgent.command"),
        (environ.get(COMMAND_ENV_VAR) or None, f"${COMMAND_ENV_VAR}"),
    ):
        if value:
            argv = _split(value)
            if argv:
                return ResolvedCommand(argv, source)
    path = environ.get("PATH", os.defpath)
    for name in ("atomic", "pi"):
        found = shutil.which(name, path=path)
        if found:
            return ResolvedCommand((found,), f"{name!r} on PATH")
    for candidate in pinned_agent_paths():
        if candidate.exists():
            return ResolvedCommand((str(candidate),), "the project's pinned agent")
    return ResolvedCommand(("atomic",), "the default (nothing else was found)")


def _has_mode(args: Sequence[str]) -> bool:
    return any(arg == "--mode" or arg.startswith("--mode=") for arg in args)


def build_argv(base: Sequence[str], spec: LaunchSpec) -> list[str]:
    """The full argument vector: ``base``, ``--mode rpc`` unless given, then the options."""
    argv = list(base)
    if not _has_mode(argv) and not _has_mode(spec.extra_args):
        argv += ["--mode", "rpc"]
    if spec.provider:
        argv += ["--provider", spec.provider]
    if spec.model:
        argv += ["--model", spec.model]
    for extension in spec.extensions:
        argv += ["-e", os.path.abspath(os.path.expanduser(extension))]
    argv += list(spec.extra_args)
    return argv
