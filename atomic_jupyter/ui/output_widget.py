"""One output, one widget: the :class:`OutputWidget` an output of ours is drawn by.

The kernel side keeps the output as keyed blocks of sanitised HTML, made by the record's
renderer (:mod:`atomic_jupyter.ui.record`), plus the streamed answers' chunks and the open
dialogs' controls; :meth:`OutputWidget.update_page` sends only what changed since the last
call, as one custom message of the page protocol (:mod:`atomic_jupyter.ui.page_protocol`). The page side (``output_widget.js``, an inline ES module: no
build step, no network) places the blocks and draws the dialogs' controls, the answers'
chunks and the buttons in the places the HTML leaves for them; clicks and answers come back
as messages that :meth:`OutputWidget.on_action` listeners receive.

The content is sent as messages, not kept in synced traits: a trait is sent whole at each
change, and nbclient saves every model's last state in the notebook. So the model's state
is the module and a few classes, and :meth:`empty_and_close` empties even those before
closing it.
A model that missed a message (made in the page after the kernel sent it) asks for the
whole output again.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Any

import anywidget
import traitlets

from atomic_jupyter._version import __version__
from atomic_jupyter.session.observers import Listeners
from atomic_jupyter.ui.comm_routing import answer_where_addressed
from atomic_jupyter.ui.dispatch import thread_safe_update
from atomic_jupyter.ui.page_protocol import (
    PageContent,
    PageMessage,
    Patch,
    Ready,
    Snapshot,
    patch_between,
    read_page_message,
    snapshot_of,
)

__all__ = ["ModuleHolder", "OutputWidget"]

_MODULE = resources.files("atomic_jupyter.ui").joinpath("output_widget.js").read_text("utf-8")

#: What the page's modules of one version of the package are found by.
_KEY = f"__atomicOutput_{__version__}"
#: The page side, loaded once per kernel by the :class:`ModuleHolder`.
_MODULE = _MODULE.replace("__ATOMIC_OUTPUT_KEY__", _KEY)
#: Each output's own module: it waits for the page side the holder loaded, and hands its
#: model over. (The model state nbclient saves per output holds this, not the module.)
_STUB = (
    f'const key = "{_KEY}";\n'
    "const api = () => {\n"
    "  const slot = (globalThis[key] ||= { waiting: [] });\n"
    "  return slot.api ? Promise.resolve(slot.api)\n"
    "    : new Promise((resolve) => slot.waiting.push(resolve));\n"
    "};\n"
    "export default {\n"
    "  async initialize(context) { return (await api()).initialize(context); },\n"
    "  async render(context) { return (await api()).render(context); },\n"
    "};\n"
)


class ModuleHolder(anywidget.AnyWidget):
    """The one model that carries the page side of every output (``output_widget.js``) to the
    page, while any output is open: each output's own model carries a short stub that waits
    for it. Made with the first output, emptied and closed with the last one."""

    _esm = traitlets.Unicode(_MODULE).tag(sync=True)


class _Shared:
    """The holder and the one ``Layout`` every output shares, counted by the outputs open."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.holder: ModuleHolder | None = None
        self.layout: Any = None
        self.users = 0

    def acquire(self) -> Any:
        """The shared layout (the holder made first when no output is open)."""
        with self.lock:
            if self.holder is None:
                import ipywidgets

                self.layout = ipywidgets.Layout()
                self.holder = ModuleHolder(layout=self.layout)
            self.users += 1
            return self.layout

    def release(self) -> None:
        """One output less; the last one empties and closes the holder and the layout."""
        with self.lock:
            self.users -= 1
            if self.users > 0 or self.holder is None:
                return
            holder, layout, self.holder, self.layout = self.holder, self.layout, None, None
        holder._esm = ""
        holder.close()
        layout.close()


_SHARED = _Shared()


class OutputWidget(anywidget.AnyWidget):
    """The one widget of one output.

    Parameters
    ----------
    root_class:
        The classes of the output's root element (the record's, for a look that does not
        change when the output becomes its record).
    root_style:
        The root element's inline style.

    Attributes
    ----------
    on_action:
        Listeners called on the kernel's thread with each message from the page that is not
        the page's own (``ready``), read and typed by :mod:`~atomic_jupyter.ui.page_protocol`
        (a click: :class:`~atomic_jupyter.ui.page_protocol.StopClicked`,
        :class:`~atomic_jupyter.ui.page_protocol.DialogAnswer`, ...); a malformed message
        reaches none.
    messages:
        How many messages this widget has sent.
    """

    _esm = traitlets.Unicode(_STUB).tag(sync=True)
    output_id = traitlets.Unicode("").tag(sync=True)
    root_class = traitlets.Unicode("").tag(sync=True)
    root_style = traitlets.Unicode("").tag(sync=True)

    def __init__(self, root_class: str, root_style: str = "", **kwargs: Any) -> None:
        super().__init__(
            output_id=uuid.uuid4().hex,
            root_class=root_class,
            root_style=root_style,
            layout=_SHARED.acquire(),
            **kwargs,
        )
        self.add_class("atomic-output")
        self._shown = PageContent()
        self._told: dict[str, float] = {}  # when each open dialog's description was sent
        self._seq = 0
        self._lock = threading.RLock()
        self.messages = 0
        self.finished = False
        self.on_action: Listeners[Callable[[PageMessage], None]] = Listeners()
        self.on_msg(self._received)
        answer_where_addressed(self.comm)

    # ------------------------------------------------------------------ kernel -> page

    def update_page(self, content: PageContent) -> None:
        """Bring the page in line with ``content`` (sends what changed, if anything)."""
        with self._lock:
            if self.finished:
                return
            patch = patch_between(self._shown, content, self._seq + 1)
            if patch is None:
                return
            now = time.monotonic()
            for key, controls in patch.get("dialogs", {}).items():
                if controls is None:
                    self._told.pop(key, None)
                else:
                    self._told[key] = now
            self._shown = content.copy()
            self._seq += 1
            self._post(patch)

    def snapshot(self) -> Snapshot:
        """The whole output as one message (what a model that missed a message is sent)."""
        now = time.monotonic()
        elapsed = {key: now - told for key, told in self._told.items()}
        return snapshot_of(self._shown, self._seq, elapsed)

    @property
    def content(self) -> PageContent:
        """What the page was last sent."""
        return self._shown

    def _post(self, message: Patch | Snapshot) -> None:
        self.messages += 1
        self.send(message)

    # ------------------------------------------------------------------ page -> kernel

    def _received(self, _widget: Any, content: Any, _buffers: Sequence[Any]) -> None:
        message = read_page_message(content)
        if message is None:
            return
        if isinstance(message, Ready):
            # On the shell thread that received it (maybe a subshell's), under the lock.
            with self._lock, thread_safe_update():  # a page that has all we sent needs nothing
                if not self.finished and message.seq != self._seq:
                    self._post(self.snapshot())
            return
        if not self.finished:
            self.on_action.emit(message)

    # ------------------------------------------------------------------ the end

    def empty_and_close(self) -> None:
        """Empty the widget and close it (its output shows its record now): a frontend that
        keeps closed models' state (nbclient) keeps a few bytes of it."""
        with self._lock:
            if self.finished:
                return
            self.finished = True
            self._shown = PageContent()
        with self.hold_sync():
            self._esm = ""
            self.root_class = self.root_style = ""
            self._dom_classes = ()
        self.close()
        _SHARED.release()
