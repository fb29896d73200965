"""What the page draws for our outputs, drawn by the page's own module: the tests' page.

``output_widget.js`` runs in a DOM (jsdom) in a Node.js process (``tests/page/page_driver.mjs``,
one per test process, started on first use), with models that stand in for anywidget's.
:class:`PageView` is one output's model and view there, fed the messages the kernel sent;
:func:`page_html` draws a view, a widget's output as last sent, or a
:class:`~atomic_jupyter.ui.page_protocol.PageContent`; :func:`click` does in the page what a
person does and hands the widget what the module sent; :func:`press` sends a widget a message
written by hand (a malformed one, a late one).
"""

from __future__ import annotations

import atexit
import json
import re
import subprocess
import threading
import uuid
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from atomic_jupyter.transport.node import choose_node
from atomic_jupyter.ui.output_widget import OutputWidget
from atomic_jupyter.ui.page_protocol import PROTOCOL_VERSION, PageContent, snapshot_of

__all__ = [
    "Element",
    "PageView",
    "act",
    "as_sent",
    "click",
    "dom_form",
    "page_html",
    "page_text",
    "page_tree",
    "press",
]

#: The page's folder: the driver, its tests, and jsdom (``npm ci`` there: ``make setup``).
PAGE_DIR = Path(__file__).resolve().parent.parent / "page"


class PageDriverError(RuntimeError):
    """The tests' page failed a request (the module threw, or the driver is gone)."""


class _Driver:
    """The Node.js process a page runs in (``script`` in ``tests/page``): one request, one
    answer, in order."""

    def __init__(self, script: str = "page_driver.mjs") -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[str] | None = None
        self._script = script

    def _start(self) -> subprocess.Popen[str]:
        if not (PAGE_DIR / "node_modules" / "jsdom").is_dir():
            raise PageDriverError(
                f"jsdom is not installed in {PAGE_DIR}: run make setup (npm ci there)"
            )
        runtime = choose_node(None)
        node = runtime.path if runtime is not None else "node"
        process = subprocess.Popen(
            [node, str(PAGE_DIR / self._script)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            cwd=PAGE_DIR,
        )
        atexit.register(process.kill)
        return process

    def ask(self, **request: Any) -> dict[str, Any]:
        with self._lock:
            if self._process is None or self._process.poll() is not None:
                self._process = self._start()
            process = self._process
            assert process.stdin is not None and process.stdout is not None
            process.stdin.write(json.dumps(request) + "\n")
            process.stdin.flush()
            line = process.stdout.readline()
        if not line:
            raise PageDriverError(f"the page's process ended (exit {process.poll()})")
        answer: dict[str, Any] = json.loads(line)
        if "error" in answer:
            raise PageDriverError(answer["error"])
        return answer


_DRIVER = _Driver()


class PageView:
    """One output's model and view in the tests' page, fed the kernel's messages in order.

    ``sent`` lists every message the module sent the kernel (its ``ready`` first).
    """

    def __init__(self, root_class: str = "", root_style: str = "") -> None:
        self.id = uuid.uuid4().hex
        self.sent: list[dict[str, Any]] = []
        self.received = 0
        self._drawn: tuple[int, str] | None = None
        self._stored: tuple[int, PageContent] | None = None
        answer = _DRIVER.ask(op="open", id=self.id, root_class=root_class, root_style=root_style)
        self.sent += answer["sent"]

    def receive(self, *messages: dict[str, Any]) -> list[dict[str, Any]]:
        """Deliver messages from the kernel; what the module sent back (a ``ready`` when it
        missed one)."""
        answer = _DRIVER.ask(op="receive", id=self.id, msgs=list(messages))
        self.received += len(messages)
        self.sent += answer["sent"]
        return list(answer["sent"])

    def act(
        self, selector: str, nth: int = 0, action: str = "click", **how: Any
    ) -> list[dict[str, Any]]:
        """Do what a person does to the nth element matching ``selector`` (``click``,
        ``type`` a ``value``, ``choose`` a select's ``value``, ``check``, ``key`` with
        ``key=``); what the module sent."""
        answer = _DRIVER.ask(op="act", id=self.id, selector=selector, nth=nth, action=action, **how)
        self.sent += answer["sent"]
        self._drawn = None
        return list(answer["sent"])

    @property
    def content(self) -> PageContent:
        """What the module keeps of the output: its store (as last received)."""
        if self._stored is None or self._stored[0] != self.received:
            answer = _DRIVER.ask(op="store", id=self.id)
            self.sent += answer["sent"]
            store = answer["store"]
            content = PageContent(
                store["order"],
                store["blocks"],
                store["chunks"],
                store["tails"],
                store["dialogs"],
                store["editor"],
                store["settings"],
            )
            self._stored = (self.received, content)
        return self._stored[1]

    @property
    def seq(self) -> int:
        """The number of the last message the module applied."""
        return int(_DRIVER.ask(op="store", id=self.id)["store"]["seq"])

    @property
    def html(self) -> str:
        """The view's HTML as a person sees it (drawn again only after a message came)."""
        if self._drawn is None or self._drawn[0] != self.received:
            answer = _DRIVER.ask(op="html", id=self.id)
            self.sent += answer["sent"]
            self._drawn = (self.received, answer["html"])
        return self._drawn[1]

    def close(self) -> None:
        """The view and its model go."""
        _DRIVER.ask(op="close", id=self.id)


def view_of(source: OutputWidget | PageContent) -> PageView:
    """A new view of what a widget last sent (or of ``content``), from its snapshot."""
    if isinstance(source, OutputWidget):
        view = PageView(source.root_class, source.root_style)
        view.receive(source.snapshot())
    else:
        view = PageView()
        view.receive(snapshot_of(source, 0))
    return view


def page_html(source: OutputWidget | PageContent | PageView) -> str:
    """The output as the page draws it: every block in order, each answer's chunks and tail
    and each open dialog's controls in their places."""
    if isinstance(source, PageView):
        return source.html
    view = view_of(source)
    try:
        return view.html
    finally:
        view.close()


def page_text(source: OutputWidget | PageContent | PageView) -> str:
    """The output's text as a person reads it (tags dropped, entities decoded; a text box's
    placeholder read where it is)."""

    def read(element: Element) -> str:
        if element.tag == "input":
            return f" {element.attrs.get('placeholder', '')} "
        said = (child if isinstance(child, str) else read(child) for child in element.children)
        return " " + "".join(said) + " " if element.tag else "".join(said)

    return read(page_tree(page_html(source)))


def dom_form(html: str) -> str:
    """``html`` as the page's DOM writes it back (entities and attributes as the page's
    HTML reads): what to compare the page's HTML with."""
    return str(_DRIVER.ask(op="parse", html=html)["html"])


def click(
    widget: OutputWidget, selector: str, nth: int = 0, action: str = "click", **how: Any
) -> list[dict[str, Any]]:
    """Do in the page what a person does to ``widget``'s output (see :meth:`PageView.act`),
    and hand the widget what the module sent, as ipywidgets does; return those messages."""
    return act(widget, {"selector": selector, "nth": nth, "action": action, **how})


def act(widget: OutputWidget, *steps: dict[str, Any]) -> list[dict[str, Any]]:
    """Do ``steps`` in one view of ``widget``'s output, in order (each a
    :meth:`PageView.act`'s arguments: ``selector``, ``nth``, ``action``, ``value``...), then
    hand the widget everything the module sent; return those messages."""
    view = view_of(widget)
    sent: list[dict[str, Any]] = []
    try:
        for step in steps:
            how = dict(step)
            sent += view.act(
                how.pop("selector"), how.pop("nth", 0), how.pop("action", "click"), **how
            )
    finally:
        view.close()
    for message in sent:
        widget._handle_custom_msg(message, [])
    return sent


def as_sent(content: dict[str, Any]) -> dict[str, Any]:
    """A page protocol message written by hand, as the page's module sends it: with the
    protocol's version (``v``) when it has none (a message with no ``type`` is not one of the
    protocol's, such as a bare ipywidgets Button's click, and goes as it is)."""
    if "v" in content or "type" not in content:
        return content
    return {"v": PROTOCOL_VERSION, **content}


def press(widget: OutputWidget, message: Any) -> None:
    """Send ``widget`` a message from the page written by hand, as ipywidgets hands on a
    custom comm message (the protocol's version added when it has none)."""
    widget._handle_custom_msg(as_sent(message) if isinstance(message, dict) else message, [])


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

    def find_tags(self, tag: str) -> list[Element]:
        """The elements under it of tag ``tag``, in document order."""
        found = []
        for child in self.elements:
            if child.tag == tag:
                found.append(child)
            found += child.find_tags(tag)
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


def page_tree(source: OutputWidget | PageContent | PageView | str) -> Element:
    """The page (or any HTML) parsed: its root element, whose children are the blocks'."""
    html = source if isinstance(source, str) else page_html(source)
    builder = _TreeBuilder(html)
    builder.feed(html)
    builder.close()
    builder.root.inner = html
    return builder.root
