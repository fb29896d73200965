"""The session panel and the prompt output areas, kept in step with an AgentSession.

:class:`SessionView` is the only object that turns a session's state into widgets. It
observes the session's parts through listeners (removed by :meth:`SessionView.close`):
a change of a panel part, a new or changed dialog, a countdown tick, a run that changed.
Those arrive on the agent's reader thread (or the ticker thread); the view hands the widget
work to the kernel's event loop through a :class:`~atomic_jupyter.ui.dispatch.UiDispatcher`,
coalesced per part and throttled where the agent can flood it, and then reads the session's
current state, so a burst of changes costs one update of the widget.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

import ipywidgets as w

from atomic_jupyter.errors import AtomicAgentError
from atomic_jupyter.session.dialogs import Dialog
from atomic_jupyter.session.observers import Listeners
from atomic_jupyter.session.runs import PromptRun
from atomic_jupyter.ui.closing import close_widget, retire_widgets
from atomic_jupyter.ui.dispatch import UiDispatcher, thread_safe_update
from atomic_jupyter.ui.earlier_view import EarlierView
from atomic_jupyter.ui.prompt_editor import PromptEditor
from atomic_jupyter.ui.record import part_html
from atomic_jupyter.ui.run_output import DialogOutput, RunOutput
from atomic_jupyter.ui.run_parts import describe_entry
from atomic_jupyter.ui.text import TextLine, pre_block, pre_html

if TYPE_CHECKING:
    from atomic_jupyter.session.observers import Subscription
    from atomic_jupyter.session.session import AgentSession

__all__ = ["SessionView"]

#: Notifications shown in the panel (all are kept in ``session.notifications``).
NOTIFICATIONS_SHOWN = 30
#: Runs and dialogs the panel shows itself, at most (the oldest settled ones go first).
PANEL_ENTRIES = 20
#: Seconds between two renders of a streaming transcript (at most 20 a second).
TRANSCRIPT_INTERVAL = 0.05
#: Panel parts that can change thousands of times a second, and their update interval.
THROTTLED_PARTS = frozenset({"status", "widgets", "notifications", "diagnostics", "entries"})
PANEL_INTERVAL = 0.05

_NOTIFY_COLORS = {
    "info": "var(--jp-info-color1,#0277bd)",
    "warning": "var(--jp-warn-color1,#e65100)",
    "error": "var(--jp-error-color1,#c62828)",
}
_STATE_TEXT = {
    "new": "not started",
    "starting": "starting…",
    "idle": "idle",
    "working": "working…",
    "stopped": "stopped",
}


class SessionView:
    """All widgets of one session: its panel, and an area per prompt.

    Attributes
    ----------
    panel:
        The panel VBox.
    dialog_outputs:
        Dialog id -> the :class:`~atomic_jupyter.ui.run_output.DialogOutput` of a dialog
        shown in the panel (a dialog of no prompt on the page).
    run_outputs:
        ``id(run)`` -> the run's :class:`~atomic_jupyter.ui.run_output.RunOutput`.
    """

    def __init__(self, session: AgentSession) -> None:
        self.session = session
        self.dispatcher = UiDispatcher()
        self.dispatcher.capture_loop()  # made on the main thread, in a cell
        self._build_lock = threading.RLock()
        self.dialog_outputs: dict[str, DialogOutput] = {}
        #: The runs sent from the panel's editor (shown in the panel), oldest first.
        self.panel_runs: list[PromptRun] = []
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
        self.status_labels: dict[str, TextLine] = {}
        self.placed: set[int] = set()
        self.notifications_shown = 0

        self.title = TextLine("", bold=True)
        self.title.add_class("atomic-title")
        self.state = TextLine("")
        self.state.add_class("atomic-state")
        self.about = TextLine("", color="var(--jp-ui-font-color2,#666)")
        self.about.add_class("atomic-about")
        self.earlier = EarlierView()
        self.status_bar = w.HBox([], layout=w.Layout(flex_flow="row wrap"))
        self.status_bar.add_class("atomic-status")
        self.above = w.VBox([])
        self.above.add_class("atomic-widgets-above")
        self.below = w.VBox([])
        self.below.add_class("atomic-widgets-below")
        self.editor = PromptEditor(
            placeholder="Message the agent… (Shift+Enter sends)",
            rows=3,
            layout=w.Layout(width="100%"),
        )
        self.editor.add_class("atomic-editor")
        self.editor.observe(self._on_editor_change, names="value")
        self.editor.submitted.add(self._send_editor)
        self.send = w.Button(
            description="Send", button_style="primary", tooltip="Send to the agent (Shift+Enter)"
        )
        self.send.on_click(lambda _button: self._send_editor())
        # What the panel shows itself (prompts sent from its editor, dialogs of no prompt): a
        # bounded area whose newest entry stays in view. Its children are newest first, laid
        # out from the bottom up, so the browser keeps the scroll at the newest without script.
        self.dialogs = w.VBox(
            [], layout=w.Layout(max_height="32em", overflow="auto", flex_flow="column-reverse")
        )
        self.dialogs.add_class("atomic-panel-dialogs")
        self.rules = w.VBox([])
        self.rules.add_class("atomic-rules")
        self.entries = w.HTML("")
        self.entries.add_class("atomic-panel-entries")
        self.notifications = w.VBox([])
        self.notifications.add_class("atomic-notifications")
        self.diagnostics = TextLine("")
        self.diagnostics.add_class("atomic-diagnostics")
        self.exit_info = w.HTML("")
        self.exit_info.add_class("atomic-exit")
        self.panel = w.VBox(
            [
                w.HBox([self.title, self.state], layout=w.Layout(justify_content="space-between")),
                self.about,
                self.earlier.widget,
                self.status_bar,
                self.above,
                self.editor,
                w.HBox([self.send]),
                self.below,
                self.rules,
                self.dialogs,
                self.entries,
                self.notifications,
                self.diagnostics,
                self.exit_info,
            ],
            layout=w.Layout(border="1px solid var(--jp-border-color2,#ccc)", padding="6px"),
        )
        self.panel.add_class("atomic-panel")
        for part in (
            "title",
            "status",
            "widgets",
            "editor",
            "state",
            "notifications",
            "diagnostics",
            "policies",
            "entries",
            "conversation",
        ):
            self.refresh(part)
        self._subscriptions: list[Subscription] = [
            session.extension_ui.changed.add(self._part_changed),
            session.dialog_registry.added.add(self._dialog_added),
            session.dialog_registry.ticked.add(self._dialog_ticked),
            session.tracker.changed.add(self._run_changed),
            session.policy_changes.add(lambda: self._part_changed("policies")),
        ]
        self._dialog_subscriptions: dict[str, Subscription] = {}
        self._panel_entries: list[tuple[w.Widget, PromptRun | Dialog]] = []
        self._held_runs: set[int] = set()
        # The dialogs that were pending before the panel existed (those of no prompt).
        for dialog in session.pending_dialogs:
            if dialog.host is None:
                self.add_dialog(dialog)

    def close(self) -> None:
        """Stop observing the session and close every widget of the view (its outputs are
        replaced by their records)."""
        if self.closed:
            return
        self.closed = True
        for subscription in [*self._subscriptions, *self._dialog_subscriptions.values()]:
            subscription.remove()
        self._subscriptions, self._dialog_subscriptions = [], {}
        with self._build_lock:
            runs, self.run_outputs = list(self.run_outputs.values()), {}
            dialogs, self.dialog_outputs = list(self.dialog_outputs.values()), {}
        for run_output in runs:
            run_output.close()
        for dialog_output in dialogs:
            dialog_output.close()
        self.status_labels.clear()
        self.panel_runs.clear()
        self.placed.clear()
        close_widget(self.panel)

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

    def _shown_changed(self, *_what: Any) -> None:
        self.shown_changed.emit()

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
        refresh = partial(self.refresh, part)
        if part in THROTTLED_PARTS:  # floods of setStatus/setWidget/notify
            self.dispatcher.call_throttled(refresh, key=part, interval=PANEL_INTERVAL)
        else:
            self.dispatcher.call(refresh, key=part)

    def _dialog_added(self, dialog: Dialog) -> None:
        # Its settling changes what is shown; followed until it is settled.
        def settled(d: Dialog) -> None:
            self.shown_changed.emit()
            if not d.pending:
                gone = self._dialog_subscriptions.pop(d.id, None)
                if gone is not None:
                    gone.remove()

        self._dialog_subscriptions[dialog.id] = dialog.observe(settled)
        self.shown_changed.emit()
        host = dialog.host
        if host is None or not host.shown:
            # No prompt, or its area is not on the page (prompt(display=False)): the panel.
            self.dispatcher.call(partial(self.add_dialog, dialog))

    def _dialog_ticked(self, _dialog: Dialog) -> None:
        self.shown_changed.emit()  # the page counts down by itself

    def _run_changed(self, run: PromptRun, how: str) -> None:
        """Show a run's transcript: throttled while it streams, at once for a dialog or the end."""
        self.shown_changed.emit()
        if how == "state":
            return
        with self._build_lock:  # a build in progress finishes first (it may have missed this)
            built = id(run) in self.run_outputs
        if not built:
            return  # built later, from the transcript as it then is
        render = partial(self.render_run, run)
        key = ("transcript", id(run))
        if how == "final":
            self.dispatcher.finish(partial(self._final_render, run), key=key)
        elif how == "now":
            self.dispatcher.call(render, key=("now", key))
        else:
            self.dispatcher.call_throttled(render, key=key, interval=TRANSCRIPT_INTERVAL)

    # ------------------------------------------------------------------ session -> widgets

    def refresh(self, part: Any) -> None:
        """Bring one part of the widgets in line with the session."""
        if self.closed:  # queued before the view closed: nothing to show it in
            return
        s = self.session
        if part == "title":
            self.title.text = s.title or f"atomic agent: {s.name}"
        elif part == "status":
            self._refresh_status(s.status)
        elif part == "widgets":
            above: list[w.Widget] = []
            below: list[w.Widget] = []
            for block in s.widgets.values():
                html = pre_block(block["lines"])
                html.add_class("atomic-widget-block")
                (below if block["placement"] == "belowEditor" else above).append(html)
            _replace_children(self.above, above)
            _replace_children(self.below, below)
        elif part == "policies":
            self._refresh_rules()
        elif part == "entries":
            self._refresh_entries()
        elif part == "editor":
            if self.editor.value != s.editor_text:
                self.editor.value = s.editor_text
        elif part == "notifications":
            self._refresh_notifications()
        elif part == "diagnostics":
            count = s.diagnostic_count
            if count:
                last = s.diagnostics[-1] if s.diagnostics else ""
                self.diagnostics.text = (
                    f"{count} message(s) from the agent were ignored; last: {last}"
                )
        elif part == "state":
            self._refresh_state()
        elif part == "conversation":
            self.earlier.show(s.addon("conversations"))
            self.shown_changed.emit()

    def _refresh_status(self, status: dict[str, str]) -> None:
        for key in [k for k in self.status_labels if k not in status]:
            self.status_labels.pop(key).close()
        for key, text in status.items():
            label = self.status_labels.get(key)
            if label is None:
                self.status_labels[key] = _status_entry(key, text)
            elif label.value != text:
                label.text = text
        children = [self.status_labels[key] for key in status]
        if list(self.status_bar.children) != children:
            self.status_bar.children = children

    def _refresh_entries(self) -> None:
        """Extensions' custom entries of no run, as cards (the record's)."""
        entries = self.session.extension_ui.entries
        html = "".join(part_html(describe_entry(kind, data)) for kind, data in entries)
        if self.entries.value != html:
            self.entries.value = html

    def _refresh_notifications(self) -> None:
        total, recent = self.session.extension_ui.notifications_since(self.notifications_shown)
        self.notifications_shown = total
        if not recent:
            return
        items = []
        for note in recent[-NOTIFICATIONS_SHOWN:]:
            item = w.HTML(
                pre_html([f"[{note['type']}] {note['message']}"], _NOTIFY_COLORS.get(note["type"]))
            )
            item.add_class("atomic-notification")
            item.add_class(f"atomic-notify-{note['type']}")
            items.append(item)
        children = [*self.notifications.children, *items]
        dropped, kept = children[:-NOTIFICATIONS_SHOWN], children[-NOTIFICATIONS_SHOWN:]
        self.notifications.children = kept
        for child in dropped:
            child.close()

    def _refresh_state(self) -> None:
        s = self.session
        # The exit details first: a frontend that sees "exited" sees them too.
        if s.state == "exited":
            tail = s.stderr_tail.strip()
            self.exit_info.value = pre_html(
                [
                    f"The agent exited with code {s.returncode}. Its last stderr lines:",
                    tail or "(none)",
                ],
                _NOTIFY_COLORS["error"],
            ) + pre_html(["Run %atomic_agent restart to start it again."])
            self.state.text = f"exited with code {s.returncode}"
        else:
            self.exit_info.value = ""
            self.state.text = _STATE_TEXT.get(s.state, s.state)
        about = str(s.agent) if s.agent.name or s.agent.version else ""
        if s.spec.trust_project:
            about += (" · " if about else "") + "project trust on (its .pi extensions and settings)"
        if self.about.text != about:
            self.about.text = about
        running = s.state in ("idle", "working")
        self.send.disabled = not running

    # ------------------------------------------------------------------ dialogs

    def add_dialog(self, dialog: Dialog) -> None:
        """Show a dialog in the panel (one raised with no prompt area on the page)."""
        if self.closed:  # queued before the view closed: nothing to show it in
            return
        root = self.dialog_widget(dialog)
        if id(root) in self.placed:
            return
        self.placed.add(id(root))
        self._panel_add(root, dialog)

    def dialog_widget(self, dialog: Dialog) -> w.Widget:
        """The widget of a dialog shown on its own (built once, on first use)."""
        with self._build_lock:
            output = self.dialog_outputs.get(dialog.id)
            if output is None or output.dialog is not dialog:
                key = ("dialog", dialog.id)
                output = DialogOutput(
                    dialog,
                    on_rule=self._make_rule,
                    schedule=lambda: self.dispatcher.call(self._render_dialog(dialog), key=key),
                )
                self.dialog_outputs[dialog.id] = output
            return output.widget

    def _render_dialog(self, dialog: Dialog) -> Callable[[], None]:
        def render() -> None:
            output = self.dialog_outputs.get(dialog.id)
            if output is not None:
                output.render()

        return render

    def _refresh_rules(self) -> None:
        """One line per answer policy (rules made from dialogs, policies set in code), each
        with a button that removes it."""
        rows: list[w.Widget] = []
        for policy in self.session.policies:
            label = TextLine(policy.describe())
            label.add_class("atomic-rule-text")
            remove = w.Button(
                description="Remove",
                tooltip="Stop answering these dialogs this way",
                layout=w.Layout(width="auto"),
            )
            remove.add_class("atomic-rule-remove")
            remove.on_click(lambda _b, p=policy: self.session.remove_policy(p))
            row = w.HBox([remove, label], layout=w.Layout(align_items="center"))
            row.add_class("atomic-rule")
            rows.append(row)
        if rows:
            heading = TextLine("Answered without asking:", color="var(--jp-ui-font-color2,#666)")
            rows.insert(0, heading)
        # Not closed at once: a second click on a Remove button must reach a live widget.
        retire_widgets(list(self.rules.children))
        self.rules.children = rows

    def _make_rule(self, dialog: Dialog) -> None:
        try:
            self.session.make_rule(dialog)
        except (AtomicAgentError, ValueError) as exc:
            self.session.extension_ui.diagnose(f"could not make a rule of {dialog.title!r}: {exc}")

    # ------------------------------------------------------------------ prompt areas

    def run_area(self, run: PromptRun) -> w.Widget:
        """The output area of a prompt, its transcript (built once per run, on first use)."""
        with self._build_lock:
            output = self.run_outputs.get(id(run))
            if output is None:
                key = ("now", ("transcript", id(run)))
                output = RunOutput(
                    run,
                    on_stop=lambda: self._on_stop(run),
                    on_rule=self._make_rule,
                    schedule=lambda: self.dispatcher.call(partial(self.render_run, run), key=key),
                )
                self.run_outputs[id(run)] = output
            return output.widget

    def hold_run(self, run: PromptRun) -> None:
        """Keep a run's area live once it is over: it is shown inside another live output
        (a prototype's), which goes with the session."""
        self._held_runs.add(id(run))

    def drop_run(self, run: PromptRun) -> None:
        """Close a finished run's widgets and its dialogs' (its output is its record now) and
        forget them. A run shown in the panel stays until the panel lets it go, and a held
        one (:meth:`hold_run`) until the session stops."""
        if run in self.panel_runs or id(run) in self._held_runs:
            return
        self._forget_run(run)

    def _forget_run(self, run: PromptRun) -> None:
        with self._build_lock:
            output = self.run_outputs.pop(id(run), None)
        if output is None:
            return
        self.placed.discard(id(output.widget))
        output.close()
        for dialog in run.transcript.dialogs():
            self._forget_dialog(dialog)

    def _forget_dialog(self, dialog: Dialog) -> None:
        with self._build_lock:
            output = self.dialog_outputs.get(dialog.id)
            if output is None or output.dialog is not dialog:
                return
            del self.dialog_outputs[dialog.id]
        self.placed.discard(id(output.widget))
        output.close()

    def _final_render(self, run: PromptRun) -> None:
        self.render_run(run)
        self.runs_final.emit(run)

    def render_run(self, run: PromptRun) -> None:
        """Re-render a run's transcript."""
        output = self.run_outputs.get(id(run))
        if output is not None:
            output.render()

    def render_while_busy(self) -> None:
        """Bring every shown run's widgets in line with its transcript now, from any thread.

        For a kernel call that waits while a cell computes: the kernel's loop cannot run, so
        the card would not say "waiting for the kernel…" until the cell ends. This is the
        second marked exception to "widgets only on the kernel thread" (ARCHITECTURE.md,
        "Which thread runs what"): each view renders under its own lock, inside
        :func:`~atomic_jupyter.ui.dispatch.thread_safe_update`, and the kernel thread, busy
        with the cell, touches none of these widgets meanwhile.
        """
        with self._build_lock:
            outputs = list(self.run_outputs.values())
        with thread_safe_update():
            for output in outputs:
                output.render()

    def _on_stop(self, run: PromptRun) -> None:
        try:
            self.session.stop_run(run)  # never blocks the kernel
        except AtomicAgentError as exc:
            run.transcript.note(f"could not stop the run: {exc}", "error")
            self.render_run(run)

    # ------------------------------------------------------------------ widgets -> session

    def _on_editor_change(self, change: dict[str, Any]) -> None:
        self.session.set_editor_text(change["new"])

    def _send_editor(self) -> None:
        try:
            run = self.session.send_editor()
        except AtomicAgentError as exc:
            self.session.extension_ui.diagnose(f"could not send the editor's text: {exc}")
            return
        if run is not None:
            self.panel_runs.append(run)
            self._panel_add(self.run_area(run), run)

    def _panel_add(self, root: w.Widget, shown: PromptRun | Dialog) -> None:
        """Show a run or a dialog in the panel, newest first (see __init__); past
        :data:`PANEL_ENTRIES`, the oldest settled ones are closed and let go."""
        self._panel_entries.insert(0, (root, shown))
        for entry in self._panel_entries[PANEL_ENTRIES:]:
            old = entry[1]
            if isinstance(old, PromptRun) and old.finished and not old.transcript.pending_dialogs():
                self.panel_runs.remove(old)
                self._forget_run(old)
            elif isinstance(old, Dialog) and not old.pending:
                self._forget_dialog(old)
            else:
                continue
            self._panel_entries.remove(entry)
        self.dialogs.children = tuple(entry[0] for entry in self._panel_entries)


def _status_entry(key: str, text: str) -> TextLine:
    label = TextLine(text, tooltip=key)
    label.add_class("atomic-status-entry")
    label.layout.margin = "0 12px 0 0"
    return label


def _replace_children(box: w.Box, children: list[w.Widget]) -> None:
    old = box.children
    box.children = children
    for child in old:
        for grandchild in getattr(child, "children", ()):
            grandchild.close()
        child.close()
