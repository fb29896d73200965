"""What the page draws for an :class:`~atomic_jupyter.ui.output_widget.OutputWidget`, for tests
that run no browser: the same placing of blocks, answer chunks and dialog controls as
``output_widget.js`` does, as an HTML string (the browser suite checks the module itself).

:class:`PageStore` is the model-side store of the module (snapshot and numbered patches);
:func:`page_html` draws a store, or the content a widget last sent, as the page would;
:func:`press` sends a widget the message a click sends.
"""

from __future__ import annotations

import html as html_lib
import re
from typing import Any

from atomic_jupyter.ui.output_widget import Content, OutputWidget

__all__ = ["PageStore", "controls_html", "page_html", "press", "page_text"]

_PLACE = re.compile(r'(<div [^>]*data-(answer|dialog)="([^"]*)"[^>]*>)(</div>)')


class PageStore:
    """The module's store of one model: what it was sent, in order, with its gaps."""

    def __init__(self) -> None:
        self.seq = 0
        self.content = Content()
        self.missed = 0
        self.asked = False

    def receive(self, msg: dict[str, Any]) -> bool:
        """Apply a message; False when a patch came out of order (the page asks again)."""
        if msg.get("type") == "snapshot":
            self.content = Content(
                list(msg["order"]),
                dict(msg["blocks"]),
                {k: list(v) for k, v in msg["chunks"].items()},
                dict(msg["tails"]),
                dict(msg["dialogs"]),
            )
            self.seq = msg["seq"]
            self.asked = False
            return True
        if msg.get("type") != "patch":
            return True
        if msg["seq"] != self.seq + 1:  # missed one: ask once for the whole output
            self.missed += 1
            asked, self.asked = self.asked, True
            return asked
        c = self.content
        c.blocks.update(msg.get("blocks", {}))
        for key in msg.get("drop", []):
            c.blocks.pop(key, None)
        for key in msg.get("reset", []):
            c.chunks[key] = []
        for key, added in msg.get("chunks", {}).items():
            c.chunks[key] = c.chunks.get(key, []) + list(added)
        c.tails.update(msg.get("tails", {}))
        for key, dialog in msg.get("dialogs", {}).items():
            if dialog is None:
                c.dialogs.pop(key, None)
            else:
                c.dialogs[key] = dialog
        if "order" in msg:
            c.order = list(msg["order"])
        self.seq = msg["seq"]
        return True


def controls_html(dialog: dict[str, Any]) -> str:
    """The controls the module draws for a dialog's description (text escaped)."""
    e = html_lib.escape
    parts = [f'<strong class="atomic-dialog-title">{e(dialog["title"])}</strong>']
    if dialog["message"]:
        parts.append(f'<pre class="atomic-dialog-message">{e(dialog["message"])}</pre>')
    if dialog["method"] == "select" and len(dialog["options"]) <= dialog["buttons"]:
        parts += [f'<button class="atomic-option">{e(o)}</button>' for o in dialog["options"]]
    elif dialog["method"] == "select":
        options = "".join(f"<option>{e(o)}</option>" for o in dialog["options"])
        parts.append(f'<select class="atomic-dialog-choice">{options}</select>')
        parts.append('<button class="atomic-submit">Submit</button>')
    elif dialog["method"] == "confirm":
        parts.append('<button class="atomic-yes">Yes</button><button class="atomic-no">No</button>')
    else:
        tag = "textarea" if dialog["method"] == "editor" else "input"
        parts.append(f'<{tag} class="atomic-dialog-{tag}">{e(dialog["prefill"])}</{tag}>')
        parts.append('<button class="atomic-submit">Submit</button>')
    parts.append('<button class="atomic-cancel">Cancel</button>')
    if dialog["seconds_left"] is not None:
        parts.append(
            f'<span class="atomic-countdown">expires in {int(dialog["seconds_left"] + 0.999)} s</span>'
        )
    if dialog["rule"]:
        parts.append(f'<label class="atomic-make-rule">{e(dialog["rule"])}</label>')
    if dialog["error"]:
        parts.append(f'<div class="atomic-dialog-error">{e(dialog["error"])}</div>')
    return '<div class="atomic-dialog-controls">' + "".join(parts) + "</div>"


def page_html(source: OutputWidget | Content | PageStore) -> str:
    """The output as the page draws it: every block in order, each answer's chunks and tail
    and each open dialog's controls in their places."""
    if isinstance(source, PageStore):
        content = source.content
    elif isinstance(source, OutputWidget):
        content = source.content
    else:
        content = source

    def fill(match: re.Match[str]) -> str:
        opening, kind, key, closing = match.groups()
        key = html_lib.unescape(key)
        if kind == "answer":
            inner = "".join(content.chunks.get(key, [])) + content.tails.get(key, "")
        else:
            dialog = content.dialogs.get(key)
            inner = controls_html(dialog) if dialog else ""
        return opening + inner + closing

    return "".join(_PLACE.sub(fill, content.blocks.get(key, "")) for key in content.order)


def page_text(source: OutputWidget | Content | PageStore) -> str:
    """The output's text as a person reads it (tags dropped, entities decoded)."""
    return html_lib.unescape(re.sub(r"<[^>]+>", " ", page_html(source)))


def press(widget: OutputWidget, message: dict[str, Any]) -> None:
    """Send ``widget`` a message from the page, as a click does (through ipywidgets' own
    handling of a custom comm message)."""
    widget._handle_custom_msg(message, [])
