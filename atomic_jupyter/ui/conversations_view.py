"""The listing of a notebook's saved conversations: a line each, with a Resume button."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import ipywidgets as w

from atomic_jupyter.ui.text import TextLine

__all__ = ["ConversationsView"]


class ConversationsView:
    """A heading, then one row per conversation: a Resume button (none for a conversation
    that cannot be continued) and its line. A click runs the row's action on the kernel's
    thread with the view's output area current; what it returns (a sentence) or raises is
    shown there.

    Parameters
    ----------
    heading:
        The line above the rows.
    rows:
        ``(line, action)`` per conversation; ``action`` is None when it cannot be resumed.
    """

    def __init__(self, heading: str, rows: Sequence[tuple[str, Callable[[], str] | None]]) -> None:
        self.buttons: list[w.Button] = []
        children: list[w.Widget] = [TextLine(heading, bold=True)]
        for line, action in rows:
            label = TextLine(line)
            label.add_class("atomic-conversation")
            if action is None:
                children.append(w.HBox([label]))
                continue
            button = w.Button(description="Resume", tooltip="Continue this conversation")
            button.layout.width = "auto"
            button.add_class("atomic-resume")
            button.on_click(lambda _b, a=action, b=button: self._clicked(a, b))
            self.buttons.append(button)
            children.append(w.HBox([button, label], layout=w.Layout(align_items="center")))
        self.output = w.Output()
        children.append(self.output)
        self.widget = w.VBox(children)
        self.widget.add_class("atomic-conversations")

    def _clicked(self, action: Callable[[], str], button: Any) -> None:
        if any(b.disabled for b in self.buttons):
            return  # a resume is already on its way
        for each in self.buttons:
            each.disabled = True
        button.description = "Resuming…"
        with self.output:
            try:
                said = action()
            except BaseException as exc:  # shown below the rows, like a cell's error
                button.description = "Resume"
                text = getattr(exc, "_render_traceback_", None)
                print("\n".join(text()) if text else f"{type(exc).__name__}: {exc}")
                return
            finally:
                for each in self.buttons:
                    each.disabled = False
            print(said)
        button.description = "Resumed"
