"""Which agent a command runs, and how to start it: its npm package (name, version, the
Node.js it needs), the Node.js to run it with, and the PATH its tools see.

An agent installed from npm is a JavaScript file with a ``#!/usr/bin/env node`` line. When the
``node`` on PATH is missing or older than the package's ``engines`` demand, the script is run
as ``[node, script, ...]`` with the wheel's Node.js (:mod:`atomic_jupyter.transport.node`),
whose folder goes first on the agent's PATH so the tools it spawns find the same ``node``.
Any other executable is asked ``--version`` (stdin closed, a few seconds at most).
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from atomic_jupyter.transport.node import NodeRuntime, choose_node, parse_version, with_node_first

__all__ = ["AgentPackage", "PreparedAgent", "find_agent_package", "prepare_agent"]

_NODE_NAMES = {"node", "nodejs", "node.exe"}
#: Interpreters whose ``--version`` is their own, not the agent's: never asked.
_INTERPRETERS = ("python", "bun", "deno", "sh", "bash", "env", "uv", "npx")
_SCRIPT_SUFFIXES = {".js", ".mjs", ".cjs"}


@dataclass(frozen=True)
class AgentPackage:
    """The agent's npm package.

    Attributes
    ----------
    folder:
        The package folder (holds ``package.json``; the extension API's types are in it).
    name, version:
        From ``package.json``, e.g. ``@earendil-works/pi-coding-agent`` and ``1.6.0``.
    node_requirement:
        Its ``engines.node`` range (None when it states none).
    """

    folder: Path
    name: str
    version: str
    node_requirement: str | None = None


@dataclass(frozen=True)
class PreparedAgent:
    """An agent command ready to spawn, and what is known about the agent.

    Attributes
    ----------
    argv:
        The command to run (``[node, script, ...]`` when the script needs another node).
    env:
        The environment, with the chosen Node.js first on PATH when it is not PATH's own.
    package:
        The agent's npm package, when the command leads to one.
    node:
        The Node.js that runs it (None for an agent that is not a Node.js script).
    name, version:
        The agent's name and version as far as known (None when unknown).
    """

    argv: list[str]
    env: dict[str, str] = field(repr=False)
    package: AgentPackage | None = None
    node: NodeRuntime | None = None
    name: str | None = None
    version: str | None = None


def _is_node_script(path: Path) -> bool:
    if path.suffix in _SCRIPT_SUFFIXES:
        return True
    try:
        with path.open("rb") as file:
            first = file.readline(200)
    except OSError:
        return False
    return first.startswith(b"#!") and b"node" in first


@functools.lru_cache(maxsize=32)
def _read_package(folder: Path, _mtime: float) -> AgentPackage | None:
    try:
        data = json.loads((folder / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return None
    engines = data.get("engines")
    node = engines.get("node") if isinstance(engines, dict) else None
    return AgentPackage(
        folder, data["name"], str(data.get("version", "")), node if isinstance(node, str) else None
    )


def find_agent_package(script: str | os.PathLike[str]) -> AgentPackage | None:
    """The npm package a script belongs to: the nearest folder above it with a named
    ``package.json`` (symlinks resolved, so ``node_modules/.bin/pi`` leads to its package)."""
    try:
        real = Path(os.path.realpath(script))
    except OSError:
        return None
    for parent in real.parents:
        manifest = parent / "package.json"
        if manifest.is_file():
            package = _read_package(parent, manifest.stat().st_mtime)
            if package is not None:
                return package
        if parent.name == "node_modules":
            break
    return None


#: Seconds an agent may take to answer ``--version``.
VERSION_TIMEOUT = 20


@functools.lru_cache(maxsize=32)
def _asked_version(executable: str, _mtime: float) -> str | None:
    try:
        done = subprocess.run(
            [executable, "--version"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            # Generous: an agent's start is over a second of CPU (the 0.73 line's 1.3 s), and on
            # a loaded machine (two cores, a test suite beside it) 5 s was once too little.
            timeout=VERSION_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    text = (done.stdout or done.stderr).strip()
    if done.returncode != 0 or parse_version(text) is None or len(text) > 200:
        return None
    return text.splitlines()[-1].strip()


def _ask_version(executable: str) -> str | None:
    name = os.path.basename(executable).lower()
    if any(name.startswith(interpreter) for interpreter in _INTERPRETERS):
        return None
    try:
        return _asked_version(executable, os.stat(executable).st_mtime)
    except OSError:
        return None


def prepare_agent(argv: Sequence[str], environ: Mapping[str, str]) -> PreparedAgent:
    """How to run the agent command ``argv`` in ``environ``, and which agent it is."""
    argv = list(argv)
    env = dict(environ)
    if not argv:
        return PreparedAgent(argv, env)
    executable = shutil.which(argv[0], path=env.get("PATH", os.defpath))
    script_arg = next((a for a in argv[1:] if not a.startswith("-")), None)
    if os.path.basename(argv[0]).lower() in _NODE_NAMES and script_arg is not None:
        # [node, [options], cli.js, ...]: the node is the user's choice; its folder goes first
        # on PATH.
        package = find_agent_package(script_arg)
        node = choose_node(None, {"PATH": os.path.dirname(executable or argv[0]) or os.defpath})
        return _known(argv, with_node_first(env, node), package, node)
    if executable is None:
        return PreparedAgent(argv, env)
    script = Path(os.path.realpath(executable))
    if not _is_node_script(script):
        version = _ask_version(executable)
        return PreparedAgent(argv, env, name=os.path.basename(argv[0]), version=version)
    package = find_agent_package(script)
    node = choose_node(package.node_requirement if package else None, env)
    if node is not None and node.source != "PATH":
        argv = [node.path, str(script), *argv[1:]]
        env = with_node_first(env, node)
    return _known(argv, env, package, node)


def _known(
    argv: list[str], env: dict[str, str], package: AgentPackage | None, node: NodeRuntime | None
) -> PreparedAgent:
    if package is None:
        return PreparedAgent(argv, env, None, node)
    return PreparedAgent(argv, env, package, node, package.name, package.version)
