"""Dialog widgets without a kernel: click like a user, check the exact bytes sent to the agent."""

from __future__ import annotations

import html
import logging
import re
import types
from collections.abc import Iterator, Sequence
from functools import partial
from typing import Any

import ipywidgets as w
import pytest

from atomic_jupyter.errors import AgentNotRunningError, DialogNotPendingError
from atomic_jupyter.protocol.framing import JsonlDecoder, Record, encode_line
from atomic_jupyter.protocol.messages import DialogRequest, UIResponse, parse_message
from atomic_jupyter.session import dialogs as dialogs_module
from atomic_jupyter.session.dialogs import Dialog
from atomic_jupyter.ui.dialog_view import MAX_OPTION_BUTTONS, DialogView
from atomic_jupyter.ui.text import TextLine, escape, pre_block, pre_html

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


def make_view(raw: dict, wire: Wire | None = None) -> tuple[DialogView, Dialog, Wire]:
    dialog, wire = make_dialog(raw, wire)
    return DialogView(dialog), dialog, wire


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


def walk(widget: w.Widget) -> Iterator[w.Widget]:
    """The widget and all its descendants."""
    yield widget
    for child in getattr(widget, "children", ()):
        yield from walk(child)


def widgets_of(view: DialogView, kind: type) -> list:
    return [x for x in walk(view.root) if isinstance(x, kind)]


def html_blocks(view: DialogView) -> list:
    """HTML widgets that are blocks (a confirm's message), not lines of text."""
    return [x for x in widgets_of(view, w.HTML) if not isinstance(x, TextLine)]


def assert_collapsed(view: DialogView, outcome: str) -> None:
    """The view shows one TextLine, holding the dialog's outcome line, and nothing else."""
    assert view.collapsed is True
    (only,) = view.root.children
    assert type(only) is TextLine
    assert only.text == outcome
    assert view.dialog.outcome == outcome
    assert view.buttons == {}
    assert view.value_widget is None


@pytest.fixture(autouse=True)
def no_swallowed_callback_errors(caplog: pytest.LogCaptureFixture):
    """ipywidgets logs and swallows exceptions raised by click handlers; fail on any."""
    caplog.set_level(logging.WARNING)
    yield
    swallowed = [r for r in caplog.records if "Exception in callback" in r.getMessage()]
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
    for i, option in enumerate(options):
        assert view.buttons[f"option:{i}"].description == option
    assert f"option:{count}" not in view.buttons
    assert "submit" not in view.buttons
    assert view.value_widget is None
    assert widgets_of(view, w.Dropdown) == []


def test_select_option_button_sends_that_option():
    view, dialog, wire = make_view(select_request())
    view.buttons["option:1"].click()
    assert wire.bytes == b'{"type":"extension_ui_response","id":"uuid-1","value":"Block"}\n'
    assert dialog.state == "answered"
    assert dialog.answer == "Block"


def test_select_first_option_sends_allow_exactly_as_the_protocol_example():
    view, _, wire = make_view(select_request())
    view.buttons["option:0"].click()
    assert wire.lines == [b'{"type":"extension_ui_response","id":"uuid-1","value":"Allow"}\n']


@pytest.mark.parametrize("count", [MAX_OPTION_BUTTONS + 1, 25])
def test_select_with_many_options_uses_a_dropdown_and_submit(count):
    options = [f"choice-{i}" for i in range(count)]
    view, dialog, wire = make_view(select_request(options, rid="uuid-many"))
    dropdown = view.value_widget
    assert isinstance(dropdown, w.Dropdown)
    assert widgets_of(view, w.Dropdown) == [dropdown]
    assert list(dropdown._options_labels) == options
    assert not any(role.startswith("option:") for role in view.buttons)
    assert view.buttons["submit"].description == "Submit"
    dropdown.value = count - 2  # choose by index
    view.buttons["submit"].click()
    assert wire.bytes == value_line("uuid-many", f'"choice-{count - 2}"')
    assert dialog.answer == f"choice-{count - 2}"


def test_select_dropdown_default_is_the_first_option():
    options = [f"o{i}" for i in range(12)]
    view, _, wire = make_view(select_request(options))
    view.buttons["submit"].click()
    assert wire.bytes == value_line("uuid-1", '"o0"')


def test_select_dropdown_with_duplicate_labels_sends_the_chosen_one():
    options = ["same"] * 5 + ["other"] + ["same"] * 5
    view, _, wire = make_view(select_request(options))
    view.value_widget.value = 5
    view.buttons["submit"].click()
    assert wire.bytes == value_line("uuid-1", '"other"')


# --------------------------------------------------------------------------- confirm


def test_confirm_yes_sends_confirmed_true():
    view, dialog, wire = make_view(confirm_request())
    assert view.buttons["yes"].description == "Yes"
    view.buttons["yes"].click()
    assert wire.bytes == b'{"type":"extension_ui_response","id":"uuid-2","confirmed":true}\n'
    assert dialog.answer is True
    assert_collapsed(view, "Clear session? → Yes (clicked)")


def test_confirm_no_sends_confirmed_false():
    view, dialog, wire = make_view(confirm_request())
    assert view.buttons["no"].description == "No"
    view.buttons["no"].click()
    assert wire.bytes == b'{"type":"extension_ui_response","id":"uuid-2","confirmed":false}\n'
    assert dialog.answer is False
    assert_collapsed(view, "Clear session? → No (clicked)")


def test_confirm_shows_its_message():
    view, _, _ = make_view(confirm_request(message="All messages will be lost."))
    (block,) = html_blocks(view)
    assert "All messages will be lost." in block.value


# --------------------------------------------------------------------------- input


def test_input_shows_the_placeholder():
    view, _, _ = make_view(input_request(placeholder="type something..."))
    assert isinstance(view.value_widget, w.Text)
    assert view.value_widget.placeholder == "type something..."
    assert view.value_widget.value == ""


def test_input_without_placeholder_has_an_empty_one():
    view, _, _ = make_view(input_request(placeholder=None))
    assert view.value_widget.placeholder == ""


def test_input_submit_sends_the_typed_text():
    view, dialog, wire = make_view(input_request())
    view.value_widget.value = "hello world"
    view.buttons["submit"].click()
    assert wire.bytes == b'{"type":"extension_ui_response","id":"uuid-3","value":"hello world"}\n'
    assert_collapsed(view, "Enter a value → hello world (clicked)")


def test_input_submit_of_nothing_sends_an_empty_value():
    view, dialog, wire = make_view(input_request())
    view.buttons["submit"].click()
    assert wire.bytes == value_line("uuid-3", '""')
    assert dialog.state == "answered"
    assert dialog.answer == ""


# --------------------------------------------------------------------------- editor


def test_editor_textarea_is_prefilled():
    view, _, _ = make_view(editor_request(prefill="Line 1\nLine 2\nLine 3"))
    assert isinstance(view.value_widget, w.Textarea)
    assert view.value_widget.value == "Line 1\nLine 2\nLine 3"


def test_editor_without_prefill_is_empty():
    view, _, _ = make_view(editor_request(prefill=None))
    assert view.value_widget.value == ""


def test_editor_sends_a_multiline_unicode_answer_exactly():
    answer = 'Zeile 1\nü ✓ 🎉\n\ttab\u2028sep "quoted" \\ back\n'
    view, dialog, wire = make_view(editor_request())
    view.value_widget.value = answer
    view.buttons["submit"].click()
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
    view.buttons["submit"].click()
    assert wire.bytes == value_line("uuid-4", '"keep\\nme"')


# --------------------------------------------------------------------------- cancel, once only


@pytest.mark.parametrize("kind", list(ALL_KINDS))
def test_cancel_sends_cancelled_true(kind):
    raw = ALL_KINDS[kind]()
    view, dialog, wire = make_view(raw)
    assert view.buttons["cancel"].description == "Cancel"
    view.buttons["cancel"].click()
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
    view, dialog, wire = make_view(ALL_KINDS[kind]())
    buttons = dict(view.buttons)  # the view forgets its buttons once it collapses
    buttons[first].click()
    state, answer, first_outcome = dialog.state, dialog.answer, dialog.outcome
    buttons[second].click()
    buttons[first].click()
    assert wire.lines == [expected_line]
    assert (dialog.state, dialog.answer, dialog.outcome) == (state, answer, first_outcome)
    assert view.error.text == ""  # a late click is no error
    assert dialog.state in ("answered", "cancelled")
    if outcome is not None:
        assert dialog.outcome == outcome
    assert_collapsed(view, first_outcome)


def test_buttons_are_disabled_once_answered():
    view, _, _ = make_view(confirm_request())
    buttons = dict(view.buttons)
    buttons["yes"].click()
    assert all(b.disabled for b in buttons.values())


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
    view.buttons["option:1"].click()
    assert dialog.outcome == "Pick one → Beta (clicked)"
    assert_collapsed(view, "Pick one → Beta (clicked)")


def test_a_collapsed_dialog_shows_later_that_its_answer_was_not_delivered():
    """The agent exited before it read the answer: the collapsed line on the page says so
    (it kept showing the answer as sent)."""
    view, dialog, _ = make_view(confirm_request())
    view.buttons["yes"].click()
    assert_collapsed(view, "Clear session? → Yes (clicked)")
    dialog.mark_undelivered("the agent exited without reading it")
    assert_collapsed(
        view, "Clear session? → Yes (clicked) (not delivered: the agent exited without reading it)"
    )


def test_coloured_option_labels_are_shown_without_escape_codes_and_answered_exactly():
    coloured = "\x1b[31mAllow\x1b[39m"
    view, _dialog, wire = make_view(select_request([coloured, "Block"]))
    assert view.buttons["option:0"].description == "Allow"
    view.buttons["option:0"].click()
    (line,) = wire.lines
    assert line == value_line("uuid-1", '"\\u001b[31mAllow\\u001b[39m"')


def test_outcome_of_an_untitled_dialog_names_the_method():
    view, dialog, _ = make_view(select_request(["Alpha"], title=""))
    assert widgets_of(view, TextLine)[0].text == "select request"
    view.buttons["option:0"].click()
    assert_collapsed(view, "select → Alpha (clicked)")


def test_outcome_of_a_long_answer_is_one_shortened_line():
    view, dialog, wire = make_view(input_request(title="Name"))
    view.value_widget.value = "x" * 100
    view.buttons["submit"].click()
    assert wire.bytes == value_line("uuid-3", '"' + "x" * 100 + '"')  # the answer itself is whole
    assert dialog.outcome == "Name → " + "x" * 79 + "… (100 chars) (clicked)"
    assert_collapsed(view, dialog.outcome)


def test_refresh_of_a_pending_dialog_changes_nothing():
    view, _, _ = make_view(confirm_request())
    children = view.root.children
    view.refresh()
    assert view.root.children == children
    assert view.collapsed is False


def test_expire_sends_nothing_and_collapses_with_timed_out(clock):
    view, dialog, wire = make_view(confirm_request(timeout=5000))
    yes = view.buttons["yes"]
    assert dialog.expire() is True
    view.refresh()  # the session refreshes the view when the dialog changes
    assert wire.lines == []
    assert dialog.state == "expired"
    assert dialog.answer is None
    assert "timed out" in dialog.outcome
    assert_collapsed(view, dialog.outcome)
    yes.click()
    assert wire.lines == []
    assert dialog.state == "expired"
    assert dialog.expire() is False
    with pytest.raises(DialogNotPendingError):
        dialog.respond(True)
    assert wire.lines == []


def test_click_after_expiry_before_the_view_refreshed_sends_nothing_and_collapses(clock):
    dialog, wire = make_dialog(select_request(timeout=10000))
    on_the_loop: list = []  # the view's work waits for the kernel's loop
    view = DialogView(dialog, schedule=on_the_loop.append)
    clock.now += 10.0
    dialog.expire()  # the ticker expired it; the view has not been refreshed yet
    assert view.collapsed is False
    assert len(on_the_loop) == 1
    view.buttons["option:0"].click()
    assert wire.lines == []
    assert view.error.text == ""
    assert dialog.state == "expired"
    on_the_loop.pop()()
    assert_collapsed(view, "Allow dangerous command? → timed out: no answer (the agent's default)")


def test_a_send_that_fails_with_an_agent_error_is_shown_and_the_dialog_stays_open():
    def not_running(_response):
        raise AgentNotRunningError("the agent has exited")

    typed = parse_message(confirm_request())
    dialog = Dialog(typed, confirm_request(), not_running)
    view = DialogView(dialog)
    view.buttons["yes"].click()
    assert dialog.pending
    assert view.collapsed is False
    assert view.error.text == "Not sent: the agent has exited"
    assert view.error.layout.display is None  # shown
    assert not view.buttons["yes"].disabled


def test_close_sends_nothing_and_collapses_with_the_reason():
    view, dialog, wire = make_view(select_request())
    allow = view.buttons["option:0"]
    cancel = view.buttons["cancel"]
    assert dialog.close("the agent exited") is True
    view.refresh()
    assert wire.lines == []
    assert dialog.state == "closed"
    assert dialog.outcome == "Allow dangerous command? → closed: the agent exited"
    assert_collapsed(view, dialog.outcome)
    allow.click()
    cancel.click()
    assert wire.lines == []
    assert dialog.close("again") is False
    assert dialog.outcome == "Allow dangerous command? → closed: the agent exited"


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


# --------------------------------------------------------------------------- countdown


def test_timed_dialog_shows_a_countdown(clock):
    view, dialog, _ = make_view(select_request(timeout=10000))
    # 10 s, less the safety margin, rounded up.
    assert view.countdown.text == "expires in 10 s"
    assert view.countdown in widgets_of(view, TextLine)
    clock.now += 5.0
    view.refresh_countdown()
    assert view.countdown.text == "expires in 5 s"
    clock.now += 60.0
    view.refresh_countdown()
    assert view.countdown.text == "expires in 0 s"


def test_timed_dialog_countdown_format_with_the_real_clock():
    view, _, _ = make_view(confirm_request(timeout=30000))
    match = re.fullmatch(r"expires in (\d+) s", view.countdown.text)
    assert match is not None
    assert 29 <= int(match.group(1)) <= 30


@pytest.mark.parametrize("kind", list(ALL_KINDS))
def test_untimed_dialog_shows_no_countdown(kind):
    view, dialog, _ = make_view(ALL_KINDS[kind]())
    assert dialog.deadline is None
    assert view.countdown.text == ""
    view.refresh_countdown()
    assert view.countdown.text == ""
    assert not any("expires" in label.text for label in widgets_of(view, TextLine))


def test_countdown_is_cleared_once_answered(clock):
    view, _, _ = make_view(select_request(timeout=10000))
    countdown = view.countdown
    view.buttons["option:0"].click()
    view.refresh_countdown()  # a late tick after the answer
    assert countdown.text == ""
    assert countdown not in list(walk(view.root))


# --------------------------------------------------------------------------- untrusted text

EVIL_TITLE = '<script>alert("t")</script>'
EVIL_OPTION = "<img src=x onerror=alert(1)>"
EVIL_OTHER = "a & b <b>bold</b> 'q'"
EVIL_MESSAGE = "<script>alert(1)</script>\n<img src=x onerror=alert(2)> & more"
EVIL_PLACEHOLDER = '"><img src=x onerror=alert(3)>'
EVIL_PREFILL = "</textarea><script>alert(4)</script>"


def assert_no_live_html(view: DialogView) -> None:
    """Every HTML widget in the tree holds agent text only escaped."""
    for widget in walk(view.root):
        if isinstance(widget, w.HTML):
            lowered = widget.value.lower()
            assert "<script" not in lowered, widget.value
            assert "<img" not in lowered, widget.value


def test_html_in_select_title_and_options_is_shown_verbatim_as_text():
    view, dialog, wire = make_view(select_request([EVIL_OPTION, EVIL_OTHER], title=EVIL_TITLE))
    labels = [x.text for x in widgets_of(view, TextLine)]
    assert EVIL_TITLE in labels
    assert view.buttons["option:0"].description == EVIL_OPTION
    assert view.buttons["option:1"].description == EVIL_OTHER
    assert_no_live_html(view)
    view.buttons["option:0"].click()
    assert wire.bytes == value_line("uuid-1", '"<img src=x onerror=alert(1)>"')
    assert_collapsed(view, f"{EVIL_TITLE} → {EVIL_OPTION} (clicked)")


def test_html_in_dropdown_options_is_shown_verbatim_as_text():
    options = [EVIL_OPTION] + [f"{EVIL_OTHER} {i}" for i in range(10)]
    view, _, wire = make_view(select_request(options, title=EVIL_TITLE))
    assert list(view.value_widget._options_labels) == options
    assert_no_live_html(view)
    view.buttons["submit"].click()
    assert wire.bytes == value_line("uuid-1", '"<img src=x onerror=alert(1)>"')


def test_html_in_confirm_message_is_escaped_in_its_html_block():
    view, _, _ = make_view(confirm_request(title=EVIL_TITLE, message=EVIL_MESSAGE))
    assert EVIL_TITLE in [x.text for x in widgets_of(view, TextLine)]
    (block,) = html_blocks(view)
    for line in EVIL_MESSAGE.splitlines():
        assert escape(line) in block.value
    assert html.unescape(re.sub(r"^<pre[^>]*>|</pre>$", "", block.value)) == EVIL_MESSAGE
    assert_no_live_html(view)


def test_html_in_placeholder_and_prefill_is_kept_verbatim():
    view, _, _ = make_view(input_request(title=EVIL_TITLE, placeholder=EVIL_PLACEHOLDER))
    assert view.value_widget.placeholder == EVIL_PLACEHOLDER
    assert_no_live_html(view)
    view, _, wire = make_view(editor_request(title=EVIL_TITLE, prefill=EVIL_PREFILL))
    assert view.value_widget.value == EVIL_PREFILL
    assert_no_live_html(view)
    view.buttons["submit"].click()
    assert wire.bytes == value_line("uuid-4", '"</textarea><script>alert(4)</script>"')


@pytest.mark.parametrize("kind", list(ALL_KINDS))
def test_no_html_widget_ever_holds_unescaped_agent_text(kind):
    raw = ALL_KINDS[kind](title=EVIL_TITLE, timeout=5000)
    view, _, _ = make_view(raw)
    assert_no_live_html(view)
    view.buttons["cancel"].click()
    assert_no_live_html(view)


# --------------------------------------------------------------------------- several dialogs


def test_two_pending_dialogs_each_answer_their_own_id():
    wire = Wire()
    first, _, _ = make_view(select_request(rid="uuid-1"), wire)
    second, _, _ = make_view(confirm_request(rid="uuid-2"), wire)
    assert first.dialog.pending and second.dialog.pending
    second.buttons["no"].click()
    assert first.dialog.pending
    first.buttons["option:1"].click()
    assert wire.lines == [confirmed_line("uuid-2", False), value_line("uuid-1", '"Block"')]
    assert first.dialog.answer == "Block"
    assert second.dialog.answer is False


def test_two_dialogs_of_the_same_kind_do_not_share_controls():
    wire = Wire()
    a, _, _ = make_view(input_request(rid="in-a"), wire)
    b, _, _ = make_view(input_request(rid="in-b"), wire)
    a.value_widget.value = "for a"
    b.value_widget.value = "for b"
    b.buttons["cancel"].click()
    a.buttons["submit"].click()
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


def test_pre_block_escapes_every_line():
    lines = ["<script>alert(1)</script>", "a & b", '"double"', "'single'"]
    block = pre_block(lines)
    assert isinstance(block, w.HTML)
    assert block.value.startswith("<pre ")
    assert block.value.endswith("</pre>")
    body = re.sub(r"^<pre[^>]*>|</pre>$", "", block.value)
    assert (
        body
        == "&lt;script&gt;alert(1)&lt;/script&gt;\na &amp; b\n&quot;double&quot;\n&#x27;single&#x27;"
    )
    assert html.unescape(body) == "\n".join(lines)


def test_pre_block_colour_is_in_the_style_and_text_is_still_escaped():
    block = pre_block(["<b>x</b>"], color="red")
    assert "color:red" in block.value
    assert "&lt;b&gt;x&lt;/b&gt;" in block.value
    assert "<b>" not in block.value
    assert pre_html(["<b>x</b>"], "red") == block.value


def test_text_line_keeps_the_raw_string_and_shows_it_escaped():
    label = TextLine(EVIL_TITLE, bold=True)
    assert isinstance(label, w.HTML) and not isinstance(label, w.Label)  # no LaTeX typesetting
    assert label.text == EVIL_TITLE
    assert escape(EVIL_TITLE) in label.value
    assert "<script" not in label.value.lower() and "<img" not in label.value.lower()
    label.text = "$x^2$ costs $5"
    assert "$x^2$ costs $5" in label.value
    assert "font-weight:bold" in label.value
