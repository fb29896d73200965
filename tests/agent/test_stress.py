"""Stress: the real agent, threads switched every microsecond, many repetitions.

Each test drives the pinned agent with ``sys.setswitchinterval(1e-6)`` (the interpreter
switches threads as often as it can, so races between the reader thread, the exit watcher, the
ticker, responder threads and the main thread show up) and a session whose views are built on
the main thread, which plays the kernel's: it pumps the dispatcher, as a blocking wait does,
or (``loop``) runs an event loop the dispatcher captured, as an idle kernel does.

- streams: a scripted model answering in hundreds of small pieces;
- dialogs answered from several threads at once, while the main thread clicks the dialog's
  button;
- stop during a stream: the run's abort (the Stop button's way), and ``session.stop()``;
- the agent killed (SIGKILL) during a dialog, while threads answer it, and during a stream.

Invariants, checked after every repetition:

- the session's state, recorded at every change (``extension_ui.changed``), never changes
  again once it is "exited" or "stopped";
- no widget is built, changed or closed off the main thread (``tests/harness/thread_guard.py``)
  and no widget update failed;
- exactly one answer per dialog: the agent read at most one ``extension_ui_response`` for it
  (``tests/extensions/stdin_tap.ts`` records what it read on its stdin), exactly one when the
  agent lived on, and the client wrote no more than one;
- every run ends within a deadline, and its final render is done on the main thread.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

import atomic_jupyter as aj
from atomic_jupyter import AtomicAgentError
from atomic_jupyter.notebook.presentation import view_of
from atomic_jupyter.session.dialogs import Dialog
from atomic_jupyter.session.runs import PromptRun
from atomic_jupyter.session.session import AgentSession
from atomic_jupyter.ui.run_output import RunOutput
from tests.harness import thread_guard
from tests.harness.output_page import page_html, press
from tests.harness.support import (
    EXTENSIONS,
    scripted_agent_home,
    stop_quietly,
    unique_name,
    wait_until,
)
from tests.harness.thread_guard import pump_until

#: Every test with threads switched every microsecond.
pytestmark = [pytest.mark.agent, pytest.mark.usefixtures("fast_thread_switching")]

TAP_EXTENSION = str(EXTENSIONS / "stdin_tap.ts")
#: What the scripted model streams: 1,800 characters in pieces of 3.
STREAM_TEXT = "".join(f"piece {i:03d} of the stream. " for i in range(75))
#: A slower stream (about 2 s), to stop in the middle.
SLOW_TEXT = "slow piece. " * 250
#: Seconds any one run, dialog or exit may take.
DEADLINE = 30.0
#: How many times each scenario runs (about 25 s in all here, 50 s on the 0.73 line).
REPEAT = {"streams": 25, "dialogs": 80, "aborts": 12, "stops": 4, "kills": 8}
#: The states after which a session's state never changes (until a restart).
FINAL_STATES = ("exited", "stopped")


def stress_script(request: Any) -> Any:
    """The scripted model's turns for the stress tests."""
    from atomic_jupyter.addons.model_server import Text, Turn, Usage

    prompt = request.last_user_text.lower()
    if "stream slow" in prompt:
        return Turn([Text(SLOW_TEXT, chunk=4, delay=0.003)], usage=Usage(10, 750))
    if "stream" in prompt:
        return Turn([Text(STREAM_TEXT, chunk=3)], usage=Usage(10, 600))
    return Turn([Text(f"You said: {request.last_user_text}")], usage=Usage(10, 5))


@pytest.fixture(scope="module")
def stress_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, list[str]]]:
    """The scripted model, and an agent home that selects it: ``(home, agent_args)``."""
    from atomic_jupyter.addons.model_server import agent_args

    home = tmp_path_factory.mktemp("stress-agent-home")
    with scripted_agent_home(home, stress_script) as server:
        yield home, agent_args(server)


class Watched:
    """A started session with its views built on the main thread, and what the invariants need.

    Attributes
    ----------
    states:
        The session's state at each announced change, in order.
    finals:
        The runs whose final render was done (on the main thread), in order.
    written:
        The ``extension_ui_response`` lines the client wrote to the agent, as dicts.
    """

    def __init__(
        self, session: AgentSession, tap: Path, loop: asyncio.AbstractEventLoop | None
    ) -> None:
        self.session = session
        self.tap = tap
        self.loop = loop
        self.view = view_of(session)  # built here, on the main thread: the kernel thread
        if loop is not None:  # the kernel's loop, captured while it runs (as in a cell)

            async def capture() -> None:
                self.view.dispatcher.capture_loop()

            loop.run_until_complete(capture())
            assert self.view.dispatcher.has_loop
        self.states: list[str] = [session.state]
        self.finals: list[PromptRun] = []
        self.written: list[dict[str, Any]] = []
        self.state_lock = threading.Lock()
        self._subscriptions = [
            session.extension_ui.changed.add(self._changed),
            self.view.runs_final.add(self.finals.append),
        ]
        process = session.client.process
        assert process is not None
        original = process.send

        def send(line: bytes, *args: Any, **kwargs: Any) -> Any:
            value = json.loads(line)
            if value.get("type") == "extension_ui_response":
                self.written.append(value)
            return original(line, *args, **kwargs)

        process.send = send  # type: ignore[method-assign]
        run = session.prompt(f"/stdin-tap {tap}", display=False)
        assert run.wait_answered(DEADLINE) and run.error is None, run.error
        wait_until(
            lambda: any(n["message"].startswith("stdin tap on") for n in session.notifications),
            "the stdin tap to be on",
        )

    def _changed(self, part: str) -> None:
        if part == "state":
            with self.state_lock:  # the state read and appended in one step
                self.states.append(self.session.state)

    def pump_until(self, predicate: Callable[[], Any], what: str) -> Any:
        """Let the view's queued work run on the main thread until ``predicate()`` holds: pump
        the dispatcher, or run the loop (the kernel idle)."""
        loop = self.loop
        if loop is None:
            return pump_until(self.view.dispatcher, predicate, what, DEADLINE)

        async def idle() -> Any:
            deadline = loop.time() + DEADLINE
            while not (value := predicate()):
                if loop.time() > deadline:
                    raise AssertionError(f"timed out after {DEADLINE:g} s waiting for {what}")
                await asyncio.sleep(0.005)
            return value

        return loop.run_until_complete(idle())

    def has_state(self, state: str) -> bool:
        """Whether the session is in ``state``."""
        return self.session.state == state

    def run(self, text: str) -> PromptRun:
        """Send a prompt whose area is built (on this, the main thread) before it goes out."""
        return self.session.prompt(text, display=False, shown=True)

    def wait_final(self, run: PromptRun) -> None:
        """Every run ends: finished within the deadline, and its final render done here."""
        self.pump_until(lambda: run in self.finals, f"the final render of {run!r}")
        assert run.finished and run.wait_done(DEADLINE), run

    def dialog_shown(self, text: str) -> tuple[PromptRun, Dialog]:
        """Send ``text`` (an extension command asking one dialog); return the run and the
        dialog, once its controls are on the run's page."""
        before = {d.id for d in self.session.dialogs}
        run = self.run(text)

        def shown() -> Dialog | None:
            new = [d for d in self.session.dialogs if d.id not in before]
            output = self.view.run_outputs.get(id(run))
            on_page = new and output is not None and new[0].id in output.content.dialogs
            return new[0] if on_page else None

        return run, self.pump_until(shown, f"the dialog of {text!r} and its controls")

    def output_of(self, run: PromptRun) -> RunOutput:
        """The run's live output (its one widget)."""
        return self.view.run_outputs[id(run)]

    def tapped(self) -> Counter[str]:
        """How many answers the agent read on its stdin, by dialog id."""
        if not self.tap.exists():
            return Counter()
        return Counter(json.loads(line)["id"] for line in self.tap.read_text().splitlines())

    def check_invariants(self) -> None:
        """The state is never overwritten after its end; no widget work off the main thread;
        no widget update failed; no dialog had two answers written or read."""
        with self.state_lock:
            states = list(self.states)
        ends = [i for i, state in enumerate(states) if state in FINAL_STATES]
        if ends:
            after = states[ends[0] :]
            assert set(after) == {states[ends[0]]}, f"the end state was overwritten: {states}"
        found = thread_guard.take()
        assert not found, thread_guard.report(found)
        assert self.view.dispatcher.errors == [], self.view.dispatcher.errors
        written = Counter(value["id"] for value in self.written)
        assert all(n == 1 for n in written.values()), written
        assert all(n == 1 for n in self.tapped().values()), self.tapped()

    def close(self) -> None:
        for subscription in self._subscriptions:
            subscription.remove()


@pytest.fixture
def watched(
    agent_command: list[str],
    ui_extension: str,
    stress_model: tuple[Path, list[str]],
    tmp_path: Path,
) -> Iterator[Callable[..., Watched]]:
    """Start watched sessions (stopped at the end); ``start(loop=True)`` gives the view an
    event loop on the main thread."""
    home, args = stress_model
    started: list[Watched] = []
    loops: list[asyncio.AbstractEventLoop] = []

    def start(loop: bool = False) -> Watched:
        session = aj.start(
            command=agent_command,
            extensions=[ui_extension, TAP_EXTENSION],
            env={"PI_CODING_AGENT_DIR": str(home)},
            extra_args=args,
            cwd=str(tmp_path),
            name=unique_name("stress"),
            display=False,
        )
        if loop:
            loops.append(asyncio.new_event_loop())
        try:
            watched = Watched(
                session, tmp_path / f"tap-{len(started)}.jsonl", loops[-1] if loop else None
            )
        except BaseException:
            stop_quietly(session)
            raise
        started.append(watched)
        return watched

    yield start
    for watched in started:
        stop_quietly(watched.session)
        watched.close()
    for event_loop in loops:
        event_loop.close()


def all_at_once(actions: list[Callable[[], None]], main: Callable[[], None]) -> list[str]:
    """Run each action on a thread of its own and ``main`` here, all released at once; return
    what each thread's action did: ``"ok"`` or the name of the error it raised."""
    barrier = threading.Barrier(len(actions) + 1, timeout=DEADLINE)
    results: list[str] = ["not run"] * len(actions)

    def worker(i: int, action: Callable[[], None]) -> None:
        barrier.wait()
        try:
            action()
            results[i] = "ok"
        except AtomicAgentError as exc:
            results[i] = type(exc).__name__

    threads = [
        threading.Thread(target=worker, args=(i, a), name=f"responder-{i}", daemon=True)
        for i, a in enumerate(actions)
    ]
    for thread in threads:
        thread.start()
    barrier.wait()
    main()
    for thread in threads:
        thread.join(DEADLINE)
        assert not thread.is_alive(), f"{thread.name} did not finish"
    return results


def responders(dialog: Dialog) -> list[Callable[[], None]]:
    """Four ways to answer a select at once: two values, an index, a cancel."""
    return [
        lambda: dialog.respond("Alpha"),
        lambda: dialog.choose(1),
        lambda: dialog.cancel(),
        lambda: dialog.respond("Gamma"),
    ]


def settled_on_page(output: RunOutput, dialog: Dialog) -> bool:
    """Whether the run's page shows the dialog settled: its controls gone and its outcome in
    their place, or the output closed once it is final (its record shows the outcome)."""
    if output.closed:
        return True
    return (
        dialog.id not in output.content.dialogs
        and f'data-dialog="{dialog.id}"' not in page_html(output.widget)
    )


def stream_begun(run: PromptRun) -> bool:
    """Whether some of a run's streamed text has come."""
    return len(run.text) > 40


def got_report(dialog: Dialog) -> str:
    """What ``ui_everything.ts`` reports for the answer the dialog got."""
    if dialog.state == "cancelled":
        return "got select: undefined"
    return f"got select: {json.dumps(dialog.answer)}"


# --------------------------------------------------------------------------- the tests


@pytest.mark.parametrize("loop", [False, True], ids=["pumped", "loop"])
def test_streams_in_small_pieces_render_on_the_main_thread(
    watched: Callable[..., Watched], loop: bool
) -> None:
    w = watched(loop=loop)
    for i in range(REPEAT["streams"]):
        run = w.run(f"stream number {i}")
        w.wait_final(run)
        assert run.error is None, run.error
        assert run.text == STREAM_TEXT  # every piece, in order
        w.check_invariants()
    # The run's final render can come just before the agent's idle event.
    w.pump_until(partial(w.has_state, "idle"), "the session to be idle")


@pytest.mark.parametrize("loop", [False, True], ids=["pumped", "loop"])
def test_a_dialog_answered_from_several_threads_at_once_gets_one_answer(
    watched: Callable[..., Watched], loop: bool
) -> None:
    w = watched(loop=loop)
    for i in range(REPEAT["dialogs"]):
        # Every other dialog has a timeout: the ticker thread announces its countdown too.
        run, dialog = w.dialog_shown("/ui-select 60000" if i % 2 else "/ui-select")
        output = w.output_of(run)
        # A person, on the main thread: the click's message, as the page sends it.
        message = {"type": "dialog", "id": dialog.id, "action": "choose", "index": i % 3}
        results = all_at_once(responders(dialog), partial(press, output.widget, message))
        assert set(results) <= {"ok", "DialogNotPendingError"}, results
        clicked = dialog.answered_by == "clicked"
        assert results.count("ok") + clicked == 1, (results, dialog.answered_by)
        w.pump_until(partial(settled_on_page, output, dialog), "the dialog settled on the page")
        w.wait_final(run)
        assert w.tapped()[dialog.id] == 1, w.tapped()  # the agent read exactly one answer
        reports = [n["message"] for n in w.session.notifications if n["message"].startswith("got")]
        assert reports[-1] == got_report(dialog), (reports[-3:], dialog.outcome)
        w.check_invariants()
    assert sum(w.tapped().values()) == REPEAT["dialogs"]


def test_stop_during_a_stream(watched: Callable[..., Watched]) -> None:
    w = watched()
    # The Stop button's way, from another thread, several times in one session.
    for _ in range(REPEAT["aborts"]):
        run = w.run("stream slow")
        w.pump_until(partial(stream_begun, run), "the stream to have begun")
        stopper = threading.Thread(target=w.session.stop_run, args=(run,), name="stopper")
        stopper.start()
        w.wait_final(run)
        stopper.join(DEADLINE)
        assert len(run.text) < len(SLOW_TEXT), "the stream was not stopped"
        w.check_invariants()
    assert w.session.alive
    # Stopping the session during a stream, a session each time.
    for _ in range(REPEAT["stops"]):
        w = watched()
        run = w.run("stream slow")
        w.pump_until(partial(stream_begun, run), "the stream to have begun")
        w.session.stop()
        w.wait_final(run)
        w.pump_until(partial(w.has_state, "stopped"), "the session to be stopped")
        w.pump_until(lambda w=w: w.states[-1] == "stopped", "the stopped state to be announced")
        w.check_invariants()


def test_the_agent_killed_during_a_dialog(watched: Callable[..., Watched]) -> None:
    for i in range(REPEAT["kills"]):
        w = watched(loop=bool(i % 2))
        run, dialog = w.dialog_shown("/ui-select")
        pid = w.session.pid
        assert pid is not None
        output = w.output_of(run)
        # The kill races the answers: each thread either answers first or finds it gone.
        actions = responders(dialog)[: 1 + i % 4]
        results = all_at_once(actions, partial(os.kill, pid, signal.SIGKILL))
        assert set(results) <= {"ok", "DialogNotPendingError", "AgentNotRunningError"}, results
        assert results.count("ok") <= 1, results
        w.wait_final(run)
        w.pump_until(partial(w.has_state, "exited"), "the session to be exited")
        w.pump_until(partial(settled_on_page, output, dialog), "the dialog settled on the page")
        assert not dialog.pending
        assert (dialog.state == "closed") is (results.count("ok") == 0), (results, dialog.state)
        assert w.tapped()[dialog.id] <= 1
        assert len([v for v in w.written if v["id"] == dialog.id]) == results.count("ok")
        w.check_invariants()
        w.pump_until(lambda w=w: w.states[-1] == "exited", "the exited state to be announced")


def test_the_agent_killed_during_a_stream(watched: Callable[..., Watched]) -> None:
    for i in range(REPEAT["kills"] // 2):
        w = watched(loop=bool(i % 2))
        run = w.run("stream slow")
        w.pump_until(partial(stream_begun, run), "the stream to have begun")
        pid = w.session.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        w.wait_final(run)
        w.pump_until(partial(w.has_state, "exited"), "the session to be exited")
        assert run.exited and len(run.text) < len(SLOW_TEXT), run
        w.check_invariants()
        w.pump_until(lambda w=w: w.states[-1] == "exited", "the exited state to be announced")
