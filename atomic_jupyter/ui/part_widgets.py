"""Parts (:mod:`atomic_jupyter.ui.run_parts`) as live ipywidgets, kept current and closed
when done.

A :class:`PartNode` holds the widget made for one part and the part it last showed; updating
it with the part as it is now changes only what changed (a text, a class, a child added),
reusing the widgets of children that are still there (matched by kind and class) and closing
those that are gone. The interactive parts are widgets of their own: a dialog's widget comes
from the session view (which owns it and closes it), the Stop button and a streamed answer
are made here.

Everything here runs on the kernel's thread (see ARCHITECTURE.md, "Which thread may touch
what").
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

import ipywidgets as w

from atomic_jupyter.session.dialogs import Dialog
from atomic_jupyter.ui.answer_view import AnswerView
from atomic_jupyter.ui.closing import close_widget
from atomic_jupyter.ui.record import part_html
from atomic_jupyter.ui.run_parts import (
    AnswerSlot,
    DialogSlot,
    Fold,
    Group,
    Markup,
    Part,
    StopSlot,
    Text,
)
from atomic_jupyter.ui.text import TextLine, escape

__all__ = ["PartNode", "PartWidgets"]

#: Our colours of a text's tone, in the live view.
TONE_COLORS = {
    "muted": "var(--jp-ui-font-color2,#555)",
    "info": "var(--jp-ui-font-color2,#555)",
    "warning": "var(--jp-warn-color1,#e65100)",
    "error": "var(--jp-error-color1,#c62828)",
}
_LOOK_LAYOUTS: dict[str, dict[str, str]] = {
    "": {},
    "row": {"align_items": "center"},
    "card": {
        "border": "1px solid var(--jp-border-color2,#ddd)",
        "padding": "4px",
        "margin": "4px 0",
    },
    "indent": {"margin": "0 0 0 16px"},
}


def _key(part: Part) -> Hashable:
    if isinstance(part, DialogSlot):
        return ("dialog", part.dialog.id)
    if isinstance(part, StopSlot):
        return ("stop",)
    cls = getattr(part, "cls", "")
    return (type(part).__name__, cls.split(" ", 1)[0])  # its other classes may change


class PartNode:
    """The widget of one part (``widget``), with the nodes of the parts inside it."""

    def __init__(self, part: Part, widget: Any, children: list[PartNode] | None = None) -> None:
        self.part = part
        self.widget = widget
        self.children = children or []
        self.answer: AnswerView | None = None
        #: Whether the widget is this node's own (a dialog's belongs to the session view).
        self.owned = not isinstance(part, DialogSlot)

    def close(self) -> None:
        """Close this node's widgets (not a dialog's: its owner closes it)."""
        for child in self.children:
            child.close()
        if self.owned:
            if self.answer is not None:
                self.answer.close()
            close_widget(self.widget, deep=False)  # the children are nodes, closed above


def _classes(cls: str) -> tuple[str, ...]:
    return tuple(cls.split())


class PartWidgets:
    """Builds and updates the widgets of parts.

    Parameters
    ----------
    dialog_widget:
        The widget of a dialog (built once by the session view, which owns it).
    on_stop:
        Called when a Stop button is clicked.
    """

    def __init__(self, dialog_widget: Callable[[Dialog], Any], on_stop: Callable[[], None]) -> None:
        self._dialog_widget = dialog_widget
        self._on_stop = on_stop

    # ------------------------------------------------------------------ building

    def build(self, part: Part) -> PartNode:
        """A new node showing ``part``."""
        if isinstance(part, Text):
            line = TextLine(part.text, bold=part.tone == "bold", color=TONE_COLORS.get(part.tone))
            line._dom_classes = _classes(part.cls)
            if not part.text:
                line.layout.display = "none"
            return PartNode(part, line)
        if isinstance(part, Markup):
            return PartNode(part, w.HTML(part.html, _dom_classes=_classes(part.cls)))
        if isinstance(part, Group):
            children = [self.build(child) for child in part.children]
            box_type = w.HBox if part.look == "row" else w.VBox
            box = box_type(
                [c.widget for c in children],
                layout=w.Layout(**_LOOK_LAYOUTS[part.look]),
                _dom_classes=_classes(part.cls),
            )
            return PartNode(part, box, children)
        if isinstance(part, Fold):
            if part.keeps_open:  # a growing fold keeps its open state across updates
                inner = self.build(part.child)
                fold = w.Accordion(
                    children=[inner.widget], titles=(part.summary,), selected_index=None
                )
                fold._dom_classes = _classes(part.cls)
                return PartNode(part, fold, [inner])
            return PartNode(part, w.HTML(_details(part)))
        if isinstance(part, DialogSlot):
            return PartNode(part, self._dialog_widget(part.dialog))
        if isinstance(part, AnswerSlot):
            answer = AnswerView()
            answer.update(part.text)
            node = PartNode(part, answer.root)
            node.answer = answer
            return node
        assert isinstance(part, StopSlot)
        stop = w.Button(
            description="Stop", tooltip="Abort the agent's run", layout=w.Layout(width="auto")
        )
        stop.add_class("atomic-stop")
        stop.on_click(lambda _b: self._on_stop())
        node = PartNode(part, stop)
        self._show_stop(stop, part)
        return node

    # ------------------------------------------------------------------ updating

    def update(self, node: PartNode, part: Part) -> PartNode:
        """Bring ``node`` in line with ``part``; return the node that shows it now (a new
        one when the part's kind changed: the old one is closed)."""
        if _key(node.part) != _key(part):
            node.close()
            return self.build(part)
        if part == node.part and not isinstance(part, DialogSlot):
            return node
        old, node.part = node.part, part
        widget = node.widget
        cls = getattr(part, "cls", None)
        if cls is not None and cls != getattr(old, "cls", None) and not isinstance(part, Fold):
            widget._dom_classes = _classes(cls)
        if isinstance(part, Text):
            assert isinstance(old, Text)
            widget.text = part.text
            widget.color = TONE_COLORS.get(part.tone)
            widget.layout.display = None if part.text else "none"
        elif isinstance(part, Markup):
            if widget.value != part.html:
                widget.value = part.html
        elif isinstance(part, Group):
            self._update_children(node, part)
        elif isinstance(part, Fold):
            if part.keeps_open:
                node.children[0] = self.update(node.children[0], part.child)
                if widget.children[0] is not node.children[0].widget:
                    widget.children = [node.children[0].widget]
            else:
                value = _details(part)
                if widget.value != value:
                    widget.value = value
        elif isinstance(part, AnswerSlot):
            assert node.answer is not None
            node.answer.update(part.text)
        elif isinstance(part, StopSlot):
            self._show_stop(widget, part)
        return node

    def _update_children(self, node: PartNode, part: Group) -> None:
        spare: dict[Hashable, list[PartNode]] = {}
        for child in node.children:
            spare.setdefault(_key(child.part), []).append(child)
        kept: list[PartNode] = []
        for child_part in part.children:
            same = spare.get(_key(child_part))
            kept.append(self.update(same.pop(0), child_part) if same else self.build(child_part))
        for leftover in spare.values():
            for gone in leftover:
                gone.close()
        node.children = kept
        widgets = tuple(child.widget for child in kept)
        if tuple(node.widget.children) != widgets:
            node.widget.children = widgets

    @staticmethod
    def _show_stop(button: w.Button, part: StopSlot) -> None:
        button.disabled = not part.active
        button.layout.display = None if part.active else "none"


def _details(part: Fold) -> str:
    summary = f"<summary>{escape(part.summary)}</summary>"
    return f'<details class="{escape(part.cls)}">{summary}{part_html(part.child)}</details>'
