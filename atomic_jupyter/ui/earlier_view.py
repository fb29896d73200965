"""A continued conversation in the panel: "continued: N messages since DATE", what the start
should tell, and the earlier turns folded (the same record the saved notebook keeps)."""

from __future__ import annotations

from typing import Any

import ipywidgets as w

from atomic_jupyter.ui.record import earlier_record

__all__ = ["EarlierView"]


class EarlierView:
    """The panel's view of where its conversation continues (``widget``: empty until then)."""

    def __init__(self) -> None:
        self.widget = w.HTML("")
        self.widget.add_class("atomic-earlier-view")
        self._shown: tuple[Any, ...] = ()

    def show(self, conversations: Any) -> None:
        """Show what the saved-conversations addon (or None) knows of the last start."""
        if conversations is None:
            return
        key = (conversations.continued, tuple(conversations.notes), id(conversations.earlier))
        if key == self._shown:
            return  # the turns' records are made once per start
        self._shown = key
        record = earlier_record(conversations.continued, conversations.notes, conversations.earlier)
        self.widget.value = record.html

    def close(self) -> None:
        """Close the widget."""
        self.widget.close()
