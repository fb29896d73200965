"""The live view of one prompt's run: its parts (:mod:`atomic_jupyter.ui.run_parts`) as widgets.

:class:`TranscriptView` describes the run's header, blocks and footer with the same functions
the record uses, and shows them through :class:`~atomic_jupyter.ui.part_widgets.PartWidgets`.
It only ever reads the transcript, and only describes again the blocks whose revision
changed; a streaming answer converts and sends only its unsettled end (see
:mod:`~atomic_jupyter.ui.answer_view`). The session view calls :meth:`TranscriptView.render`
at most about 20 times a second, plus once at the end, and :meth:`TranscriptView.close` once
the run's output is replaced by its record. Render and close hold the view's lock: the one
render made off the kernel's thread (a kernel call waiting while a cell computes, see
:meth:`~atomic_jupyter.ui.session_view.SessionView.render_while_busy`) never overlaps another.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import ipywidgets as w

from atomic_jupyter.session.dialogs import Dialog
from atomic_jupyter.session.runs import PromptRun
from atomic_jupyter.ui.closing import close_widget
from atomic_jupyter.ui.part_widgets import PartNode, PartWidgets
from atomic_jupyter.ui.run_parts import (
    Text,
    describe_block,
    describe_footer,
    describe_header,
    describe_message,
)

__all__ = ["TranscriptView"]


class TranscriptView:
    """The widget of one run: a header with a Stop button, the blocks, and a footer.

    Parameters
    ----------
    run:
        The run to show.
    on_stop:
        Called when the Stop button is clicked (aborts the agent's run).
    dialog_widget:
        Gives the widget of a dialog raised during the run (built once, where it is kept).
    """

    def __init__(
        self,
        run: PromptRun,
        on_stop: Callable[[], None],
        dialog_widget: Callable[[Dialog], Any],
    ) -> None:
        self.run = run
        self._widgets = PartWidgets(dialog_widget, on_stop)
        finished = run.finished
        self._header = self._widgets.build(describe_header(run, finished))
        message = describe_message(run)
        self._message = self._widgets.build(message or Text("atomic-run-message", ""))
        self.blocks = w.VBox([])
        self.blocks.add_class("atomic-transcript-blocks")
        self._footer = self._widgets.build(describe_footer(run, finished))
        self.root = w.VBox(
            [self._header.widget, self._message.widget, self.blocks, self._footer.widget]
        )
        self.root.add_class("atomic-run")
        self.root.add_class("atomic-transcript")
        self._views: dict[int, tuple[int, PartNode | None]] = {}
        self.renders = 0
        self.closed = False
        self._lock = threading.RLock()
        self.render()

    # The header's parts, by name (what tests and the session view look at).
    @property
    def state(self) -> Any:
        """The run's state line."""
        return self._header.children[1].widget

    @property
    def stop(self) -> Any:
        """The Stop button."""
        return self._header.children[2].widget

    @property
    def footer(self) -> Any:
        """The footer line."""
        return self._footer.widget

    def render(self) -> None:
        """Bring the widgets in line with the transcript."""
        with self._lock:
            self._render()

    def _render(self) -> None:
        if self.closed:
            return
        self.renders += 1
        # Whether the run is over is read before the blocks: a run that ends while this render
        # reads them is shown as still working, and the final render that follows shows the
        # end with every block final. (Read after, a frontend could see "done" over a stale
        # answer.)
        finished = self.run.finished
        added = []
        for block in self.run.transcript.snapshot():
            rev, node = self._views.get(id(block), (-1, None))
            current = block.rev  # read before the block is read: a change after it shows next time
            if rev == current:
                continue
            part = describe_block(block)
            if part is None:
                self._views[id(block)] = (current, node)
                continue
            if node is None:
                node = self._widgets.build(part)
                added.append(node.widget)
            else:
                updated = self._widgets.update(node, part)
                if updated is not node:
                    self._swap(node.widget, updated.widget)
                node = updated
            self._views[id(block)] = (current, node)
        if added:
            self.blocks.children = (*self.blocks.children, *added)
        self._render_state(finished)

    def _render_state(self, finished: bool) -> None:
        """The footer, then the header's state and Stop (a frontend that sees "done" sees the
        footer too)."""
        self._footer = self._widgets.update(self._footer, describe_footer(self.run, finished))
        self._header = self._widgets.update(self._header, describe_header(self.run, finished))

    def _swap(self, old: Any, new: Any) -> None:
        self.blocks.children = tuple(new if c is old else c for c in self.blocks.children)

    def close(self) -> None:
        """Close every widget of the run (not its dialogs': the session view owns them)."""
        with self._lock:
            self._close()

    def _close(self) -> None:
        if self.closed:
            return
        self.closed = True
        nodes = [self._header, self._message, self._footer]
        nodes += [node for _rev, node in self._views.values() if node is not None]
        for node in nodes:
            node.close()
        self._views.clear()
        close_widget(self.blocks, deep=False)  # its children are closed already
        close_widget(self.root, deep=False)
