"""The sans-IO RPC connection on bytes alone: commands out, events in, ids matched."""

from __future__ import annotations

import json

import pytest

from atomic_jupyter.protocol.connection import (
    DIALOG_IDS_KEPT,
    DuplicateDialog,
    LateReply,
    Reply,
    RpcConnection,
    StrayReply,
)
from atomic_jupyter.protocol.framing import Diagnostic
from atomic_jupyter.protocol.messages import AgentEvent, SelectRequest, SetStatusRequest, UIResponse


def line(value: dict) -> bytes:
    return json.dumps(value).encode() + b"\n"


def response(cid: str | None, command: str, success: bool = True, **more: object) -> bytes:
    value = {"type": "response", "command": command, "success": success, **more}
    if cid is not None:
        value["id"] = cid
    return line(value)


def select(rid: str) -> bytes:
    return line(
        {
            "type": "extension_ui_request",
            "id": rid,
            "method": "select",
            "title": "t",
            "options": ["a"],
        }
    )


def test_a_command_gets_an_id_and_its_answer_comes_back_as_a_reply() -> None:
    connection = RpcConnection()
    out = connection.send_command({"type": "get_state"})
    assert out.id == "aj-1" and out.command == "get_state"
    assert out.data == b'{"type":"get_state","id":"aj-1"}\n'
    assert connection.pending == {"aj-1": "get_state"}
    (reply,) = connection.receive_data(response("aj-1", "get_state", data={"x": 1}))
    assert isinstance(reply, Reply)
    assert (reply.id, reply.command, reply.response.data) == ("aj-1", "get_state", {"x": 1})
    assert connection.pending == {}


def test_bytes_one_at_a_time_give_the_same_events_in_order() -> None:
    connection = RpcConnection()
    connection.send_command({"type": "get_state"})
    stream = (
        line({"type": "agent_start"})
        + select("d1")
        + response("aj-1", "get_state")
        + b"not json\n"
        + line({"type": "extension_ui_request", "id": "s", "method": "setStatus", "statusKey": "k"})
    )
    events = [e for i in range(len(stream)) for e in connection.receive_data(stream[i : i + 1])]
    kinds = [type(e) for e in events]
    assert kinds == [AgentEvent, SelectRequest, Reply, Diagnostic, SetStatusRequest]


def test_an_answer_after_the_caller_gave_up_is_late_and_one_nobody_asked_for_is_stray() -> None:
    connection = RpcConnection()
    out = connection.send_command({"type": "get_state"})
    connection.abandon(out.id)
    (late,) = connection.receive_data(response(out.id, "get_state"))
    assert isinstance(late, LateReply)
    (stray,) = connection.receive_data(response("zz-9", "get_state"))
    assert isinstance(stray, StrayReply)


def test_an_id_less_failure_goes_to_the_oldest_command_of_its_type_or_of_any_for_parse() -> None:
    connection = RpcConnection()
    first = connection.send_command({"type": "bogus"})
    connection.send_command({"type": "bogus"})
    other = connection.send_command({"type": "get_state"})
    (reply,) = connection.receive_data(response(None, "bogus", False, error="Unknown command"))
    assert isinstance(reply, Reply) and reply.id == first.id
    (parse,) = connection.receive_data(response(None, "parse", False, error="bad JSON"))
    assert isinstance(parse, Reply) and parse.id == "aj-2"
    (success,) = connection.receive_data(response(None, "get_state"))  # no id, and success
    assert isinstance(success, StrayReply)
    assert connection.pending == {other.id: "get_state"}


def test_a_repeated_dialog_id_is_reported_as_a_duplicate() -> None:
    connection = RpcConnection()
    first, again = connection.receive_data(select("d1") + select("d1"))
    assert isinstance(first, SelectRequest)
    assert isinstance(again, DuplicateDialog) and again.request.id == "d1"


def test_dialog_ids_are_remembered_up_to_a_bound() -> None:
    connection = RpcConnection()
    connection.receive_data(b"".join(select(f"d{i}") for i in range(DIALOG_IDS_KEPT + 1)))
    (oldest,) = connection.receive_data(select("d0"))  # forgotten: treated as new
    assert isinstance(oldest, SelectRequest)
    (recent,) = connection.receive_data(select(f"d{DIALOG_IDS_KEPT}"))
    assert isinstance(recent, DuplicateDialog)


def test_commands_are_checked_before_anything_is_remembered() -> None:
    connection = RpcConnection()
    with pytest.raises(TypeError):
        connection.send_command({"no": "type"})  # type: ignore[arg-type]
    connection.send_command({"type": "get_state", "id": "mine"})
    with pytest.raises(ValueError, match="already waiting"):
        connection.send_command({"type": "get_state", "id": "mine"})
    with pytest.raises(ValueError):
        connection.send_command({"type": "x", "value": float("nan")})
    assert connection.pending == {"mine": "get_state"}


def test_close_hands_back_the_waiting_commands_and_forgets_them() -> None:
    connection = RpcConnection()
    a = connection.send_command({"type": "get_state"})
    b = connection.send_command({"type": "prompt", "message": "hi"})
    assert connection.close() == {a.id: "get_state", b.id: "prompt"}
    (stray,) = connection.receive_data(response(a.id, "get_state"))
    assert isinstance(stray, StrayReply)


def test_a_dialog_answer_is_encoded_as_one_line() -> None:
    data = RpcConnection().send_ui_response(UIResponse.value_of("d1", "a\nb"))
    assert data == b'{"type":"extension_ui_response","id":"d1","value":"a\\nb"}\n'
