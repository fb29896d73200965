"""How a session is shown in a notebook: its :class:`~atomic_jupyter.ui.session_view.SessionView`
and IPython's display. The session creates one when it is first shown (see
:mod:`atomic_jupyter.session.plugins`).

Every output is a :class:`LiveDisplay`: the live widget, and beside it, in an output of its
own, a copy of its static record (:mod:`atomic_jupyter.ui.record`) as ``text/html`` and
``text/plain`` for viewers without the widget (a notebook reopened without its kernel,
nbconvert, nbviewer, GitHub). The copy is kept current while the widget is live (throttled),
and hidden on the page meanwhile; the widget's own output cannot be: updating it re-creates
the widget's view in JupyterLab, which would take the focus from a dialog's text box as it
is typed in. Once the output is final (a run over with no dialog left open, the panel of a
stopped session), the widget's output is updated to the record alone and the copy becomes a
removed widget view (:data:`REMOVED_VIEW`), so the saved notebook holds one record per
output and no empty output.
"""

from __future__ import annotations

import threading
import time
import uuid
import weakref
from collections.abc import Callable
from contextvars import ContextVar
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from atomic_jupyter.notebook.notebook_tools import (
    attach_kernel,
    record_origin,
    run_ended,
    show_link,
)
from atomic_jupyter.session.weight import newest_within
from atomic_jupyter.transport.heap import note_freed
from atomic_jupyter.ui.dispatch import UiDispatcher
from atomic_jupyter.ui.markdown import forget_recent_renders
from atomic_jupyter.ui.panel_parts import panel_record
from atomic_jupyter.ui.record import (
    Record,
    dialog_notice,
    live_class,
    live_copy,
    run_record,
)
from atomic_jupyter.ui.session_view import SessionView

if TYPE_CHECKING:
    from atomic_jupyter.session.dialogs import Dialog
    from atomic_jupyter.session.observers import Subscription
    from atomic_jupyter.session.runs import PromptRun
    from atomic_jupyter.session.session import AgentSession

__all__ = [
    "REMOVED_VIEW",
    "LiveDisplay",
    "NotebookPresentation",
    "display",
    "in_ipython",
    "in_place_of",
    "presentation_of",
    "show_panel",
    "view_of",
]


def in_ipython() -> bool:
    """Whether IPython runs (a kernel or a terminal shell)."""
    from IPython import get_ipython

    return get_ipython() is not None


def display(obj: Any) -> None:
    """Display ``obj`` in the current cell when IPython runs; do nothing otherwise."""
    if in_ipython():
        from IPython.display import display as ipython_display

        ipython_display(obj)


#: What the live widget's output says in a viewer that shows no widget (its record follows).
LIVE_PLAIN = "(the live view; its record, as it was when the notebook was saved, follows)"

#: What an output that shows nothing any more becomes (a record copy once its output is the
#: record, a final record with nothing in it): the form ipywidgets gives the output of a
#: closed widget, which JupyterLab and Notebook 7 hide, with an empty text for viewers that
#: show no widget, so that no output is an empty bundle (nbconvert warns of one: "mimetype(s)
#: dict_keys([]) is not able to be represented").
REMOVED_VIEW: dict[str, Any] = {
    "application/vnd.jupyter.widget-view+json": {
        "version_major": 2,
        "version_minor": 0,
        "model_id": "",
    },
    "text/plain": "",
}

#: Seconds between two refreshes of the record copies, at least; at most this share of the
#: kernel's time goes to them, and at most this many bytes a second on average (the interval
#: grows with what a refresh costs and sends: a 512 KB answer's record weighs megabytes).
RECORD_INTERVAL = 2.0
RECORD_SHARE = 0.04
RECORD_BYTES_PER_S = 64 * 1024
#: How much the final records of runs kept to be sent again at stop may weigh together
#: (characters of their bundles); beyond it the oldest are let go (their runs' outputs were
#: replaced by them long ago; only a client that missed that, as nbclient may, would want
#: them again).
FINAL_RECORDS_KEPT = 8 << 20
#: Seconds a kernel call may wait for the kernel's thread before its card says so from another
#: thread (an idle kernel or a blocking wait starts it within milliseconds).
BUSY_AFTER = 0.5


#: The output whose place the next live output displayed takes (see :func:`in_place_of`).
_PLACE: ContextVar[LiveDisplay | None] = ContextVar("atomic_place", default=None)
_T = TypeVar("_T")


def in_place_of(shown: LiveDisplay, close: Callable[[], None], action: Callable[[], _T]) -> _T:
    """Run ``action`` (a button's, on the kernel's thread) so that the first live output it
    displays (a session's panel) takes the place of ``shown`` on the page, which then
    ``close`` ends.

    A click's handler runs outside any cell: what it displays has no cell to go to, so the
    panel of a session it starts is shown where the button was, by the display ids of
    ``shown`` (its live view and its record copy).
    """
    token = _PLACE.set(shown)
    try:
        return action()
    finally:
        _PLACE.reset(token)
        if shown.given_away:
            close()


def forget_old_records(shown: dict[str, LiveDisplay], budget: int) -> None:
    """Keep the newest final records of ``shown`` (oldest first) that weigh ``budget``
    together; forget the older ones (live displays are all kept)."""
    kept = newest_within(
        list(shown.items()), lambda item: item[1].final_size if item[1].final else None, budget
    )
    if len(kept) < len(shown):
        shown.clear()
        shown.update(kept)


class LiveDisplay:
    """One output: a live widget with a copy of its record beside it, kept current
    (:meth:`refresh`); then, final (:meth:`make_final`), the record alone.

    Parameters
    ----------
    widget:
        The live widget (or an object of no widget view: a notice, shown by its record).
    record:
        Makes the output's record as it is now.
    copy:
        Whether to keep a record copy beside the widget; without one, the record is in the
        widget's own bundle until :meth:`make_final` (for an output that lives only while its cell
        runs, such as ``%atomic_agent bash``).
    close:
        Closes what made the output (its widgets): called once, when the display is made
        final. The display is the one owner of the output's life: live, final, closed.
    """

    def __init__(
        self,
        widget: Any,
        record: Callable[[], Record],
        copy: bool = True,
        close: Callable[[], None] | None = None,
    ) -> None:
        self.widget: Any = widget
        self.record: Callable[[], Record] | None = record
        self.keeps_copy = copy
        self._close = close
        key = uuid.uuid4().hex
        self.key = key
        self.display_id = f"atomic-{key}"
        self.copy_id = f"atomic-{key}-record"
        #: The copy's bundle last sent (None: no copy; empty once final)
        self._copy: dict[str, str] | None = None
        self._final: dict[str, Any] | None = None  # the record it was replaced by, compacted
        #: Whether another output took this one's place (:func:`in_place_of`).
        self.given_away = False

    @property
    def final(self) -> bool:
        """Whether the display was replaced by its record."""
        return self._final is not None

    @property
    def final_size(self) -> int:
        """The bytes of the record it was replaced by, as it is kept (0 before)."""
        final = self._final or {}
        return sum(len(value) for value in final.values() if isinstance(value, (str, bytes)))

    @property
    def live(self) -> bool:
        """Whether a live widget is shown, with a record copy beside it."""
        return self._copy is not None and self._final is None

    def display(self) -> None:
        """Display the widget and its record copy in the current cell (nothing outside
        IPython); an object of no widget view is displayed as its record, and a display of
        no copy with its record in the widget's bundle."""
        if not in_ipython() or self.record is None:
            return
        from IPython.display import display as ipython_display

        bundle = self.widget._repr_mimebundle_()
        data = dict(bundle[0] if isinstance(bundle, tuple) else bundle)  # anywidget: (data, meta)
        if not self.keeps_copy or "application/vnd.jupyter.widget-view+json" not in data:
            data.update(self.record().bundle())
            ipython_display(data, raw=True, display_id=self.display_id)
            return
        place = _PLACE.get()
        taking = place is not None and place.live and place is not self
        if taking:
            assert place is not None
            self.display_id, self.copy_id = place.display_id, place.copy_id
            place._give_away()
            # A widget view replaced by another widget view keeps its renderer in JupyterLab,
            # which hides itself when the old widget closes: a bundle of another type first
            # makes the page build a new one.
            ipython_display({"text/plain": ""}, raw=True, display_id=self.display_id, update=True)
        self.widget.add_class(live_class(self.key))
        data["text/plain"] = LIVE_PLAIN
        ipython_display(data, raw=True, display_id=self.display_id, update=taking)
        self._copy = live_copy(self.record(), self.key)
        ipython_display(self._copy, raw=True, display_id=self.copy_id, update=taking)

    def _give_away(self) -> None:
        """Another output takes this one's place: nothing here updates it any more."""
        self.given_away = True
        self._copy = None
        self._final = {}
        self.widget = self.record = None
        self._close = None  # the one that took its place closes what made it (in_place_of)

    def refresh(self) -> int:
        """Bring the record copy up to date (sent only when it changed); return the
        characters sent."""
        if not self.live or not in_ipython() or self.record is None:
            return 0
        copy = live_copy(self.record(), self.key)
        if copy == self._copy:
            return 0
        from IPython.display import update_display

        self._copy = copy
        update_display(copy, raw=True, display_id=self.copy_id)
        return sum(len(value) for value in copy.values())

    def make_final(self, again: bool = False) -> None:
        """Replace the widget by its record where it is shown (by :data:`REMOVED_VIEW` when
        the record is empty), and the copy by :data:`REMOVED_VIEW` (once; ``again``: send it
        again, for a client that may have missed it, such as nbclient, which reads only the
        outputs of the cell it runs); then close what made the output (once, in IPython or
        not)."""
        if not self.given_away and in_ipython() and (self._final is None or again):
            self._send_final()
        close, self._close = self._close, None
        if close is not None:
            close()

    def _send_final(self) -> None:
        if self._final is None:  # made once: sent again as it was
            assert self.record is not None
            record = self.record()
            bundle = record.bundle() if record.html or record.plain else REMOVED_VIEW
            self._final = _compacted(bundle)
            self.widget = self.record = None  # what made the output is let go
        else:
            bundle = _expanded(self._final)
        from IPython.display import update_display

        if self._copy is not None:  # first, so the page never shows the record twice
            self._copy = {}  # what it showed is let go; that it had one is kept (sent again)
            update_display(REMOVED_VIEW, raw=True, display_id=self.copy_id)
        update_display(bundle, raw=True, display_id=self.display_id)


def _compacted(bundle: dict[str, Any]) -> dict[str, Any]:
    """A record's bundle as it is kept: each text as UTF-8. Python stores a string in 1, 2 or
    4 bytes a character, by its widest character: one "·" in a record's header makes its
    every character take 2 bytes, one emoji in an answer 4; UTF-8 takes about 1."""
    return {mime: v.encode() if isinstance(v, str) else v for mime, v in bundle.items()}


def _expanded(bundle: dict[str, Any]) -> dict[str, Any]:
    """A bundle kept by :func:`_compacted`, to be sent again."""
    return {mime: v.decode() if isinstance(v, bytes) else v for mime, v in bundle.items()}


class NotebookPresentation:
    """Shows one session: the panel and prompt areas of a :class:`SessionView`, displayed by
    IPython in the cell that asks. The view (and so every widget) is made on first use; once
    an output is final its widgets are closed, and once the session is stopped the whole view
    is closed (a later start makes a new one)."""

    def __init__(self, session: AgentSession) -> None:
        self._session = session
        self._view: SessionView | None = None
        # Kernel calls run on the kernel's main thread, whichever thread made the presentation.
        self._main_work = UiDispatcher(kernel_thread=threading.main_thread())
        self._main_work.capture_loop()
        attach_kernel()  # the pages link before the first prompt
        #: Each displayed run's output, by the run's command id (unique in the session; the
        #: run itself is not kept): its record is kept, to be sent again at stop (the newest
        #: records, :data:`FINAL_RECORDS_KEPT`).
        self._runs: dict[str, LiveDisplay] = {}
        self._panels: list[LiveDisplay] = []
        self._notices: list[LiveDisplay] = []
        self._others: list[LiveDisplay] = []
        self._awaited: dict[int, list[Subscription]] = {}  # runs over but for open dialogs
        self._subscriptions: list[Subscription] = []
        self._record_interval = RECORD_INTERVAL
        #: Runs whose area this presentation built: it closes them once final. (An area
        #: someone else built and displayed, ``view_of(session).run_area(run)``, stays live
        #: until the session stops: nothing replaces it by its record.)
        self._prepared: weakref.WeakSet[PromptRun] = weakref.WeakSet()

    @property
    def view(self) -> SessionView:
        """The session's view (made on first use, on the main thread)."""
        if self._view is None:
            view = self._view = SessionView(self._session)
            self._subscriptions = [
                view.runs_final.add(self._run_final),
                view.shown_changed.add(self._records_changed),
                view.stopped.add(self._stopped),
            ]
        return self._view

    @property
    def panel(self) -> Any:
        """The session's panel."""
        return self.view.panel

    @property
    def displays(self) -> bool:
        """Whether runs can be displayed (IPython runs)."""
        return in_ipython()

    def prepare_run(self, run: PromptRun) -> None:
        """Build the run's area before its prompt goes out, so no event can miss it."""
        self.view.capture_loop()
        self.view.run_area(run)
        self._prepared.add(run)
        record_origin(run)  # which page and cell it came from, for the notebook tools

    def display_run(self, run: PromptRun) -> None:
        """Display the run's area in the current cell (with its record; the record alone once
        the run is over)."""
        if run.shown:
            view = self.view
            shown = LiveDisplay(
                view.run_area(run), partial(run_record, run), close=lambda: view.close_run(run)
            )
            self._runs[run.id] = shown
            shown.display()
            if run.finished:  # over before it was shown: its final render came already
                self._run_final(run)

    def display_panel(self) -> None:
        """Display the panel in the current cell (with its record; the record alone once the
        session is stopped)."""
        view = self.view  # the runs the panel shows when the record is made, not now
        shown = LiveDisplay(self.panel, lambda: panel_record(self._session, view.panel_runs))
        self._panels.append(shown)
        shown.display()

    def notice_dialog(self, dialog: Dialog) -> None:
        """Say in the current cell that ``dialog`` waits for a person; once it is settled, the
        notice says so (or nothing, when the dialog's run shows its outcome)."""
        notice = LiveDisplay(_Text(), partial(dialog_notice, dialog))
        self._notices.append(notice)
        notice.display()
        if not dialog.pending:
            notice.make_final()
            return
        view = self.view

        def settled(d: Dialog) -> None:
            if not d.pending:
                subscription.remove()
                view.later(notice.make_final)

        subscription = dialog.observe(settled)

    def display_live(self, output: Any) -> LiveDisplay:
        """Display any other live output of the session (a prototype's result: a
        :class:`~atomic_jupyter.ui.lines_output.LinesOutput`) with its record; it is replaced
        by its record and closed when the session stops."""
        shown = LiveDisplay(output.widget, output.record, close=output.close)
        self._others.append(shown)
        output.rendered.add(self._records_changed)  # its record copy follows it
        shown.display()
        return shown

    def make_displays_final(self, again: bool = True) -> None:
        """Replace every live output of the session by its record (the session stopped) and
        close every widget; ``again``: the records already sent are sent again, from the
        cell that runs now."""
        for shown in [*self._runs.values(), *self._panels, *self._notices, *self._others]:
            shown.make_final(again=again)  # each closes what made it
        self.close()

    def _stopped(self) -> None:
        show_link(self._session)  # a stopped agent edits nothing: its panel says nothing of it
        view = self._view
        if view is not None:
            view.later(partial(self.make_displays_final, False), key="finish-displays")

    def _run_final(self, run: PromptRun) -> None:
        run_ended(run)  # what its tools still asked of the page is given up
        view = self._view
        if view is None:
            return
        waiting = run.transcript.pending_dialogs()
        if waiting:
            if id(run) not in self._awaited:
                # The run is over, so its dialogs are all there: try again once each is settled.
                again = partial(view.later, partial(self._run_final, run), ("final", id(run)))
                self._awaited[id(run)] = [d.observe(lambda _d: again()) for d in waiting]
            return
        for subscription in self._awaited.pop(id(run), []):
            subscription.remove()
        shown = self._runs.get(run.id)
        if shown is not None:
            shown.make_final()  # its record in its place, then its output closed
            forget_old_records(self._runs, FINAL_RECORDS_KEPT)
        elif run in self._prepared:  # built here, displayed by no display of ours
            view.close_run(run)
        self._prepared.discard(run)
        self._let_go_of_renders(run)

    def _let_go_of_renders(self, run: PromptRun) -> None:
        """A run's output is final: what drawing it made is freed. Once no run of the session
        is live, the renders kept for streamed answers go too; the allocator gives the memory
        back to the system once a megabyte of text's worth was let go (``transport/heap.py``)."""
        forgotten = 0
        if not any(shown.live for shown in self._runs.values()):
            forgotten = forget_recent_renders()
        note_freed(run.weight + forgotten)

    def _records_changed(self) -> None:
        """Something shown changed: the record copies are brought up to date, throttled (in a
        kernel: elsewhere there is no page to save)."""
        view = self._view
        if view is None or not view.has_loop:
            return
        view.later(self.refresh_records, key="record-copies", interval=self._record_interval)

    def refresh_records(self) -> None:
        """Bring every live output's record copy up to date; the next refresh waits longer
        when this one was costly (at most :data:`RECORD_SHARE` of the kernel's time and
        :data:`RECORD_BYTES_PER_S` on average)."""
        started = time.perf_counter()
        sent = sum(shown.refresh() for shown in self._live_displays())
        took = time.perf_counter() - started
        self._record_interval = max(RECORD_INTERVAL, took / RECORD_SHARE, sent / RECORD_BYTES_PER_S)

    def _live_displays(self) -> list[LiveDisplay]:
        every = [*self._runs.values(), *self._panels, *self._others]
        return [shown for shown in every if shown.live]

    def pump(self) -> None:
        """Do the view work that is due (a blocking wait calls this on the main thread)."""
        if self._view is not None:
            self._view.pump()
        self._main_work.capture_loop()
        self._main_work.pump()

    def run_on_main(self, work: Callable[[], None]) -> None:
        """Run ``work`` on the kernel's main thread (a kernel call): at once there, else on
        the kernel's loop when it is idle, or at the next :meth:`pump` of a blocking wait.

        Asked from another thread, if ``work`` has not started :data:`BUSY_AFTER` seconds
        later, a cell is computing: the shown runs are rendered from the timer's thread
        (:meth:`SessionView.render_while_busy`), so the call's card says it waits for the
        kernel while the loop cannot run.
        """
        started = threading.Event()

        def start() -> None:
            started.set()
            work()

        self._main_work.call(start)
        if started.is_set():
            return
        timer = threading.Timer(BUSY_AFTER, self._show_waiting, args=(started,))
        timer.name = "atomic-kernel-busy"
        timer.daemon = True
        timer.start()

    def waiting_for(self) -> str:
        """What a kernel call that has not started waits for, in words for its card: the cell
        that holds the kernel's main thread ("waiting for cell [7] to finish"), from any
        thread."""
        from atomic_jupyter.notebook.notebook_tools import running_cell

        number = running_cell()
        if number is None:
            return "waiting for the kernel…"
        return f"waiting for cell [{number}] to finish (the kernel runs it)"

    def while_running(self, tick: Callable[[], None], every: float) -> Callable[[], None]:
        """While the agent's code runs on the main thread: every ``every`` seconds, call
        ``tick()`` (which updates the call's card) and render the shown runs from this timer's
        thread (:meth:`SessionView.render_while_busy`, the same marked exception as a call
        waiting for a busy kernel). Return the function that stops it: it waits for a tick and
        render under way, however long it takes, and none starts after it returned, so the main
        thread never renders beside it."""
        done = threading.Event()
        ticking = threading.Lock()  # held for each tick and render; stop waits for it

        def loop() -> None:
            while not done.wait(every):
                with ticking:
                    view = self._view  # never made here
                    if done.is_set() or view is None or view.closed:
                        return
                    tick()
                    view.render_while_busy()

        thread = threading.Thread(target=loop, name="atomic-kernel-running", daemon=True)
        thread.start()

        def stop() -> None:
            done.set()
            if thread is not threading.current_thread():
                with ticking:  # a tick under way ends first; the next one sees done
                    pass

        return stop

    def _show_waiting(self, started: threading.Event) -> None:
        view = self._view  # never made here: this runs on the timer's thread
        if started.is_set() or view is None or view.closed:
            return
        view.render_while_busy()

    def close(self) -> None:
        """Stop observing the session and close the view's widgets (a later use makes a new
        view)."""
        for subscription in [*self._subscriptions, *(s for a in self._awaited.values() for s in a)]:
            subscription.remove()
        self._subscriptions, self._awaited = [], {}
        view, self._view = self._view, None
        if view is not None:
            view.close()


def show_panel(session: AgentSession) -> None:
    """Display the session's panel (with its record) in the current cell, in IPython."""
    presentation = session.presentation
    if presentation is not None and in_ipython():
        presentation.display_panel()


def presentation_of(session: AgentSession) -> NotebookPresentation:
    """The notebook presentation of ``session`` (made on first use)."""
    presentation = session.presentation
    assert isinstance(presentation, NotebookPresentation), "atomic_jupyter.wiring is not loaded"
    return presentation


def view_of(session: AgentSession) -> SessionView:
    """The view that shows ``session`` (made on first use)."""
    return presentation_of(session).view


class _Text:
    """A display of nothing but its record (a notice)."""

    def _repr_mimebundle_(self) -> dict[str, Any]:
        return {}
