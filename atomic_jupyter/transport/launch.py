"""Which agent command to run, and with which arguments. Pure functions, no I/O but lookups."""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from atomic_jupyter.transport.agent_install import agent_homes, find_installed, pin_of
from atomic_jupyter.transport.agent_install.pins import pins

__all__ = [
    "Candidate",
    "LaunchSpec",
    "ResolvedCommand",
    "build_argv",
    "find_typescript",
    "resolution",
    "resolve_command",
]

#: The environment variable that names the agent command when nothing more specific does.
COMMAND_ENV_VAR = "ATOMIC_AGENT_COMMAND"


@dataclass(frozen=True)
class ResolvedCommand:
    """An agent command and where it came from (for error messages); when nothing was found,
    why the pinned agent could not be used."""

    argv: tuple[str, ...]
    source: str
    why_not_pinned: str = ""

    @property
    def nothing_found(self) -> bool:
        """Whether no command was given or found (``atomic`` is then only a guess)."""
        return self.source == NOTHING_FOUND


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
    save:
        Save the conversation with the notebook's (False: ``--no-session``, kept in memory).
    resume:
        Continue a saved conversation of this notebook: ``"latest"``, or an id (a prefix is
        enough) or a file; None starts a new one.
    kernel_code:
        Whether the agent's ``python`` tool runs code in the kernel: ``"ask"`` before each
        call, ``"allow"`` without asking, ``"off"`` (not offered); None: the setting's.
    notebook_edits:
        Whether the agent's changes to the open notebook are asked for (``"ask"``), applied at
        once (``"allow"``), or its notebook tools not offered (``"off"``); None: the setting's.
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
    save: bool = True
    resume: str | None = None
    kernel_code: str | None = None
    notebook_edits: str | None = None


def _split(command: str | Sequence[str]) -> tuple[str, ...]:
    if isinstance(command, str):
        return tuple(shlex.split(command))
    return tuple(str(part) for part in command)


#: The source of the command chosen when nothing was found (it is then plain ``atomic``).
NOTHING_FOUND = "the default (nothing else was found)"


@dataclass(frozen=True)
class Candidate:
    """One step of the command's resolution: where it looked, what it found (``argv``, None
    when nothing), and a note (why not, or which install)."""

    source: str
    argv: tuple[str, ...] | None
    note: str = ""


#: The TypeScript compiler inside an install's ``node_modules``.
TSC = Path("node_modules/typescript/bin/tsc")


def find_typescript(
    package_folder: Path | None,
    agent_home: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Path | None:
    """The TypeScript compiler that type-checks prototypes: next to the agent's own package
    (in a folder above it), else in any complete pinned install (the current line first)."""
    if package_folder is not None:
        for parent in (package_folder, *package_folder.parents):
            if (parent / TSC).exists():
                return parent / TSC
    homes = agent_homes(agent_home, environ)
    for pin in pins():
        found = find_installed(pin, homes).found
        if found is not None and (found.folder / TSC).exists():
            return found.folder / TSC
    return None


def resolution(
    explicit: str | Sequence[str] | None = None,
    configured: str | Sequence[str] | None = None,
    environ: Mapping[str, str] | None = None,
    agent_home: str | os.PathLike[str] | None = None,
) -> Iterator[Candidate]:
    """Every step of :func:`resolve_command`, in order, with what each found (looked at one
    by one: a command given first costs no look-up of the others)."""
    environ = os.environ if environ is None else environ
    for value, source in (
        (explicit, "--command"),
        (configured, "AtomicAgent.command"),
        (environ.get(COMMAND_ENV_VAR) or None, f"${COMMAND_ENV_VAR}"),
    ):
        argv = _split(value) if value else ()
        yield Candidate(source, argv or None, "" if argv else "not set")
    path = environ.get("PATH", os.defpath)
    for name in ("atomic", "pi"):
        found = shutil.which(name, path=path)
        yield Candidate(f"{name!r} on PATH", (found,) if found else None, "" if found else "none")
    pin = pin_of("current")
    search = find_installed(pin, agent_homes(agent_home, environ))
    if search.found is not None:
        installed = search.found
        yield Candidate(
            f"the pinned agent in {installed.home.source}",
            (str(installed.executable),),
            f"{pin.describe()} in {installed.folder}",
        )
    else:
        damaged = "; ".join(f"{folder}: {problem}" for folder, problem in search.damaged)
        looked = ", ".join(str(home.path) for home in search.homes)
        yield Candidate(
            "the pinned agent",
            None,
            f"{pin.describe()} is not installed in {looked}"
            + (f" (damaged: {damaged})" if damaged else ""),
        )


def resolve_command(
    explicit: str | Sequence[str] | None = None,
    configured: str | Sequence[str] | None = None,
    environ: Mapping[str, str] | None = None,
    agent_home: str | os.PathLike[str] | None = None,
) -> ResolvedCommand:
    """Choose the agent command.

    The order is: ``explicit`` (``--command``), ``configured`` (``AtomicAgent.command``),
    ``$ATOMIC_AGENT_COMMAND``, ``atomic`` on PATH, ``pi`` on PATH, then the pinned agent
    installed in an agent home (``AtomicAgent.agent_home``, ``$ATOMIC_JUPYTER_AGENT_HOME``,
    the user's data folder, the Python environment's). When none is found the result is
    plain ``atomic`` from :data:`NOTHING_FOUND`, with why the pinned agent was not usable.
    """
    step = Candidate("", None)
    for step in resolution(explicit, configured, environ, agent_home):
        if step.argv:
            return ResolvedCommand(step.argv, step.source)
    return ResolvedCommand(("atomic",), NOTHING_FOUND, step.note)


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
