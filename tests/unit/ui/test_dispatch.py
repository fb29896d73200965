"""The dispatcher runs widget work on the kernel's thread only, and the widget thread guard.

The kernel thread is the one whose event loop the dispatcher captured, or before any capture
the one that made it. Work asked for there runs at once; work asked for anywhere else is
queued and runs on the kernel thread (through the loop, or at the next pump), never on the
thread that asked. Running queued work on another thread is refused: strict mode (the tests)
raises, use logs it once.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from typing import Any

import ipywidgets as w
import pytest

from atomic_jupyter.notebook.presentation import view_of
from atomic_jupyter.session.runs import PromptRun
from atomic_jupyter.session.session import AgentSession
from atomic_jupyter.transport.launch import LaunchSpec
from atomic_jupyter.ui import dispatch
from atomic_jupyter.ui.dispatch import OffThreadWidgetWork, UiDispatcher, thread_safe_update
from atomic_jupyter.ui.live_output import LiveOutput
from atomic_jupyter.ui.page_protocol import PageContent
from tests.harness import thread_guard
from tests.harness.output_page import page_tree
from tests.harness.thread_guard import pump_until

LOGGER = "atomic_jupyter.ui.dispatch"


def on_thread(func: Callable[[], Any], name: str = "reader") -> Any:
    """Run ``func`` on a new thread called ``name``, wait for it, and return its result (or
    raise what it raised)."""
    outcome: Future[Any] = Future()

    def target() -> None:
        try:
            outcome.set_result(func())
        except BaseException as exc:
            outcome.set_exception(exc)

    thread = threading.Thread(target=target, name=name)
    thread.start()
    thread.join(30)
    assert not thread.is_alive(), f"the thread {name!r} did not end"
    return outcome.result(0)


class Log:
    """Widget work that notes the thread it ran on."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, str]] = []

    def work(self, label: str) -> Callable[[], None]:
        def run() -> None:
            self.ran.append((label, threading.current_thread().name))

        run.__qualname__ = f"work_{label}"
        return run


@pytest.fixture
def strict(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(UiDispatcher, "strict", True)


@pytest.fixture
def in_use(monkeypatch: pytest.MonkeyPatch) -> None:
    """The dispatcher as it runs for a user: not strict."""
    monkeypatch.setattr(UiDispatcher, "strict", False)


@pytest.fixture
def kernel_loop() -> Iterator[tuple[asyncio.AbstractEventLoop, threading.Thread]]:
    """An event loop running on a thread of its own, called "kernel-loop"."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="kernel-loop", daemon=True)
    thread.start()
    yield loop, thread
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)
    loop.close()


def on_loop(loop: asyncio.AbstractEventLoop, func: Callable[[], Any]) -> Any:
    """Run ``func`` on ``loop`` (its thread) and return its result."""

    async def run() -> Any:
        return func()

    return asyncio.run_coroutine_threadsafe(run(), loop).result(10)


# --------------------------------------------------------------------------- without a loop


def test_work_asked_for_on_the_kernel_thread_runs_at_once() -> None:
    dispatcher, log = UiDispatcher(), Log()
    dispatcher.call(log.work("now"))
    dispatcher.call_throttled(log.work("throttled"), key="k", interval=10)
    assert log.ran == [("now", "MainThread"), ("throttled", "MainThread")]
    assert not dispatcher.pending


def test_work_from_another_thread_waits_for_a_pump_on_the_kernel_thread() -> None:
    dispatcher, log = UiDispatcher(), Log()
    on_thread(lambda: dispatcher.call(log.work("queued")))
    assert log.ran == []  # never inline on the reader thread
    assert dispatcher.pending
    assert dispatcher.wait_for_work(0) is True
    dispatcher.pump()
    assert log.ran == [("queued", "MainThread")]
    assert not dispatcher.pending


def test_the_kernel_thread_is_the_thread_that_made_the_dispatcher() -> None:
    with ThreadPoolExecutor(1, thread_name_prefix="maker") as maker:
        dispatcher = maker.submit(UiDispatcher).result(10)
        log = Log()
        assert not dispatcher.on_kernel_thread()
        dispatcher.call(log.work("from main"))  # queued: main is not its kernel thread
        assert log.ran == []
        with pytest.raises(OffThreadWidgetWork):  # strict in the test suite
            dispatcher.pump()
        dispatch.refused.clear()
        # Another thread that happens to get the same name (or ident) is another thread.
        with pytest.raises(OffThreadWidgetWork):
            on_thread(dispatcher.pump, name=dispatcher.kernel_thread.name)
        dispatch.refused.clear()
        assert log.ran == []
        maker.submit(dispatcher.pump).result(10)
        assert log.ran == [("from main", dispatcher.kernel_thread.name)]


def test_waiting_calls_with_one_key_are_merged_into_the_newest() -> None:
    dispatcher, log = UiDispatcher(), Log()

    def ask() -> None:
        dispatcher.call(log.work("first"), key="title")
        dispatcher.call(log.work("second"), key="title")
        dispatcher.call(log.work("other"))

    on_thread(ask)
    dispatcher.pump()
    assert log.ran == [("second", "MainThread"), ("other", "MainThread")]
    # A call on the kernel thread supersedes the one waiting under its key.
    on_thread(lambda: dispatcher.call(log.work("stale"), key="title"))
    dispatcher.call(log.work("fresh"), key="title")
    dispatcher.pump()
    assert log.ran[2:] == [("fresh", "MainThread")]


def test_throttled_and_final_work_from_another_thread_run_at_the_pump() -> None:
    dispatcher, log = UiDispatcher(), Log()
    on_thread(lambda: dispatcher.call_throttled(log.work("render 1"), key="run", interval=60))
    on_thread(lambda: dispatcher.call_throttled(log.work("render 2"), key="run", interval=60))
    assert log.ran == []
    dispatcher.pump()  # no loop, no timer: every throttled call waiting runs, the newest
    assert log.ran == [("render 2", "MainThread")]
    on_thread(lambda: dispatcher.call_throttled(log.work("render 3"), key="run", interval=60))
    on_thread(lambda: dispatcher.call_last(log.work("final"), key="run"))
    dispatcher.pump()
    assert log.ran[1:] == [("final", "MainThread")]  # the final call drops the waiting one
    assert not dispatcher.pending


def test_wait_for_work_wakes_when_another_thread_queues_some() -> None:
    dispatcher, log = UiDispatcher(), Log()
    assert dispatcher.wait_for_work(0.01) is False
    go = threading.Event()

    def later() -> None:
        go.wait(10)
        dispatcher.call(log.work("late"))

    thread = threading.Thread(target=later, name="reader")
    thread.start()
    go.set()
    assert dispatcher.wait_for_work(10) is True
    thread.join(10)
    pump_until(dispatcher, lambda: log.ran, "the late work")
    assert log.ran == [("late", "MainThread")]


# --------------------------------------------------------------------------- refusals


@pytest.mark.usefixtures("strict")
def test_strict_mode_refuses_to_run_queued_work_off_the_kernel_thread() -> None:
    dispatcher, log = UiDispatcher(), Log()
    on_thread(lambda: dispatcher.call(log.work("queued")))
    for method in (dispatcher.pump, dispatcher.flush):
        with pytest.raises(OffThreadWidgetWork, match="not on the kernel's"):
            on_thread(method, name="ticker")
    assert log.ran == [] and dispatcher.pending
    assert len(dispatch.refused) == 2 and "'ticker'" in dispatch.refused[0]
    dispatch.refused.clear()  # taken here: the thread guard would fail the test on it
    dispatcher.pump()
    assert log.ran == [("queued", "MainThread")]


@pytest.mark.usefixtures("in_use")
def test_in_use_work_off_the_kernel_thread_is_logged_once_and_left_queued(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger=LOGGER)
    dispatcher, log = UiDispatcher(), Log()
    for _ in range(3):
        on_thread(lambda: dispatcher.call(log.work("a")))
        on_thread(lambda: dispatcher.call_throttled(log.work("a"), key="a", interval=1))
    on_thread(lambda: dispatcher.call(log.work("b")))
    for _ in range(3):
        on_thread(dispatcher.pump, name="ticker")
    assert log.ran == []  # neither inline nor on the ticker
    messages = [r.getMessage() for r in caplog.records if r.name == LOGGER]
    assert len(messages) == 3, messages  # work_a and work_b queued with no loop, pump refused
    assert sum("(work_a)" in m for m in messages) == 1
    assert sum("(work_b)" in m for m in messages) == 1
    assert sum("pump() called on thread 'ticker'" in m for m in messages) == 1
    assert dispatch.refused == []  # in use nothing raises
    dispatcher.pump()
    assert sorted(label for label, _ in log.ran) == ["a", "a", "a", "a", "b"]
    assert {thread for _, thread in log.ran} == {"MainThread"}


# --------------------------------------------------------------------------- with a loop


def test_with_a_loop_work_from_any_thread_runs_on_the_loops_thread(
    kernel_loop: tuple[asyncio.AbstractEventLoop, threading.Thread],
) -> None:
    loop, _ = kernel_loop
    dispatcher = UiDispatcher()

    def capture() -> None:
        dispatcher.capture_loop()

    on_loop(loop, capture)
    assert dispatcher.has_loop and not dispatcher.on_kernel_thread()
    log = Log()
    done = threading.Event()
    dispatcher.call(log.work("from main"))
    on_thread(lambda: dispatcher.call(log.work("from reader")))
    on_thread(lambda: dispatcher.call_throttled(log.work("throttled"), key="t", interval=0.01))
    on_loop(loop, lambda: dispatcher.call(log.work("on the loop")))
    dispatcher.call(done.set)
    assert done.wait(10)
    on_loop(loop, lambda: None)  # a turn of the loop after the flush
    labels = dict(log.ran)
    assert set(labels) >= {"from main", "from reader", "on the loop"}
    assert set(labels.values()) == {"kernel-loop"}
    pump_ran = threading.Event()
    on_loop(loop, lambda: dispatcher.call_throttled(pump_ran.set, key="t", interval=0.01))
    assert pump_ran.wait(10)  # the loop's timer ran the throttled call


def test_after_the_loop_closed_work_still_waits_for_the_kernel_thread() -> None:
    loop = asyncio.new_event_loop()
    dispatcher, log = UiDispatcher(), Log()

    async def capture() -> None:
        dispatcher.capture_loop()

    loop.run_until_complete(capture())
    loop.close()
    assert not dispatcher.has_loop and dispatcher.on_kernel_thread()
    on_thread(lambda: dispatcher.call(log.work("late")))
    assert log.ran == []
    dispatcher.pump()
    assert log.ran == [("late", "MainThread")]


# --------------------------------------------------------------------------- views


def fed_session() -> AgentSession:
    """A session that never started: bytes go straight to its client (as from the reader)."""
    session = AgentSession("dispatch", LaunchSpec(command=["true"]))
    session.state = "starting"
    return session


def line(value: object) -> bytes:
    return json.dumps(value).encode() + b"\n"


def test_a_view_renders_what_the_reader_thread_delivers_only_on_the_kernel_thread() -> None:
    session = fed_session()
    view = view_of(session)  # built here, on the main thread
    panel = view.panel_output.widget

    def title() -> str:
        (found,) = page_tree(panel).find_all("atomic-title")
        return found.text

    before = title()
    request = {
        "type": "extension_ui_request",
        "id": "d1",
        "method": "select",
        "title": "Pick",
        "options": ["A", "B"],
    }
    sent = panel.messages
    on_thread(
        lambda: session.client.receive_data(
            line({"type": "extension_ui_request", "id": "t", "method": "setTitle", "title": "New"})
            + line(request)
        )
    )
    assert panel.messages == sent and title() == before  # nothing ran on the reader thread
    (dialog,) = session.dialogs
    pump_until(view.dispatcher, lambda: dialog.id in panel.content.dialogs, "the dialog's controls")
    assert title() == "New"
    # In the panel's list of what it shows itself (a dialog of no prompt), its controls' place.
    (shown,) = page_tree(panel).find_all("atomic-panel-dialogs")
    assert f'data-dialog="{dialog.id}"' in panel.content.blocks["runs/e1:dialog"]
    assert shown is not None
    # The agent going away closes the dialog on the exit watcher's thread: queued, then drawn.
    sent = panel.messages
    on_thread(lambda: dialog.close("the agent exited"), name="exit-watcher")
    assert panel.messages == sent and dialog.id in panel.content.dialogs
    pump_until(
        view.dispatcher, lambda: dialog.id not in panel.content.dialogs, "the dialog to collapse"
    )
    (outcome,) = page_tree(panel).find_all("atomic-dialog-outcome")
    assert dialog.outcome == "Pick → closed: the agent exited"
    assert outcome.text == dialog.result == "→ closed: the agent exited"
    assert thread_guard.take() == []
    view.close()


# --------------------------------------------------------------------------- the guard


def test_the_guard_records_widget_work_off_the_main_thread() -> None:
    label = w.Label("x")

    def offend() -> None:
        w.Button(description="built here")
        label.value = "changed here"
        label.close()

    on_thread(offend, name="offender")
    found = thread_guard.take()
    assert len(found) == 3, found
    assert any(f.startswith("built Button on thread 'offender'") for f in found)
    assert any(f.startswith("changed Label on thread 'offender'") for f in found)
    assert any(f.startswith("closed Label on thread 'offender'") for f in found)
    assert all("tests/unit/ui/test_dispatch.py" in f for f in found)
    assert thread_guard.take() == []


def test_the_guard_allows_a_live_outputs_thread_safe_appends_and_nothing_else() -> None:
    live = LiveOutput()  # built on the main thread, as the magic does
    for piece in ("one\n", "<two>\n"):
        on_thread(partial(live.append, piece))
    (shown,) = page_tree(live.widget).find_all("atomic-live-text")
    assert shown.text == "one\n<two>\n"  # as text, never as HTML
    assert thread_guard.take() == []
    # The same update without the marker is caught, and the marker ends with its block.
    on_thread(lambda: live.widget.update_page(PageContent(["x"], {"x": "x"})), name="unmarked")

    def marked_then_not() -> None:
        with thread_safe_update():
            live.widget.update_page(PageContent(["y"], {"y": "y"}))
        live.widget.update_page(PageContent(["z"], {"z": "z"}))

    on_thread(marked_then_not, name="after-block")
    found = thread_guard.take()
    assert [f.split(" at ")[0] for f in found] == [
        "sent OutputWidget on thread 'unmarked'",
        "sent OutputWidget on thread 'after-block'",
    ]
    live.close()
    assert live.widget.comm is None  # emptied and closed


def test_a_view_renders_from_another_thread_only_while_busy_and_inside_the_marker() -> None:
    """A kernel call waiting while a cell computes: its card is rendered from the timer's
    thread (the kernel's loop cannot run), inside the marker, so the guard allows it."""
    session = fed_session()
    run = PromptRun("r1", "kernel call area")
    run.shown = True
    session.tracker.sent(run)
    view = view_of(session)
    view.run_area(run)
    output = view.run_outputs[id(run)]
    waiting = {"content": [{"type": "text", "text": "waiting for the kernel…"}], "details": {}}
    call = {"toolCallId": "c1", "toolName": "area", "args": {"r": 1}}
    sent = output.widget.messages
    on_thread(
        lambda: session.client.receive_data(
            line({"type": "agent_start"})
            + line({"type": "tool_execution_start", **call})
            + line({"type": "tool_execution_update", **call, "partialResult": waiting})
        )
    )
    assert output.widget.messages == sent  # queued for the kernel thread
    assert not [e for e in page_tree(output.widget).elements if "atomic-tool" in e.classes]
    on_thread(view.render_while_busy, name="atomic-kernel-busy")
    (card,) = [e for e in page_tree(output.widget).elements if "atomic-tool" in e.classes]
    assert "waiting for the kernel…" in card.text
    assert thread_guard.take() == []
    # The render queued for the kernel thread finds nothing more to do.
    sent = output.widget.messages
    view.pump()
    assert output.widget.messages == sent
    # Without the marker, the same render off the kernel's thread is caught.
    on_thread(
        lambda: session.client.receive_data(
            line({"type": "tool_execution_end", **call, "result": {"content": []}})
        )
    )
    on_thread(output.render, name="unmarked")
    found = thread_guard.take()
    assert any(f.startswith("sent OutputWidget") and "'unmarked'" in f for f in found), found
    view.close()


# --------------------------------------------------------------------------- one rule, no gaps


def test_a_batch_interrupted_part_way_keeps_the_rest_queued_in_order() -> None:
    dispatcher = UiDispatcher()
    ran: list[str] = []

    def interrupted() -> None:
        ran.append("a")
        raise KeyboardInterrupt

    def ask() -> None:
        dispatcher.call(interrupted, key="a")
        dispatcher.call(lambda: ran.append("b"), key="b")
        dispatcher.call(lambda: ran.append("c"))

    on_thread(ask)
    with pytest.raises(KeyboardInterrupt):
        dispatcher.flush()
    assert ran == ["a"] and dispatcher.pending
    on_thread(lambda: dispatcher.call(lambda: ran.append("b, newer"), key="b"))
    dispatcher.flush()
    assert ran == ["a", "b, newer", "c"]  # the rest once each, in order; a newer call wins


def test_a_dispatcher_made_for_the_main_thread_stays_its_whoever_made_it() -> None:
    """The presentation's queue of kernel calls belongs to the kernel's main thread even
    when another thread (the agent's reader) makes the presentation first."""
    from atomic_jupyter.notebook.presentation import NotebookPresentation

    made = on_thread(lambda: NotebookPresentation(session=None))  # type: ignore[arg-type]
    main_work = made._main_work
    assert main_work.kernel_thread is threading.main_thread()

    async def capture() -> None:  # a loop on another thread cannot make it that thread's
        main_work.capture_loop()

    on_thread(lambda: asyncio.run(capture()))
    assert main_work.kernel_thread is threading.main_thread() and not main_work.has_loop
    ran: list[str] = []
    on_thread(lambda: main_work.call(lambda: ran.append(threading.current_thread().name)))
    assert ran == []  # queued for the main thread, never run on the thread that asked
    main_work.pump()
    assert ran == [threading.main_thread().name]


def test_a_reader_of_the_panels_list_holds_a_list_that_never_changes_under_it() -> None:
    """``RunList.holds`` is asked on the agent's reader thread without the lock while the
    kernel's thread shows runs: the list it reads is replaced, never changed in place (an
    entry there all along was skipped when the list moved under the read)."""
    from atomic_jupyter.session.run_tracker import RunTracker
    from atomic_jupyter.session.runs import PromptRun
    from atomic_jupyter.ui.run_list import RunList

    shown = RunList("runs", lambda: None, lambda _run: None, None, limit=2)
    first, second, third = PromptRun("p1", "one"), PromptRun("p2", "two"), PromptRun("p3", "3")
    tracker = RunTracker(lambda callback: callback(None))
    tracker.sent(first)
    tracker.finish([first])  # settled: it may go once past the limit
    shown.add(first)
    held = shown.entries  # what a reader on another thread got
    shown.add(second)
    shown.add(third)  # past the limit: the settled first one goes
    assert [run for run, _ in held] == [first]
    assert [run for run, _ in shown.entries] == [third, second]
    assert shown.holds(second) and not shown.holds(first)


def test_stopping_the_running_ticker_waits_for_its_render_and_no_render_follows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """While the agent's code runs, a ticker renders from its own thread; stopping it waits
    for a render under way however long it takes (it waited 10 s at most, after which the
    kernel's thread could render beside it), and no tick starts after the stop."""
    from atomic_jupyter.notebook.presentation import NotebookPresentation

    real_join = threading.Thread.join

    def hurried_join(thread: threading.Thread, timeout: float | None = None) -> None:
        """Every deadline of a join passes at once (as 10 s do for a render that long)."""
        real_join(thread, None if timeout is None else min(timeout, 0.01))

    monkeypatch.setattr(threading.Thread, "join", hurried_join)

    entered, release = threading.Event(), threading.Event()
    renders: list[str] = []

    class View:
        closed = False

        def render_while_busy(self) -> None:
            renders.append("start")
            entered.set()
            assert release.wait(30)
            renders.append("end")

    presentation = NotebookPresentation(session=None)  # type: ignore[arg-type]
    presentation._view = View()  # type: ignore[assignment]
    stop = presentation.while_running(lambda: None, every=0.01)
    assert entered.wait(30)
    stopped = threading.Event()
    stopper = threading.Thread(target=lambda: (stop(), stopped.set()), name="main-like")
    stopper.start()
    assert not stopped.wait(0.2)  # the render under way holds the stop
    release.set()
    assert stopped.wait(30)
    assert renders == ["start", "end"]  # it ended before the stop returned, and none followed
    stopper.join(30)


# --------------------------------------------------------------------------- the stand-in


def loop_dispatcher(
    loop: asyncio.AbstractEventLoop,
) -> tuple[UiDispatcher, list[str], threading.Event]:
    """A dispatcher of ``loop``'s thread whose stand-in records the thread of each render."""
    dispatcher = UiDispatcher()
    on_loop(loop, dispatcher.capture_loop)
    renders: list[str] = []
    rendered = threading.Event()

    def render() -> None:
        renders.append(threading.current_thread().name)
        rendered.set()

    dispatcher.set_stand_in(render)
    return dispatcher, renders, rendered


def test_while_the_loop_is_blocked_the_stand_in_renders_and_the_work_waits_for_the_loop(
    kernel_loop: tuple[asyncio.AbstractEventLoop, threading.Thread],
) -> None:
    """A person's cell holds the loop: work asked for from another thread (a click on a
    subshell, the agent's reader) is drawn by the stand-in's render, on its own thread; the
    work itself runs on the loop once the cell ends."""
    loop, _ = kernel_loop
    dispatcher, renders, rendered = loop_dispatcher(loop)
    cell_ends = threading.Event()
    loop.call_soon_threadsafe(lambda: cell_ends.wait(10))  # the busy cell
    log = Log()
    on_thread(lambda: dispatcher.call(log.work("a click's render")))
    assert rendered.wait(10), "the stand-in never rendered while the loop was blocked"
    assert set(renders) == {"atomic-ui-stand-in"}
    assert log.ran == []  # the work waits for the loop
    cell_ends.set()
    on_loop(loop, lambda: None)
    on_loop(loop, lambda: None)
    assert log.ran == [("a click's render", "kernel-loop")]
    dispatcher.set_stand_in(None)


def test_while_the_loop_runs_the_stand_in_renders_nothing(
    kernel_loop: tuple[asyncio.AbstractEventLoop, threading.Thread],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The probe is given seconds, not milliseconds: a loaded machine still runs it in time.
    monkeypatch.setattr(dispatch, "STAND_IN_AFTER", 5.0)
    loop, _ = kernel_loop
    dispatcher, renders, _rendered = loop_dispatcher(loop)
    log = Log()
    done = threading.Event()
    for index in range(20):
        on_thread(lambda index=index: dispatcher.call(log.work(f"work {index}")))
    dispatcher.call(done.set)
    assert done.wait(10)
    # The stand-in looked (a probe on the loop per batch of work) and saw the loop run it.
    assert not dispatcher.loop_is_blocked(dispatch.STAND_IN_AFTER)
    assert renders == []
    assert len(log.ran) == 20 and {thread for _label, thread in log.ran} == {"kernel-loop"}
    dispatcher.set_stand_in(None)


def test_a_blocked_loop_is_probed_once_however_much_work_waits(
    kernel_loop: tuple[asyncio.AbstractEventLoop, threading.Thread],
) -> None:
    """Each probe is one callback on the loop; while it has not run, no other is added, so a
    cell that blocks for minutes finds a handful of callbacks waiting, not thousands."""
    loop, _ = kernel_loop
    dispatcher, _renders, rendered = loop_dispatcher(loop)
    cell_ends = threading.Event()
    loop.call_soon_threadsafe(lambda: cell_ends.wait(10))
    for _ in range(50):
        assert dispatcher.loop_is_blocked(0.001)
    waiting = len(loop._ready)  # type: ignore[attr-defined]  # the loop's queue of callbacks
    assert waiting <= 2, waiting
    cell_ends.set()
    on_loop(loop, lambda: None)
    assert not dispatcher.loop_is_blocked(1)
    assert not rendered.is_set()
    dispatcher.set_stand_in(None)
