"""Dialogs without a kernel: shown in their output's page, clicked like a user (the messages
the page's module sends), and the exact bytes sent to the agent checked."""

from __future__ import annotations

import html
import logging
import re
import types
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import pytest

from atomic_jupyter.errors import AgentNotRunningError, DialogNotPendingError
from atomic_jupyter.protocol.framing import JsonlDecoder, Record, encode_line
from atomic_jupyter.protocol.messages import DialogRequest, UIResponse, parse_message
from atomic_jupyter.session import dialogs as dialogs_module
from atomic_jupyter.session.dialogs import Dialog
from atomic_jupyter.session.runs import PromptRun
from atomic_jupyter.ui.dialog_controls import MAX_OPTION_BUTTONS
from atomic_jupyter.ui.lines_output import text_line
from atomic_jupyter.ui.run_output import RunOutput
from atomic_jupyter.ui.text import button_html, escape, pre_html
from tests.harness.dialog_output import DialogOutput
from tests.harness.output_page import Element, act, page_html, page_tree, press

# --------------------------------------------------------------------------- requests (protocol doc)


#: Each dialog kind as the protocol document's example shows it: its id, title and own fields.
EXAMPLES: dict[str, dict[str, Any]] = {
    "select": {"id": "uuid-1", "title": "Allow dangerous command?", "options": ("Allow", "Block")},
    "confirm": {"id": "uuid-2", "title": "Clear session?", "message": "All messages will be lost."},
    "input": {"id": "uuid-3", "title": "Enter a value", "placeholder": "type something..."},
    "editor": {"id": "uuid-4", "title": "Edit some text", "prefill": "Line 1\nLine 2\nLine 3"},
}


def dialog_request(
    method: str, *, rid: str | None = None, timeout: int | None = None, **fields: Any
) -> dict[str, Any]:
    """The protocol example's ``method`` request with ``fields`` replaced: a field given as None
    is left out; ``timeout`` (ms) is added when given."""
    example = EXAMPLES[method]
    raw: dict[str, Any] = {
        "type": "extension_ui_request",
        "id": example["id"] if rid is None else rid,
        "method": method,
    }
    for key, value in {**example, **fields}.items():
        if key != "id" and value is not None:
            raw[key] = list(value) if key == "options" else value
    if timeout is not None:
        raw["timeout"] = timeout
    return raw


def select_request(options: Sequence[str] = EXAMPLES["select"]["options"], **fields: Any):
    return dialog_request("select", options=options, **fields)


confirm_request = partial(dialog_request, "confirm")
input_request = partial(dialog_request, "input")
editor_request = partial(dialog_request, "editor")
ALL_KINDS = {kind: partial(dialog_request, kind) for kind in EXAMPLES}


# --------------------------------------------------------------------------- helpers


class Wire:
    """The ``send`` callback of a Dialog: records each response as the exact line written."""

    def __init__(self) -> None:
        self.responses: list[UIResponse] = []
        self.lines: list[bytes] = []

    def __call__(self, response: UIResponse) -> None:
        self.responses.append(response)
        self.lines.append(encode_line(response.to_dict()))

    @property
    def bytes(self) -> bytes:
        return b"".join(self.lines)


def make_dialog(raw: dict, wire: Wire | None = None) -> tuple[Dialog, Wire]:
    typed = parse_message(raw)
    assert isinstance(typed, DialogRequest)
    wire = Wire() if wire is None else wire
    return Dialog(typed, raw, wire), wire


def make_view(
    raw: dict, wire: Wire | None = None, schedule: Callable[[], None] | None = None
) -> tuple[DialogOutput, Dialog, Wire]:
    """A dialog shown on its own, as the panel shows one (its output renders at once on a
    change, unless ``schedule`` is given)."""
    dialog, wire = make_dialog(raw, wire)
    return DialogOutput(dialog, on_rule=None, schedule=schedule), dialog, wire


def value_line(rid: str, json_value: str) -> bytes:
    """The exact wire line of a value answer; ``json_value`` is already JSON text."""
    return b'{"type":"extension_ui_response","id":"%s","value":%s}\n' % (
        rid.encode(),
        json_value.encode(),
    )


def confirmed_line(rid: str, yes: bool) -> bytes:
    return b'{"type":"extension_ui_response","id":"%s","confirmed":%s}\n' % (
        rid.encode(),
        b"true" if yes else b"false",
    )


def cancelled_line(rid: str) -> bytes:
    return b'{"type":"extension_ui_response","id":"%s","cancelled":true}\n' % rid.encode()


# --------------------------------------------------------------------------- the page


Output = DialogOutput | RunOutput
#: The kinds of a dialog's buttons: ``option``, ``yes``, ``no``, ``submit``, ``cancel``.
_KINDS = ("option", "yes", "no", "submit", "cancel")
_OUTCOME = re.compile(r'class="atomic-dialog-outcome[^"]*"[^>]*>(.*?)</div>', re.S)


def the_id(output: Output, dialog_id: str | None) -> str:
    if dialog_id is not None:
        return dialog_id
    assert isinstance(output, DialogOutput)
    return output.dialog.id


def controls(output: Output, dialog_id: str | None = None) -> Element | None:
    """The controls the page's module draws for a dialog waiting in ``output`` (None when it
    shows none), found in the dialog's place."""
    dialog_id = the_id(output, dialog_id)
    described = output.content.dialogs.get(dialog_id)
    page = page_tree(output.widget)
    places = [
        e for e in page.find_all("atomic-dialog-live") if e.attrs.get("data-dialog") == dialog_id
    ]
    if described is None:
        assert not places, page.inner
        return None
    (place,) = places
    return place.child("atomic-dialog-controls")


def parts_of(output: Output, cls: str, dialog_id: str | None = None) -> list[Element]:
    """The elements of class ``cls`` in a dialog's controls (none when it shows none)."""
    drawn = controls(output, dialog_id)
    return [] if drawn is None else drawn.find_all(cls)


def options_of(output: Output, dialog_id: str | None = None) -> list[str]:
    """The options of a dialog's list, as shown."""
    return [
        option.text
        for part in parts_of(output, "atomic-dialog-choice", dialog_id)
        for option in part.find_tags("option")
    ]


def message_of(output: Output, dialog_id: str | None = None) -> str:
    """A confirm's question, as shown."""
    (message,) = parts_of(output, "atomic-dialog-message", dialog_id)
    return message.text


def buttons(output: Output, dialog_id: str | None = None) -> list[tuple[str, str]]:
    """The buttons of a dialog's controls, in page order: ``(kind, label as shown)``."""
    drawn = controls(output, dialog_id)
    if drawn is None:
        return []
    found = []
    for button in drawn.find_tags("button"):
        kinds = [k for k in _KINDS if f"atomic-{k}" in button.classes]
        found.append((kinds[0] if kinds else "?", button.text))
    return found


def message_for(
    described: dict[str, Any], role: str, value: Any = None, rule: bool = False
) -> dict[str, Any]:
    """What the page's module sends when ``role`` is clicked in the controls ``described``:
    ``option:N``, ``yes``, ``no``, ``cancel``, or ``submit`` (of a list: ``value`` is the
    index picked, the first by default; of a text box or area: ``value`` is what it holds,
    by default what the page put there: nothing, or the editor's prefill)."""
    base = {"type": "dialog", "id": described["id"], "make_rule": rule}
    if role.startswith("option:"):
        return {**base, "action": "choose", "index": int(role.split(":")[1])}
    if role in ("yes", "no"):
        return {**base, "action": "respond", "value": role == "yes"}
    if role == "cancel":
        return {**base, "action": "cancel"}
    assert role == "submit", role
    if described["method"] == "select":
        return {**base, "action": "choose", "index": 0 if value is None else value}
    if value is None:
        value = described["prefill"] if described["method"] == "editor" else ""
    return {**base, "action": "respond", "value": value}


def click(
    output: Output,
    role: str,
    value: Any = None,
    *,
    dialog_id: str | None = None,
    rule: bool = False,
) -> dict[str, Any]:
    """Click ``role`` in a dialog's controls in the page's own module, as a person does (the
    control must be there: ``option:N``, ``yes``, ``no``, ``cancel``, or ``submit`` after
    choosing ``value``'s option of a list or typing ``value`` in a text box or area); check
    "answer this way from now on" first when ``rule``. Return the message the module sent,
    to send it again later (a click on its way)."""
    dialog_id = the_id(output, dialog_id)
    described = output.content.dialogs[dialog_id]
    place = f'[data-dialog="{dialog_id}"] '
    steps: list[dict[str, Any]] = []
    if rule:
        steps.append(
            {"selector": place + ".atomic-make-rule input", "action": "check", "value": True}
        )
    if role.startswith("option:"):
        steps.append({"selector": place + ".atomic-option", "nth": int(role.split(":")[1])})
    elif role == "submit" and value is not None:
        if described["method"] == "select":
            steps.append({"selector": place + "select", "action": "choose", "value": str(value)})
        else:
            field = (
                ".atomic-dialog-editor"
                if described["method"] == "editor"
                else ".atomic-dialog-input"
            )
            steps.append({"selector": place + field, "action": "type", "value": value})
        steps.append({"selector": place + ".atomic-submit"})
    else:
        steps.append({"selector": place + f".atomic-{role}"})
    sent = act(output.widget, *steps)
    (message,) = [m for m in sent if m.get("type") == "dialog"]
    return message


def error_shown(output: Output, dialog_id: str | None = None) -> str:
    """The text under a dialog's controls ("" when none)."""
    drawn = controls(output, dialog_id)
    if drawn is None:
        return ""
    (error,) = drawn.find_all("atomic-dialog-error")
    return error.text


def assert_collapsed(output: Output, outcome: str, dialog_id: str | None = None) -> None:
    """The page shows the settled dialog as the record's card: its question names the dialog,
    its outcome line says what came of it (``outcome`` is ``"Title → what"``: the line holds
    ``"→ what"``, the title is said once), and no controls at all."""
    dialog_id = the_id(output, dialog_id)
    page = page_html(output.widget)
    assert dialog_id not in output.content.dialogs
    assert f'data-dialog="{escape(dialog_id)}"' not in page, page  # no place for controls
    if isinstance(output, DialogOutput):
        assert "atomic-dialog-controls" not in page and "<button" not in page, page
    title, arrow, result = outcome.partition(" → ")
    assert arrow, f"an outcome names its dialog: {outcome!r}"
    # The record's card of the dialog: the one settled card whose outcome is this one.
    cards = [
        card
        for card in page_tree(page).find_all("atomic-dialog")
        if "atomic-dialog-live" not in card.classes
        and [o.text for o in card.find_all("atomic-dialog-outcome")] == [f"→ {result}"]
    ]
    assert len(cards) == 1, page
    assert cards[0].text.count(title) == 1, cards[0].text


@pytest.fixture(autouse=True)
def no_swallowed_callback_errors(caplog: pytest.LogCaptureFixture):
    """ipywidgets logs and swallows exceptions raised by message handlers; fail on any."""
    caplog.set_level(logging.WARNING)
    yield
    swallowed = [
        r for r in caplog.records if "Exception in" in r.getMessage() or r.exc_info is not None
    ]
    assert not swallowed, [r.exc_info for r in swallowed]


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> types.SimpleNamespace:
    """A fake monotonic clock for atomic_jupyter.session.dialogs, set by ``clock.now``."""
    fake = types.SimpleNamespace(now=1000.0)
    monkeypatch.setattr(dialogs_module, "time", types.SimpleNamespace(monotonic=lambda: fake.now))
    return fake


# --------------------------------------------------------------------------- select


@pytest.mark.parametrize("count", [1, 2, MAX_OPTION_BUTTONS])
def test_select_with_few_options_has_one_button_per_option(count):
    options = [f"Option {i}" for i in range(count)]
    view, _, _ = make_view(select_request(options))
    assert buttons(view) == [("option", o) for o in options] + [("cancel", "Dismiss")]
    drawn = controls(view)
    assert drawn is not None
    assert not drawn.find_tags("select") + drawn.find_tags("input") + drawn.find_tags("textarea")


def test_select_option_button_sends_that_option():
    view, dialog, wire = make_view(select_request())
    click(view, "option:1")
    assert wire.bytes == b'{"type":"extension_ui_response","id":"uuid-1","value":"Block"}\n'
    assert dialog.state == "answered"
    assert dialog.answer == "Block"


def test_select_first_option_sends_allow_exactly_as_the_protocol_example():
    view, _, wire = make_view(select_request())
    click(view, "option:0")
    assert wire.lines == [b'{"type":"extension_ui_response","id":"uuid-1","value":"Allow"}\n']


@pytest.mark.parametrize("count", [MAX_OPTION_BUTTONS + 1, 25])
def test_select_with_many_options_uses_a_list_and_submit(count):
    options = [f"choice-{i}" for i in range(count)]
    view, dialog, wire = make_view(select_request(options, rid="uuid-many"))
    drawn = controls(view)
    assert drawn is not None
    (choice,) = drawn.find_tags("select")
    assert "atomic-dialog-choice" in choice.classes
    assert options_of(view) == options
    assert buttons(view) == [("submit", "Submit"), ("cancel", "Dismiss")]  # no option buttons
    click(view, "submit", count - 2)  # choose by index
    assert wire.bytes == value_line("uuid-many", f'"choice-{count - 2}"')
    assert dialog.answer == f"choice-{count - 2}"


def test_select_list_default_is_the_first_option():
    options = [f"o{i}" for i in range(12)]
    view, _, wire = make_view(select_request(options))
    assert options_of(view)[0] == "o0"  # shown first
    click(view, "submit")  # what the page sends when nothing was picked: index 0
    assert wire.bytes == value_line("uuid-1", '"o0"')


def test_select_list_with_duplicate_labels_sends_the_chosen_one():
    options = ["same"] * 5 + ["other"] + ["same"] * 5
    view, _, wire = make_view(select_request(options))
    click(view, "submit", 5)
    assert wire.bytes == value_line("uuid-1", '"other"')


@pytest.mark.parametrize("index", [None, "1", True, -1, 99])
def test_a_choice_that_is_no_option_is_not_sent_and_says_why(index):
    view, dialog, wire = make_view(select_request())
    press(view.widget, {"type": "dialog", "id": "uuid-1", "action": "choose", "index": index})
    assert wire.lines == [] and dialog.pending
    said = error_shown(view)
    if index is None or not isinstance(index, int) or isinstance(index, bool):
        assert said == "Choose an option first."
    else:
        assert said.startswith("Not sent: "), said
    click(view, "option:0")  # still answerable, and the error goes with the controls
    assert wire.lines == [value_line("uuid-1", '"Allow"')]
    assert_collapsed(view, "Allow dangerous command? → Allow (clicked)")


# --------------------------------------------------------------------------- confirm


def test_confirm_yes_sends_confirmed_true():
    view, dialog, wire = make_view(confirm_request())
    assert ("yes", "Yes") in buttons(view)
    click(view, "yes")
    assert wire.bytes == b'{"type":"extension_ui_response","id":"uuid-2","confirmed":true}\n'
    assert dialog.answer is True
    assert_collapsed(view, "Clear session? → Yes (clicked)")


def test_confirm_no_sends_confirmed_false():
    view, dialog, wire = make_view(confirm_request())
    assert ("no", "No") in buttons(view)
    click(view, "no")
    assert wire.bytes == b'{"type":"extension_ui_response","id":"uuid-2","confirmed":false}\n'
    assert dialog.answer is False
    assert_collapsed(view, "Clear session? → No (clicked)")


def test_confirm_shows_its_message():
    view, _, _ = make_view(confirm_request(message="All messages will be lost."))
    assert message_of(view) == "All messages will be lost."


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_a_confirm_answer_that_is_no_bool_is_not_sent_and_says_why(value):
    view, dialog, wire = make_view(confirm_request())
    press(view.widget, {"type": "dialog", "id": "uuid-2", "action": "respond", "value": value})
    assert wire.lines == [] and dialog.pending
    assert error_shown(view).startswith("Not sent: ")


# --------------------------------------------------------------------------- input


def test_input_shows_the_placeholder():
    view, _, _ = make_view(input_request(placeholder="type something..."))
    assert view.content.dialogs["uuid-3"]["placeholder"] == "type something..."
    (field,) = parts_of(view, "atomic-dialog-input")
    assert field.tag == "input" and field.attrs["placeholder"] == "type something..."
    assert buttons(view) == [("submit", "Submit"), ("cancel", "Dismiss")]


def test_input_without_placeholder_has_an_empty_one():
    view, _, _ = make_view(input_request(placeholder=None))
    assert view.content.dialogs["uuid-3"]["placeholder"] == ""


def test_input_submit_sends_the_typed_text():
    view, dialog, wire = make_view(input_request())
    click(view, "submit", "hello world")
    assert wire.bytes == b'{"type":"extension_ui_response","id":"uuid-3","value":"hello world"}\n'
    assert_collapsed(view, "Enter a value → hello world (clicked)")


def test_input_submit_of_nothing_sends_an_empty_value():
    view, dialog, wire = make_view(input_request())
    click(view, "submit")
    assert wire.bytes == value_line("uuid-3", '""')
    assert dialog.state == "answered"
    assert dialog.answer == ""


# --------------------------------------------------------------------------- editor


def test_editor_textarea_is_prefilled():
    view, _, _ = make_view(editor_request(prefill="Line 1\nLine 2\nLine 3"))
    described = view.content.dialogs["uuid-4"]
    assert described["prefill"] == "Line 1\nLine 2\nLine 3"
    assert described["rows"] == 4  # at least 4, the prefill's lines and one more
    (area,) = parts_of(view, "atomic-dialog-editor")
    assert (area.tag, area.attrs["rows"], area.text) == ("textarea", "4", "Line 1\nLine 2\nLine 3")


def test_editor_rows_follow_the_prefill_up_to_twenty():
    view, _, _ = make_view(editor_request(prefill="\n".join(f"l{i}" for i in range(8))))
    assert view.content.dialogs["uuid-4"]["rows"] == 9
    view, _, _ = make_view(editor_request(prefill="x\n" * 100))
    assert view.content.dialogs["uuid-4"]["rows"] == 20


def test_editor_without_prefill_is_empty():
    view, _, _ = make_view(editor_request(prefill=None))
    assert view.content.dialogs["uuid-4"]["prefill"] == ""
    (area,) = parts_of(view, "atomic-dialog-editor")
    assert (area.tag, area.attrs["rows"], area.text) == ("textarea", "4", "")


def test_editor_sends_a_multiline_unicode_answer_exactly():
    answer = 'Zeile 1\nü ✓ 🎉\n\ttab\u2028sep "quoted" \\ back\n'
    view, dialog, wire = make_view(editor_request())
    click(view, "submit", answer)
    assert wire.bytes == (
        b'{"type":"extension_ui_response","id":"uuid-4","value":'
        b'"Zeile 1\\n\\u00fc \\u2713 \\ud83c\\udf89\\n\\ttab\\u2028sep \\"quoted\\" \\\\ back\\n"}\n'
    )
    (item,) = JsonlDecoder().feed(wire.bytes)
    assert item == Record({"type": "extension_ui_response", "id": "uuid-4", "value": answer})
    assert dialog.answer == answer
    assert_collapsed(view, "Edit some text → Zeile 1 (4 lines) (clicked)")


def test_editor_unchanged_prefill_is_sent_back():
    view, _, wire = make_view(editor_request(prefill="keep\nme"))
    click(view, "submit")  # the text area holds the prefill, untouched
    assert wire.bytes == value_line("uuid-4", '"keep\\nme"')


# --------------------------------------------------------------------------- cancel, once only


@pytest.mark.parametrize("kind", list(ALL_KINDS))
def test_cancel_sends_cancelled_true(kind):
    raw = ALL_KINDS[kind]()
    view, dialog, wire = make_view(raw)
    assert buttons(view)[-1] == ("cancel", "Dismiss")
    click(view, "cancel")
    assert wire.lines == [cancelled_line(raw["id"])]
    assert dialog.state == "cancelled"
    assert dialog.answer is None
    assert_collapsed(view, f"{raw['title']} → cancelled (clicked)")


@pytest.mark.parametrize(
    "kind, first, second, expected_line, outcome",
    [
        (
            "select",
            "option:0",
            "option:1",
            value_line("uuid-1", '"Allow"'),
            "Allow dangerous command? → Allow (clicked)",
        ),
        (
            "select",
            "option:1",
            "cancel",
            value_line("uuid-1", '"Block"'),
            "Allow dangerous command? → Block (clicked)",
        ),
        ("confirm", "yes", "no", confirmed_line("uuid-2", True), "Clear session? → Yes (clicked)"),
        ("confirm", "no", "yes", confirmed_line("uuid-2", False), "Clear session? → No (clicked)"),
        (
            "confirm",
            "cancel",
            "yes",
            cancelled_line("uuid-2"),
            "Clear session? → cancelled (clicked)",
        ),
        ("input", "submit", "submit", value_line("uuid-3", '""'), "Enter a value → '' (clicked)"),
        ("editor", "submit", "cancel", value_line("uuid-4", '"Line 1\\nLine 2\\nLine 3"'), None),
    ],
)
def test_second_click_sends_nothing_and_the_first_answer_stands(
    kind, first, second, expected_line, outcome
):
    """Clicks already on their way when the first one settled the dialog reach the kernel
    after it: they are ignored, and no error is shown."""
    view, dialog, wire = make_view(ALL_KINDS[kind]())
    described = view.content.dialogs[dialog.id]  # the controls the page drew
    sent = view.widget.messages
    press(view.widget, message_for(described, first))
    state, answer, first_outcome = dialog.state, dialog.answer, dialog.outcome
    after_first = view.widget.messages
    assert after_first > sent  # the page was told
    press(view.widget, message_for(described, second))
    press(view.widget, message_for(described, first))
    assert wire.lines == [expected_line]
    assert (dialog.state, dialog.answer, dialog.outcome) == (state, answer, first_outcome)
    assert view.widget.messages == after_first  # nothing changed on the page either
    assert "atomic-dialog-error" not in page_html(view.widget)  # a late click is no error
    assert dialog.state in ("answered", "cancelled")
    if outcome is not None:
        assert dialog.outcome == outcome
    assert_collapsed(view, first_outcome)


def test_the_controls_are_gone_once_answered():
    view, _, _ = make_view(confirm_request())
    assert buttons(view)
    click(view, "yes")
    assert buttons(view) == [] and view.content.dialogs == {}
    assert "<button" not in page_html(view.widget)


def test_respond_after_answer_raises_and_sends_nothing():
    dialog, wire = make_dialog(select_request())
    dialog.respond("Allow")
    with pytest.raises(DialogNotPendingError):
        dialog.respond("Block")
    with pytest.raises(DialogNotPendingError):
        dialog.cancel()
    assert wire.lines == [value_line("uuid-1", '"Allow"')]
    assert dialog.state == "answered"
    assert dialog.answer == "Allow"
    assert dialog.outcome == "Allow dangerous command? → Allow (answered by code)"


def test_respond_after_cancel_raises_and_sends_nothing():
    dialog, wire = make_dialog(confirm_request())
    dialog.cancel()
    with pytest.raises(DialogNotPendingError):
        dialog.respond(True)
    assert wire.lines == [cancelled_line("uuid-2")]
    assert dialog.state == "cancelled"


def test_respond_with_a_value_not_among_the_options_raises_value_error_and_sends_nothing():
    dialog, wire = make_dialog(select_request())
    with pytest.raises(ValueError):
        dialog.respond("Maybe")
    with pytest.raises(ValueError):
        dialog.respond("allow")  # options match exactly
    assert wire.lines == []
    assert dialog.pending
    dialog.respond("Block")  # still answerable
    assert wire.lines == [value_line("uuid-1", '"Block"')]


@pytest.mark.parametrize("bad", ["yes", 1, 0, None, "true"])
def test_confirm_with_a_non_bool_raises_type_error_and_sends_nothing(bad):
    dialog, wire = make_dialog(confirm_request())
    with pytest.raises(TypeError):
        dialog.respond(bad)
    assert wire.lines == []
    assert dialog.pending


@pytest.mark.parametrize("kind", ["select", "input", "editor"])
def test_text_dialogs_with_a_non_str_raise_type_error_and_send_nothing(kind):
    dialog, wire = make_dialog(ALL_KINDS[kind]())
    with pytest.raises(TypeError):
        dialog.respond(True)
    assert wire.lines == []
    assert dialog.pending


def test_a_failing_send_leaves_the_dialog_pending():
    def broken(_response):
        raise RuntimeError("pipe closed")

    typed = parse_message(confirm_request())
    dialog = Dialog(typed, confirm_request(), broken)
    with pytest.raises(RuntimeError):
        dialog.respond(True)
    assert dialog.pending
    assert dialog.outcome == ""


# --------------------------------------------------------------------------- collapse, outcome


def test_answered_view_collapses_to_the_outcome_line():
    view, dialog, _ = make_view(select_request(["Alpha", "Beta"], title="Pick one"))
    click(view, "option:1")
    assert dialog.outcome == "Pick one → Beta (clicked)"
    assert_collapsed(view, "Pick one → Beta (clicked)")


def test_a_collapsed_dialog_shows_later_that_its_answer_was_not_delivered():
    """The agent exited before it read the answer: the collapsed line on the page says so
    (it kept showing the answer as sent)."""
    view, dialog, _ = make_view(confirm_request())
    click(view, "yes")
    assert_collapsed(view, "Clear session? → Yes (clicked)")
    dialog.mark_undelivered("the agent exited without reading it")
    assert_collapsed(
        view, "Clear session? → Yes (clicked) (not delivered: the agent exited without reading it)"
    )


def test_coloured_option_labels_are_shown_without_escape_codes_and_answered_exactly():
    coloured = "\x1b[31mAllow\x1b[39m"
    view, _dialog, wire = make_view(select_request([coloured, "Block"]))
    assert buttons(view)[0] == ("option", "Allow")
    assert "\x1b" not in page_html(view.widget)
    click(view, "option:0")
    (line,) = wire.lines
    assert line == value_line("uuid-1", '"\\u001b[31mAllow\\u001b[39m"')


def test_outcome_of_an_untitled_dialog_names_the_method():
    view, dialog, _ = make_view(select_request(["Alpha"], title=""))
    (title,) = parts_of(view, "atomic-dialog-title")
    assert title.text == "select request"
    click(view, "option:0")
    assert dialog.outcome == "select → Alpha (clicked)"
    assert_collapsed(
        view, "select → Alpha (clicked)"
    )  # the record: "select dialog", then "→ Alpha"


def test_outcome_of_a_long_answer_is_one_shortened_line():
    view, dialog, wire = make_view(input_request(title="Name"))
    click(view, "submit", "x" * 100)
    assert wire.bytes == value_line("uuid-3", '"' + "x" * 100 + '"')  # the answer itself is whole
    assert dialog.outcome == "Name → " + "x" * 79 + "… (100 chars) (clicked)"
    assert_collapsed(view, dialog.outcome)


def test_a_render_of_a_pending_dialog_sends_nothing():
    view, _, _ = make_view(confirm_request())
    sent, page = view.widget.messages, page_html(view.widget)
    view.render()
    view.render()
    assert view.widget.messages == sent
    assert page_html(view.widget) == page


def test_expire_sends_nothing_and_collapses_with_timed_out(clock):
    view, dialog, wire = make_view(confirm_request(timeout=5000))
    described = view.content.dialogs[dialog.id]
    assert dialog.expire() is True  # the output renders the change at once here
    assert wire.lines == []
    assert dialog.state == "expired"
    assert dialog.answer is None
    assert "timed out" in dialog.outcome
    assert_collapsed(view, dialog.outcome)
    press(view.widget, message_for(described, "yes"))  # a click on its way
    assert wire.lines == []
    assert dialog.state == "expired"
    assert dialog.expire() is False
    with pytest.raises(DialogNotPendingError):
        dialog.respond(True)
    assert wire.lines == []
    assert_collapsed(view, dialog.outcome)


def test_click_after_expiry_before_the_view_refreshed_sends_nothing_and_collapses(clock):
    on_the_loop: list[str] = []  # the output's renders wait for the kernel's loop
    view, dialog, wire = make_view(
        select_request(timeout=10000), schedule=lambda: on_the_loop.append("render")
    )
    clock.now += 10.0
    dialog.expire()  # the ticker expired it; the output has not been rendered since
    assert buttons(view)[0] == ("option", "Allow")  # the page still shows the controls
    assert on_the_loop == ["render"]
    click(view, "option:0")
    assert wire.lines == []
    assert dialog.state == "expired"
    assert len(on_the_loop) == 2  # the click asked for a render too
    view.render()
    assert_collapsed(view, "Allow dangerous command? → timed out: no answer (the agent's default)")
    assert "atomic-dialog-error" not in page_html(view.widget)


def test_a_send_that_fails_with_an_agent_error_is_shown_and_the_dialog_stays_open():
    failures = [AgentNotRunningError("the agent has exited")]
    wire = Wire()

    def flaky(response: UIResponse) -> None:
        if failures:
            raise failures.pop()
        wire(response)

    typed = parse_message(confirm_request())
    dialog = Dialog(typed, confirm_request(), flaky)
    view = DialogOutput(dialog, on_rule=None)
    click(view, "yes")
    assert dialog.pending
    assert error_shown(view) == "Not sent: the agent has exited"
    assert ("yes", "Yes") in buttons(view)  # still there, to try again
    click(view, "yes")
    assert wire.lines == [confirmed_line("uuid-2", True)]
    assert_collapsed(view, "Clear session? → Yes (clicked)")


def test_close_sends_nothing_and_collapses_with_the_reason():
    view, dialog, wire = make_view(select_request())
    described = view.content.dialogs[dialog.id]
    assert dialog.close("the agent exited") is True
    assert wire.lines == []
    assert dialog.state == "closed"
    assert dialog.outcome == "Allow dangerous command? → closed: the agent exited"
    assert_collapsed(view, dialog.outcome)
    press(view.widget, message_for(described, "option:0"))
    press(view.widget, message_for(described, "cancel"))
    assert wire.lines == []
    assert dialog.close("again") is False
    assert dialog.outcome == "Allow dangerous command? → closed: the agent exited"
    assert_collapsed(view, dialog.outcome)


def test_expire_or_close_after_an_answer_changes_nothing():
    dialog, wire = make_dialog(select_request(timeout=10000))
    dialog.respond("Allow")
    assert dialog.expire() is False
    assert dialog.close("gone") is False
    assert dialog.state == "answered"
    assert dialog.outcome == "Allow dangerous command? → Allow (answered by code)"
    assert len(wire.lines) == 1


def test_observers_are_told_of_each_change_once():
    dialog, _ = make_dialog(confirm_request())
    seen: list[str] = []
    dialog.observe(lambda d: seen.append(d.state))
    dialog.respond(False)
    dialog.expire()
    with pytest.raises(DialogNotPendingError):
        dialog.cancel()
    assert seen == ["answered"]


def test_a_closed_output_lets_its_dialog_go_and_sends_nothing_more():
    view, dialog, wire = make_view(confirm_request())
    described = view.content.dialogs[dialog.id]
    view.close()
    assert view.widget.comm is None and page_html(view.widget) == ""
    dialog.respond(True)  # answered elsewhere: the closed output is not rendered
    press(view.widget, message_for(described, "no"))
    assert wire.lines == [confirmed_line("uuid-2", True)]


# --------------------------------------------------------------------------- countdown


def countdown(view: Output, dialog_id: str | None = None) -> str:
    found = parts_of(view, "atomic-countdown", dialog_id)
    return found[0].text if found else ""


def test_timed_dialog_shows_a_countdown_that_the_page_keeps(clock):
    view, dialog, _ = make_view(select_request(timeout=10000))
    # 10 s, less the safety margin, rounded up.
    assert countdown(view) == "expires in 10 s"
    assert 9 < view.content.dialogs[dialog.id]["seconds_left"] <= 10
    sent = view.widget.messages
    clock.now += 5.0
    view.render()  # the page counts down by itself: nothing to send
    assert view.widget.messages == sent


def test_timed_dialog_countdown_format_with_the_real_clock():
    view, dialog, _ = make_view(confirm_request(timeout=30000))
    match = re.fullmatch(r"expires in (\d+) s", countdown(view))
    assert match is not None
    assert 29 <= int(match.group(1)) <= 30
    assert 29 <= view.content.dialogs[dialog.id]["seconds_left"] <= 30


@pytest.mark.parametrize("kind", list(ALL_KINDS))
def test_untimed_dialog_shows_no_countdown(kind):
    view, dialog, _ = make_view(ALL_KINDS[kind]())
    assert dialog.deadline is None
    assert view.content.dialogs[dialog.id]["seconds_left"] is None
    assert countdown(view) == ""
    assert "expires" not in page_html(view.widget)


def test_countdown_is_gone_once_answered(clock):
    view, _, _ = make_view(select_request(timeout=10000))
    assert countdown(view)
    click(view, "option:0")
    assert "atomic-countdown" not in page_html(view.widget)
    assert "expires" not in page_html(view.widget)


# --------------------------------------------------------------------------- untrusted text

EVIL_TITLE = '<script>alert("t")</script>'
EVIL_OPTION = "<img src=x onerror=alert(1)>"
EVIL_OTHER = "a & b <b>bold</b> 'q'"
EVIL_MESSAGE = "<script>alert(1)</script>\n<img src=x onerror=alert(2)> & more"
EVIL_PLACEHOLDER = '"><img src=x onerror=alert(3)>'
EVIL_PREFILL = "</textarea><script>alert(4)</script>"


def assert_no_live_html(view: Output) -> None:
    """The HTML the kernel sends (the blocks) and the page it makes hold agent text only
    escaped; the dialogs' descriptions are text, which the page sets as text."""
    for where in view.content.blocks.values():
        lowered = where.lower()
        assert "<script" not in lowered, where
        assert "<img" not in lowered, where
        assert "<b>" not in lowered, where
    page = page_tree(view.widget)  # the page's own elements: none made of the agent's text
    assert not page.find_tags("script") + page.find_tags("img") + page.find_tags("b"), page.inner


def test_html_in_select_title_and_options_is_shown_verbatim_as_text():
    view, dialog, wire = make_view(select_request([EVIL_OPTION, EVIL_OTHER], title=EVIL_TITLE))
    described = view.content.dialogs[dialog.id]
    assert described["title"] == EVIL_TITLE
    assert described["options"] == [EVIL_OPTION, EVIL_OTHER]
    assert buttons(view)[:2] == [("option", EVIL_OPTION), ("option", EVIL_OTHER)]
    assert_no_live_html(view)
    click(view, "option:0")
    assert wire.bytes == value_line("uuid-1", '"<img src=x onerror=alert(1)>"')
    assert_collapsed(view, f"{EVIL_TITLE} → {EVIL_OPTION} (clicked)")
    assert_no_live_html(view)


def test_html_in_list_options_is_shown_verbatim_as_text():
    options = [EVIL_OPTION] + [f"{EVIL_OTHER} {i}" for i in range(10)]
    view, dialog, wire = make_view(select_request(options, title=EVIL_TITLE))
    assert view.content.dialogs[dialog.id]["options"] == options
    assert options_of(view) == options
    assert_no_live_html(view)
    click(view, "submit", 0)
    assert wire.bytes == value_line("uuid-1", '"<img src=x onerror=alert(1)>"')


def test_html_in_confirm_message_is_text():
    view, dialog, _ = make_view(confirm_request(title=EVIL_TITLE, message=EVIL_MESSAGE))
    described = view.content.dialogs[dialog.id]
    assert (described["title"], described["message"]) == (EVIL_TITLE, EVIL_MESSAGE)
    assert message_of(view) == EVIL_MESSAGE
    assert_no_live_html(view)


def test_html_in_placeholder_and_prefill_is_kept_verbatim():
    view, dialog, _ = make_view(input_request(title=EVIL_TITLE, placeholder=EVIL_PLACEHOLDER))
    assert view.content.dialogs[dialog.id]["placeholder"] == EVIL_PLACEHOLDER
    assert_no_live_html(view)
    view, dialog, wire = make_view(editor_request(title=EVIL_TITLE, prefill=EVIL_PREFILL))
    assert view.content.dialogs[dialog.id]["prefill"] == EVIL_PREFILL
    assert_no_live_html(view)
    click(view, "submit")
    assert wire.bytes == value_line("uuid-4", '"</textarea><script>alert(4)</script>"')
    assert_no_live_html(view)


@pytest.mark.parametrize("kind", list(ALL_KINDS))
def test_no_html_the_kernel_sends_ever_holds_unescaped_agent_text(kind):
    raw = ALL_KINDS[kind](title=EVIL_TITLE, timeout=5000)
    view, _, _ = make_view(raw)
    assert_no_live_html(view)
    click(view, "cancel")
    assert_no_live_html(view)
    assert_collapsed(view, f"{EVIL_TITLE} → cancelled (clicked)")


# --------------------------------------------------------------------------- several dialogs


def run_with(*dialogs: Dialog) -> RunOutput:
    """A run whose transcript holds ``dialogs``, in its output."""
    run = PromptRun("r1", "ask twice")
    for dialog in dialogs:
        run.transcript.add_dialog(dialog)
    return RunOutput(run, on_stop=lambda: None)


def test_two_pending_dialogs_each_answer_their_own_id():
    wire = Wire()
    first, _ = make_dialog(select_request(rid="uuid-1"), wire)
    second, _ = make_dialog(confirm_request(rid="uuid-2"), wire)
    view = run_with(first, second)
    assert set(view.content.dialogs) == {"uuid-1", "uuid-2"}
    click(view, "no", dialog_id="uuid-2")
    assert first.pending
    assert_collapsed(view, "Clear session? → No (clicked)", "uuid-2")
    assert buttons(view, "uuid-1")[:2] == [("option", "Allow"), ("option", "Block")]
    click(view, "option:1", dialog_id="uuid-1")
    assert wire.lines == [confirmed_line("uuid-2", False), value_line("uuid-1", '"Block"')]
    assert first.answer == "Block"
    assert second.answer is False
    assert_collapsed(view, "Allow dangerous command? → Block (clicked)", "uuid-1")


def test_two_dialogs_of_the_same_kind_do_not_share_controls():
    wire = Wire()
    a, _ = make_dialog(input_request(rid="in-a"), wire)
    b, _ = make_dialog(input_request(rid="in-b"), wire)
    view = run_with(a, b)
    click(view, "cancel", dialog_id="in-b")
    assert controls(view, "in-a") is not None and controls(view, "in-b") is None
    click(view, "submit", "for a", dialog_id="in-a")
    assert wire.lines == [cancelled_line("in-b"), value_line("in-a", '"for a"')]


# --------------------------------------------------------------------------- widgets/text.py


def test_escape_escapes_markup_and_quotes():
    assert (
        escape("<a href=\"x\" title='y'>&</a>")
        == "&lt;a href=&quot;x&quot; title=&#x27;y&#x27;&gt;&amp;&lt;/a&gt;"
    )


def test_escape_leaves_plain_text_alone():
    assert escape("plain text ü ✓") == "plain text ü ✓"


def test_escape_does_not_double_decode_entities():
    assert escape("&lt;script&gt;") == "&amp;lt;script&amp;gt;"


def test_pre_html_escapes_every_line():
    lines = ["<script>alert(1)</script>", "a & b", '"double"', "'single'"]
    block = pre_html(lines)
    assert block.startswith("<pre ")
    assert block.endswith("</pre>")
    body = re.sub(r"^<pre[^>]*>|</pre>$", "", block)
    assert (
        body
        == "&lt;script&gt;alert(1)&lt;/script&gt;\na &amp; b\n&quot;double&quot;\n&#x27;single&#x27;"
    )
    assert html.unescape(body) == "\n".join(lines)


def test_pre_html_colour_is_in_the_style_and_text_is_still_escaped():
    block = pre_html(["<b>x</b>"], "red")
    assert "color:red" in block
    assert "&lt;b&gt;x&lt;/b&gt;" in block
    assert "<b>" not in block


def test_a_text_line_keeps_the_raw_string_and_shows_it_escaped():
    line = text_line("title", "atomic-title", EVIL_TITLE, "bold", live=button_html("Go", "go", "x"))
    assert line.plain == EVIL_TITLE
    for shown in (line.html, line.live or ""):
        assert escape(EVIL_TITLE) in shown
        assert "<script" not in shown.lower() and "<img" not in shown.lower()
    assert "<strong>" in line.html
    assert line.live is not None and line.live.index("<button") < line.live.index(line.html)
    assert "$x^2$ costs $5" in text_line("t", "c", "$x^2$ costs $5").html  # no maths


def test_a_button_escapes_its_label_title_and_data():
    button = button_html('<b>"x"</b>', "run", "atomic-x", title="<i>", name='a" onclick="x')
    assert button.startswith('<button type="button" class="jupyter-button widget-button atomic-x"')
    assert 'data-action="run"' in button and 'data-name="a&quot; onclick=&quot;x"' in button
    assert 'title="&lt;i&gt;"' in button and ">&lt;b&gt;&quot;x&quot;&lt;/b&gt;</button>" in button
    assert "onclick=" not in button.replace('data-name="a&quot; onclick=&quot;x"', "")
