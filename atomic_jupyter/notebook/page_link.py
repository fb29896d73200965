"""The notebook link: atomic-jupyter in the kernel and the notebook pages its kernel serves.

A notebook page with atomic-jupyter's frontend extension (JupyterLab 4, Notebook 7; its source
is ``labextension/src/``, prebuilt into the wheel) answers for its notebook: it reads the
cells, shows a change the agent proposes as a diff in the cells, applies or drops it once it
is decided, and runs cells as a person's Shift+Enter would. Where no page answers (nbclient,
papermill, nbval, VS Code, Colab, classic Notebook 6) nothing is linked, and the tools that
need the page are not offered.

The messages (``labextension/src/protocol.ts`` declares the same):

- The kernel announces itself with a comm to the page target ``atomic-jupyter-announce``
  (:data:`ANNOUNCE`); a page that sees it, or finds it open when it connects
  (``comm_info_request``), opens its own comm to the kernel target ``atomic-jupyter-page``
  (:data:`PAGE_TARGET`) with ``{"type": "hello", "protocol", "client", "path", "app"}``.
  ``client`` is the page's kernel client id: the ``session`` in the headers of the messages
  it sends, so a prompt's cell tells which page it came from. A page of another
  :data:`PROTOCOL` is told so and not used.
- Down: ``{"type": "linked"}`` once the hello was read, then ``{"type": "request", "id",
  "op", ...}`` with ``op`` one of ``read``, ``propose`` (``call``, ``operations``,
  ``expected``, ``ask``), ``decide`` (``call``, ``accept``), ``withdraw`` (``call``) and
  ``run`` (``cell_ids``); each answered by one ``{"type": "reply", "id", "ok", "error"?, ...}``.
- Up, besides replies: ``{"type": "decision", "call", "accept", "reason"?}``, a person's
  Accept or Reject clicked in a cell; and ``{"type": "here"}``, sent once over the page's
  kernel subshell when its comms use one, after ``linked`` (the hello goes to the main shell,
  which a running cell may hold, and a message over the subshell for a comm the kernel has not
  opened yet would be dropped): from then on the page answers while a cell runs
  (:attr:`Page.subshell`).

Threads: a page's messages are handled on the shell thread the page addressed them to (each
page comm answers where addressed, :func:`~atomic_jupyter.ui.comm_routing.answer_where_addressed`):
with JupyterLab or Notebook 7 and ipykernel 7, a kernel subshell's thread, while a person's
cell may run on the main one; with comms over subshells ``disabled``, or a kernel without
subshells, the main thread, once the kernel is idle. Requests are sent from the main thread
(the notebook tools run there). So the pages linked and the requests waiting for a reply are
kept under one lock, and a page that goes fails every request it had not answered, whichever
thread sees it go. :attr:`Page.subshell` says where its last message came from.
"""

from __future__ import annotations

import itertools
import sys
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from atomic_jupyter.notebook.link_protocol import (
    ANNOUNCE,
    PAGE_TARGET,
    PROTOCOL,
    Decision,
    Here,
    Reply,
    linked_message,
    read_hello,
    read_link_message,
    request_message,
)
from atomic_jupyter.session.observers import Listeners
from atomic_jupyter.ui.comm_routing import answer_where_addressed

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

__all__ = [
    "ANNOUNCE",
    "PAGE_TARGET",
    "PROTOCOL",
    "REQUEST_DEADLINE_S",
    "RUN_DEADLINE_S",
    "Origin",
    "Page",
    "PageError",
    "PageLink",
    "current_message_type",
    "current_origin",
    "current_request_is_unattended",
    "link_of",
]

#: Seconds a page has to answer a request before the kernel stops counting on it (a tab
#: killed without closing its comm): the request fails and the page is let go.
REQUEST_DEADLINE_S = 30.0
#: The same for running cells, which the page answers once they have run.
RUN_DEADLINE_S = 3600.0


class PageError(Exception):
    """A request the page could not answer (the page went, or said why)."""


@dataclass(frozen=True)
class Origin:
    """Where a prompt came from: the page's client id and the cell's id (each None when the
    frontend did not say)."""

    client: str | None
    cell_id: str | None


def _parent(shell: Any) -> dict[str, Any] | None:
    """The message the kernel handles now, as ipykernel keeps it."""
    parent: Any = getattr(shell, "parent_header", None)
    if not parent:
        kernel = getattr(shell, "kernel", None)
        getter = getattr(kernel, "get_parent", None)
        try:
            parent = getter() if getter is not None else None
        except Exception:  # an older ipykernel asks for the channel
            parent = None
    return parent if isinstance(parent, dict) else None


def current_message_type(shell: Any) -> str | None:
    """The type of the message the kernel handles now (``execute_request`` in a cell)."""
    header = (_parent(shell) or {}).get("header")
    kind = header.get("msg_type") if isinstance(header, dict) else None
    return kind if isinstance(kind, str) else None


def current_request_is_unattended(shell: Any) -> bool:
    """Whether the cell running now was sent by a client that no person answers (its
    ``execute_request`` allows no stdin: nbconvert, papermill, nbclient, nbval), which also
    inserts no cell when asked to. False when there is no current request (plain IPython)."""
    parent = _parent(shell)
    content = parent.get("content") if parent is not None else None
    if not isinstance(content, dict) or current_message_type(shell) != "execute_request":
        return False
    return content.get("allow_stdin") is False


def current_origin(shell: Any) -> Origin:
    """The origin of the message the kernel handles now (a cell's execute request, or a click
    on the panel's Send)."""
    parent = _parent(shell)
    if parent is None:
        return Origin(None, None)
    header = parent.get("header") or {}
    metadata = parent.get("metadata") or {}
    client = header.get("session") if isinstance(header, dict) else None
    cell = metadata.get("cellId") if isinstance(metadata, dict) else None
    return Origin(
        client if isinstance(client, str) and client else None,
        cell if isinstance(cell, str) and cell else None,
    )


@dataclass
class Page:
    """One linked notebook page."""

    comm: Any
    client: str
    path: str
    app: str
    #: The kernel subshell the page's last message came over (its header's ``subshell_id``);
    #: None: the main shell, whose messages wait for a running cell to end.
    subshell: str | None = None

    def heard(self, message: dict[str, Any]) -> None:
        """Note where a message of the page came from (see :attr:`subshell`)."""
        header = message.get("header") or {}
        subshell = header.get("subshell_id") if isinstance(header, dict) else None
        self.subshell = subshell if isinstance(subshell, str) and subshell else None

    @property
    def label(self) -> str:
        """``"analysis.ipynb (JupyterLab)"``."""
        name = self.path.rsplit("/", 1)[-1] or "an untitled notebook"
        return f"{name} ({self.app})" if self.app else name


class PageLink:
    """The kernel's side of the notebook link (one per kernel: :func:`link_of`).

    Parameters
    ----------
    comm_manager:
        The kernel's comm manager (``register_target``).
    create_comm:
        Opens a comm to the page: ``create_comm(target_name=..., data=...)``.
    unattended:
        Whether the cell running now came from a client with no page (no announcement then).
    """

    def __init__(
        self,
        comm_manager: Any,
        create_comm: Callable[..., Any],
        unattended: Callable[[], bool] = lambda: False,
    ) -> None:
        self._pages: dict[str, Page] = {}  # by comm id (read from any thread: the lock)
        self._lock = threading.Lock()
        #: Request number -> (the page asked, its reply's future, what the request is for).
        self._pending: dict[int, tuple[Page, Future[Reply], object]] = {}
        self._ids = itertools.count(1)
        #: Called with no argument when a page is linked or goes.
        self.changed: Listeners[Callable[[], None]] = Listeners()
        #: Called with the page and its :class:`~atomic_jupyter.notebook.link_protocol.Decision`
        #: when a person decides a change in a cell.
        self.decisions: Listeners[Callable[[Page, Decision], None]] = Listeners()
        #: Why the last page that said hello was not linked ("" when none was refused).
        self.refused = ""
        self._create_comm = create_comm
        self._unattended = unattended
        self._announcement: Any = None
        comm_manager.register_target(PAGE_TARGET, self._opened)
        self.announce()

    def announce(self) -> None:
        """Tell the pages this kernel serves that atomic-jupyter runs in it (again, when a
        frontend closed the earlier announcement), so each opens its link. Not while a client
        that no person answers runs the cell (``unattended``: nbconvert, papermill): it has no
        page to link, and would warn of a comm target it does not know."""
        if self._announcement is not None and not getattr(self._announcement, "_closed", False):
            return
        if self._unattended():
            return
        self._announcement = self._create_comm(target_name=ANNOUNCE, data={"protocol": PROTOCOL})

    # ------------------------------------------------------------------ pages

    @property
    def pages(self) -> list[Page]:
        """The pages linked now, oldest first."""
        with self._lock:
            return list(self._pages.values())

    def page_for(self, client: str | None) -> Page | None:
        """The page of ``client``; without one (or not linked), the only page, if there is
        exactly one."""
        pages = self.pages
        for page in pages:
            if client is not None and page.client == client:
                return page
        return pages[0] if len(pages) == 1 else None

    def _opened(self, comm: Any, message: dict[str, Any]) -> None:
        hello = read_hello((message.get("content") or {}).get("data"))
        if hello is None:
            comm.close({"error": "the first message of a page is its hello"})
            return
        if hello.protocol != PROTOCOL:
            self.refused = (
                f"a page speaks version {hello.protocol!r} of the notebook link and this "
                f"kernel's atomic-jupyter version {PROTOCOL}: install the same atomic-jupyter "
                "in the kernel and in the Jupyter server, and reload the page"
            )
            comm.close({"error": self.refused})
            return
        page = Page(comm=comm, client=hello.client, path=hello.path, app=hello.app)
        page.heard(message)
        answer_where_addressed(comm)
        self.refused = ""
        with self._lock:
            self._pages[comm.comm_id] = page
        comm.on_msg(lambda msg: self._received(page, msg))
        comm.on_close(lambda _msg: self._closed(page))
        comm.send(linked_message())  # the page may now say "here" over its subshell
        self.changed.emit()

    def _received(self, page: Page, message: dict[str, Any]) -> None:
        page.heard(message)
        read = read_link_message((message.get("content") or {}).get("data"))
        if isinstance(read, Reply):
            with self._lock:
                entry = self._pending.pop(read.id, None)
            if entry is not None and not entry[1].done():
                entry[1].set_result(read)
        elif isinstance(read, Decision):
            self.decisions.emit(page, read)
        elif isinstance(read, Here):
            pass  # where it came from is all it says (page.heard)

    def _closed(self, page: Page) -> None:
        with self._lock:
            self._pages.pop(page.comm.comm_id, None)
            unanswered = [key for key, entry in self._pending.items() if entry[0] is page]
            futures = [self._pending.pop(key)[1] for key in unanswered]
        for future in futures:
            if not future.done():
                future.set_exception(PageError(f"the notebook {page.label} was closed"))
        self.changed.emit()

    # ------------------------------------------------------------------ requests

    def request(
        self,
        page: Page,
        op: str,
        deadline: float | None = None,
        owner: object = None,
        **fields: Any,
    ) -> Future[dict[str, Any]]:
        """Ask ``page``; the future's result is its reply (``ok`` true), or it fails with a
        :class:`PageError`: the page said why, went, did not answer within ``deadline``
        seconds (by default :data:`REQUEST_DEADLINE_S`, :data:`RUN_DEADLINE_S` to run cells),
        in which case the page is let go (a tab killed without closing its comm), or what it
        was for (``owner``: the run whose tool asked) was given up (:meth:`cancel`)."""
        number = next(self._ids)
        asked: Future[Reply] = Future()
        answer: Future[dict[str, Any]] = Future()
        if deadline is None:
            deadline = RUN_DEADLINE_S if op == "run" else REQUEST_DEADLINE_S
        timer = threading.Timer(deadline, self._missed, args=(page, number, deadline))
        timer.name = "atomic-page-deadline"
        timer.daemon = True

        def settle(done: Future[Reply]) -> None:
            timer.cancel()
            error = done.exception()
            if error is not None:
                answer.set_exception(error)
                return
            reply = done.result()
            if reply.ok:
                answer.set_result(reply.body)
            else:
                answer.set_exception(PageError(reply.error or "the page said no"))

        asked.add_done_callback(settle)
        with self._lock:  # linked and waiting, or gone: a page closing meanwhile fails it
            linked = page.comm.comm_id in self._pages
            if linked:
                self._pending[number] = (page, asked, owner)
        if not linked:
            asked.set_exception(PageError(f"the notebook {page.label} is not linked any more"))
            return answer
        timer.start()
        page.comm.send(request_message(number, op, fields))
        return answer

    def cancel(self, owner: object, why: str) -> int:
        """Fail every request made for ``owner`` that waits for its reply (its run stopped):
        a reply that comes later is ignored. Returns how many were failed."""
        if owner is None:
            return 0
        with self._lock:
            keys = [key for key, entry in self._pending.items() if entry[2] is owner]
            futures = [self._pending.pop(key)[1] for key in keys]
        for future in futures:
            if not future.done():
                future.set_exception(PageError(why))
        return len(futures)

    def _missed(self, page: Page, number: int, deadline: float) -> None:
        """The request ``number`` went unanswered for ``deadline`` seconds: it fails, and the
        page is let go (its comm closed), so nothing waits on it again."""
        with self._lock:
            entry = self._pending.pop(number, None)
        if entry is None:
            return
        if not entry[1].done():
            entry[1].set_exception(
                PageError(
                    f"the notebook {page.label} did not answer within {deadline:g} s (was its "
                    "tab closed?); it is no longer linked: reload it to link it again"
                )
            )
        self._closed(page)
        try:
            page.comm.close({"error": "the page did not answer in time"})
        except Exception:  # a comm already gone with its kernel connection
            pass

    def close(self) -> None:
        """Close the announcement and every page's comm (the kernel is shutting down)."""
        for page in self.pages:
            self._closed(page)
        if self._announcement is not None:
            self._announcement.close()


_LINKS: weakref.WeakKeyDictionary[Any, PageLink] = weakref.WeakKeyDictionary()


def link_of(shell: InteractiveShell | None = None, *, make: bool = True) -> PageLink | None:
    """The kernel's notebook link, made on first use (on the main thread; ``make=False``: only
    if it was made, from any thread); None outside an IPython kernel (a terminal IPython has no
    comms)."""
    if shell is None:  # the running IPython; none if IPython was never imported
        ipython = sys.modules.get("IPython")
        shell = getattr(ipython, "get_ipython", lambda: None)()
    if shell is None or getattr(shell, "kernel", None) is None:
        return None
    link = _LINKS.get(shell)
    if link is None and make:
        import comm

        link = _LINKS[shell] = PageLink(
            comm.get_comm_manager(),
            comm.create_comm,
            lambda: current_request_is_unattended(shell),
        )
    return link
