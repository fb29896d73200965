"""Benchmarks 6-8 (issue 15): what one action costs, against what the same costs done bare.

6. **Click and dialog** in one kernel with the stand-in agent (``dialogs N GAP``):
   (a) frontend click on a dialog's option → the response line read by the stand-in, against
   a bare ``ipywidgets.Button`` made in a cell of the same kernel whose handler writes a line
   of the same size into a pipe, read by a small reader process that stamps its arrival;
   (b) the stand-in writes a ``select`` request → the frontend has the dialog's controls (the
   dialog's description in the page's store of the run's output, from which the output's
   module draws its buttons), against a cell that builds by hand the ipywidgets the dialog
   was made of before issue 32 and displays them. A click on an option is the custom message
   the page sends (``{"type": "dialog", "id": ..., "action": "choose", "index": ...}``).
   The three variants take turns in batches.
7. **One streaming update of a long answer** (8 KB, 64 KB, 512 KB of varied Markdown): the
   stand-in writes all of the answer but its last 8 KB at once, then paces the rest (about
   200 characters every 40 ms, ``paced PATH N_FAST GAP_MS PID``); for the paced part only,
   the kernel's time per ``RunOutput.render`` (wrapped in the kernel: the run's blocks
   filled, the patch made and sent) and the bytes of the comm messages of that run's output
   widget, per render. Then, with a paced
   tail long enough for several refreshes (``copy_tail_chars``), what keeping the run's
   record copy current costs over the paced part (issue 14): the kernel's time in
   ``NotebookPresentation.refresh_records`` (wrapped too) as a share of the paced part, and
   the bytes of the copy's display updates per second.
8. **One huge line** (50 MB; 10 MB with ``--quick``), in this process: tracemalloc peak
   while a session that was never started takes it in 64 KiB chunks (as the reader thread
   does), and what it still holds after ``gc.collect()``, against ``json.loads`` of the line.

Times come from ``time.monotonic()`` (CLOCK_MONOTONIC, one clock for every process on the
machine). Nothing here asserts a speed; each figure checks that what it measured happened
(the option clicked is the answer the agent read, the answer shown is the whole answer).
"""

from __future__ import annotations

import dataclasses
import gc
import json
import tempfile
import time
import tracemalloc
from datetime import datetime
from pathlib import Path
from typing import Any

from tests.harness.kernel_client import BrowserLikeKernel
from tests.harness.kernel_widgets import PageDialog, answers
from tests.harness.widget_text import visible_text

from .bench_decode import chunks_of, new_session
from .bench_kernel import Rig, cpu_seconds, dialog_button, package_location, rig
from .common import Config, Results, fmt_s, median, quantile
from .stream import StreamSpec, build_stream

#: Milliseconds between two dialogs (and between two bare clicks or hand-built dialogs), so
#: that each is handled on a quiet kernel, as after a person's reading time.
GAP_MS = 200
#: Seconds without any IOPub message before a click: the kernel has finished what the last
#: dialog (or cell) made it do.
QUIET_S = 0.05
#: The section names of the table.
CLICKS, UPDATES, HUGE = "6 click & dialog", "7 streaming update", "8 huge line"

# --------------------------------------------------------------------------- 6. clicks, dialogs

#: The bare baseline's reader: reads lines from its stdin as the stand-in does (``readline``
#: on the buffered stdin) and stamps each arrival with CLOCK_MONOTONIC into a report file.
READER = r"""
import json, sys, time
stdin = sys.stdin.buffer
with open(sys.argv[1], "a", encoding="utf-8") as report:
    while True:
        raw = stdin.readline()
        t = time.monotonic()
        if not raw:
            break
        report.write(json.dumps({"t": t, "bytes": len(raw)}) + "\n")
        report.flush()
"""

#: The bare Button, made in a cell: its handler writes one line into the reader's pipe.
BARE_BUTTON_CELL = """
import os as _bos, subprocess as _bsp, sys as _bsys
import ipywidgets as _bw
_bench_reader = _bsp.Popen([_bsys.executable, "-c", {reader!r}, {report!r}], stdin=_bsp.PIPE)
_bench_fd = _bench_reader.stdin.fileno()
_bench_line = b"x" * {size} + b"\\n"
def _bench_on_click(_button):
    _bos.write(_bench_fd, _bench_line)
_bench_button = _bw.Button(description="Bare button")
_bench_button.on_click(_bench_on_click)
display(_bench_button)
"""

#: The widgets a 3-option select dialog was made of before issue 32 (ui/dialog_view.py, since
#: removed), built by hand in a cell: a bold title line, an HBox of the option buttons, Cancel
#: with the (empty) countdown line, the "from now on" checkbox and the hidden error line, in a
#: bordered VBox. The baseline of the dialog figure.
HAND_DIALOG_CELL = """
_b_title = _bw.HTML("<b>{title}</b>")
_b_options = _bw.HBox(
    [
        _bw.Button(description=o, tooltip=o, button_style="primary", layout=_bw.Layout(width="auto"))
        for o in ("Alpha", "Beta", "Gamma")
    ],
    layout=_bw.Layout(flex_flow="row wrap"),
)
_b_cancel = _bw.Button(description="Cancel", tooltip="Cancel", layout=_bw.Layout(width="auto"))
_b_rule = _bw.Checkbox(value=False, description="Answer this way from now on", indent=False)
_b_error = _bw.HTML("")
_b_error.layout.display = "none"
_b_box = _bw.VBox(
    [_b_title, _b_options, _bw.HBox([_b_cancel, _bw.HTML("")]), _b_rule, _b_error],
    layout=_bw.Layout(border="1px solid #1976d2", padding="6px", margin="4px 0"),
)
_b_box.add_class("bench-hand-dialog")
display(_b_box)
"""


def model_ids(k: BrowserLikeKernel, root: str) -> set[str]:
    """``root`` and every model it references, at any depth: children, and the layout and
    style models (open or closed), as the frontend's views of ``root`` use them."""
    models, closed = k.tracker.models, k.tracker.closed
    seen: set[str] = set()
    stack = [root]
    while stack:
        cid = stack.pop()
        if cid in seen:
            continue
        seen.add(cid)
        state = models.get(cid) or closed.get(cid) or {}
        for value in state.values():
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, str) and item.startswith("IPY_MODEL_"):
                    stack.append(item[len("IPY_MODEL_") :])
    return seen


def plain_widgets(k: BrowserLikeKernel, model: str, within: str | None = None) -> list[str]:
    """The open ipywidgets models named ``model`` (``"ButtonModel"``), at or under ``within``
    when given: the baselines' hand-built widgets (the harness follows our outputs only)."""
    scope = model_ids(k, within) if within is not None else set(k.models)
    return [cid for cid in scope if k.models.get(cid, {}).get("_model_name") == model]


class DialogRig:
    """The three variants of figure 6 in one kernel: the project's dialogs, hand-built
    dialogs, and the bare Button writing into a pipe."""

    def __init__(self, r: Rig, workdir: Path) -> None:
        self.r = r
        self.k = r.k
        self.bare_report = workdir / "bare-clicks.jsonl"
        self.bare_report.touch()
        self.bare_button: str | None = None
        self._bare_seen = 0
        self._hand_built = 0
        #: Models in one dialog's tree (layouts and styles included), for each variant.
        self.widgets = {"project": 0, "by hand": 0}

    def start_bare(self, line_bytes: int) -> None:
        """Make the bare Button and its reader; the Button writes lines of ``line_bytes``
        (the ``\\n`` included)."""
        self.k.execute(
            BARE_BUTTON_CELL.format(
                reader=READER, report=str(self.bare_report), size=line_bytes - 1
            )
        )
        (self.bare_button,) = [
            cid
            for cid in plain_widgets(self.k, "ButtonModel")
            if self.k.models[cid].get("description") == "Bare button"
        ]

    def close(self) -> None:
        """End the bare reader (its stdin closed)."""
        if self.bare_button is not None:
            self.k.execute("_bench_reader.stdin.close(); _bench_reader.wait(timeout=10)")

    def _quiet(self) -> None:
        self.k.drain(QUIET_S)

    def project(self, n: int) -> list[tuple[float, float, int]]:
        """One batch of the stand-in's dialogs, ``GAP_MS`` apart: for each, (request written
        → frontend has the buttons, click → response line read by the agent, its size)."""
        k, r = self.k, self.r
        transcript = r.prompt(f"dialogs {n} {GAP_MS}")
        times: list[tuple[float, float]] = []
        for i in range(n):
            marker = f"Benchmark dialog {i}:"

            def shown(marker: str = marker) -> tuple[PageDialog, int] | None:
                return dialog_button(k, transcript, marker)

            found = k.wait_for(shown, timeout=60, what=f"dialog {i}")
            t_seen = time.monotonic()
            assert found is not None  # wait_for returns a truthy value
            dialog, index = found
            # The dialog is drawn by the run's output: the models of the output's tree (its
            # own, the shared layout), none of them the dialog's own.
            self.widgets["project"] = len(model_ids(k, transcript))
            self._quiet()
            t_click = time.monotonic()
            dialog.choose(index)
            times.append((t_seen, t_click))
        r.wait_done(transcript)
        records = sorted((x for x in r.records() if x["kind"] == "dialog"), key=lambda x: x["i"])
        assert len(records) == n, records
        # What was clicked is what the agent read.
        assert [rec["answer"].get("value") for rec in records] == ["Alpha"] * n, records
        return [
            (seen - rec["t_written"], rec["t_answer"] - click, rec["response_bytes"])
            for (seen, click), rec in zip(times, records, strict=True)
        ]

    def by_hand(self, n: int) -> list[float]:
        """Cells that build and display the same widgets: execute_request sent → frontend
        has the box and its option buttons, ``GAP_MS`` apart."""
        k = self.k
        times = []
        for _ in range(n):
            time.sleep(GAP_MS / 1000)
            self._quiet()
            self._hand_built += 1
            title = f"Hand-built dialog {self._hand_built}: pick one"
            t_sent = time.monotonic()
            msg_id = k.submit(HAND_DIALOG_CELL.format(title=title))

            def shown(title: str = title) -> bool:
                for box in plain_widgets(k, "VBoxModel"):
                    if "bench-hand-dialog" not in k.models[box].get("_dom_classes", ()):
                        continue
                    titled = any(
                        title in str(k.models[cid].get("value"))
                        for cid in plain_widgets(k, "HTMLModel", within=box)
                    )
                    alpha = any(
                        k.models[cid].get("description") == "Alpha"
                        for cid in plain_widgets(k, "ButtonModel", within=box)
                    )
                    if titled and alpha:
                        self.widgets["by hand"] = len(model_ids(k, box))
                        return True
                return False

            k.wait_for(shown, timeout=30, what="the hand-built dialog")
            times.append(time.monotonic() - t_sent)
            k.collect(msg_id)
        return times

    def bare_clicks(self, n: int) -> list[float]:
        """Clicks on the bare Button, ``GAP_MS`` apart: click sent → line read by the reader."""
        assert self.bare_button is not None, "start_bare first"
        times = []
        for _ in range(n):
            time.sleep(GAP_MS / 1000)
            self._quiet()
            t_click = time.monotonic()
            self.k.send_custom(self.bare_button, {"event": "click"})  # as ButtonView does
            deadline = time.monotonic() + 30
            while True:
                lines = self.bare_report.read_text(encoding="utf-8").splitlines()
                if len(lines) > self._bare_seen:
                    break
                if time.monotonic() > deadline:
                    raise AssertionError("the bare button's line never reached the reader")
                self.k.drain(0)  # keep the harness's sockets read, as while waiting for dialogs
                time.sleep(0.001)
            (record,) = [json.loads(x) for x in lines[self._bare_seen :]]
            self._bare_seen = len(lines)
            times.append(record["t"] - t_click)
        return times


def clicks_and_dialogs(cfg: Config, results: Results, workdir: Path) -> None:
    """Figure 6: click → agent's stdin, and dialog render, against bare widgets (see the
    module's text)."""
    print("6. click and dialog against bare widgets in the same kernel", flush=True)
    n = cfg.click_batch
    with rig(workdir, "costs-dialog") as r:
        where = package_location(r.k)
        results.facts["package_in_kernel"] = where
        print(f"  atomic_jupyter in the kernel: {where}", flush=True)
        d = DialogRig(r, workdir)
        try:
            # Warm-up, not counted: the first dialogs import and build the dialog views, and
            # tell the size of the response line, which the bare Button's line copies.
            response_bytes = d.project(2)[0][2]
            d.start_bare(response_bytes)
            d.by_hand(1)
            d.bare_clicks(1)
            render: dict[str, list[float]] = {"project": [], "by hand": []}
            click: dict[str, list[float]] = {"project": [], "bare": []}
            for rep in range(cfg.click_batches):
                steps = ["project", "by hand", "bare"]
                steps = steps[rep % 3 :] + steps[: rep % 3]  # each variant goes first in turn
                for step in steps:
                    if step == "project":
                        batch = d.project(n)
                        assert {b for _, _, b in batch} == {response_bytes}, batch
                        render["project"] += [a for a, _, _ in batch]
                        click["project"] += [b for _, b, _ in batch]
                    elif step == "by hand":
                        render["by hand"] += d.by_hand(n)
                    else:
                        click["bare"] += d.bare_clicks(n)
            widgets = dict(d.widgets)
        finally:
            d.close()
    results.facts["costs_dialogs"] = {
        "render_s": render,
        "click_s": click,
        "response_bytes": response_bytes,
        "models_per_dialog": widgets,
    }
    p, b = click["project"], click["bare"]
    results.add(
        CLICKS,
        "frontend click → response line on the agent's stdin",
        f"{fmt_s(median(p))} (p90 {fmt_s(quantile(p, 0.9))}, max {fmt_s(max(p))})",
        f"bare Button writing {response_bytes} B to a pipe: {fmt_s(median(b))} "
        f"(p90 {fmt_s(quantile(b, 0.9))}, max {fmt_s(max(b))})",
        f"{median(p) / median(b):.2f}×",
        f"{len(p)} and {len(b)} clicks, in {cfg.click_batches} batches taking turns, "
        f"{GAP_MS} ms apart, each after {QUIET_S * 1000:.0f} ms without IOPub traffic; "
        "same kernel; arrival stamped by the reading process",
    )
    p, h = render["project"], render["by hand"]
    results.add(
        CLICKS,
        "agent writes select → frontend has the dialog's controls",
        f"{fmt_s(median(p))} (max {fmt_s(max(p))})",
        f"a cell builds the same widgets: {fmt_s(median(h))} (max {fmt_s(max(h))})",
        f"{median(p) / median(h):.2f}×",
        f"{len(p)} and {len(h)} dialogs, {GAP_MS} ms apart; baseline from execute_request; "
        f"the run's output, the dialog in it: {widgets['project']} models (its own and the "
        f"shared layout); the hand-built dialog: {widgets['by hand']} models (layouts and "
        "styles included)",
    )


# --------------------------------------------------------------------------- 7. updates

#: Wraps ``RunOutput.render`` in the kernel (the run's blocks filled, the patch made and
#: sent): each call appends (start on CLOCK_MONOTONIC, thread CPU seconds, wall seconds, id of
#: the output). Only relies on ``RunOutput.render(self)`` existing; running the cell again
#: keeps one wrapper.
RENDER_PROBE_CELL = """
import functools as _bft, time as _btime
from atomic_jupyter.ui import run_output as _btv
_bench_renders = []
if not getattr(_btv.RunOutput.render, "_bench_probe", False):
    _bench_original_render = _btv.RunOutput.render

    @_bft.wraps(_bench_original_render)
    def _bench_render(self, *args, **kwargs):
        start, cpu, wall = _btime.monotonic(), _btime.thread_time(), _btime.perf_counter()
        try:
            return _bench_original_render(self, *args, **kwargs)
        finally:
            _bench_renders.append(
                (start, _btime.thread_time() - cpu, _btime.perf_counter() - wall, id(self))
            )

    _bench_render._bench_probe = True
    _btv.RunOutput.render = _bench_render

from atomic_jupyter.notebook import presentation as _bpr
_bench_copies = []
if not getattr(_bpr.NotebookPresentation.refresh_records, "_bench_probe", False):
    _bench_original_refresh = _bpr.NotebookPresentation.refresh_records

    @_bft.wraps(_bench_original_refresh)
    def _bench_refresh(self, *args, **kwargs):
        start, cpu = _btime.monotonic(), _btime.thread_time()
        try:
            return _bench_original_refresh(self, *args, **kwargs)
        finally:
            _bench_copies.append((start, _btime.thread_time() - cpu))

    _bench_refresh._bench_probe = True
    _bpr.NotebookPresentation.refresh_records = _bench_refresh
"""


def _normalise(text: str) -> str:
    return " ".join(text.split())


def shown_answer(k: BrowserLikeKernel, transcript: str) -> str:
    """The (last) answer's visible text as the page draws it in the run's output (its chunks
    and its tail), whitespace-normalised."""
    found = answers(k, transcript)
    assert found, "no answer in the run's output"
    return _normalise(visible_text(found[-1].html))


def _message_bytes(msg: dict[str, Any]) -> int:
    """Bytes of one message as the browser gets it: its JSON content and binary buffers."""
    return len(json.dumps(msg["content"])) + sum(len(b) for b in msg.get("buffers") or ())


def _wall(msg: dict[str, Any]) -> float:
    """When the kernel made a message (its header's date), in seconds since the epoch."""
    date = msg["header"]["date"]
    if isinstance(date, str):
        date = datetime.fromisoformat(date.replace("Z", "+00:00"))
    return float(date.timestamp())


def paced_stream_spec(cfg: Config, size: int) -> StreamSpec:
    """A text-only run whose answer is ``size`` characters of varied Markdown in the current
    agent line's shape (delta-only updates, so a 512 KB answer is a small stream), its last
    ``paced_tail_chars`` in deltas of about ``paced_delta_chars``."""
    tail = min(cfg.paced_tail_chars, size)
    head = size - tail
    return StreamSpec(
        text_deltas=max(1, min(head - 1, head // 2048)),
        thinking_deltas=0,
        tool_updates=0,
        status_lines=0,
        tool_turn=False,
        answer_chars=size,
        prompt=f"answer of {size} characters",
        shape="current",
        varied=True,
        tail_chars=tail,
        tail_deltas=max(1, tail // cfg.paced_delta_chars),
    )


def _size_label(size: int) -> str:
    return f"{size >> 10} KB"


def paced_run(r: Rig, path: Path, n_fast: int, gap_ms: int, answer: str) -> dict[str, Any]:
    """One prompt of the stand-in's ``paced`` scenario; what the paced part cost."""
    k = r.k
    k.execute("_bench_renders.clear(); _bench_copies.clear()")
    n0 = len(k.messages)
    transcript = r.prompt(f"paced {path} {n_fast} {gap_ms} {r.pid}")
    r.wait_done(transcript, timeout=300)
    k.drain(0.3)  # the end of the final render
    cpu_after, main_after = cpu_seconds(r.pid), cpu_seconds(r.pid, r.pid)
    (record,) = [x for x in r.records() if x["kind"] == "paced"]
    renders = json.loads(k.execute("import json as _bj; print(_bj.dumps(_bench_renders))").stdout)
    paced = [x for x in renders if x[0] >= record["t_paced"]]
    assert paced, "no render during the paced part"
    copies = json.loads(k.execute("print(_bj.dumps(_bench_copies))").stdout)
    paced_copies = [x for x in copies if record["t_paced"] <= x[0] <= record["t_paced_end"]]
    copy_updates = [
        m
        for m in k.messages[n0:]
        if m["header"]["msg_type"] == "update_display_data"
        and str((m["content"].get("transient") or {}).get("display_id", "")).endswith("-record")
        and _wall(m) >= record["wall_paced"]
    ]
    # The frontend shows the whole answer, as the record's form of a whole-document rendering
    # of it reads (the output sends the record's form: no line breaks between tags).
    from atomic_jupyter.ui.markdown import record_markup, render_markdown

    expected = _normalise(visible_text(record_markup(render_markdown(answer))))
    got = shown_answer(k, transcript)
    ids = model_ids(k, transcript)
    if got != expected:
        at = next(
            (i for i, (a, b) in enumerate(zip(got, expected, strict=False)) if a != b),
            min(len(got), len(expected)),
        )
        # A model referenced but never opened: its comm_open was lost on the way (the IOPub
        # sockets drop messages beyond their high-water mark, 1000 by default, each side).
        unknown = [c for c in ids if c not in k.tracker.models and c not in k.tracker.closed]
        raise AssertionError(
            f"the answer shown differs from the answer at character {at} "
            f"(shown {len(got)}, expected {len(expected)}): "
            f"{got[max(0, at - 60) : at + 60]!r} != {expected[max(0, at - 60) : at + 60]!r}; "
            f"{len(unknown)} models of the transcript never reached the frontend; "
            f"{sum(1 for m in k.messages[n0:] if m['header']['msg_type'].startswith('comm_'))} "
            "comm messages in the run"
        )
    # Comm traffic for the transcript's widgets made after the paced part began (and, for the
    # notes, what showing the fast part took: a burst the IOPub sockets must carry).
    ours = [
        m
        for m in k.messages[n0:]
        if m["header"]["msg_type"] in ("comm_msg", "comm_open")
        and m["content"].get("comm_id") in ids
    ]
    sent = [m for m in ours if _wall(m) >= record["wall_paced"]]
    del k.messages[n0:]  # a 512 KB answer's updates weigh megabytes: keep the harness lean
    n = len(paced)
    out = {
        "renders": n,
        "views": len({x[3] for x in paced}),
        "cpu_s": [x[1] for x in paced],
        "wall_s": [x[2] for x in paced],
        "bytes": sum(_message_bytes(m) for m in sent),
        "messages": len(sent),
        "fast_part_messages": len(ours) - len(sent),
        "opens": sum(1 for m in sent if m["header"]["msg_type"] == "comm_open"),
        "paced_lines": record["paced_lines"],
        "paced_s": record["t_paced_end"] - record["t_paced"],
        "copy_refreshes": len(paced_copies),
        "copy_cpu_s": sum(x[1] for x in paced_copies),
        "copy_bytes": sum(_message_bytes(m) for m in copy_updates),
    }
    if record.get("kernel_main_cpu") is not None:
        out["proc_main_cpu_per_render_s"] = (main_after - record["kernel_main_cpu"]) / n
        out["proc_cpu_per_render_s"] = (cpu_after - record["kernel_cpu"]) / n
    return out


def streaming_updates(cfg: Config, results: Results, workdir: Path) -> None:
    """Figure 7: the cost of one streaming update as the answer grows (see the module's
    text)."""
    print("7. one streaming update of a long answer (8 KB, 64 KB, 512 KB)", flush=True)
    streams = {}
    for size in cfg.paced_sizes:
        stream = build_stream(paced_stream_spec(cfg, size))
        path = workdir / f"paced-{size}.jsonl"
        path.write_bytes(stream.data)
        streams[size] = (path, stream.marks["tail"], stream.answer)
        print(
            f"  {_size_label(size)}: {stream.megabytes:.2f} MB, {stream.lines} lines, the paced "
            f"part from line {stream.marks['tail']}",
            flush=True,
        )
    gap = cfg.paced_gap_ms
    runs: dict[int, list[dict[str, Any]]] = {size: [] for size in cfg.paced_sizes}
    with rig(workdir, "costs-stream") as r:
        package_location(r.k)
        r.k.execute(RENDER_PROBE_CELL)
        smallest = min(cfg.paced_sizes)
        paced_run(r, *streams[smallest][:2], gap, streams[smallest][2])  # warm-up
        for rep in range(cfg.paced_reps):
            sizes = list(cfg.paced_sizes)
            sizes = sizes[rep % len(sizes) :] + sizes[: rep % len(sizes)]
            for size in sizes:
                path, n_fast, answer = streams[size]
                runs[size].append(paced_run(r, path, n_fast, gap, answer))

    def summary(size: int) -> dict[str, float]:
        rs = runs[size]
        return {
            "cpu": median([c for x in rs for c in x["cpu_s"]]),
            "wall": median([c for x in rs for c in x["wall_s"]]),
            "max_wall": max(c for x in rs for c in x["wall_s"]),
            "bytes": median([x["bytes"] / x["renders"] for x in rs]),
            "renders": median([x["renders"] for x in rs]),
            "messages": median([x["messages"] / x["renders"] for x in rs]),
            "opens": median([x["opens"] for x in rs]),
            "burst": median([x["fast_part_messages"] for x in rs]),
            "main": median([x.get("proc_main_cpu_per_render_s", float("nan")) for x in rs]),
            "proc": median([x.get("proc_cpu_per_render_s", float("nan")) for x in rs]),
        }

    sums = {size: summary(size) for size in cfg.paced_sizes}
    results.facts["costs_updates"] = {"runs": runs, "summary": sums}
    small = sums[smallest]
    for size in cfg.paced_sizes:
        s = sums[size]
        label = _size_label(size)
        base = (
            "(the reference)"
            if size == smallest
            else f"{_size_label(smallest)} answer: {fmt_s(small['cpu'])} · "
            f"{small['bytes'] / 1024:.1f} KB"
        )
        results.add(
            UPDATES,
            f"one update of a {label} answer: kernel CPU · bytes sent",
            f"{fmt_s(s['cpu'])} · {s['bytes'] / 1024:.1f} KB",
            base,
            f"{s['cpu'] / small['cpu']:.1f}× time · {s['bytes'] / small['bytes']:.1f}× bytes",
            f"{s['renders']:.0f} renders in the paced part ({cfg.paced_tail_chars >> 10} KB in "
            f"~{cfg.paced_delta_chars}-char deltas every {gap} ms), {cfg.paced_reps} reps; "
            f"wall {fmt_s(s['wall'])} (max {fmt_s(s['max_wall'])}); main thread from /proc "
            f"{fmt_s(s['main'])}, whole kernel {fmt_s(s['proc'])} per render; "
            f"{s['messages']:.1f} comm messages per render, {s['opens']:.0f} widgets opened; "
            f"showing the fast part took {s['burst']:.0f} comm messages",
        )
    record_copies(cfg, results, workdir)


def record_copies(cfg: Config, results: Results, workdir: Path) -> None:
    """Figure 7, continued: what keeping a live run's record copy current costs, as its
    answer grows (one run per size, its paced tail ``copy_tail_chars`` long)."""
    long_tail = dataclasses.replace(cfg, paced_tail_chars=cfg.copy_tail_chars)
    runs: dict[int, dict[str, Any]] = {}
    with rig(workdir, "costs-copies") as r:
        r.k.execute(RENDER_PROBE_CELL)
        for size in cfg.paced_sizes:
            stream = build_stream(paced_stream_spec(long_tail, size))
            path = workdir / f"copies-{size}.jsonl"
            path.write_bytes(stream.data)
            runs[size] = paced_run(r, path, stream.marks["tail"], cfg.paced_gap_ms, stream.answer)
    results.facts["costs_record_copies"] = runs
    smallest = min(cfg.paced_sizes)

    def share(x: dict[str, Any]) -> float:
        return float(x["copy_cpu_s"] / x["paced_s"])

    small = runs[smallest]
    for size in cfg.paced_sizes:
        x = runs[size]
        results.add(
            UPDATES,
            f"keeping a live {_size_label(size)} answer's record copy current: share of kernel "
            "time · bytes per second",
            f"{100 * share(x):.1f}% · {x['copy_bytes'] / x['paced_s'] / 1024:.0f} KB/s",
            f"{_size_label(smallest)} answer: {100 * share(small):.1f}% · "
            f"{small['copy_bytes'] / small['paced_s'] / 1024:.0f} KB/s",
            f"{share(x) / max(share(small), 1e-9):.1f}× share",
            f"{x['copy_refreshes']} refreshes in a paced part of {x['paced_s']:.1f} s (at "
            "least 2 s apart; farther when one costs more than 4% of the time between or "
            "sends more than 64 KB a second of it)",
        )


# --------------------------------------------------------------------------- 8. huge line


def unknown_line(size: int) -> bytes:
    """One line of ``size`` bytes or so: an event type the session does not know."""
    blob = (b"abcdefghijklmnopqrstuvwxyz0123456789" * (size // 36 + 1))[:size]
    return b'{"type":"bench_unknown_event","blob":"' + blob + b'"}\n'


def known_line(size: int) -> tuple[bytes, bytes]:
    """A 0.73-shaped ``message_update`` of ``size`` bytes or so (a one-character delta, the
    partial message twice), and the lines before it (the run's start)."""
    text = "abcdefghijklmnopqrstuvwxyz0123456789 " * (size // 2 // 37 + 1)
    partial = json.dumps(
        {"role": "assistant", "content": [{"type": "text", "text": text[: size // 2]}]},
        separators=(",", ":"),
    )
    line = (
        '{"type":"message_update","assistantMessageEvent":{"type":"text_delta",'
        '"contentIndex":0,"delta":"Z","partial":' + partial + '},"message":' + partial + "}\n"
    ).encode()
    start = (
        b'{"type":"agent_start"}\n{"type":"turn_start"}\n'
        b'{"type":"message_start","message":{"role":"assistant","content":[]}}\n'
        b'{"type":"message_update","assistantMessageEvent":{"type":"text_start","contentIndex":0}}\n'
    )
    return line, start


def fmt_bytes(n: float) -> str:
    """A size in KB (1024 bytes) below a megabyte, else in MB (10⁶ bytes, as the line)."""
    return f"{n / 1024:.1f} KB" if n < 1e6 else f"{n / 1e6:.1f} MB"


def session_memory(line: bytes, before: bytes = b"") -> dict[str, Any]:
    """Feed ``line`` to a session that was never started (a prompt run in flight, ``before``
    fed first), in the reader thread's 64 KiB chunks: tracemalloc peak during the feed, and
    what is still traced after ``gc.collect()`` with the session alive."""
    chunks = chunks_of(line)
    session, run = new_session()
    for chunk in chunks_of(before):
        session.client.receive_data(chunk)
    gc.collect()
    tracemalloc.start()
    try:
        start = time.perf_counter()
        for chunk in chunks:
            session.client.receive_data(chunk)
        seconds = time.perf_counter() - start
        _current, peak = tracemalloc.get_traced_memory()
        gc.collect()
        retained, _peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert not session.diagnostics, list(session.diagnostics)[:2]
    return {
        "peak": peak,
        "retained": retained,
        "seconds": seconds,
        "session": session,
        "run": run,
    }


def json_loads_peak(line: bytes) -> int:
    """tracemalloc peak of ``json.loads`` of the line (the value dropped at once)."""
    gc.collect()
    tracemalloc.start()
    try:
        json.loads(line)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak


def huge_line(cfg: Config, results: Results) -> None:
    """Figure 8: memory for one huge line (see the module's text)."""
    size = cfg.big_line_bytes
    print(f"8. memory for one {size / 1e6:.0f} MB line", flush=True)
    unknown = unknown_line(size)
    known, known_start = known_line(size)
    out: dict[str, list[float]] = {
        k: []
        for k in ("unknown_peak", "unknown_retained", "unknown_s", "known_peak", "known_retained")
    }
    out |= {"loads_unknown_peak": [], "loads_known_peak": []}
    for rep in range(cfg.big_line_reps):
        steps = ["unknown", "known", "loads"]
        for step in steps[rep % 3 :] + steps[: rep % 3]:
            if step == "unknown":
                m = session_memory(unknown)
                # The event arrived (its type is in the session's event log).
                assert any(e.type == "bench_unknown_event" for e in m["session"].events)
                out["unknown_peak"].append(m["peak"])
                out["unknown_retained"].append(m["retained"])
                out["unknown_s"].append(m["seconds"])
            elif step == "known":
                m = session_memory(known, known_start)
                assert m["run"].transcript.text().endswith("Z"), "the delta did not arrive"
                out["known_peak"].append(m["peak"])
                out["known_retained"].append(m["retained"])
            else:
                out["loads_unknown_peak"].append(json_loads_peak(unknown))
                out["loads_known_peak"].append(json_loads_peak(known))
            m = {}  # the session measured is dropped before the next variant
            gc.collect()
    results.facts["costs_huge_line"] = {"line_bytes": len(unknown), **out}
    mb = 1e6
    med = {k: median(v) for k, v in out.items()}
    results.add(
        HUGE,
        f"one {len(unknown) / mb:.0f} MB line of an unknown event type: peak, then held",
        f"peak {med['unknown_peak'] / mb:.0f} MB, held {fmt_bytes(med['unknown_retained'])}",
        f"json.loads of the line: peak {med['loads_unknown_peak'] / mb:.0f} MB",
        f"{med['unknown_peak'] / med['loads_unknown_peak']:.2f}× peak",
        f"tracemalloc, {cfg.big_line_reps} reps; session never started, fed in 64 KiB chunks "
        f"(client.receive_data) in {fmt_s(med['unknown_s'])}; held = traced after gc.collect() "
        "with the session alive; the caller's copy of the line is counted in neither",
    )
    results.add(
        HUGE,
        f"one {len(known) / mb:.0f} MB message_update (0.73 shape): peak, then held",
        f"peak {med['known_peak'] / mb:.0f} MB, held {fmt_bytes(med['known_retained'])}",
        f"json.loads of the line: peak {med['loads_known_peak'] / mb:.0f} MB",
        f"{med['known_peak'] / med['loads_known_peak']:.2f}× peak",
        "a one-character delta with the partial message twice, a prompt run in flight",
    )


def run(cfg: Config, results: Results) -> None:
    """Figures 6, 7 and 8."""
    with tempfile.TemporaryDirectory(prefix="atomic-bench-costs-") as tmp:
        workdir = Path(tmp)
        clicks_and_dialogs(cfg, results, workdir)
        streaming_updates(cfg, results, workdir)
    huge_line(cfg, results)
