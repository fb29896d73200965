"""A streamed Markdown answer as widgets whose updates do not grow with the answer's length.

The answer is rendered block by block (:class:`~atomic_jupyter.ui.markdown.MarkdownStream`).
Settled blocks (ones no later text can change) are gathered into *chunk* widgets of at least
:data:`CHUNK_BYTES` of HTML (all the blocks that settled since the last chunk: a burst of
text makes one chunk, not many), sent to the frontend once and never touched again; chunks
sit in *groups* of at most :data:`GROUP_SIZE`, so no list of children grows long either. Only
the *tail* widget (the settled blocks not yet in a chunk, and the blocks still growing)
changes from one update to the next. So an update sends the tail, now and then one new chunk,
and rarely a group's list of children, whatever the answer's length.

Joined in order, the chunks and the tail are exactly the rendering of the whole text (each
piece is wrapped in the same ``atomic-markdown`` container).
"""

from __future__ import annotations

import ipywidgets as w
from ipywidgets.widgets.widget_string import HTMLStyle

from atomic_jupyter.ui.markdown import MarkdownStream, wrap_markdown

__all__ = ["CHUNK_BYTES", "GROUP_SIZE", "AnswerView"]

#: Settled HTML gathered before it becomes a chunk widget of its own.
CHUNK_BYTES = 4096
#: Chunks per group widget.
GROUP_SIZE = 32


class AnswerView:
    """The widgets of one streamed Markdown answer (``root``); call :meth:`update` with the
    whole text so far."""

    def __init__(self) -> None:
        self._stream = MarkdownStream()
        self.tail = w.HTML(
            "",
            layout=w.Layout(margin="0", display="none"),
            _dom_classes=("atomic-assistant-piece", "atomic-assistant-tail"),
        )
        self.root = w.VBox(
            [self.tail], layout=w.Layout(margin="0"), _dom_classes=("atomic-assistant-text",)
        )
        # Shared by every chunk and group: a new chunk opens one model, not three.
        self._chunk_layout = w.Layout(margin="0")
        self._chunk_style = HTMLStyle()
        self._groups: list[w.VBox] = []
        #: How many of the answer's blocks are in chunk widgets.
        self.frozen = 0

    @property
    def chunks(self) -> list[w.HTML]:
        """The chunk widgets, in order."""
        return [chunk for group in self._groups for chunk in group.children]

    def update(self, text: str) -> None:
        """Show ``text`` (normally the previous text with more at its end)."""
        pieces = self._stream.update(text)
        if pieces.settled < self.frozen:  # a block thought settled changed: start over
            self._clear()
        if pieces.settled > self.frozen:
            settled = pieces.html(self.frozen, pieces.settled)
            if len(settled) >= CHUNK_BYTES:
                self._add_chunk(wrap_markdown(settled))
                self.frozen = pieces.settled
        rest = pieces.html(self.frozen)
        value = wrap_markdown(rest) if rest else ""
        if value != self.tail.value:
            self.tail.value = value
        display = None if rest else "none"
        if self.tail.layout.display != display:
            self.tail.layout.display = display

    def _add_chunk(self, html: str) -> None:
        chunk = w.HTML(
            html,
            layout=self._chunk_layout,
            style=self._chunk_style,
            _dom_classes=("atomic-assistant-piece", "atomic-assistant-chunk"),
        )
        group = self._groups[-1] if self._groups else None
        if group is None or len(group.children) >= GROUP_SIZE:
            group = w.VBox([], layout=self._chunk_layout, _dom_classes=("atomic-assistant-group",))
            self._groups.append(group)
            self.root.children = (*self._groups, self.tail)
        group.children = (*group.children, chunk)

    def close(self) -> None:
        """Close every widget of the answer (its chunks, groups, tail, and what they share)."""
        self._clear()
        for widget in (self.tail.layout, self.tail.style, self.tail, self.root.layout, self.root):
            widget.close()
        self._chunk_layout.close()
        self._chunk_style.close()

    def _clear(self) -> None:
        old = self._groups
        self._groups = []
        self.frozen = 0
        self.root.children = (self.tail,)
        for group in old:
            for chunk in group.children:
                chunk.close()
            group.close()
