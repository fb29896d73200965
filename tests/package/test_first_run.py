"""``make lab`` on a fresh clone says what it is doing: each set-up step through
``scripts/step.py`` (a heartbeat while a step is silent, its time, its exit status), only what
JupyterLab runs installed, and the same way to stop it in the banner and the README.
"""

from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STEP = ROOT / "scripts" / "step.py"


def run_step(
    tmp_path: Path, *command: str, pip: bool = False, heartbeat: float | None = None
) -> subprocess.Popen[str]:
    """``scripts/step.py`` running ``command`` (its heartbeat after ``heartbeat`` seconds of
    silence instead of 5, when given)."""
    args = [sys.executable, str(STEP), *(["--pip"] if pip else []), "the step", *command]
    env = dict(os.environ)
    if heartbeat is not None:
        env["STEP_HEARTBEAT"] = str(heartbeat)
    return subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path, env=env
    )


def lines_of(process: subprocess.Popen[str]) -> queue.Queue[str]:
    found: queue.Queue[str] = queue.Queue()

    def read() -> None:
        assert process.stdout is not None
        with process.stdout:
            for line in process.stdout:
                found.put(line.rstrip("\n"))
        found.put("<eof>")

    threading.Thread(target=read, daemon=True).start()
    return found


def next_matching(lines: queue.Queue[str], pattern: str, deadline: float) -> str:
    while True:
        line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
        if line == "<eof>":
            raise AssertionError(f"no line matched {pattern!r}")
        if re.search(pattern, line):
            return line


def test_a_silent_step_prints_a_heartbeat_and_then_its_time(tmp_path: Path) -> None:
    """The step's command waits for a file; the heartbeat comes while it waits."""
    gate = tmp_path / "gate"
    waiter = f"while [ ! -e {gate} ]; do sleep 0.05; done; echo finished"
    process = run_step(tmp_path, "sh", "-c", waiter, heartbeat=0.5)
    try:
        lines = lines_of(process)
        deadline = time.monotonic() + 30
        assert next_matching(lines, r"^==> The step", deadline)
        beat = next_matching(lines, r"still", deadline)
        assert re.search(r"… still the step \(\d+ s\)", beat)
        gate.touch()
        assert next_matching(lines, r"finished", deadline).strip() == "finished"
        assert re.search(r"done in \d", next_matching(lines, r"done in", deadline))
        assert process.wait(timeout=30) == 0
        while lines.get(timeout=30) != "<eof>":  # the reader has closed the pipe
            pass
    finally:
        gate.touch()  # a failed assertion leaves no step waiting
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)


def test_a_failed_step_says_so_and_keeps_its_exit_status(tmp_path: Path) -> None:
    process = run_step(tmp_path, "sh", "-c", "echo broken >&2; exit 7")
    out, _ = process.communicate(timeout=30)
    assert process.returncode == 7
    assert "broken" in out and "7" in out.splitlines()[-1]


def shortened(tmp_path: Path, script: str) -> list[str]:
    """What ``step.py --pip`` shows of ``script``'s output: the lines between the step's name
    and command and its time, once it ended well."""
    process = run_step(tmp_path, "sh", "-c", script, pip=True)
    out, _ = process.communicate(timeout=30)
    assert process.returncode == 0
    return [line.strip() for line in out.splitlines()[2:-1]]


def test_pip_output_is_shortened_to_counts(tmp_path: Path) -> None:
    fake_pip = (
        "echo 'Collecting a'; echo 'Collecting b'; "
        "echo 'Installing collected packages: a, b'; "
        "echo 'Successfully installed a-1 b-2'; echo 'WARNING: kept as it is'"
    )
    shown = shortened(tmp_path, fake_pip)
    assert not any(line.startswith(("Collecting", "Installing collected")) for line in shown)
    assert "installed 2 packages" in shown
    assert "WARNING: kept as it is" in shown


def test_uv_output_keeps_its_summary_and_not_a_line_per_package(tmp_path: Path) -> None:
    fake_uv = (
        "echo 'Using Python 3.11.7 environment at: .venv'; echo 'Resolved 2 packages in 9ms'; "
        "echo 'Installed 2 packages in 3ms'; echo ' + a==1'; echo ' - b==2'; echo ' ~ c==3'; "
        "echo 'warning: kept as it is'"
    )
    assert shortened(tmp_path, fake_uv) == [
        "Resolved 2 packages in 9ms",
        "Installed 2 packages in 3ms",
        "warning: kept as it is",
    ]


def test_make_lab_installs_only_what_jupyterlab_runs() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    plan = subprocess.run(
        ["make", "-n", "-B", "lab"], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    ).stdout
    assert "-e '.[lab]'" in plan and "test," not in plan
    assert "install-agent --line current" in plan and "--line all" not in plan
    assert "scripts/step.py" in plan


def test_the_banner_and_the_readme_say_the_same_way_to_stop() -> None:
    banner = (ROOT / "scripts" / "lab.sh").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    started = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    for text in (banner, readme, started):
        assert "Ctrl-C twice" in text
    assert "Ctrl-C (twice)" not in banner
