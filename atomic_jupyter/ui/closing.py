"""Closing widgets: each widget is a model in the kernel and in the page until it is closed,
and so are its layout and its style. An output replaced by its record closes its widgets."""

from __future__ import annotations

import time
from collections import deque
from typing import Any

import ipywidgets as w

__all__ = ["RETIRE_AFTER_S", "close_widget", "retire_widgets"]


def close_widget(widget: Any, deep: bool = True) -> None:
    """Close ``widget``, its layout and its style, and with ``deep`` its children too.
    Closing twice does nothing."""
    for child in (getattr(widget, "children", ()) or ()) if deep else ():
        close_widget(child)
    for part in ("layout", "style"):
        owned = getattr(widget, part, None)
        if isinstance(owned, w.Widget):
            owned.close()
    if isinstance(widget, w.Widget):
        widget.close()


#: Seconds a widget taken off a live page stays open for clicks already on their way.
RETIRE_AFTER_S = 30.0
_retired: deque[tuple[float, list[Any]]] = deque()


def retire_widgets(widgets: list[Any]) -> None:
    """Queue widgets taken off a live page for closing (a click already on its way still
    reaches a live widget), and close those queued long enough ago."""
    now = time.monotonic()
    while _retired and now - _retired[0][0] > RETIRE_AFTER_S:
        for widget in _retired.popleft()[1]:
            close_widget(widget)
    _retired.append((now, widgets))
