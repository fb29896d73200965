"""A stand-in for atomic-jupyter's notebook page extension, for kernel tests: it answers the
notebook link's messages (``atomic_jupyter/notebook/page_link.py``) over a
:class:`~tests.harness.kernel_client.BrowserLikeKernel`'s channels, for a notebook held here
as a list of cells.

It does what ``labextension/src/link.ts`` and ``proposal.ts`` do with a notebook's model:
links itself when the kernel announces itself, reads the cells, checks a proposed change
(cells that exist, read as they are, touched once), keeps it until it is decided, applies it
all at once. It runs no cells (``run`` is refused). The browser tests drive the real page.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from atomic_jupyter.notebook.link_protocol import ANNOUNCE, PAGE_TARGET, PROTOCOL

from .kernel_client import BrowserLikeKernel


@dataclass
class Cell:
    source: str
    type: str = "code"
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    execution_count: int | None = None


class StandInPage:
    """A notebook page with the extension, linked to ``kernel`` (call :meth:`attach`)."""

    def __init__(self, kernel: BrowserLikeKernel, cells: list[Cell], path: str = "stand-in.ipynb"):
        self.kernel = kernel
        self.cells = cells
        self.path = path
        self.comm_id: str | None = None
        self.proposals: dict[str, list[dict[str, Any]]] = {}
        self.requests: list[dict[str, Any]] = []
        self.protocol = PROTOCOL
        self._info_request = ""

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

    def _on_shell(self, msg: dict[str, Any]) -> bool:
        if (msg.get("parent_header") or {}).get("msg_id") != self._info_request:
            return False
        if msg["content"].get("comms"):
            self._open()
        return True

    def detach(self) -> None:
        """The page goes (the notebook is closed): its comm is closed."""
        if self._on_iopub in self.kernel.iopub_hooks:
            self.kernel.iopub_hooks.remove(self._on_iopub)
            self.kernel.shell_hooks.remove(self._on_shell)
        if self.comm_id is not None:
            kc = self.kernel.kc
            msg = kc.session.msg("comm_close", {"comm_id": self.comm_id, "data": {}})
            kc.session.send(kc.shell_channel.socket, msg)
            self.comm_id = None

    @property
    def linked(self) -> bool:
        return self.comm_id is not None

    def cell(self, cell_id: str) -> Cell | None:
        return next((c for c in self.cells if c.id == cell_id), None)

    # ------------------------------------------------------------------ messages

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
                self._reply(data)
            return True
        if kind == "comm_close" and content.get("comm_id") == self.comm_id:
            self.comm_id = None
            return True
        return False

    def _open(self) -> None:
        if self.comm_id is not None:
            return
        kc = self.kernel.kc
        self.comm_id = uuid.uuid4().hex
        hello = {
            "type": "hello",
            "protocol": self.protocol,
            "client": kc.session.session,
            "path": self.path,
            "app": "stand-in page",
        }
        msg = kc.session.msg(
            "comm_open", {"comm_id": self.comm_id, "target_name": PAGE_TARGET, "data": hello}
        )
        kc.session.send(kc.shell_channel.socket, msg)

    def send(self, data: dict[str, Any]) -> None:
        """Send ``data`` over the link, with the link's version (as the extension does)."""
        assert self.comm_id is not None, "the page is not linked"
        self.kernel.send_comm_msg(self.comm_id, {**data, "v": self.protocol})

    def click(self, call: str, accept: bool, reason: str = "") -> None:
        """A person's Accept or Reject in a cell."""
        self.send({"type": "decision", "call": call, "accept": accept, "reason": reason})

    def _reply(self, request: dict[str, Any]) -> None:
        body: dict[str, Any]
        try:
            body = {"ok": True, **getattr(self, f"_op_{request['op']}")(request)}
        except ValueError as exc:
            body = {"ok": False, "error": str(exc)}
        self.send({"type": "reply", "id": request["id"], **body})

    # ------------------------------------------------------------------ operations

    def _op_read(self, _request: dict[str, Any]) -> dict[str, Any]:
        cells = [
            {
                "id": c.id,
                "type": c.type,
                "source": c.source,
                "execution_count": c.execution_count,
                "outputs": [],
                "running": False,
            }
            for c in self.cells
        ]
        return {"cells": cells, "active": None, "path": self.path}

    def _op_propose(self, request: dict[str, Any]) -> dict[str, Any]:
        call = request["call"]
        expected = request.get("expected") or {}
        changes = []
        touched: set[str] = set()
        for k, operation in enumerate(request.get("operations") or [], 1):
            if operation["op"] == "insert":
                after = operation.get("after")
                if after not in (None, "start") and self.cell(after) is None:
                    raise ValueError(f"operation {k}: no cell {after!r} to insert after")
                index = 0 if after == "start" else len(self.cells)
                if after not in (None, "start"):
                    index = self.cells.index(self.cell(after)) + 1  # type: ignore[arg-type]
                changes.append(
                    {
                        "op": "insert",
                        "cell_id": None,
                        "index": index,
                        "cell_type": operation.get("cell_type") or "code",
                        "old": "",
                        "new": operation.get("source") or "",
                    }
                )
                continue
            cell = self.cell(operation.get("cell_id") or "")
            if cell is None:
                raise ValueError(f"operation {k}: no cell {operation.get('cell_id')!r}")
            if cell.id in touched:
                raise ValueError(f"operation {k}: cell {cell.id} is changed twice")
            touched.add(cell.id)
            if expected.get(cell.id) != cell.source:
                raise ValueError(
                    f"operation {k}: cell {cell.id} changed since you read it: read it again"
                )
            new = operation.get("source") or "" if operation["op"] == "replace" else ""
            if operation["op"] == "replace" and new == cell.source:
                raise ValueError(f"operation {k}: the new source of cell {cell.id} is its source")
            changes.append(
                {
                    "op": operation["op"],
                    "cell_id": cell.id,
                    "index": self.cells.index(cell),
                    "cell_type": cell.type,
                    "old": cell.source,
                    "new": new,
                }
            )
        self.proposals[call] = changes
        return {"changes": changes}

    def _op_decide(self, request: dict[str, Any]) -> dict[str, Any]:
        changes = self.proposals.pop(request["call"], None)
        if changes is None:
            raise ValueError("the change is no longer shown in the notebook")
        if not request.get("accept"):
            return {"applied": []}
        for change in changes:
            if change["cell_id"] is not None:
                cell = self.cell(change["cell_id"])
                if cell is None or cell.source != change["old"]:
                    raise ValueError(f"cell {change['cell_id']} was edited while the change waited")
        applied = []
        for change in changes:
            if change["op"] == "replace":
                self.cell(change["cell_id"]).source = change["new"]  # type: ignore[union-attr]
            elif change["op"] == "delete":
                self.cells.remove(self.cell(change["cell_id"]))  # type: ignore[arg-type]
        for change in changes:
            if change["op"] == "insert":
                made = Cell(change["new"], change["cell_type"])
                self.cells.insert(min(change["index"], len(self.cells)), made)
                applied.append({"op": "insert", "cell_id": made.id, "index": change["index"]})
        for change in changes:
            if change["op"] != "insert" and self.cell(change["cell_id"]) is not None:
                index = self.cells.index(self.cell(change["cell_id"]))  # type: ignore[arg-type]
                applied.append({"op": change["op"], "cell_id": change["cell_id"], "index": index})
        return {"applied": applied}

    def _op_withdraw(self, request: dict[str, Any]) -> dict[str, Any]:
        self.proposals.pop(request["call"], None)
        return {}

    def _op_run(self, _request: dict[str, Any]) -> dict[str, Any]:
        raise ValueError("the stand-in page runs no cells")
