"""``make lab``'s set-up on a fresh clone: quick, and never silent while the JupyterLab
extension builds (issue 55; BENCHMARKS.md, "make lab on a fresh clone").

- The extension is built as a step of its own (``hatch_build.py``, run by ``scripts/step.py``),
  before the package is installed: inside the package's install, uv shows none of a build's
  output until it fails. The agent's install runs beside that build
  (``scripts/step.py --beside``), whose output is shown after the build's, under its own name.
- Each part of the build says what it does when it starts and at least every
  ``hatch_build.HEARTBEAT`` seconds while it runs (``npm ci``: its packages looked up, then
  fetched).
- npm installs for the build only what the build reads: the lockfile holds none of the
  packages of ``@jupyterlab/notebook``'s Markdown parser (Mermaid and the rest), for which
  ``labextension/build-stubs/`` stands in.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import hatch_build
from tests.harness.support import ROOT

STEP = ROOT / "scripts" / "step.py"
LABEXTENSION = ROOT / "labextension"


def make_plan(target: str) -> list[str]:
    """What ``make -n -B TARGET`` would run, a line per command."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("MAKE")}
    done = subprocess.run(
        ["make", "-n", "-B", target], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.splitlines()


def index_of(lines: list[str], *parts: str) -> int:
    """The first line holding every one of ``parts``."""
    found = [i for i, line in enumerate(lines) if all(part in line for part in parts)]
    assert found, f"no line with {parts}:\n" + "\n".join(lines)
    return found[0]


# --------------------------------------------------------------------------- the Makefile


def test_make_lab_builds_the_extension_as_a_step_with_the_agent_beside_it() -> None:
    plan = make_plan("lab")
    dependencies = index_of(plan, "uv pip install", "-r pyproject.toml", "--extra lab")
    build = index_of(plan, "scripts/step.py", "building the JupyterLab extension", "hatch_build.py")
    package = index_of(plan, "uv pip install", "-e '.[lab]'")
    assert dependencies < build < package, "\n".join(plan)
    assert '--beside "installing the agent (its current line)"' in plan[build]
    assert "install-agent --line current" in plan[build]
    # The bytecode of the whole environment (30 s of CPU) is make setup's, not make lab's.
    assert not any("--compile-bytecode" in line for line in plan), "\n".join(plan)


def test_make_setup_builds_the_extension_as_a_step_of_its_own() -> None:
    plan = make_plan("setup")
    build = index_of(plan, "scripts/step.py", "building the JupyterLab extension", "hatch_build.py")
    package = index_of(plan, "uv pip install", "-e '.[test,lab,docs]'")
    assert build < package, "\n".join(plan)


# --------------------------------------------------------------------------- step.py --beside


def run_step(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(STEP), *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "STEP_HEARTBEAT": "0.5"},
    )


def test_a_step_beside_runs_at_the_same_time_and_shows_after_the_step(tmp_path: Path) -> None:
    """The step waits for a file that only the step beside it writes: both must run at once
    (one after the other, the step would wait until the timeout)."""
    gate = tmp_path / "gate"
    beside = f"echo beside started; touch {gate}; sleep 2.5; echo beside ended"
    step = f"while [ ! -e {gate} ]; do sleep 0.05; done; echo step ended"
    done = run_step(tmp_path, "--beside", "the other step", beside, "the step", "sh", "-c", step)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [line.strip() for line in done.stdout.splitlines()]
    order = [
        "==> The step",
        "step ended",
        "==> The other step (beside the step above)",
        f"$ {beside}",
        "beside started",
        "beside ended",
    ]
    assert [line for line in lines if line in order] == order, done.stdout
    assert lines[-1].startswith("done in"), done.stdout
    # While the step beside still ran after the step's end, it said so.
    after = lines[lines.index("beside started") : lines.index("beside ended")]
    assert any(line.startswith("… still the other step") for line in after), done.stdout


def test_a_failed_step_beside_fails_the_whole(tmp_path: Path) -> None:
    done = run_step(tmp_path, "--beside", "the other step", "exit 3", "the step", "true")
    assert done.returncode == 3, done.stdout
    assert "==> The other step: failed after" in done.stdout
    assert "(exit status 3)" in done.stdout


# --------------------------------------------------------------------------- hatch_build.py


class Said:
    """What the build said, and when."""

    def __init__(self) -> None:
        self.lines: list[tuple[float, str]] = []

    def __call__(self, text: str) -> None:
        self.lines.append((time.monotonic(), text))

    def texts(self) -> list[str]:
        return [text for _, text in self.lines]

    def longest_silence(self, start: float, end: float) -> float:
        times = [start, *(when for when, _ in self.lines), end]
        return max(later - earlier for earlier, later in zip(times, times[1:], strict=False))


@pytest.fixture
def quick_heartbeat(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> float:
    """The build's steps run in ``tmp_path`` and say they are alive every 0.3 s."""
    monkeypatch.setattr(hatch_build, "SOURCE", tmp_path)
    monkeypatch.setattr(hatch_build, "HEARTBEAT", 0.3)
    return 0.3


def test_a_silent_build_step_says_what_it_does_while_it_runs(quick_heartbeat: float) -> None:
    said = Said()
    start = time.monotonic()
    hatch_build._run(
        "tsc", "compiling src/ to lib/", ["sh", "-c", "sleep 4"], dict(os.environ), said
    )
    end = time.monotonic()
    texts = said.texts()
    assert texts[0] == "atomic-jupyter labextension: tsc: compiling src/ to lib/"
    assert any(text.startswith("atomic-jupyter labextension: tsc: still running") for text in texts)
    assert texts[-1].startswith("atomic-jupyter labextension: tsc done in")
    # Silent for 4 s, it said something at least every 0.3 s (with room for a loaded machine).
    assert said.longest_silence(start, end) < quick_heartbeat + 1.5, said.lines


def test_npm_ci_says_how_many_packages_it_looked_up_then_fetched(
    quick_heartbeat: float,
) -> None:
    """npm's line per request is counted, not shown: first the packages' metadata (the
    lockfile names no addresses), then their tarballs."""
    looked_up = "".join(
        f"echo 'npm http fetch GET 200 https://registry.example/pkg{n} 5ms (cache hit)'; "
        for n in range(3)
    )
    fetched = "".join(
        f"echo 'npm http fetch GET 200 https://registry.example/pkg{n}/-/pkg{n}-1.0.0.tgz 5ms'; "
        for n in range(2)
    )
    script = f"{looked_up} sleep 0.8; {fetched} sleep 0.8; echo 'added 3 packages in 2s'"
    said = Said()
    hatch_build._run("npm ci", "installing", ["sh", "-c", script], dict(os.environ), said, 3)
    texts = said.texts()
    assert any("npm ci: 3 of 3 packages looked up" in text for text in texts), texts
    assert any("npm ci: 2 of 3 packages fetched" in text for text in texts), texts
    assert not any("npm http fetch" in text for text in texts), texts


def test_a_failed_build_step_raises_with_its_output(quick_heartbeat: float) -> None:
    with pytest.raises(hatch_build.LabextensionBuildError) as failed:
        hatch_build._run(
            "tsc",
            "compiling",
            ["sh", "-c", "echo 'src/x.ts: error'; exit 2"],
            dict(os.environ),
            print,
        )
    assert "`tsc` (exit status 2)" in str(failed.value)
    assert "src/x.ts: error" in str(failed.value)


# --------------------------------------------------------------------------- what npm installs


def test_the_build_installs_no_package_of_the_markdown_parser() -> None:
    lock = json.loads((LABEXTENSION / "package-lock.json").read_text(encoding="utf-8"))
    packages = lock["packages"]
    names = {path.rsplit("node_modules/", 1)[-1] for path in packages if path}
    assert not names & {"mermaid", "marked", "katex", "cytoscape", "@jupyterlab/mermaid"}
    stub = packages["node_modules/@jupyterlab/markedparser-extension"]
    assert stub == {"resolved": "build-stubs/markedparser-extension", "link": True}
    manifest = json.loads((LABEXTENSION / "package.json").read_text(encoding="utf-8"))
    assert manifest["overrides"] == {
        "@jupyterlab/markedparser-extension": "$@jupyterlab/markedparser-extension"
    }
    stand_in = LABEXTENSION / stub["resolved"] / "package.json"
    assert json.loads(stand_in.read_text(encoding="utf-8"))["name"] == (
        "@jupyterlab/markedparser-extension"
    )
    # A change to the stand-in installs node_modules again, and rebuilds.
    assert str(stand_in.relative_to(LABEXTENSION)) in hatch_build.NPM_FILES
    assert hatch_build._npm_packages() < 340  # 444 with the parser's
