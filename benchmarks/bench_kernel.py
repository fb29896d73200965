"""Benchmarks 2, 3 and 5: a real kernel driven like a browser, with the stand-in agent.

The kernel is an ``ipykernel`` subprocess driven by ``tests/harness/kernel_client.py``
(``BrowserLikeKernel``): it processes every IOPub message and keeps the widget models the way
JupyterLab's widget manager does. The agent is ``benchmarks/standin_agent.py``, started with
``%atomic_agent start --command ...``; it replays a generated stream at full speed and stamps
its writes with CLOCK_MONOTONIC (``time.monotonic()``), the clock the harness reads too.

Benchmark 2 also replays the same run in the current agent line's shape (delta-only
``message_update``, ending with ``agent_settled``) in a second session of the same kernel,
its runs taking turns with the 0.73-shaped ones.
"""

from __future__ import annotations

import html
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from tests.harness.kernel_client import BrowserLikeKernel
from tests.harness.kernel_widgets import (
    WIDGET_VIEW,
    PageDialog,
    displayed,
    elements,
    live_view,
    outputs_within,
    run_state,
)
from tests.harness.widget_text import visible_text

from . import bench_latency
from .common import (
    STANDIN,
    Config,
    Results,
    fmt_count,
    fmt_s,
    median,
    memory_streams,
    rss_of,
)
from .stream import Stream, StreamSpec, build_stream

CLK_TCK = os.sysconf("SC_CLK_TCK")
#: Pause before each dialog in the "apart" variant: longer than the transcript's render interval.
GAP_MS = 200


def dialog_button(
    k: BrowserLikeKernel, transcript: str, marker: str, label: str = "Alpha"
) -> tuple[PageDialog, int] | None:
    """The dialog in the run's output ``transcript`` whose title holds ``marker``, and the
    index of its option ``label``, once the page has the dialog's description (what its
    module draws the controls from); None until then. Clicking the option is
    ``dialog.choose(index)``: the custom message the page sends."""
    for output in outputs_within(k, transcript):
        content = k.tracker.pages[output].content
        for dialog_id, described in content.dialogs.items():
            if described.get("method") == "select" and marker in str(described.get("title")):
                options = list(described.get("options") or [])
                place = f'data-dialog="{html.escape(dialog_id)}"'
                blocks = [key for key, drawn in content.blocks.items() if place in drawn]
                if label not in options or not blocks:
                    return None
                return PageDialog(k, output, dialog_id, described, blocks[0]), options.index(label)
    return None


def cpu_seconds(pid: int, tid: int | None = None) -> float:
    """User + system CPU time of a process so far (all its threads), or of one thread."""
    path = f"/proc/{pid}/stat" if tid is None else f"/proc/{pid}/task/{tid}/stat"
    with open(path, encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def package_location(k: BrowserLikeKernel) -> str:
    """Where the kernel imports ``atomic_jupyter`` from; fails when ``PYTHONPATH`` names a
    copy of the package and the kernel does not use it (the figures would be of another
    tree)."""
    where = k.execute("import atomic_jupyter as _baj; print(_baj.__file__)").stdout.strip()
    for entry in filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep)):
        if (Path(entry) / "atomic_jupyter").is_dir() and not where.startswith(
            os.path.abspath(entry)
        ):
            raise AssertionError(f"PYTHONPATH names {entry}, but the kernel imports {where}")
    return where


class Rig:
    """A kernel with the magic loaded and a stand-in session started."""

    def __init__(
        self, kernel: BrowserLikeKernel, workdir: Path, report: Path, command: str = ""
    ) -> None:
        self.k = kernel
        self.workdir = workdir
        self.report = report
        self.command = command
        #: The panel's output widget of each session started here ("" for the default one).
        self.panels: dict[str, str] = {}
        #: Each prompt's cell output (the run's output widget's display), by its comm id.
        self._areas: dict[str, dict[str, Any]] = {}
        self.pid = int(kernel.execute("import os; os.getpid()").result or "0")
        self._report_seen = 0
        # When the session's reader thread handled the first and the last event of a run.
        kernel.execute(
            "import time as _bt, atomic_jupyter as _baj\n"
            "_bench_stamps = {}\n"
            "def _bench_listener(event, stamps=_bench_stamps, clock=_bt.monotonic):\n"
            "    if event.type in ('agent_start', 'agent_end'):\n"
            "        stamps[event.type] = clock()\n"
            "_baj.session().on_event(_bench_listener)"
        )

    def stamps(self) -> dict[str, float]:
        """When the kernel's reader thread handled ``agent_start`` and ``agent_end``."""
        out = self.k.execute("import json as _bj; print(_bj.dumps(_bench_stamps))").stdout
        return {k: float(v) for k, v in json.loads(out).items()}

    def records(self) -> list[dict[str, Any]]:
        """New records of the stand-in since the last call."""
        if not self.report.exists():
            return []
        lines = self.report.read_text(encoding="utf-8").splitlines()
        new, self._report_seen = lines[self._report_seen :], len(lines)
        return [json.loads(line) for line in new if line.strip()]

    def start_session(self, name: str) -> None:
        """Start another session of the stand-in in the same kernel, named ``name``."""
        started = self.k.execute(
            f"%atomic_agent start --name {name} --command {shlex.quote(self.command)}", timeout=60
        )
        (self.panels[name],) = started.widget_ids

    def prompt(self, text_: str, name: str | None = None) -> str:
        """Run a ``%%atomic_agent`` cell (in session ``name``, else the default one); return
        its output widget's comm id."""
        option = f" --name {name}" if name else ""
        result = self.k.execute(f"%%atomic_agent{option}\n{text_}", timeout=120)
        (tid,) = result.widget_ids
        self._areas[tid] = live_view(result.outputs)
        return str(tid)

    def state_of(self, transcript: str) -> str:
        """What the run's header says (``sent``, ``working…``, ``done``), as the page last
        drew it: the run's output, or the record that replaced it in the cell. (A run that
        ends before its cell has shown its output is shown by its record at once: its output
        is closed without a final render.)"""
        area = self._areas.get(transcript)
        if area is not None:
            shown = displayed(self.k, area)
            if WIDGET_VIEW not in shown:
                found = elements(shown.get("text/html", ""), "atomic-run-state")
                return visible_text(found[0]).strip() if found else ""
        if transcript not in self.k.tracker.pages:
            return ""
        try:
            return run_state(self.k, transcript)
        except AssertionError:  # nothing drawn yet
            return ""

    def wait_done(self, transcript: str, timeout: float = 300) -> float:
        self.k.wait_for(
            lambda: self.state_of(transcript) == "done", timeout=timeout, what="the run to end"
        )
        return time.monotonic()


@contextmanager
def rig(workdir: Path, name: str) -> Iterator[Rig]:
    report = workdir / f"{name}-report.jsonl"
    agent_home = workdir / f"{name}-agent-home"
    agent_home.mkdir(exist_ok=True)
    cwd = workdir / f"{name}-notebook"
    cwd.mkdir(exist_ok=True)
    command = shlex.join([sys.executable, str(STANDIN), "--report", str(report)])
    env = {"PI_CODING_AGENT_DIR": str(agent_home), "PYTHONUNBUFFERED": "1"}
    with BrowserLikeKernel(cwd, env=env) as kernel:
        kernel.execute("%load_ext atomic_jupyter")
        started = kernel.execute(
            f"%atomic_agent start --command {shlex.quote(command)}", timeout=60
        )
        r = Rig(kernel, workdir, report, command)
        (r.panels[""],) = started.widget_ids
        yield r


def bare_production(path: Path, report: Path) -> float:
    """Seconds the stand-in takes to write the stream into a pipe drained by a bare reader."""
    proc = subprocess.Popen(
        [sys.executable, str(STANDIN), "--bare", str(path), "--report", str(report)],
        stdout=subprocess.PIPE,
    )
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    while os.read(fd, 1 << 16):
        pass
    proc.wait()
    lines = report.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[-1])
    return float(record["t_last"] - record["t_first"])


NODE_PRODUCER = r"""
const fs = require("fs");
const objects = fs.readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean).map(l => JSON.parse(l));
const start = process.hrtime.bigint();
for (const o of objects) {
  const buf = Buffer.from(JSON.stringify(o) + "\n");
  let off = 0;
  while (off < buf.length) {
    try { off += fs.writeSync(1, buf, off); } catch (e) { if (e.code !== "EAGAIN") throw e; }
  }
}
fs.writeSync(2, String(Number(process.hrtime.bigint() - start) / 1e9));
"""


def node_production(path: Path) -> float | None:
    """Seconds Node.js takes to JSON.stringify the same events and write them into a pipe:
    the least the real agent spends producing this stream (None without node)."""
    if shutil.which("node") is None:
        return None
    proc = subprocess.Popen(
        ["node", "-e", NODE_PRODUCER, str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None and proc.stderr is not None
    fd = proc.stdout.fileno()
    while os.read(fd, 1 << 16):
        pass
    err = proc.stderr.read().decode()
    proc.wait()
    try:
        return float(err.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None


def _patch(msg: dict[str, Any]) -> dict[str, Any]:
    """The patch (or snapshot) an output's custom message carries; empty for other messages."""
    data = msg["content"].get("data") or {}
    content = data.get("content") if data.get("method") == "custom" else None
    return content if isinstance(content, dict) else {}


def _comm_msgs(k: BrowserLikeKernel, start: int) -> list[dict[str, Any]]:
    return [m for m in k.messages[start:] if m["header"]["msg_type"] == "comm_msg"]


# --------------------------------------------------------------------------- 2. end to end


#: The session of the runs in the current agent line's shape (it ends runs on agent_settled,
#: which the default session, replaying the 0.73 shape, must not learn).
CURRENT = "current"


def end_to_end(cfg: Config, results: Results, workdir: Path, stream: Stream) -> None:
    print("2. end to end through a real kernel (stand-in agent)", flush=True)
    path = workdir / "stream.jsonl"
    path.write_bytes(stream.data)
    current = build_stream(replace(stream.spec, shape="current"))
    current_path = workdir / "stream-current.jsonl"
    current_path.write_bytes(current.data)
    bare_report = workdir / "bare-report.jsonl"
    with rig(workdir, "e2e") as r:
        k = r.k
        where = package_location(k)
        results.facts["package_in_kernel"] = where
        print(f"  atomic_jupyter in the kernel: {where}", flush=True)
        r.start_session(CURRENT)
        # A small stream first: imports and first renders are not what is measured.
        warm_spec = StreamSpec(text_deltas=200, thinking_deltas=20, tool_updates=5, status_lines=50)
        warm = workdir / "warm.jsonl"
        warm.write_bytes(build_stream(warm_spec).data)
        r.wait_done(r.prompt(f"replay {warm}"))
        warm_current = workdir / "warm-current.jsonl"
        warm_current.write_bytes(build_stream(replace(warm_spec, shape="current")).data)
        r.wait_done(r.prompt(f"replay {warm_current}", CURRENT))
        r.records()
        # The same run in the current line's shape, in its own session: its times.
        cur: dict[str, list[float]] = {"kernel": [], "bare": [], "cpu": [], "main": []}

        kernel_s: list[float] = []
        writer_s: list[float] = []
        reader_s: list[float] = []
        bare_s: list[float] = []
        cpu_s: list[float] = []
        main_s: list[float] = []
        comm_counts: list[int] = []
        run_msgs: list[int] = []
        panel_msgs: list[int] = []
        text_updates: list[int] = []
        status_updates: list[int] = []
        comm_bytes: list[int] = []
        node_s: list[float] = []
        for _ in range(cfg.e2e_reps):
            bare_s.append(bare_production(path, bare_report))
            node = node_production(path)
            if node is not None:
                node_s.append(node)
            n0 = len(k.messages)
            cpu0, main0 = cpu_seconds(r.pid), cpu_seconds(r.pid, r.pid)
            transcript = r.prompt(f"replay {path}")
            t_done = r.wait_done(transcript)
            cpu_s.append(cpu_seconds(r.pid) - cpu0)
            main_s.append(cpu_seconds(r.pid, r.pid) - main0)
            k.drain(0.3)  # the rest of the final render
            (record,) = [x for x in r.records() if x["kind"] == "replay"]
            stamps = r.stamps()
            reader_s.append(stamps["agent_end"] - record["t_first"])
            kernel_s.append(t_done - record["t_first"])
            writer_s.append(record["t_last"] - record["t_first"])
            comms = _comm_msgs(k, n0)
            comm_counts.append(len(comms))
            comm_bytes.append(sum(len(json.dumps(m["content"])) for m in comms))
            # The run's output is one widget: its patches that carry the answer (its chunks
            # or its tail); the status bar is a block of the panel's output (issue 32).
            output, panel = transcript, r.panels[""]
            text_updates.append(
                sum(
                    1
                    for m in comms
                    if m["content"]["comm_id"] == output and {"chunks", "tails"} & set(_patch(m))
                )
            )
            status_updates.append(
                sum(
                    1
                    for m in comms
                    if m["content"]["comm_id"] == panel and "status" in _patch(m).get("blocks", {})
                )
            )
            run_msgs.append(sum(1 for m in comms if m["content"]["comm_id"] == output))
            panel_msgs.append(sum(1 for m in comms if m["content"]["comm_id"] == panel))

            cur["bare"].append(bare_production(current_path, bare_report))
            cpu0, main0 = cpu_seconds(r.pid), cpu_seconds(r.pid, r.pid)
            t_done = r.wait_done(r.prompt(f"replay {current_path}", CURRENT))
            cur["cpu"].append(cpu_seconds(r.pid) - cpu0)
            cur["main"].append(cpu_seconds(r.pid, r.pid) - main0)
            k.drain(0.3)
            (record,) = [x for x in r.records() if x["kind"] == "replay"]
            cur["kernel"].append(t_done - record["t_first"])

        # 1+1 while the stream runs, against 1+1 on the idle kernel (taking turns); then the
        # trade the reader's turn sets.
        latency = bench_latency.guard(cfg, r, path)
        bench_latency.turns(cfg, results, r, path)

    events = stream.lines
    med_kernel, med_bare, med_writer = median(kernel_s), median(bare_s), median(writer_s)
    med_comms = median(comm_counts)
    results.facts["e2e"] = {
        "node_stringify_s": node_s,
        "kernel_s": kernel_s,
        "reader_s": reader_s,
        "writer_s": writer_s,
        "bare_s": bare_s,
        "kernel_cpu_s": cpu_s,
        "kernel_main_thread_cpu_s": main_s,
        "comm_msgs": comm_counts,
        "text_value_updates": text_updates,
        "run_output_msgs": run_msgs,
        "panel_output_msgs": panel_msgs,
        "status_entry_updates": status_updates,
        "comm_msg_json_bytes": comm_bytes,
        "idle_1p1_s": [c.client for c in latency.idle],
        "busy_1p1_s": [c.client for c in latency.busy],
        "idle_1p1_kernel_s": [c.kernel for c in latency.idle],
        "busy_1p1_kernel_s": [c.kernel for c in latency.busy],
        "events": events,
        "current_shape": {**cur, "megabytes": current.megabytes, "events": current.lines},
    }
    results.add(
        "2 end to end",
        'kernel processes the whole stream (to "done")',
        fmt_s(med_kernel),
        f"stand-in writes it to a bare pipe: {fmt_s(med_bare)}",
        f"{med_kernel / med_bare:.1f}×",
        f"{stream.megabytes:.0f} MB, {fmt_count(events)} events, {cfg.e2e_reps} reps; "
        f"{stream.megabytes / med_kernel:.0f} MB/s; the reader thread had handled the "
        f"last event after {fmt_s(median(reader_s))}; the stand-in's writes into the "
        f"kernel's pipe took {fmt_s(med_writer)}; kernel CPU {fmt_s(median(cpu_s))}, of "
        f"which the main thread (event loop: renders, comms) {fmt_s(median(main_s))}",
    )
    if node_s:
        results.add(
            "2 end to end",
            "same, against pi's own serialisation of the stream",
            fmt_s(med_kernel),
            f"Node.js JSON.stringify + write of the same events: {fmt_s(median(node_s))}",
            f"{med_kernel / median(node_s):.1f}×",
            "what pi itself spends at least to serialise and write this stream",
        )
    med_cur = median(cur["kernel"])
    results.add(
        "2 end to end",
        "kernel processes the stream in the current line's shape (delta-only updates)",
        fmt_s(med_cur),
        f"stand-in writes it to a bare pipe: {fmt_s(median(cur['bare']))}",
        f"{med_cur / median(cur['bare']):.1f}×",
        f"{current.megabytes:.1f} MB, {fmt_count(current.lines)} events, in a second session "
        f"of the same kernel, runs taking turns with the above; kernel CPU "
        f"{fmt_s(median(cur['cpu']))}, main thread {fmt_s(median(cur['main']))}",
    )
    results.add(
        "2 end to end",
        "comm messages that reached the frontend per run",
        f"{med_comms:.0f} comm_msg: {median(run_msgs):.0f} to the run's output "
        f"({median(text_updates):.0f} with answer text), {median(panel_msgs):.0f} to the "
        f"panel's ({median(status_updates):.0f} status bar)",
        f"{fmt_count(events)} agent events ({stream.counts['extension_ui_request']} setStatus, "
        f"{stream.counts['message_update']} message_update)",
        f"1 per {events / max(med_comms, 1):.0f} events",
        'iopub comm_msg counted from the prompt cell to "done" + 0.3 s; '
        f"{median(comm_bytes) / 1e6:.1f} MB of JSON content in all",
    )
    bench_latency.report_guard(results, latency)


# --------------------------------------------------------------------------- 3. dialogs


def _echo_baseline(payloads: list[bytes]) -> list[float]:
    """Round trips of the same bytes through a bare pipe echo (``cat``)."""
    proc = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    assert proc.stdin is not None and proc.stdout is not None
    out_fd, in_fd = proc.stdout.fileno(), proc.stdin.fileno()
    times = []
    try:
        for data in payloads:
            start = time.monotonic()
            os.write(in_fd, data)
            got = b""
            while not got.endswith(b"\n"):
                got += os.read(out_fd, 1 << 16)
            times.append(time.monotonic() - start)
    finally:
        proc.stdin.close()
        proc.wait()
    return times


def dialogs(cfg: Config, results: Results, workdir: Path) -> None:
    print("3. dialog round trip", flush=True)
    n = cfg.dialogs
    with rig(workdir, "dialog") as r:
        k = r.k

        def answer(transcript: str, count: int) -> list[tuple[float, float]]:
            """Click "Alpha" in each dialog as it appears: (seen, clicked) times."""
            clicks = []
            for i in range(count):
                marker = f"Benchmark dialog {i}:"

                def shown(marker: str = marker) -> tuple[PageDialog, int] | None:
                    return dialog_button(k, transcript, marker)

                found = k.wait_for(shown, timeout=60, what=f"dialog {i}")
                t_seen = time.monotonic()
                assert found is not None  # wait_for returns a truthy value
                dialog, index = found
                t_click = time.monotonic()
                dialog.choose(index)
                clicks.append((t_seen, t_click))
            r.wait_done(transcript)
            return clicks

        answer(r.prompt("dialogs 2"), 2)  # warm-up: the first dialog widgets import and build
        r.records()
        # Back to back (an extension asking several questions in a row), then spaced out by
        # GAP_MS (each dialog on its own, as after a person's reading time).
        runs = {}
        for label, gap in (("back to back", 0), (f"{GAP_MS} ms apart", GAP_MS)):
            clicks = answer(r.prompt(f"dialogs {n} {gap}"), n)
            records = sorted(
                (x for x in r.records() if x["kind"] == "dialog"), key=lambda x: x["i"]
            )
            assert len(records) == n, records
            assert {rec["answer"].get("value") for rec in records} == {"Alpha"}, records
            runs[label] = (
                [seen - rec["t_written"] for (seen, _), rec in zip(clicks, records, strict=True)],
                [rec["t_answer"] - click for (_, click), rec in zip(clicks, records, strict=True)],
            )
    request = (
        json.dumps(
            {
                "type": "extension_ui_request",
                "id": "bench-dialog-0000000-000001",
                "method": "select",
                "title": "Benchmark dialog 0: pick one",
                "options": ["Alpha", "Beta", "Gamma"],
            },
            separators=(",", ":"),
        )
        + "\n"
    ).encode()
    response = (
        json.dumps(
            {
                "type": "extension_ui_response",
                "id": "bench-dialog-0000000-000001",
                "value": "Alpha",
            },
            separators=(",", ":"),
        )
        + "\n"
    ).encode()
    echo_req = _echo_baseline([request] * n)
    echo_resp = _echo_baseline([response] * n)
    results.facts["dialogs"] = {
        "runs": {label: {"to_frontend_s": a, "to_agent_s": b} for label, (a, b) in runs.items()},
        "echo_request_s": echo_req,
        "echo_response_s": echo_resp,
    }
    for label, (to_frontend, _) in runs.items():
        results.add(
            "3 dialog round trip",
            f"agent writes select → frontend has the dialog's controls ({label})",
            f"{fmt_s(median(to_frontend))} (max {fmt_s(max(to_frontend))})",
            f"pipe echo of the same {len(request)} B: {fmt_s(median(echo_req))}",
            f"{median(to_frontend) / median(echo_req):.0f}×",
            f"{n} dialogs, each written after the previous one was answered"
            + (f" and {GAP_MS} ms" if "apart" in label else ""),
        )
    to_agent = [x for _, b in runs.values() for x in b]
    results.add(
        "3 dialog round trip",
        "frontend click → response line on the agent's stdin",
        f"{fmt_s(median(to_agent))} (max {fmt_s(max(to_agent))})",
        f"pipe echo of the same {len(response)} B: {fmt_s(median(echo_resp))}",
        f"{median(to_agent) / median(echo_resp):.0f}×",
        f"{len(to_agent)} clicks: the page's custom message "
        "{type: dialog, action: choose} on the shell channel",
    )


# --------------------------------------------------------------------------- 5. memory


def memory(cfg: Config, results: Results, workdir: Path) -> None:
    print("5. kernel memory across a long stream", flush=True)
    short, long = memory_streams(cfg)
    short_path, long_path = workdir / "mem-short.jsonl", workdir / "mem-long.jsonl"
    short_path.write_bytes(short.data)
    long_path.write_bytes(long.data)
    with rig(workdir, "memory") as r:
        r.wait_done(r.prompt(f"replay {short_path}"))  # warm-up: imports, first widgets
        r.wait_done(r.prompt(f"replay {short_path}"))
        after_short = rss_of(r.pid)
        r.wait_done(r.prompt(f"replay {long_path}"))
        after_long = rss_of(r.pid)
        r.wait_done(r.prompt(f"replay {long_path}"))
        after_two_long = rss_of(r.pid)
    mb = 1e6
    results.facts["kernel_memory"] = {
        "short_events": short.lines,
        "long_events": long.lines,
        "short_megabytes": short.megabytes,
        "long_megabytes": long.megabytes,
        "after_short": after_short,
        "after_long": after_long,
        "after_two_long": after_two_long,
    }
    growth = after_long["VmHWM"] - after_short["VmHWM"]
    results.add(
        "5 memory",
        "kernel peak RSS (VmHWM) after a long stream",
        f"{after_long['VmHWM'] / mb:.0f} MB after {fmt_count(long.lines)} events "
        f"({long.megabytes:.0f} MB)",
        f"{after_short['VmHWM'] / mb:.0f} MB after {fmt_count(short.lines)} events "
        f"({short.megabytes:.0f} MB)",
        f"{growth / mb:+.1f} MB for {long.lines / short.lines:.1f}× events",
        f"same content, {cfg.memory_factor}× the events; VmRSS "
        f"{after_short['VmRSS'] / mb:.0f} → {after_long['VmRSS'] / mb:.0f} MB, "
        f"{after_two_long['VmRSS'] / mb:.0f} MB after a second long run "
        f"(peak {after_two_long['VmHWM'] / mb:.0f} MB)",
    )


def run(cfg: Config, results: Results, stream: Stream) -> None:
    with tempfile.TemporaryDirectory(prefix="atomic-bench-") as tmp:
        workdir = Path(tmp)
        end_to_end(cfg, results, workdir, stream)
        dialogs(cfg, results, workdir)
        memory(cfg, results, workdir)
