"""Benchmark 11: the overhead of one call of the agent's ``python`` tool, against a cell.

A real kernel driven like JupyterLab (``BrowserLikeKernel``), the real pinned agent and the
scripted model (``atomic_jupyter.addons.model_server``, with the tests' conversation script):
the prompt ``kernel call python {"code": ...}`` makes the model call the tool, and the calls
are approved by ``%atomic_agent policy`` (no click). The code is two lines that stamp
``time.monotonic()`` (CLOCK_MONOTONIC, the same clock in every process of the machine), so
where it starts and ends is exact.

(project)  in the kernel, the session's ``KernelTools`` object is wrapped (instance
           attributes; no package code changes): ``claims`` stamps the kernel call's arrival
           on the reader thread, and ``_answer`` the moment the answer's line is in the
           agent's stdin (``Delivery.done``). Between them: (a) arrival → the code's first
           line, (b) the code's last line → the answer written. Finer stamps (the main
           thread picks the call up, ``run_python`` and ``run_code`` enter and return,
           ``_send``) say where the time goes.
(baseline) the same code as a cell of the same kernel: the kernel's ``execute_request``
           handler is wrapped to stamp the request's arrival, and ``Session.send`` to stamp
           the ``execute_reply`` sent; (a) arrival → first line, (b) last line → reply sent.
           The round trip the harness sees (execute_request sent → reply read) is noted too.

Two ways of calling are measured: ``%%atomic_agent`` (the cell ends at once; the call runs on
the idle kernel's event loop) and ``%%atomic_agent --wait`` (the cell blocks; the call runs
from its wait loop). The variants take turns within each repetition, after a warm-up of
each. For context, the whole model-to-model round trip of a call: from the scripted model
answering with the tool call to its next request, which carries the result.
"""

from __future__ import annotations

import json
import shlex
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.harness.kernel_client import BrowserLikeKernel

from .common import PINNED_AGENT, Config, Results, fmt_s, median, quantile

SECTION = "11 python tool"
POLICY = '%atomic_agent policy --title "Python in the kernel" yes'
#: The code of every call and cell: its first line stamps the start, its last the end.
CODE = "_bench_code.append([_bt.monotonic()])\n_bench_code[-1].append(_bt.monotonic())"

#: Installed in the kernel once the session has started (see the module's docstring).
PROBE = r"""
import dataclasses as _bdc, json as _bjson, threading as _bth, time as _bt
import atomic_jupyter as _baj
import atomic_jupyter.notebook.agent_code as _bac
from atomic_jupyter.session.kernel_tools import CALL_PREFIX as _BPREFIX

_bench_code = []           # [start, end] of each run of CODE, calls and cells in order
_bench_calls = []          # stamps of each kernel call of python
_bench_cells = []          # stamps of each cell whose code is CODE
_bench_src = __BENCH_CODE__


def _bench_probe(clock=_bt.monotonic):
    tools = _baj.session()._kernel_tools
    claims, run_builtin, send, answer = (
        tools.claims, tools._run_builtin, tools._send, tools._answer
    )
    python = tools._builtins["python"]
    run_python, run_code = python.run, _bac.run_code

    def stamp(key):
        if _bench_calls:
            _bench_calls[-1].setdefault(key, clock())

    # The main thread's CPU clock, read from the reader thread: what the main thread did
    # between the call's arrival and its start.
    main_cpu = _bt.pthread_getcpuclockid(_bth.main_thread().ident)

    def claims_(request):
        t = clock()
        if str(getattr(request, "title", "")).startswith(_BPREFIX):
            _bench_calls.append({"claim": t, "main_cpu_claim": _bt.clock_gettime(main_cpu)})
        return claims(request)

    def run_builtin_(*args, **kwargs):
        stamp("main")
        if _bench_calls:
            _bench_calls[-1]["main_cpu_main"] = _bt.thread_time()
        return run_builtin(*args, **kwargs)

    def run_python_(arguments, info):
        stamp("run_enter")
        try:
            return run_python(arguments, info)
        finally:
            stamp("run_exit")

    def run_code_(*args, **kwargs):
        stamp("code_enter")
        try:
            return run_code(*args, **kwargs)
        finally:
            stamp("code_exit")

    def send_(*args, **kwargs):
        stamp("send")
        return send(*args, **kwargs)

    def answer_(response):
        record = _bench_calls[-1] if _bench_calls else {}
        delivery = answer(response)
        if delivery.done.is_set():
            record["written"] = clock()
        else:  # the writer thread writes it: stamp when it did
            record["queued"] = True

            def later():
                delivery.done.wait(30)
                record["written"] = clock()

            _bth.Thread(target=later, daemon=True).start()
        record["bytes"] = len(delivery.payload)
        return delivery

    tools.claims, tools._run_builtin, tools._send, tools._answer = (
        claims_, run_builtin_, send_, answer_
    )
    tools._builtins["python"] = _bdc.replace(python, run=run_python_)
    _bac.run_code = run_code_

    kernel = get_ipython().kernel
    execute = kernel.shell_handlers["execute_request"]
    session_send = kernel.session.send
    open_cell = []

    def execute_(stream, ident, parent):
        if parent["content"].get("code") == _bench_src:
            record = {"request": clock()}
            _bench_cells.append(record)
            open_cell[:] = [record]
        return execute(stream, ident, parent)

    def session_send_(stream, msg_or_type, *args, **kwargs):
        sent = session_send(stream, msg_or_type, *args, **kwargs)
        if open_cell and msg_or_type == "execute_reply":
            open_cell.pop()["reply"] = clock()
        return sent

    kernel.shell_handlers["execute_request"] = execute_
    kernel.session.send = session_send_


_bench_probe()
"""


def _prompt(code: str) -> str:
    return "kernel call python " + json.dumps({"code": code})


class _ModelClock:
    """The scripted model's script, stamping when each request reached it."""

    def __init__(self, script: Callable[[Any], Any]) -> None:
        self.script = script
        self.stamps: list[tuple[float, int]] = []
        self.lock = threading.Lock()

    def __call__(self, request: Any) -> Any:
        with self.lock:
            self.stamps.append((time.monotonic(), request.turn_index))
        return self.script(request)

    def count(self) -> int:
        with self.lock:
            return len(self.stamps)


def _cell(k: BrowserLikeKernel) -> tuple[float, float]:
    """Run CODE as a cell; return when it was sent and when its reply was read."""
    sent = time.monotonic()
    msg_id = k.submit(CODE)
    k.wait_for(lambda: k.replied(msg_id), timeout=30, what="the cell's reply")
    seen = time.monotonic()
    k.collect(msg_id)
    return sent, seen


def _call(k: BrowserLikeKernel, model: _ModelClock, wait: bool) -> tuple[float, float]:
    """Have the agent run CODE with its python tool; return when the model answered with the
    call and when its next request (with the result) came."""
    n0 = model.count()
    if wait:
        k.execute("%%atomic_agent --wait\n" + _prompt(CODE), timeout=60)
    else:
        k.execute("%%atomic_agent\n" + _prompt(CODE), timeout=60)
        # The kernel is idle; the harness only reads IOPub until the model has the result.
        k.wait_for(lambda: model.count() >= n0 + 2, timeout=60, what="the call's result")
        k.execute("aj.session().wait(timeout=60)", timeout=90)
    stamps = model.stamps[n0:]
    assert [turn for _t, turn in stamps] == [0, 1], stamps
    return stamps[0][0], stamps[1][0]


def _fetch(k: BrowserLikeKernel) -> dict[str, Any]:
    out = k.execute(
        "print(_bjson.dumps({'code': _bench_code, 'calls': _bench_calls, 'cells': _bench_cells}))"
    ).stdout
    data: dict[str, Any] = json.loads(out)
    return data


def _ratio(project: float, baseline: float) -> str:
    ratio = project / baseline
    return f"{ratio:.2f}×" if ratio < 1 else f"{ratio:.1f}×"


def agent_code(cfg: Config, results: Results, workdir: Path) -> None:
    from atomic_jupyter.addons.model_server import (
        ScriptedModelServer,
        agent_args,
        write_models_json,
    )
    from tests.harness.support import SMALL_SESSION_SETTINGS, conversation_script

    print("11. a call of the agent's python tool, against a cell", flush=True)
    if not PINNED_AGENT.exists():
        print(f"  skipped: no pinned agent at {PINNED_AGENT} (make agent)", flush=True)
        return
    reps = 5 if cfg.quick else 30
    model = _ModelClock(conversation_script)
    home = workdir / "agent-home"
    cwd = workdir / "notebook"
    cwd.mkdir()
    order: list[str] = []  # "cell", "idle", "wait": the order CODE ran in
    model_rt: dict[str, list[tuple[float, float]]] = {"idle": [], "wait": []}
    harness: list[tuple[float, float]] = []
    with ScriptedModelServer(model) as server:
        write_models_json(home, server)
        (home / "settings.json").write_text(SMALL_SESSION_SETTINGS)
        env = {
            "ATOMIC_AGENT_COMMAND": shlex.join([str(PINNED_AGENT), "--no-session"]),
            "PI_CODING_AGENT_DIR": str(home),
            "ATOMIC_JUPYTER_CONVERSATIONS": str(workdir / "conversations"),
        }
        with BrowserLikeKernel(cwd, env=env) as k:
            k.execute("%load_ext atomic_jupyter")
            k.execute(f"%atomic_agent start -- {shlex.join(agent_args(server))}", timeout=120)
            k.execute("import atomic_jupyter as aj")
            k.execute(POLICY)
            k.execute(PROBE.replace("__BENCH_CODE__", repr(CODE)))
            variants = ("cell", "idle", "wait")
            for rep in range(reps + 1):  # the first round is the warm-up
                shift = rep % len(variants)
                for kind in variants[shift:] + variants[:shift]:
                    if kind == "cell":
                        sent_seen = _cell(k)
                    else:
                        rt = _call(k, model, wait=kind == "wait")
                    order.append(kind)
                    if rep == 0:
                        continue
                    if kind == "cell":
                        harness.append(sent_seen)
                    else:
                        model_rt[kind].append(rt)
            data = _fetch(k)
            k.execute("%atomic_agent policy --clear")
            k.execute("%atomic_agent stop", timeout=60)

    code, calls, cells = data["code"], data["calls"], data["cells"]
    assert len(code) == len(order), (len(code), len(order))
    assert len(calls) == 2 * (reps + 1) and len(cells) == reps + 1, (len(calls), len(cells))
    # Pair each run of CODE with its kernel stamps; drop the warm-up round.
    runs: dict[str, list[dict[str, float]]] = {"cell": [], "idle": [], "wait": []}
    it_calls, it_cells = iter(calls), iter(cells)
    for n, (kind, (start, end)) in enumerate(zip(order, code, strict=True)):
        record = dict(next(it_cells) if kind == "cell" else next(it_calls))
        record.update(start=start, end=end)
        if n >= len(variants):
            runs[kind].append(record)
    results.facts["agent_code"] = {"runs": runs, "model": model_rt, "harness": harness}

    def spans(kind: str, a: str, b: str) -> list[float]:
        return [r[b] - r[a] for r in runs[kind]]

    cell_a, cell_b = spans("cell", "request", "start"), spans("cell", "end", "reply")
    cell_rt = [seen - sent for sent, seen in harness]
    code_s = [r["end"] - r["start"] for rs in runs.values() for r in rs]
    queued = sum(1 for kind in ("idle", "wait") for r in runs[kind] if r.get("queued"))
    size = median([r["bytes"] for r in runs["idle"] + runs["wait"]])
    for kind, how in (
        ("idle", "%%atomic_agent, idle kernel"),
        ("wait", "%%atomic_agent --wait"),
    ):
        a, b = spans(kind, "claim", "start"), spans(kind, "end", "written")
        hop = median(spans(kind, "claim", "main"))
        busy = median(spans(kind, "main_cpu_claim", "main_cpu_main"))
        card = median(spans(kind, "main", "code_enter"))
        prep = median(spans(kind, "code_enter", "start"))
        results.add(
            SECTION,
            f"(a) call reaches the kernel → code's first line ({how})",
            f"{fmt_s(median(a))} (p90 {fmt_s(quantile(a, 0.9))})",
            f"cell: execute_request handled → first line: {fmt_s(median(cell_a))}",
            _ratio(median(a), median(cell_a)),
            f"{len(a)} calls and {len(cell_a)} cells, taking turns, same kernel; reader thread "
            f"→ main thread {fmt_s(hop)} (main-thread CPU on other work meanwhile: "
            f"{fmt_s(busy)}), → run_code (the card says running) {fmt_s(card)}, → first line "
            f"(compile, output capture) {fmt_s(prep)}",
        )
        tail_code = median(spans(kind, "end", "code_exit"))
        tail_run = median(spans(kind, "code_exit", "run_exit"))
        tail_send = median(spans(kind, "run_exit", "send"))
        tail_write = median(spans(kind, "send", "written"))
        results.add(
            SECTION,
            f"(b) code's last line → answer on the agent's stdin ({how})",
            f"{fmt_s(median(b))} (p90 {fmt_s(quantile(b, 0.9))})",
            f"cell: last line → execute_reply sent: {fmt_s(median(cell_b))}",
            _ratio(median(b), median(cell_b)),
            f"run_code's end {fmt_s(tail_code)}, run_python's (history, text) "
            f"{fmt_s(tail_run)}, the card's end {fmt_s(tail_send)}, encode + write "
            f"{fmt_s(tail_write)}; answer {size:.0f} B"
            + (f", {queued} via the writer thread" if queued else ", all written at once"),
        )
    for kind, how in (("idle", "idle kernel"), ("wait", "--wait")):
        rt = [t1 - t0 for t0, t1 in model_rt[kind]]
        before = [r["claim"] - t0 for r, (t0, _t1) in zip(runs[kind], model_rt[kind], strict=True)]
        after = [t1 - r["written"] for r, (_t0, t1) in zip(runs[kind], model_rt[kind], strict=True)]
        kernel = [r["written"] - r["claim"] for r in runs[kind]]
        results.add(
            SECTION,
            f"model answers with the call → model gets the result ({how})",
            f"{fmt_s(median(rt))} (p90 {fmt_s(quantile(rt, 0.9))})",
            f"cell round trip as the harness sees it: {fmt_s(median(cell_rt))}",
            _ratio(median(rt), median(cell_rt)),
            f"agent before the kernel (tool call parsed, policy-approved confirm, editor "
            f"request) {fmt_s(median(before))}, kernel {fmt_s(median(kernel))}, agent after "
            f"(result → next request) {fmt_s(median(after))}; code itself "
            f"{fmt_s(median(code_s))}",
        )


def run(cfg: Config, results: Results) -> None:
    with tempfile.TemporaryDirectory(prefix="atomic-bench-agent-code-") as tmp:
        agent_code(cfg, results, Path(tmp))
