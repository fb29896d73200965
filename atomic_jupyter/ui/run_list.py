"""Runs and dialogs drawn inside another output: the panel's (the prompts sent from its
editor, the dialogs of no prompt on the page) and a prototype's (the commands clicked).

Each is drawn by the same :class:`~atomic_jupyter.ui.run_output.RunOnPage` (or
:class:`~atomic_jupyter.ui.run_output.DialogOnPage`) as an output of its own, its keys
starting ``<key>/eN:``, so the page puts it in the host's block ``[data-children=<key>]``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from atomic_jupyter.session.dialogs import Dialog
from atomic_jupyter.session.runs import PromptRun
from atomic_jupyter.ui.page_protocol import PageContent, PageMessage
from atomic_jupyter.ui.run_output import DialogOnPage, OnRule, RunOnPage

__all__ = ["RunList"]

_LIST = "max-height:32em;overflow:auto;display:flex;flex-direction:column-reverse"


class RunList:
    """The runs and dialogs one output shows, newest first, at most ``limit`` (the oldest
    settled ones go first).

    Parameters
    ----------
    key:
        The key of the host's block that holds them.
    schedule:
        Asks for a render of the host on the kernel's thread (a dialog shown changed).
    on_stop:
        Called with a shown run whose Stop was clicked.
    on_rule:
        Called with a dialog answered with "answer this way from now on" checked.
    limit:
        How many are kept, at most.
    """

    def __init__(
        self,
        key: str,
        schedule: Callable[[], None],
        on_stop: Callable[[PromptRun], None],
        on_rule: OnRule | None,
        limit: int,
    ) -> None:
        self.key = key
        self._schedule = schedule
        self._on_stop = on_stop
        self._on_rule = on_rule
        self.limit = limit
        #: What is shown, newest first: (the run or dialog, its blocks). Replaced whole under
        #: the lock, never changed in place: a reader on another thread (the agent's reader
        #: asking :meth:`holds`) reads one list that stays as it got it.
        self.entries: list[tuple[PromptRun | Dialog, RunOnPage | DialogOnPage]] = []
        self._count = 0
        self._lock = threading.RLock()

    def add(self, shown: PromptRun | Dialog) -> None:
        """Show a run or a dialog first; past ``limit``, the oldest settled ones go."""
        with self._lock:
            if self.holds(shown):
                return
            self._count += 1
            prefix = f"{self.key}/e{self._count}:"
            blocks: RunOnPage | DialogOnPage
            if isinstance(shown, PromptRun):
                run = shown
                blocks = RunOnPage(
                    run, lambda: self._on_stop(run), self._on_rule, self._schedule, prefix
                )
            else:
                blocks = DialogOnPage(shown, self._on_rule, self._schedule, prefix)
            entries = [(shown, blocks), *self.entries]
            gone = [entry for entry in entries[self.limit :] if _settled(entry[0])]
            self.entries = [entry for entry in entries if entry not in gone]
            for entry in gone:
                entry[1].close()

    def holds(self, what: PromptRun | Dialog) -> bool:
        """Whether ``what`` is shown here (asked from any thread, at each of the agent's events:
        no list is built, no lock is taken; the list read is never changed in place)."""
        return any(shown is what for shown, _ in self.entries)

    @property
    def runs(self) -> list[PromptRun]:
        """The runs shown, oldest first."""
        return [what for what, _ in reversed(self.entries) if isinstance(what, PromptRun)]

    def fill(self, content: PageContent, cls: str) -> None:
        """Add the holder block (of class ``cls``) and what it holds to ``content``."""
        with self._lock:
            if not self.entries:
                return
            content.order.append(self.key)
            content.blocks[self.key] = (
                f'<div class="{cls}" style="{_LIST}" data-children="{self.key}"></div>'
            )
            for _what, blocks in self.entries:
                blocks.fill(content)

    def act(self, message: PageMessage) -> None:
        """A click for one of the runs or dialogs shown (each takes only its own)."""
        for _what, blocks in self.entries:
            blocks.act(message)

    def close(self) -> None:
        """Let every run and dialog shown go."""
        with self._lock:
            entries, self.entries = self.entries, []
        for _what, blocks in entries:
            blocks.close()


def _settled(shown: PromptRun | Dialog) -> bool:
    if isinstance(shown, PromptRun):
        return shown.finished and not shown.transcript.pending_dialogs()
    return not shown.pending
