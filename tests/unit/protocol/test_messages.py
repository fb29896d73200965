"""parse_message and the client-side builders, against the protocol document's own examples."""

from __future__ import annotations

import copy

import pytest

from atomic_jupyter.protocol.framing import encode_line
from atomic_jupyter.protocol.messages import (
    KNOWN_EVENT_TYPES,
    AgentEvent,
    ConfirmRequest,
    DialogRequest,
    EditorRequest,
    InputRequest,
    NotifyRequest,
    Response,
    SelectRequest,
    SetEditorTextRequest,
    SetStatusRequest,
    SetTitleRequest,
    SetWidgetRequest,
    UIRequest,
    UIResponse,
    UnknownMessage,
    UnknownUIRequest,
    command,
    parse_message,
)

# The exact JSON examples of ../shared/rpc-extension-ui-protocol.md.
SELECT = {
    "type": "extension_ui_request",
    "id": "uuid-1",
    "method": "select",
    "title": "Allow dangerous command?",
    "options": ["Allow", "Block"],
    "timeout": 10000,
}
CONFIRM = {
    "type": "extension_ui_request",
    "id": "uuid-2",
    "method": "confirm",
    "title": "Clear session?",
    "message": "All messages will be lost.",
    "timeout": 5000,
}
INPUT = {
    "type": "extension_ui_request",
    "id": "uuid-3",
    "method": "input",
    "title": "Enter a value",
    "placeholder": "type something...",
}
EDITOR = {
    "type": "extension_ui_request",
    "id": "uuid-4",
    "method": "editor",
    "title": "Edit some text",
    "prefill": "Line 1\nLine 2\nLine 3",
}
NOTIFY = {
    "type": "extension_ui_request",
    "id": "uuid-5",
    "method": "notify",
    "message": "Command blocked by user",
    "notifyType": "warning",
}
SET_STATUS = {
    "type": "extension_ui_request",
    "id": "uuid-6",
    "method": "setStatus",
    "statusKey": "my-ext",
    "statusText": "Turn 3 running...",
}
SET_WIDGET = {
    "type": "extension_ui_request",
    "id": "uuid-7",
    "method": "setWidget",
    "widgetKey": "my-ext",
    "widgetLines": ["--- My Widget ---", "Line 1", "Line 2"],
    "widgetPlacement": "aboveEditor",
}
SET_TITLE = {
    "type": "extension_ui_request",
    "id": "uuid-8",
    "method": "setTitle",
    "title": "atomic - my project",
}
SET_EDITOR_TEXT = {
    "type": "extension_ui_request",
    "id": "uuid-9",
    "method": "set_editor_text",
    "text": "prefilled text for the user",
}

DOC_EXAMPLES = {
    "select": SELECT,
    "confirm": CONFIRM,
    "input": INPUT,
    "editor": EDITOR,
    "notify": NOTIFY,
    "setStatus": SET_STATUS,
    "setWidget": SET_WIDGET,
    "setTitle": SET_TITLE,
    "set_editor_text": SET_EDITOR_TEXT,
}

EXPECTED = {
    "select": SelectRequest(
        "uuid-1", title="Allow dangerous command?", options=("Allow", "Block"), timeout=10000
    ),
    "confirm": ConfirmRequest(
        "uuid-2", title="Clear session?", message="All messages will be lost.", timeout=5000
    ),
    "input": InputRequest("uuid-3", title="Enter a value", placeholder="type something..."),
    "editor": EditorRequest("uuid-4", title="Edit some text", prefill="Line 1\nLine 2\nLine 3"),
    "notify": NotifyRequest("uuid-5", message="Command blocked by user", notify_type="warning"),
    "setStatus": SetStatusRequest("uuid-6", key="my-ext", text="Turn 3 running..."),
    "setWidget": SetWidgetRequest(
        "uuid-7",
        key="my-ext",
        lines=("--- My Widget ---", "Line 1", "Line 2"),
        placement="aboveEditor",
    ),
    "setTitle": SetTitleRequest("uuid-8", title="atomic - my project"),
    "set_editor_text": SetEditorTextRequest("uuid-9", text="prefilled text for the user"),
}


def parse(raw: dict):
    """parse_message on a deep copy, checking that the input is not modified."""
    before = copy.deepcopy(raw)
    message = parse_message(raw)
    assert raw == before
    return message


def with_fields(base: dict, **changes) -> dict:
    """A copy of ``base`` with fields changed; a value of ``...`` removes the field."""
    raw = dict(base)
    for key, value in changes.items():
        if value is ...:
            raw.pop(key, None)
        else:
            raw[key] = value
    return raw


# --------------------------------------------------------------------------- UI requests


@pytest.mark.parametrize("method", list(DOC_EXAMPLES))
def test_doc_example_parses_to_the_right_class_and_fields(method):
    message = parse(DOC_EXAMPLES[method])
    expected = EXPECTED[method]
    assert type(message) is type(expected)
    assert message == expected
    assert message.method == method
    assert message.id == DOC_EXAMPLES[method]["id"]
    assert message.extra == {}


@pytest.mark.parametrize("method", list(DOC_EXAMPLES))
def test_doc_example_to_dict_round_trips(method):
    raw = DOC_EXAMPLES[method]
    message = parse(raw)
    assert message.to_dict() == raw
    assert parse_message(message.to_dict()) == message


@pytest.mark.parametrize("method", list(DOC_EXAMPLES))
def test_dialog_methods_are_dialogs_and_the_others_are_fire_and_forget(method):
    message = parse(DOC_EXAMPLES[method])
    is_dialog = method in ("select", "confirm", "input", "editor")
    assert message.is_dialog is is_dialog
    assert isinstance(message, DialogRequest) is is_dialog
    assert isinstance(message, UIRequest)


def test_unrecognised_fields_are_kept_in_extra_and_written_back():
    raw = with_fields(SELECT, hint={"k": [1, 2]}, priority=3)
    message = parse(raw)
    assert isinstance(message, SelectRequest)
    assert message.extra == {"hint": {"k": [1, 2]}, "priority": 3}
    assert message.to_dict() == raw
    assert parse_message(message.to_dict()) == message


def test_timeout_is_kept_in_milliseconds_and_converted_to_seconds():
    select = parse(SELECT)
    assert select.timeout == 10000
    assert select.timeout_seconds == 10.0
    assert parse(with_fields(CONFIRM, timeout=1500.5)).timeout_seconds == 1.5005


def test_absent_timeout_is_none():
    message = parse(INPUT)
    assert message.timeout is None
    assert message.timeout_seconds is None
    assert "timeout" not in message.to_dict()


@pytest.mark.parametrize(
    "bad",
    [
        0,
        0.0,
        -1,
        -5000,
        "10",
        "10000",
        True,
        False,
        None,
        [10],
        {"ms": 10},
        float("nan"),
        float("inf"),
    ],
)
def test_unusable_timeout_is_none(bad):
    message = parse(with_fields(SELECT, timeout=bad))
    assert isinstance(message, SelectRequest)
    assert message.timeout is None
    assert message.timeout_seconds is None


def test_huge_integer_timeout_does_not_make_parse_message_raise():
    message = parse_message(with_fields(SELECT, timeout=10**400))
    assert isinstance(message, SelectRequest)


def test_notify_type_defaults_to_info():
    message = parse(with_fields(NOTIFY, notifyType=...))
    assert isinstance(message, NotifyRequest)
    assert message.notify_type == "info"
    assert message.message == "Command blocked by user"


@pytest.mark.parametrize("kind", ["info", "warning", "error"])
def test_notify_type_is_kept(kind):
    assert parse(with_fields(NOTIFY, notifyType=kind)).notify_type == kind


def test_unknown_notify_type_falls_back_to_info():
    assert parse(with_fields(NOTIFY, notifyType="fatal")).notify_type == "info"


def test_set_status_without_status_text_clears():
    message = parse(with_fields(SET_STATUS, statusText=...))
    assert isinstance(message, SetStatusRequest)
    assert message.key == "my-ext"
    assert message.text is None
    assert message.to_dict() == with_fields(SET_STATUS, statusText=...)


def test_set_status_with_null_status_text_clears():
    assert parse(with_fields(SET_STATUS, statusText=None)).text is None


def test_set_widget_without_widget_lines_clears():
    message = parse(with_fields(SET_WIDGET, widgetLines=...))
    assert isinstance(message, SetWidgetRequest)
    assert message.key == "my-ext"
    assert message.lines is None
    assert "widgetLines" not in message.to_dict()


def test_set_widget_with_empty_lines_is_not_a_clear():
    message = parse(with_fields(SET_WIDGET, widgetLines=[]))
    assert message.lines == ()


def test_widget_placement_defaults_to_above_editor():
    message = parse(with_fields(SET_WIDGET, widgetPlacement=...))
    assert message.placement == "aboveEditor"
    assert parse(with_fields(SET_WIDGET, widgetPlacement="sideways")).placement == "aboveEditor"
    assert parse(with_fields(SET_WIDGET, widgetPlacement="belowEditor")).placement == "belowEditor"


def test_input_without_placeholder_and_editor_without_prefill_are_none():
    assert parse(with_fields(INPUT, placeholder=...)).placeholder is None
    assert parse(with_fields(EDITOR, prefill=...)).prefill is None


def test_unknown_method_is_kept_whole():
    raw = {
        "type": "extension_ui_request",
        "id": "uuid-10",
        "method": "setFooter",
        "footer": ["a", "b"],
        "nested": {"x": 1},
    }
    message = parse(raw)
    assert type(message) is UnknownUIRequest
    assert message.id == "uuid-10"
    assert message.unknown_method == "setFooter"
    assert message.extra == {"footer": ["a", "b"], "nested": {"x": 1}}
    assert message.is_dialog is False
    assert message.to_dict() == raw
    assert parse_message(message.to_dict()) == message


def test_unknown_method_that_looks_like_a_dialog_is_not_a_dialog():
    message = parse({"type": "extension_ui_request", "id": "u", "method": "custom", "title": "t"})
    assert isinstance(message, UnknownUIRequest)
    assert not isinstance(message, DialogRequest)
    assert message.is_dialog is False


# --------------------------------------------------------------------------- events, responses


def test_unknown_event_type_is_kept_as_an_unknown_agent_event():
    raw = {"type": "brand_new_event", "payload": {"deep": [1, {"x": None}]}, "n": 3}
    message = parse(raw)
    assert type(message) is AgentEvent
    assert message.type == "brand_new_event"
    assert message.known is False
    assert message.fields == {"payload": {"deep": [1, {"x": None}]}, "n": 3}
    assert message.get("n") == 3
    assert message.get("missing", "dflt") == "dflt"
    assert message.to_dict() == raw
    assert parse_message(message.to_dict()) == message


@pytest.mark.parametrize("kind", sorted(KNOWN_EVENT_TYPES))
def test_known_event_types_are_known_agent_events(kind):
    raw = {"type": kind, "data": {"k": "v"}}
    message = parse(raw)
    assert type(message) is AgentEvent
    assert message.known is True
    assert message.fields == {"data": {"k": "v"}}
    assert message.to_dict() == raw


def test_documented_events_are_in_the_known_set():
    for kind in (
        "agent_start",
        "agent_end",
        "message_update",
        "tool_execution_end",
        "extension_error",
    ):
        assert kind in KNOWN_EVENT_TYPES


def test_response_with_id_and_data():
    raw = {
        "id": "req-1",
        "type": "response",
        "command": "get_state",
        "success": True,
        "data": {"model": None},
    }
    message = parse(raw)
    assert message == Response(command="get_state", success=True, id="req-1", data={"model": None})
    assert message.to_dict() == raw
    assert parse_message(message.to_dict()) == message


def test_response_without_id():
    raw = {"type": "response", "command": "prompt", "success": True}
    message = parse(raw)
    assert isinstance(message, Response)
    assert message.id is None
    assert message.success is True
    assert message.data is None
    assert message.to_dict() == raw


def test_failed_response_keeps_its_error():
    raw = {
        "id": "req-2",
        "type": "response",
        "command": "set_model",
        "success": False,
        "error": "Model not found",
    }
    message = parse(raw)
    assert isinstance(message, Response)
    assert message.success is False
    assert message.error == "Model not found"
    assert message.command == "set_model"
    assert message.to_dict() == raw
    assert parse_message(message.to_dict()) == message


def test_response_extra_fields_are_kept():
    raw = {"type": "response", "command": "bash", "success": True, "elapsedMs": 12}
    message = parse(raw)
    assert message.extra == {"elapsedMs": 12}
    assert message.to_dict() == raw


@pytest.mark.parametrize("success", ["true", 1, None])
def test_response_success_must_be_literally_true(success):
    raw = {"type": "response", "command": "x", "success": success}
    assert parse(raw).success is False


@pytest.mark.parametrize(
    "value",
    [
        [1, 2],
        "agent_start",
        42,
        3.5,
        None,
        True,
        {},
        {"type": 5},
        {"type": None, "id": "x"},
        {"type": ["response"]},
        {"command": "get_state", "success": True},
    ],
    ids=repr,
)
def test_values_that_are_not_typed_objects_are_unknown_messages(value):
    message = parse_message(value)
    assert type(message) is UnknownMessage
    assert message.value == value
    assert message.to_dict() == value


# --------------------------------------------------------------------------- client -> agent


def test_value_response_has_exactly_the_protocol_shape():
    response = UIResponse.value_of("uuid-1", "Allow")
    assert response.to_dict() == {"type": "extension_ui_response", "id": "uuid-1", "value": "Allow"}
    assert (
        encode_line(response.to_dict())
        == b'{"type":"extension_ui_response","id":"uuid-1","value":"Allow"}\n'
    )


@pytest.mark.parametrize("confirmed", [True, False])
def test_confirmation_response_has_exactly_the_protocol_shape(confirmed):
    response = UIResponse.confirmation("uuid-2", confirmed)
    assert response.to_dict() == {
        "type": "extension_ui_response",
        "id": "uuid-2",
        "confirmed": confirmed,
    }
    wire = b'{"type":"extension_ui_response","id":"uuid-2","confirmed":%s}\n' % (
        b"true" if confirmed else b"false"
    )
    assert encode_line(response.to_dict()) == wire


def test_cancellation_response_has_exactly_the_protocol_shape():
    response = UIResponse.cancellation("uuid-3")
    assert response.to_dict() == {
        "type": "extension_ui_response",
        "id": "uuid-3",
        "cancelled": True,
    }
    assert (
        encode_line(response.to_dict())
        == b'{"type":"extension_ui_response","id":"uuid-3","cancelled":true}\n'
    )


def test_empty_string_value_is_still_a_value_response():
    assert UIResponse.value_of("u", "").to_dict() == {
        "type": "extension_ui_response",
        "id": "u",
        "value": "",
    }


@pytest.mark.parametrize(
    "response",
    [
        UIResponse.value_of("uuid-1", "Allow"),
        UIResponse.value_of("uuid-4", "multi\nline ✓"),
        UIResponse.value_of("uuid-3", ""),
        UIResponse.confirmation("uuid-2", True),
        UIResponse.confirmation("uuid-2", False),
        UIResponse.cancellation("uuid-3"),
    ],
    ids=["value", "multiline", "empty", "yes", "no", "cancel"],
)
def test_ui_response_from_dict_round_trips(response):
    assert UIResponse.from_dict(response.to_dict()) == response


@pytest.mark.parametrize(
    "wire",
    [
        {"type": "extension_ui_response", "id": "uuid-1", "value": "Allow"},
        {"type": "extension_ui_response", "id": "uuid-2", "confirmed": True},
        {"type": "extension_ui_response", "id": "uuid-2", "confirmed": False},
        {"type": "extension_ui_response", "id": "uuid-3", "cancelled": True},
    ],
)
def test_ui_response_from_dict_of_the_protocol_examples_round_trips(wire):
    assert UIResponse.from_dict(wire).to_dict() == wire


def test_command_without_fields():
    assert command("get_state") == {"type": "get_state"}


def test_command_drops_none_fields_only():
    assert command("prompt", message="hi", images=None) == {"type": "prompt", "message": "hi"}
    assert command("set_auto_retry", enabled=False, n=0, s="", items=[]) == {
        "type": "set_auto_retry",
        "enabled": False,
        "n": 0,
        "s": "",
        "items": [],
    }
