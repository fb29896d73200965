"""The kernel's side of the notebook link (``notebook/page_link.py``) with stand-in comms: a
page links with its hello, one of another protocol version is refused in words, requests are
answered by id, a page that goes fails what it owed, and a decision reaches the listeners."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from atomic_jupyter.notebook.link_protocol import Decision
from atomic_jupyter.notebook.page_link import (
    ANNOUNCE,
    PAGE_TARGET,
    PROTOCOL,
    Origin,
    PageError,
    PageLink,
    current_origin,
    current_request_is_unattended,
)


class Comm:
    def __init__(self, comm_id: str = "c1", target_name: str = PAGE_TARGET) -> None:
        self.comm_id = comm_id
        self.target_name = target_name
        self.sent: list[dict[str, Any]] = []
        self.closed: list[Any] = []
        self._closed = False
        self.on_msg_cb: Any = None
        self.on_close_cb: Any = None

    def send(self, data: dict[str, Any]) -> None:
        self.sent.append(data)

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The kernel's requests sent on this comm, in order."""
        return [m for m in self.sent if m.get("type") == "request"]

    def close(self, data: Any = None) -> None:
        self.closed.append(data)
        self._closed = True

    def on_msg(self, callback: Any) -> None:
        self.on_msg_cb = callback

    def on_close(self, callback: Any) -> None:
        self.on_close_cb = callback

    def receive(self, data: dict[str, Any]) -> None:
        """A message of the page, with the link's version (as the extension sends it)."""
        self.on_msg_cb({"content": {"data": {"v": PROTOCOL, **data}}})


class Manager:
    def __init__(self) -> None:
        self.targets: dict[str, Any] = {}

    def register_target(self, name: str, callback: Any) -> None:
        self.targets[name] = callback


def hello(**changes: Any) -> dict[str, Any]:
    data = {
        "type": "hello",
        "protocol": PROTOCOL,
        "client": "client-1",
        "path": "a/b.ipynb",
        "app": "JupyterLab",
    }
    return {"content": {"data": {**data, **changes}}}


@pytest.fixture
def made() -> tuple[PageLink, Manager, list[Comm]]:
    manager = Manager()
    announced: list[Comm] = []

    def create_comm(target_name: str, data: Any) -> Comm:
        announced.append(Comm("announce", target_name))
        return announced[-1]

    return PageLink(manager, create_comm), manager, announced


def test_the_kernel_announces_itself_and_a_page_links_with_its_hello(made):
    link, manager, announced = made
    assert [c.target_name for c in announced] == [ANNOUNCE]
    changes: list[int] = []
    link.changed.add(lambda: changes.append(1))
    comm = Comm()
    manager.targets[PAGE_TARGET](comm, hello())
    (page,) = link.pages
    assert comm.sent == [{"type": "linked", "v": PROTOCOL}]  # before any request
    assert (page.client, page.path, page.app) == ("client-1", "a/b.ipynb", "JupyterLab")
    assert page.label == "b.ipynb (JupyterLab)"
    assert changes == [1]
    assert link.page_for("client-1") is page and link.page_for("other") is page  # the only one
    link.announce()  # the announcement is still open: nothing new
    assert len(announced) == 1
    announced[0]._closed = True  # a frontend closed it: the next announcement opens another
    link.announce()
    assert len(announced) == 2


def test_a_page_of_another_version_is_refused_and_told_why(made):
    link, manager, _ = made
    comm = Comm()
    manager.targets[PAGE_TARGET](comm, hello(protocol=PROTOCOL + 1))
    assert link.pages == []
    assert f"version {PROTOCOL + 1} of the notebook link" in link.refused
    assert comm.closed and "reload the page" in comm.closed[0]["error"]
    other = Comm("c2")
    manager.targets[PAGE_TARGET](other, {"content": {"data": {"type": "reply"}}})
    assert link.pages == [] and other.closed


def test_requests_are_answered_by_id_and_a_refusal_is_an_error(made):
    link, manager, _ = made
    comm = Comm()
    manager.targets[PAGE_TARGET](comm, hello())
    (page,) = link.pages
    first = link.request(page, "read")
    second = link.request(page, "decide", call="x", accept=True)
    assert [m["op"] for m in comm.requests] == ["read", "decide"]
    assert comm.requests[1] == {
        "type": "request",
        "v": PROTOCOL,
        "id": comm.requests[1]["id"],
        "op": "decide",
        "call": "x",
        "accept": True,
    }
    comm.receive({"type": "reply", "id": comm.requests[1]["id"], "ok": False, "error": "changed"})
    comm.receive({"type": "reply", "id": comm.requests[0]["id"], "ok": True, "cells": []})
    reply = {"v": PROTOCOL, "type": "reply", "id": comm.requests[0]["id"], "ok": True, "cells": []}
    assert first.result(0) == reply
    with pytest.raises(PageError, match="changed"):
        second.result(0)
    comm.receive({"type": "reply", "id": 999, "ok": True})  # a late or stray reply: ignored


def test_a_page_that_goes_fails_what_it_owed_and_a_decision_reaches_the_listeners(made):
    link, manager, _ = made
    comm = Comm()
    manager.targets[PAGE_TARGET](comm, hello())
    (page,) = link.pages
    decided: list[tuple[Any, dict[str, Any]]] = []
    link.decisions.add(lambda p, data: decided.append((p, data)))
    comm.receive({"type": "decision", "call": "c", "accept": False, "reason": "no"})
    assert decided == [(page, Decision("c", False, "no"))]
    owed = link.request(page, "read")
    comm.on_close_cb({})
    with pytest.raises(PageError, match="b.ipynb \\(JupyterLab\\) was closed"):
        owed.result(0)
    assert link.pages == []
    with pytest.raises(PageError, match="not linked any more"):
        link.request(page, "read").result(0)


def test_two_pages_on_one_kernel_are_told_apart_by_the_prompts_client(made):
    link, manager, _ = made
    manager.targets[PAGE_TARGET](Comm("c1"), hello(client="one", path="one.ipynb"))
    manager.targets[PAGE_TARGET](Comm("c2"), hello(client="two", path="two.ipynb"))
    assert link.page_for("two").path == "two.ipynb"
    assert link.page_for("three") is None and link.page_for(None) is None


def test_the_origin_of_a_prompt_is_read_from_the_kernels_parent_header():
    class Shell:
        parent_header = {"header": {"session": "client-9"}, "metadata": {"cellId": "cell-3"}}

    assert current_origin(Shell()) == Origin("client-9", "cell-3")

    class Bare:
        parent_header: dict[str, Any] = {}

    assert current_origin(Bare()) == Origin(None, None)


def test_a_cell_run_by_nbconvert_announces_nothing_and_a_persons_cell_does():
    """nbconvert and papermill (no stdin: no person, no page) would warn "No handler found
    for comm target 'atomic-jupyter-announce'"; a cell a person runs announces as before."""
    manager, announced = Manager(), []
    unattended = [True]

    def create_comm(target_name: str, data: Any) -> Comm:
        announced.append(Comm("announce", target_name))
        return announced[-1]

    link = PageLink(manager, create_comm, lambda: unattended[0])
    assert announced == []
    unattended[0] = False
    link.announce()
    assert [c.target_name for c in announced] == ["atomic-jupyter-announce"]


def test_a_request_without_stdin_is_unattended():
    def shell(content: dict[str, Any], msg_type: str = "execute_request") -> Any:
        return SimpleNamespace(parent_header={"header": {"msg_type": msg_type}, "content": content})

    assert current_request_is_unattended(shell({"allow_stdin": False}))
    assert not current_request_is_unattended(shell({"allow_stdin": True}))
    assert not current_request_is_unattended(shell({}, "comm_msg"))  # a click in a page
    assert not current_request_is_unattended(SimpleNamespace(parent_header={}))


def test_a_page_that_says_here_over_a_subshell_is_known_to_talk_over_it(made):
    """Its hello comes to the main shell (no ``subshell_id``); its ``here`` over the subshell
    JupyterLab made for its comm; a later message to the main shell says it no longer does."""
    link, manager, _ = made
    comm = Comm()
    manager.targets[PAGE_TARGET](comm, hello())
    (page,) = link.pages
    assert page.subshell is None
    here = {"type": "here", "v": PROTOCOL}
    comm.on_msg_cb({"header": {"subshell_id": "s-1"}, "content": {"data": here}})
    assert page.subshell == "s-1"
    comm.receive({"type": "decision", "call": "c", "accept": True})
    assert page.subshell is None


def test_a_page_closing_while_requests_are_made_on_another_thread_fails_each_of_them(made):
    """Requests from the main thread, the page's close on a subshell's thread: every request
    is answered (a reply or the page's error), none is left waiting."""
    import threading

    link, manager, _ = made
    for attempt in range(50):
        comm = Comm(f"c{attempt}")
        manager.targets[PAGE_TARGET](comm, hello())
        page = next(p for p in link.pages if p.comm is comm)
        owed = []
        start = threading.Barrier(2)

        def close(comm: Comm = comm, start: threading.Barrier = start) -> None:
            start.wait(5)
            comm.on_close_cb({})

        closer = threading.Thread(target=close)
        closer.start()
        start.wait(5)
        for _ in range(20):
            owed.append(link.request(page, "read"))
        closer.join(5)
        for future in owed:
            with pytest.raises(PageError):
                future.result(1)


def test_the_doctor_says_whether_clicks_arrive_during_a_cell():
    from atomic_jupyter.notebook.doctor import answers_during_a_cell

    assert answers_during_a_cell(False, []).startswith("no: this kernel has no subshells")
    assert answers_during_a_cell(True, []).endswith("no linked page has said it talks over one yet")
    assert answers_during_a_cell(True, ["b.ipynb (JupyterLab)"]).endswith(
        "b.ipynb (JupyterLab) talks over one"
    )


def test_a_page_that_does_not_answer_in_time_fails_the_request_and_is_let_go(made):
    """A tab killed without closing its comm: the request fails within its deadline, in
    words, and the page is no longer linked, so no later call waits on it."""
    link, manager, _ = made
    comm = Comm()
    manager.targets[PAGE_TARGET](comm, hello())
    (page,) = link.pages
    changes: list[int] = []
    link.changed.add(lambda: changes.append(1))
    owed = link.request(page, "read", deadline=0.05)
    with pytest.raises(PageError, match=r"did not answer within 0\.05 s"):
        owed.result(10)
    assert link.pages == [] and changes == [1]
    assert comm.closed == [{"error": "the page did not answer in time"}]
    with pytest.raises(PageError, match="not linked any more"):
        link.request(page, "read").result(0)


def test_a_message_of_another_version_or_shape_is_ignored(made):
    link, manager, _ = made
    comm = Comm()
    manager.targets[PAGE_TARGET](comm, hello())
    (page,) = link.pages
    owed = link.request(page, "read")
    number = comm.requests[0]["id"]
    decided: list[Any] = []
    link.decisions.add(lambda p, d: decided.append(d))
    comm.on_msg_cb({"content": {"data": {"type": "reply", "id": number, "ok": True}}})  # no v
    comm.receive({"type": "reply", "id": number, "ok": True, "v": PROTOCOL + 1})
    comm.receive({"type": "reply", "id": str(number), "ok": True})  # an id of the wrong type
    comm.receive({"type": "decision", "call": 3, "accept": True})
    comm.receive({"type": "mystery"})
    assert not owed.done() and decided == []
    comm.receive({"type": "reply", "id": number, "ok": True})
    assert owed.result(0)["ok"] is True


def test_the_names_and_the_version_are_those_of_the_extensions_protocol_ts():
    """Written once for each side; the TypeScript's constants and request ops agree."""
    import re

    from atomic_jupyter.notebook import link_protocol
    from tests.harness.support import ROOT

    source = (ROOT / "labextension" / "src" / "protocol.ts").read_text(encoding="utf-8")

    def constant(name: str) -> str:
        found = re.search(rf"export const {name} = ([^;]+);", source)
        assert found, f"protocol.ts declares no {name}"
        return found.group(1).strip().strip("'\"")

    assert int(constant("PROTOCOL")) == link_protocol.PROTOCOL
    assert constant("ANNOUNCE") == link_protocol.ANNOUNCE
    assert constant("PAGE_TARGET") == link_protocol.PAGE_TARGET
    union = source.split("export type Request", 1)[1].split("\n\n", 1)[0]
    ops = set(re.findall(r"op: '(\w+)'", union))
    assert ops == link_protocol.REQUEST_OPS


def test_requests_of_a_run_that_stopped_are_given_up_and_a_late_reply_is_ignored(made):
    link, manager, _ = made
    comm = Comm()
    manager.targets[PAGE_TARGET](comm, hello())
    (page,) = link.pages
    run, other = object(), object()
    mine = link.request(page, "run", owner=run, cell_ids=["a"])
    theirs = link.request(page, "read", owner=other)
    assert link.cancel(run, "the run was stopped") == 1
    with pytest.raises(PageError, match="the run was stopped"):
        mine.result(0)
    assert not theirs.done() and link.pages == [page]  # the page is still linked
    comm.receive({"type": "reply", "id": comm.requests[0]["id"], "ok": True, "cells": []})  # late
    comm.receive({"type": "reply", "id": comm.requests[1]["id"], "ok": True, "cells": []})
    assert theirs.result(0)["ok"] is True
    assert link.cancel(None, "nothing") == 0
