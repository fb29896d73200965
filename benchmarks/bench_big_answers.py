"""Benchmark 18: what big answers cost the kernel, and what comes back (issue 56;
``--only big_answers``).

One kernel driven like JupyterLab (``BrowserLikeKernel``, ``tracemalloc`` started first) runs
the current agent line against a scripted model: a few short ``%%atomic_agent --wait`` runs,
then 8 runs whose answer is 2 MB of Markdown text (lines, streamed in the scripted model's
16-character pieces), then ``%atomic_agent new`` and 150 short runs, which push the big runs
out of the runs a session keeps (:data:`~atomic_jupyter.session.run_tracker.RUNS_KEPT`).
The kernel's resident memory (``VmRSS``, less what ``tracemalloc`` uses for its own record of
the blocks) and the Python memory it holds (``tracemalloc``'s
traced memory, after a collection) are read before the big runs, right after them, and after
they are pushed out.

The baseline, in the same run and the same sequence: a bare kernel (no session, the same
``tracemalloc``) whose cells run the same agent themselves (``--mode rpc``, the same model),
send it the same prompts, and read and parse every line it writes (``json.loads``), keeping
nothing.

Goals (issue 56): the session's resident growth while the big runs are kept under 3x their
text; back within 20 MB of before once they are pushed out; the held Python memory back
within the stated budgets (the final records kept, ``FINAL_RECORDS_KEPT``).
"""

from __future__ import annotations

import json
import os
import shlex
import tempfile
from pathlib import Path
from typing import Any

from atomic_jupyter.addons.model_server import Text, Turn, Usage, agent_args
from atomic_jupyter.notebook.presentation import FINAL_RECORDS_KEPT
from atomic_jupyter.transport.launch import resolve_command
from atomic_jupyter.transport.node import wheel_node, with_node_first
from tests.harness.kernel_client import BrowserLikeKernel
from tests.harness.support import scripted_agent_home

from .common import Config, Results

SECTION = "18 big answers"
#: The big answers: how many, and the characters of each.
BIG_RUNS = 8
BIG_CHARS = 2 << 20
#: Short runs after ``new``, to push the big ones out of the runs kept.
SHORT_RUNS = 150
#: The goals of issue 56.
KEPT_FACTOR = 3.0
BACK_WITHIN = 20 << 20
_LINE = "Line of a big answer: the quick brown fox jumps over the lazy dog.\n"
BIG_TEXT = (_LINE * (BIG_CHARS // len(_LINE) + 1))[:BIG_CHARS]
MB = 1e6

#: Read in a kernel: its resident memory and the Python memory it holds.
_READ = (
    "import gc as _bg, json as _bj, tracemalloc as _bt\n"
    "_bg.collect()\n"
    "print(_bj.dumps({'rss': [int(l.split()[1]) * 1024 for l in open('/proc/self/status')"
    " if l.startswith('VmRSS')][0], 'held': _bt.get_traced_memory()[0],"
    " 'tracing': _bt.get_tracemalloc_memory()}))"
)

#: The bare kernel's agent: started once, each command's lines read and parsed until the
#: line that ends it (a prompt's ``agent_settled``: the current line's), nothing kept.
_BARE_SETUP = """
import json as _bj, subprocess as _bs
_bp = _bs.Popen({argv!r}, stdin=_bs.PIPE, stdout=_bs.PIPE, stderr=_bs.DEVNULL, env={env!r})
def _bare_command(command, until):
    _bp.stdin.write((_bj.dumps(command) + "\\n").encode())
    _bp.stdin.flush()
    for _line in _bp.stdout:
        _event = _bj.loads(_line)
        if _event.get("type") == until or _event.get("command") == until:
            return
    raise RuntimeError("the agent exited")
"""


def script(request: Any) -> Turn:
    """The scripted model: the big answer when asked for it, else a short one."""
    if "big answer" in request.last_user_text:
        return Turn([Text(BIG_TEXT)], usage=Usage(10, 5))
    return Turn([Text("A short answer.")], usage=Usage(10, 5))


def _read(k: BrowserLikeKernel) -> tuple[int, int]:
    """The kernel's resident memory less what ``tracemalloc`` itself uses (its record of
    every block, which grows with the blocks held, not with their size), and the Python
    memory it holds."""
    got = json.loads(k.execute(_READ).stdout)
    return got["rss"] - got["tracing"], got["held"]


def _sequence(k: BrowserLikeKernel, run: Any, new: Any, big: int, short: int) -> list[tuple]:
    """Before, right after the big runs, after they are pushed out: (VmRSS, held)."""
    for _ in range(3):
        run("a short question")
    readings = [_read(k)]
    for _ in range(big):
        run("the big answer, please")
    readings.append(_read(k))
    new()
    for _ in range(short):
        run("a short question")
    readings.append(_read(k))
    return readings


def _session(workdir: Path, home: Path, server: Any, big: int, short: int) -> list[tuple]:
    with BrowserLikeKernel(workdir, env={"PI_CODING_AGENT_DIR": str(home)}) as k:
        k.execute("import tracemalloc; tracemalloc.start()")
        k.execute("%load_ext atomic_jupyter")
        k.execute(f"%atomic_agent start -- {shlex.join(agent_args(server))}", timeout=120)

        def run(prompt: str) -> None:
            k.execute(f"%%atomic_agent --wait\n{prompt}", timeout=600)
            k.messages.clear()  # the client's own copy: not what is measured

        return _sequence(k, run, lambda: k.execute("%atomic_agent new", timeout=120), big, short)


def _bare(workdir: Path, home: Path, server: Any, big: int, short: int) -> list[tuple]:
    argv = [*resolve_command().argv, "--mode", "rpc", *agent_args(server)]
    # The Node.js the session would run the agent with (the wheel's, when PATH's is too old).
    env = {**with_node_first(os.environ, wheel_node()), "PI_CODING_AGENT_DIR": str(home)}
    with BrowserLikeKernel(workdir) as k:
        k.execute("import tracemalloc; tracemalloc.start()")
        k.execute(_BARE_SETUP.format(argv=argv, env=env), timeout=60)

        def run(prompt: str) -> None:
            command = {"type": "prompt", "message": prompt}
            k.execute(f"_bare_command({command!r}, 'agent_settled')", timeout=600)

        def new() -> None:
            k.execute("_bare_command({'type': 'new_session'}, 'new_session')", timeout=60)

        readings = _sequence(k, run, new, big, short)
        k.execute("_bp.kill(); _bp.wait()")
        return readings


def big_answers(cfg: Config, results: Results, workdir: Path) -> None:
    big, short = (2, 110) if cfg.quick else (BIG_RUNS, SHORT_RUNS)
    text = big * BIG_CHARS
    print(f"18. big answers: {big} of {BIG_CHARS / MB:.1f} MB, then {short} short runs", flush=True)
    home = workdir / "home"
    home.mkdir()
    with scripted_agent_home(home, script) as server:
        bare = _bare(workdir, home, server, big, short)
        print(f"  bare kernel (VmRSS, held): {bare}", flush=True)
        session = _session(workdir, home, server, big, short)
        print(f"  session (VmRSS, held): {session}", flush=True)
    results.facts["big_answers"] = {"session": session, "bare": bare, "text": text}
    (rss0, held0), (rss1, held1), (rss2, held2) = session
    (bare0, bheld0), (bare1, bheld1), (bare2, bheld2) = bare
    kept = rss1 - rss0
    back = rss2 - rss0
    results.add(
        SECTION,
        f"kernel RSS right after {big} answers of {BIG_CHARS / MB:.1f} MB (kept)",
        f"{rss1 / MB:.0f} MB ({kept / MB:+.0f} MB: {kept / text:.1f}x the text)",
        f"{bare1 / MB:.0f} MB bare kernel ({(bare1 - bare0) / MB:+.0f} MB)",
        f"{rss1 / bare1:.2f}×",
        f"goal: under {KEPT_FACTOR:g}x the text: "
        + ("met" if kept < KEPT_FACTOR * text else "NOT MET"),
    )
    results.add(
        SECTION,
        f"kernel RSS after they are pushed out ({short} short runs)",
        f"{rss2 / MB:.0f} MB ({back / MB:+.0f} MB over before)",
        f"{bare2 / MB:.0f} MB bare kernel ({(bare2 - bare0) / MB:+.0f} MB)",
        f"{rss2 / bare2:.2f}×",
        f"goal: within {BACK_WITHIN >> 20} MB of before: "
        + ("met" if back <= BACK_WITHIN else "NOT MET"),
    )
    results.add(
        SECTION,
        "held Python memory: before / right after / pushed out",
        f"{held0 / MB:.1f} / {held1 / MB:.1f} / {held2 / MB:.1f} MB",
        f"{bheld0 / MB:.1f} / {bheld1 / MB:.1f} / {bheld2 / MB:.1f} MB bare kernel",
        f"{(held2 - held0) / MB:+.1f} MB kept",
        f"budget once pushed out: the final records kept, {FINAL_RECORDS_KEPT >> 20} MB: "
        + ("met" if held2 - held0 <= FINAL_RECORDS_KEPT else "NOT MET"),
    )


def run(cfg: Config, results: Results) -> None:
    with tempfile.TemporaryDirectory(prefix="atomic-bench-big-") as tmp:
        big_answers(cfg, results, Path(tmp))
