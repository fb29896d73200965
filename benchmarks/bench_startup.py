"""Benchmark 4: start-up of the pinned agent, through the session and bare.

(project) ``aj.start(command=[pinned pi, "--no-session"], display=False)`` until it returns:
          the agent is started, has answered ``get_state`` (ready) and ``get_commands``.
(baseline) the same command (``pi --no-session --mode rpc``) started with ``subprocess``,
           until its response to a ``get_state`` line arrives.
(detail) the same bare measurement with the session's full command line, which also loads the
         prototyping hub extension (``-e hub.ts``): the difference is the agent's own work.

The variants take turns within each repetition. The agent's configuration directory is a
private empty one (``PI_CODING_AGENT_DIR``), the same for all.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from pathlib import Path

import atomic_jupyter as aj
from atomic_jupyter.transport.agent_package import prepare_agent

from .common import PINNED_AGENT, Config, Results, fmt_s, median


def bare_start(argv: list[str], env: dict[str, str], cwd: str) -> float:
    """Seconds from spawning ``argv`` to its answer to ``get_state``."""
    start = time.monotonic()
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=cwd,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(b'{"type":"get_state","id":"bench-1"}\n')
        proc.stdin.flush()
        for line in proc.stdout:
            if b'"type":"response"' in line and b'"bench-1"' in line:
                return time.monotonic() - start
        raise RuntimeError(f"{argv[0]} exited without answering get_state")
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def session_start(command: list[str], cwd: str) -> tuple[float, list[str]]:
    start = time.monotonic()
    session = aj.start(command=command, display=False, cwd=cwd, name="bench-startup")
    elapsed = time.monotonic() - start
    argv = list(session.argv)
    session.stop()
    return elapsed, argv


def run(cfg: Config, results: Results) -> None:
    print("4. start-up", flush=True)
    if not PINNED_AGENT.exists():
        results.add(
            "4 start-up",
            "aj.start until ready",
            "skipped",
            "—",
            "—",
            f"the pinned agent is not installed at {PINNED_AGENT} (make agent)",
        )
        return
    command = [str(PINNED_AGENT), "--no-session"]
    with (
        tempfile.TemporaryDirectory(prefix="atomic-bench-home-") as home,
        tempfile.TemporaryDirectory(prefix="atomic-bench-cwd-") as cwd,
    ):
        old = os.environ.get("PI_CODING_AGENT_DIR")
        os.environ["PI_CODING_AGENT_DIR"] = home
        try:
            # The bare agent runs as the session runs it: on the Node.js the session picks.
            bare = prepare_agent([*command, "--mode", "rpc"], os.environ)
            env = bare.env
            session_s: list[float] = []
            bare_s: list[float] = []
            full_s: list[float] = []
            # One untimed round: the OS file cache and Node's compile cache warm up.
            _, session_argv = session_start(command, cwd)
            bare_start(bare.argv, env, cwd)
            for rep in range(cfg.startup_reps):
                # The variants take turns, in a rotating order.
                steps = [
                    lambda: session_s.append(session_start(command, cwd)[0]),
                    lambda: bare_s.append(bare_start(bare.argv, env, cwd)),
                    lambda: full_s.append(bare_start(session_argv, env, cwd)),
                ]
                for step in steps[rep % 3 :] + steps[: rep % 3]:
                    step()
        finally:
            if old is None:
                os.environ.pop("PI_CODING_AGENT_DIR", None)
            else:
                os.environ["PI_CODING_AGENT_DIR"] = old
    extra = [a for a in session_argv if a not in (*bare.argv, "--mode", "rpc")]
    results.facts["startup"] = {
        "session_s": session_s,
        "bare_s": bare_s,
        "bare_session_argv_s": full_s,
        "session_argv": session_argv,
    }
    results.add(
        "4 start-up",
        "aj.start(command=[pi, --no-session]) until ready",
        f"{fmt_s(median(session_s))} (min {fmt_s(min(session_s))})",
        f"bare `pi --no-session --mode rpc` → get_state answer: {fmt_s(median(bare_s))} "
        f"(min {fmt_s(min(bare_s))})",
        f"{median(session_s) / median(bare_s):.2f}×",
        f"{cfg.startup_reps} reps; bare with the session's own argv "
        f"(+{' '.join(Path(a).name if '/' in a else a for a in extra)}): "
        f"{fmt_s(median(full_s))} (min {fmt_s(min(full_s))}); aj.start also waits for "
        "get_commands",
    )
