"""A notebook page with atomic-jupyter's extension, for kernel tests: the extension's own link
(``labextension/src/link.ts``, with ``proposal.ts`` and ``diff.ts``, compiled) running over a
stand-in notebook in a DOM, in a Node.js process (``tests/page/link_driver.mjs``), linked to a
:class:`~tests.harness.kernel_client.BrowserLikeKernel` over its channels.

What only Python does here is carry the messages: the kernel's announcement and requests to
the page, the page's hello (a comm_open to the main shell, as JupyterLab's comm opens before
its subshell exists), replies, decisions and ``here`` back (over the kernel's
:attr:`~tests.harness.kernel_client.BrowserLikeKernel.comm_subshell` when set, as JupyterLab
sends them). The checks of a change, its apply, what a read returns and every message's shape
are the extension's. The stand-in notebook runs no cells (a run says so for each cell). The
browser tests drive the real page.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from atomic_jupyter.notebook.link_protocol import ANNOUNCE, PAGE_TARGET

from .kernel_client import BrowserLikeKernel
from .output_page import _Driver

__all__ = ["Cell", "LiveCell", "StandInPage"]

_LINK_DRIVER = _Driver("link_driver.mjs")


@dataclass
class Cell:
    """A cell the notebook starts with."""

    source: str
    type: str = "code"
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:8])


@dataclass
class LiveCell:
    """A cell of the page's notebook as it is now (its source read from the page, and set as a
    person's edit); cells are equal by id."""

    page: StandInPage = field(compare=False, repr=False)
    id: str
    type: str

    @property
    def source(self) -> str:
        return str(self.page.state()["cells"][self.page.index_of(self.id)]["source"])

    @source.setter
    def source(self, value: str) -> None:
        self.page.ask("edit", id=self.id, source=value)

    @property
    def execution_count(self) -> int | None:
        count = self.page.state()["cells"][self.page.index_of(self.id)]["execution_count"]
        return int(count) if count is not None else None


class StandInPage:
    """A notebook page with the extension, linked to ``kernel`` (call :meth:`attach`)."""

    def __init__(self, kernel: BrowserLikeKernel, cells: list[Cell], path: str = "stand-in.ipynb"):
        self.kernel = kernel
        self.path = path
        self.comm_id: str | None = None
        #: The kernel's requests, as the page received them.
        self.requests: list[dict[str, Any]] = []
        self._key = uuid.uuid4().hex
        self._initial = [{"id": c.id, "type": c.type, "source": c.source} for c in cells]
        self._info_request = ""
        self._opened = False

    # ------------------------------------------------------------------ the page's life

    def attach(self) -> StandInPage:
        """Connect as a page does: listen for the kernel's announcement, and ask whether it
        made one already (``comm_info_request``)."""
        self.kernel.iopub_hooks.append(self._on_iopub)
        self.kernel.shell_hooks.append(self._on_shell)
        kc = self.kernel.kc
        msg = kc.session.msg("comm_info_request", {"target_name": ANNOUNCE})
        kc.session.send(kc.shell_channel.socket, msg)
        self._info_request = msg["header"]["msg_id"]
        return self

    def detach(self) -> None:
        """The page goes (the notebook is closed): the link is disposed, its comm closed."""
        if self._on_iopub in self.kernel.iopub_hooks:
            self.kernel.iopub_hooks.remove(self._on_iopub)
            self.kernel.shell_hooks.remove(self._on_shell)
        if self._opened:
            self.ask("close")
            self._opened = False
        if self.comm_id is not None:
            kc = self.kernel.kc
            msg = kc.session.msg("comm_close", {"comm_id": self.comm_id, "data": {}})
            kc.session.send(kc.shell_channel.socket, msg)
            self.comm_id = None

    @property
    def linked(self) -> bool:
        return self.comm_id is not None

    # ------------------------------------------------------------------ the notebook

    def state(self) -> dict[str, Any]:
        """The page's notebook and the changes it shows, as the extension has them."""
        if not self._opened:
            return {"cells": list(self._initial), "proposals": []}
        return self.ask("state")

    @property
    def cells(self) -> list[LiveCell]:
        return [LiveCell(self, c["id"], c["type"]) for c in self.state()["cells"]]

    def index_of(self, cell_id: str) -> int:
        ids = [c["id"] for c in self.state()["cells"]]
        return ids.index(cell_id)

    @property
    def proposals(self) -> dict[str, None]:
        """The changes shown in the cells, by their call."""
        return dict.fromkeys(self.state()["proposals"])

    def click(self, call: str, accept: bool, reason: str = "") -> None:
        """A person's Accept or Reject (with a reason typed) in a cell."""
        self.ask("click", call=call, accept=accept, reason=reason)

    # ------------------------------------------------------------------ messages

    def ask(self, op: str, **fields: Any) -> dict[str, Any]:
        """Ask the page; what its link sent meanwhile goes to the kernel."""
        answer = _LINK_DRIVER.ask(op=op, page=self._key, **fields)
        for message in answer.get("sent") or []:
            if self.comm_id is not None:
                self.kernel.send_comm_msg(self.comm_id, message)
        return answer

    def _on_shell(self, msg: dict[str, Any]) -> bool:
        if (msg.get("parent_header") or {}).get("msg_id") != self._info_request:
            return False
        if msg["content"].get("comms"):
            self._open()
        return True

    def _on_iopub(self, msg: dict[str, Any]) -> bool:
        kind = msg["header"]["msg_type"]
        content = msg["content"]
        if kind == "comm_open" and content.get("target_name") == ANNOUNCE:
            self._open()
            return True
        if kind == "comm_msg" and content.get("comm_id") == self.comm_id:
            data = content.get("data") or {}
            if data.get("type") == "request":
                self.requests.append(data)
            self.ask("deliver", data=data)
            return True
        if kind == "comm_close" and content.get("comm_id") == self.comm_id:
            self.comm_id = None
            return True
        return False

    def _open(self) -> None:
        if self.comm_id is not None:
            return
        cells = self._initial
        if self._opened:  # the kernel announced itself again: the page links again
            cells = self.state()["cells"]
            self.ask("close")
        answer = _LINK_DRIVER.ask(
            op="open",
            page=self._key,
            cells=cells,
            path=self.path,
            subshell=self.kernel.comm_subshell,
        )
        self._opened = True
        kc = self.kernel.kc
        self.comm_id = uuid.uuid4().hex
        msg = kc.session.msg(
            "comm_open",
            {"comm_id": self.comm_id, "target_name": PAGE_TARGET, "data": answer["hello"]},
        )
        kc.session.send(kc.shell_channel.socket, msg)
        for message in answer.get("sent") or []:
            self.kernel.send_comm_msg(self.comm_id, message)
