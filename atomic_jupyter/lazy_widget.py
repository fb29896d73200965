"""A widget built on first use, by a factory that the presentation layer provides."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import ipywidgets

__all__ = ["LazyWidget"]


class LazyWidget:
    """Mixin: ``widget`` is built once, on first use, by ``_widget_factory(self)``.

    The session layer sets the factory, so the objects that own a widget (dialogs, prompt
    runs) never import ipywidgets themselves.
    """

    def _init_widget(self) -> None:
        self._build_lock = threading.RLock()
        self._widget: ipywidgets.Widget | None = None
        self._widget_factory: Callable[[Any], ipywidgets.Widget] | None = None

    def _set_widget_factory(self, factory: Callable[[Any], ipywidgets.Widget]) -> None:
        self._widget_factory = factory

    @property
    def widget(self) -> ipywidgets.Widget | None:
        """The root ipywidget (built on first use; None without a factory)."""
        with self._build_lock:
            if self._widget is None and self._widget_factory is not None:
                self._widget = self._widget_factory(self)
            return self._widget
