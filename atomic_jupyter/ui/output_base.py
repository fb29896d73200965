"""The base of every output of ours: one :class:`~atomic_jupyter.ui.output_widget.OutputWidget`,
what it shows made and sent under one lock, and its end.

An output is *live* from when it is made: :meth:`OutputBase.render` makes what it shows now
(:meth:`OutputBase.page_content`, each kind its own) and sends the page what changed. It is
*closed* once (:meth:`OutputBase.close`): what it follows is let go, its widget emptied and
closed, and a render or a message from the page after that does nothing. Between the two,
the presentation may make it *final* (its record shown in its place, ``LiveDisplay``): the
output itself does not know, and is closed next.

The locking rule, the same for every kind: making the content, sending it and closing hold
the output's lock (re-entrant: a render asked for while one runs on the same thread, as a
click's answer does, runs inside it). So a render from another thread (the marked exceptions
of ARCHITECTURE.md, "Which thread may touch what") never overlaps one on the kernel's
thread, and nothing is sent after the close. Listeners of :attr:`OutputBase.rendered` are
called after the lock is released; a message from the page is handled without it (an
action may take long, and renders when it is done).
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable

from atomic_jupyter.session.observers import Listeners
from atomic_jupyter.ui.dispatch import thread_safe_update
from atomic_jupyter.ui.output_widget import OutputWidget
from atomic_jupyter.ui.page_protocol import PageContent, PageMessage

__all__ = ["OutputBase"]


class OutputBase(ABC):
    """One output of ours, drawn by its own widget (see the module's text).

    Parameters
    ----------
    root_class:
        The classes of the output's root element on the page.
    root_style:
        The root element's inline style.
    """

    def __init__(self, root_class: str, root_style: str = "") -> None:
        self.widget = OutputWidget(root_class, root_style)
        #: Whether the output was closed (its widget emptied and closed).
        self.closed = False
        self._lock = threading.RLock()
        #: Called after each render that was sent (what a copy of the record follows).
        self.rendered: Listeners[Callable[[], object]] = Listeners()
        self.widget.on_action.add(self._received)

    @abstractmethod
    def page_content(self) -> PageContent:
        """What the output shows now, as the page draws it (called under the lock)."""

    @property
    def content(self) -> PageContent:
        """What the page was last sent."""
        return self.widget.content

    def act(self, message: PageMessage) -> None:
        """A message from the page, on the shell thread that received it (the main thread or
        a kernel subshell's; nothing, unless a kind has controls)."""
        return

    def let_go(self) -> None:
        """Stop following what the output shows, as it closes (nothing, unless a kind
        follows something: dialogs, runs)."""
        return

    def render(self) -> None:
        """Bring the page in line with what the output shows (sends what changed)."""
        with self._lock:
            if self.closed:
                return
            self.widget.update_page(self.page_content())
        self.rendered.emit()

    def close(self) -> None:
        """Let go of what it follows, then empty and close the widget (once)."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            self.let_go()
            self.widget.empty_and_close()

    def _received(self, message: PageMessage) -> None:
        # On the shell thread that received the page's message: the main thread, or a kernel
        # subshell's while a cell may run on the main one (ARCHITECTURE.md, "Which thread
        # runs what"). What an action renders is rendered under each output's lock.
        if not self.closed:
            with thread_safe_update():
                self.act(message)
