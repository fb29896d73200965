"""A session's outputs kept in step with the session: its panel and an output per prompt.

:class:`SessionView` is a small subscriber. It listens to the session's parts (removed by
:meth:`SessionView.close`): a changed panel part, a dialog of no prompt on the page, a run
that changed. Those arrive on the agent's reader thread (or the ticker thread); the view hands
the widget work to the kernel's event loop through a
:class:`~atomic_jupyter.ui.dispatch.UiDispatcher`, coalesced and throttled where the agent can
flood it, and the output asked then reads the session as it is, so a burst of changes costs
one update. What each output shows is :class:`~atomic_jupyter.ui.panel_output.PanelOutput`'s
and :class:`~atomic_jupyter.ui.run_output.RunOutput`'s business: one widget each.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from functools import partial
from typing import TYPE_CHECKING, Any

from atomic_jupyter.errors import AtomicAgentError
from atomic_jupyter.session.dialogs import Dialog
from atomic_jupyter.session.observers import Listeners
from atomic_jupyter.session.runs import PromptRun
from atomic_jupyter.ui.dispatch import UiDispatcher, thread_safe_update
from atomic_jupyter.ui.output_widget import OutputWidget
from atomic_jupyter.ui.page_protocol import CompactClicked, KeyGiven, ModelChosen, ThinkingChosen
from atomic_jupyter.ui.panel_output import PanelOutput, SettingMessage
from atomic_jupyter.ui.run_output import RunOutput

if TYPE_CHECKING:
    from atomic_jupyter.session.observers import Subscription
    from atomic_jupyter.session.session import AgentSession

__all__ = ["SessionView"]

#: Seconds between two renders of a streaming transcript (at most 20 a second).
TRANSCRIPT_INTERVAL = 0.05
#: The share of the kernel's thread a streaming output's renders may take, at most: the next
#: render waits four times as long as the last one took (an answer whose last paragraph is
#: megabytes long takes a second to render; it is drawn every five, not without a pause).
RENDER_SHARE = 0.2
#: What a setting's error says was being done.
_DOING = {
    ModelChosen: "change the model",
    ThinkingChosen: "change the thinking level",
    CompactClicked: "compact the conversation",
    KeyGiven: "use the key",
}
#: Panel parts that can change thousands of times a second, and their update interval.
THROTTLED_PARTS = frozenset({"status", "widgets", "notifications", "diagnostics", "entries"})
PANEL_INTERVAL = 0.05
#: The shortest time between two renders for where the session stands (a few a second, however
#: quickly runs end).
STANDING_INTERVAL = 0.25


class SessionView:
    """The outputs of one session: its panel, and an output per prompt.

    Attributes
    ----------
    panel_output:
        The panel (:class:`~atomic_jupyter.ui.panel_output.PanelOutput`).
    run_outputs:
        ``id(run)`` -> the run's :class:`~atomic_jupyter.ui.run_output.RunOutput`.
    """

    def __init__(self, session: AgentSession) -> None:
        self.session = session
        # The main thread's, wherever the view is made: a click handled on a kernel
        # subshell's thread (Resume) can make one, and that thread's loop is not the kernel's.
        self.dispatcher = UiDispatcher(kernel_thread=threading.main_thread())
        self.dispatcher.capture_loop()
        # While a person's cell blocks the loop, what the agent and the page's messages
        # change is drawn from the dispatcher's stand-in thread.
        self.dispatcher.set_stand_in(self.render_while_busy)
        self._build_lock = threading.RLock()
        #: Called on the main thread with each run whose final render is done.
        self.runs_final: Listeners[Callable[[PromptRun], None]] = Listeners()
        #: Called (on any thread) whenever something this view shows changed: a panel part,
        #: a dialog added, settled or ticking, a run, the policies. (What a copy of the
        #: view's record follows.)
        self.shown_changed: Listeners[Callable[[], None]] = Listeners()
        #: Called (on any thread) when the session was stopped.
        self.stopped: Listeners[Callable[[], None]] = Listeners()
        self.closed = False
        self.run_outputs: dict[int, RunOutput] = {}
        self.panel_output = PanelOutput(
            session,
            schedule=self._panel_dialog_changed,
            on_send=self._send,
            on_stop=self.stop_run,
            on_rule=self.make_rule,
            on_setting=self._set,
        )
        #: The outputs that draw runs inside them (the panel, prototypes' outputs): each has
        #: a :class:`~atomic_jupyter.ui.run_list.RunList` ``shown``, ``runs`` and ``render()``.
        self._hosts: list[Any] = [self.panel_output]
        #: How long the last streaming render of each output took (seconds).
        self._render_took: dict[Hashable, float] = {}
        self.panel_output.render()
        self._subscriptions: list[Subscription] = [
            session.extension_ui.changed.add(self._part_changed),
            session.dialog_registry.added.add(self._dialog_added),
            session.dialog_registry.ticked.add(self._dialog_ticked),
            session.tracker.changed.add(self._run_changed),
            session.policy_changes.add(lambda: self._part_changed("policies")),
            session.standing.changed.add(lambda: self._part_changed("standing")),
        ]
        # The dialogs that were pending before the panel existed (those of no prompt).
        for dialog in session.pending_dialogs:
            if dialog.host is None:
                self.panel_output.add(dialog)
        self.panel_output.render()

    @property
    def panel(self) -> OutputWidget:
        """The panel's widget."""
        return self.panel_output.widget

    @property
    def panel_runs(self) -> list[PromptRun]:
        """The runs sent from the panel's editor (shown in the panel), oldest first."""
        return self.panel_output.runs

    def close(self) -> None:
        """Stop observing the session and close every widget of the view (its outputs are
        replaced by their records)."""
        if self.closed:
            return
        self.closed = True
        self.dispatcher.set_stand_in(None)
        for subscription in self._subscriptions:
            subscription.remove()
        self._subscriptions = []
        with self._build_lock:
            runs, self.run_outputs = list(self.run_outputs.values()), {}
        for run_output in runs:
            run_output.close()
        self.panel_output.close()

    # ------------------------------------------------------------------ for the presentation

    @property
    def has_loop(self) -> bool:
        """Whether widget work goes to a kernel's event loop."""
        return self.dispatcher.has_loop

    def capture_loop(self) -> None:
        """Remember the kernel's event loop (call on the main thread, in a cell)."""
        self.dispatcher.capture_loop()

    def later(self, func: Callable[[], None], key: Any = None, interval: float = 0.0) -> None:
        """Run ``func`` on the kernel's thread (at most once per ``interval`` seconds for
        ``key`` when one is given)."""
        if interval:
            self.dispatcher.call_throttled(func, key=key, interval=interval)
        else:
            self.dispatcher.call(func, key=key)

    def pump(self) -> None:
        """On the main thread during a blocking wait: run the widget work that is due."""
        self.dispatcher.capture_loop()
        self.dispatcher.pump()

    # ------------------------------------------------------------------ listeners (any thread)

    def _part_changed(self, part: str) -> None:
        if part == "state" and self.session.state == "stopped":
            self.stopped.emit()
        else:
            self.shown_changed.emit()
        if part == "editor":  # set by the agent, or cleared by a send: the page shows it
            self.panel_output.editor_set()
        if part == "standing":
            self.dispatcher.call_throttled(
                self.render_panel, key="panel-standing", interval=STANDING_INTERVAL
            )
        elif part in THROTTLED_PARTS:  # floods of setStatus/setWidget/notify
            self.dispatcher.call_throttled(self.render_panel, key="panel", interval=PANEL_INTERVAL)
        else:
            self.dispatcher.call(self.render_panel, key="panel-now")

    def _dialog_added(self, dialog: Dialog) -> None:
        """A dialog of no run: the panel shows it."""
        self.shown_changed.emit()
        self.show_in_panel(dialog)

    def show_in_panel(self, dialog: Dialog) -> None:
        """Put ``dialog`` in the panel's list now, from any thread (the list holds no widget
        and takes the panel's lock), and ask for the panel's render."""
        if self.closed:
            return
        self.panel_output.add(dialog)
        self.dispatcher.call(self.render_panel, key="panel-now")

    def _dialog_changed(self) -> None:
        """A dialog an output drew changed (on any thread): the record copies follow."""
        self.shown_changed.emit()

    def _dialog_ticked(self, _dialog: Dialog) -> None:
        self.shown_changed.emit()  # the page counts down by itself

    def _run_changed(self, run: PromptRun, how: str) -> None:
        """Show a run's transcript: throttled while it streams, at once for a dialog or the end."""
        self.shown_changed.emit()
        if how == "state":
            return
        with self._build_lock:  # a build in progress finishes first (it may have missed this)
            built = id(run) in self.run_outputs
        if how == "now" and not built and not run.shown:
            # A dialog of a run whose output is not on the page (prompt(display=False)): the
            # run announced it, the panel shows it.
            for dialog in run.transcript.pending_dialogs():
                self.show_in_panel(dialog)
        render: Callable[[], None]
        key: Hashable
        host = self._host_of(run)
        if host is self.panel_output:
            render, key = self.render_panel, "panel"
        elif host is not None:
            render, key = host.render, ("host", id(host))
        elif built:
            render, key = partial(self.render_run, run), ("transcript", id(run))
        else:
            return  # built later, from the transcript as it then is
        if how == "final":
            self._render_took.pop(key, None)
            self.dispatcher.call_last(partial(self._final_render, run, render), key=key)
        elif how == "now":
            self.dispatcher.call(render, key=("now", key))
        else:
            took = self._render_took.get(key, 0.0)
            interval = max(TRANSCRIPT_INTERVAL, took * (1 - RENDER_SHARE) / RENDER_SHARE)
            self.dispatcher.call_throttled(
                partial(self._timed_render, render, key), key=key, interval=interval
            )

    def _timed_render(self, render: Callable[[], None], key: Hashable) -> None:
        """``render``, and how long it took (the next streaming render waits in proportion)."""
        started = time.perf_counter()
        try:
            render()
        finally:
            self._render_took[key] = time.perf_counter() - started

    # ------------------------------------------------------------------ the panel

    def render_panel(self) -> None:
        """Bring the panel in line with the session."""
        if not self.closed:
            self.panel_output.render()

    def refresh(self, _part: Any = None) -> None:
        """Bring the panel in line with the session now (any part)."""
        self.render_panel()

    def make_rule(self, dialog: Dialog) -> None:
        """Make an answer policy of how ``dialog`` was answered ("from now on" was checked);
        what stops it is told in the panel."""
        try:
            self.session.make_rule(dialog)
        except (AtomicAgentError, ValueError) as exc:
            self.session.extension_ui.diagnose(f"could not make a rule of {dialog.title!r}: {exc}")

    def _send(self, _text: str) -> None:
        try:
            run = self.session.send_editor()
        except AtomicAgentError as exc:
            self.session.extension_ui.diagnose(f"could not send the editor's text: {exc}")
            return
        if run is not None:
            self.panel_output.add(run)
            self.render_panel()

    def _set(self, message: SettingMessage) -> str | None:
        """A person changed a setting in the panel: the model, the thinking level, a
        compaction, a key. What went wrong, in words (None: nothing)."""
        try:
            if isinstance(message, ModelChosen) and "/" in message.value:
                provider, model_id = message.value.split("/", 1)
                self.session.set_model(provider, model_id)
            elif isinstance(message, ThinkingChosen):
                self.session.set_thinking_level(message.value)
            elif isinstance(message, CompactClicked):
                run = self.session.compact(display=False, shown=True)
                self.panel_output.add(run)
            elif isinstance(message, KeyGiven):
                return self.session.use_key(message.value, keep=message.keep)
        except (AtomicAgentError, ValueError) as exc:
            return f"could not {_DOING[type(message)]}: {exc}"
        return None

    # ------------------------------------------------------------------ prompt areas

    def run_area(self, run: PromptRun) -> OutputWidget:
        """The output of a prompt, its transcript (built once per run, on first use)."""
        with self._build_lock:
            output = self.run_outputs.get(id(run))
            if output is None:
                key = ("now", ("transcript", id(run)))
                output = RunOutput(
                    run,
                    on_stop=lambda: self.stop_run(run),
                    on_rule=self.make_rule,
                    schedule=partial(self._run_dialog_changed, run, key),
                )
                self.run_outputs[id(run)] = output
            return output.widget

    def _run_dialog_changed(self, run: PromptRun, key: Hashable) -> None:
        self._dialog_changed()
        self.dispatcher.call(partial(self.render_run, run), key=key)

    def _panel_dialog_changed(self) -> None:
        self._dialog_changed()
        self.dispatcher.call(self.render_panel, key="panel-now")

    def add_host(self, host: Any) -> None:
        """Render ``host`` (an output with a ``shown`` run list, ``runs`` and ``render()``,
        such as a prototype's) when a run it shows changes, until :meth:`remove_host`."""
        with self._build_lock:
            self._hosts.append(host)

    def remove_host(self, host: Any) -> None:
        """Stop rendering ``host`` for its runs."""
        with self._build_lock:
            if host in self._hosts:
                self._hosts.remove(host)

    def _host_of(self, run: PromptRun) -> Any:
        with self._build_lock:
            hosts = list(self._hosts)
        return next((host for host in hosts if host.run_list.holds(run)), None)

    def close_run(self, run: PromptRun) -> None:
        """Close a finished run's output (its record is in its place now) and forget it."""
        with self._build_lock:
            output = self.run_outputs.pop(id(run), None)
        if output is not None:
            output.close()

    def _final_render(self, run: PromptRun, render: Callable[[], None]) -> None:
        render()
        self.runs_final.emit(run)

    def render_run(self, run: PromptRun) -> None:
        """Re-render a run's output."""
        output = self.run_outputs.get(id(run))
        if output is not None:
            output.render()

    def render_while_busy(self) -> None:
        """Bring every shown run's output and the panel in line with the session now, from
        any thread.

        For the times the kernel's loop cannot run because a cell computes: the dispatcher's
        stand-in (a dialog answered over a subshell, what the agent streams next), a kernel
        call that waits (its card says "waiting for the kernel…"), the agent's code running.
        These are the marked exceptions to "widgets only on the kernel thread"
        (ARCHITECTURE.md, "Which thread may touch what"): each output renders under its own
        lock, inside :func:`~atomic_jupyter.ui.dispatch.thread_safe_update`; nothing is built,
        displayed or closed here.
        """
        if self.closed:
            return
        with self._build_lock:
            hosts = [h for h in self._hosts if h is self.panel_output or h.runs]
            outputs = [*self.run_outputs.values(), *hosts]
        with thread_safe_update():
            for output in outputs:
                output.render()

    def stop_run(self, run: PromptRun) -> None:
        """Stop ``run`` (its Stop was clicked); what went wrong is told in its output."""
        try:
            self.session.stop_run(run)  # never blocks the kernel
        except AtomicAgentError as exc:
            run.transcript.note(f"could not stop the run: {exc}", "error")
            self.render_run(run)
