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
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

from atomic_jupyter.ui.output_widget import Content, OutputWidget

__all__ = ["Element", "PageStore", "controls_html", "page_html", "page_tree", "press", "page_text"]

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
    """The controls the module draws for a dialog's description (text escaped), or for the
    panel's editor (method ``prompt``)."""
    e = html_lib.escape
    if dialog["method"] == "prompt":
        return (
            f'<div class="atomic-editor"><textarea class="atomic-editor-input" '
            f'placeholder="{e(dialog["placeholder"])}" rows="{int(dialog["rows"])}">'
            f"{e(dialog['value'])}</textarea>"
            '<button class="atomic-send">Send</button></div>'
        )
    if dialog["method"] == "settings":
        return settings_html(dialog)
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
    elif dialog["method"] == "editor":
        parts.append(
            f'<textarea class="atomic-dialog-editor" rows="{int(dialog["rows"])}">'
            f"{e(dialog['prefill'])}</textarea>"
        )
        parts.append('<button class="atomic-submit">Submit</button>')
    else:
        parts.append(
            f'<input class="atomic-dialog-input" placeholder="{e(dialog["placeholder"])}">'
        )
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


def settings_html(dialog: dict[str, Any]) -> str:
    """The panel's settings as the module draws them: the model picker grouped by provider
    (the current one marked), the thinking levels, Compact, the key field when a provider
    wants a key (never with a value), and what went wrong."""
    e = html_lib.escape
    groups: dict[str, list[str]] = {}
    for item in dialog["models"]:
        mark = " (current)" if item["value"] == dialog["model"] else ""
        groups.setdefault(item["provider"], []).append(
            f'<option value="{e(item["value"])}">{e(item["label"])}{mark}</option>'
        )
    models = "".join(f'<optgroup label="{e(p)}">{"".join(o)}</optgroup>' for p, o in groups.items())
    levels = "".join(f"<option>{e(level)}</option>" for level in dialog["levels"])
    parts = [
        f'<select class="atomic-model-choice">{models}</select>',
        f'<select class="atomic-thinking-choice">{levels}</select>',
        '<button class="atomic-compact">Compact</button>',
    ]
    key = dialog["key"]
    if key:
        parts.append(
            f"<label>API key for {e(key['provider'])} ({e(key['variable'] or '')})</label>"
            '<input type="password" class="atomic-key-input">'
            '<button class="atomic-key-use">Use this key</button>'
        )
    if dialog["error"]:
        parts.append(f'<div class="atomic-dialog-error">{e(dialog["error"])}</div>')
    return '<div class="atomic-settings">' + "".join(parts) + "</div>"


def page_html(source: OutputWidget | Content | PageStore) -> str:
    """The output as the page draws it: every block in order, each answer's chunks and tail
    and each open dialog's controls in their places."""
    content = source.content if isinstance(source, (PageStore, OutputWidget)) else source

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
    """The output's text as a person reads it (tags dropped, entities decoded; a text box's
    placeholder read where it is)."""
    page = re.sub(r'<input [^>]*placeholder="([^"]*)"[^>]*>', r" \1 ", page_html(source))
    return html_lib.unescape(re.sub(r"<[^>]+>", " ", page))


def press(widget: OutputWidget, message: dict[str, Any]) -> None:
    """Send ``widget`` a message from the page, as a click does (through ipywidgets' own
    handling of a custom comm message)."""
    widget._handle_custom_msg(message, [])


# --------------------------------------------------------------------------- the page as a tree

#: Elements that have no end tag.
_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "wbr"})


@dataclass(eq=False)
class Element:
    """One element of a page (or the page's root: ``tag`` empty), as parsed."""

    tag: str
    attrs: dict[str, str]
    children: list[Element | str] = field(default_factory=list)
    inner: str = ""  # the HTML between its tags, as written

    @property
    def classes(self) -> list[str]:
        """Its classes."""
        return (self.attrs.get("class") or "").split()

    @property
    def elements(self) -> list[Element]:
        """Its child elements."""
        return [child for child in self.children if isinstance(child, Element)]

    @property
    def text(self) -> str:
        """Its text, as a person reads it (entities decoded, tags dropped)."""
        return "".join(c if isinstance(c, str) else c.text for c in self.children)

    def find_all(self, cls: str) -> list[Element]:
        """The elements under it that carry class ``cls``, in document order."""
        found = []
        for child in self.elements:
            if cls in child.classes:
                found.append(child)
            found += child.find_all(cls)
        return found

    def child(self, cls: str) -> Element:
        """The one child element carrying class ``cls``."""
        (found,) = [child for child in self.elements if cls in child.classes]
        return found


class _TreeBuilder(HTMLParser):
    def __init__(self, source: str) -> None:
        super().__init__(convert_charrefs=True)
        self.source = source
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", source)]
        self.root = Element("", {})
        self.stack: list[tuple[Element, int]] = [(self.root, 0)]

    def _offset(self) -> int:
        line, column = self.getpos()
        return self.line_starts[line - 1] + column

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, {k: v or "" for k, v in attrs})
        self.stack[-1][0].children.append(element)
        if tag not in _VOID:
            start = self._offset() + len(self.get_starttag_text() or "")
            self.stack.append((element, start))

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.stack) - 1, 0, -1):
            element, start = self.stack[depth]
            if element.tag == tag:
                element.inner = self.source[start : self._offset()]
                del self.stack[depth:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1][0].children.append(data)


def page_tree(source: OutputWidget | Content | PageStore | str) -> Element:
    """The page (or any HTML) parsed: its root element, whose children are the blocks'."""
    html = source if isinstance(source, str) else page_html(source)
    builder = _TreeBuilder(html)
    builder.feed(html)
    builder.close()
    builder.root.inner = html
    return builder.root
