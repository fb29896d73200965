"""Deciding once: a dialog's answer made the rule for the rest of the session (issue 16).

The stand-in agent raises dialogs with the same title; the rule answers the next ones with no
click, says so, is listed in ``session.policies`` and in the panel, and can be removed there.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

import atomic_jupyter as aj
from atomic_jupyter.session.session import AgentSession
from atomic_jupyter.ui.dialog_controls import RULE_TEXT
from atomic_jupyter.ui.session_view import SessionView
from tests.harness.output_page import act, page_html, page_tree, press
from tests.harness.support import STANDIN, wait_until
from tests.harness.thread_guard import pump_until


@pytest.fixture
def session() -> Iterator[AgentSession]:
    s = aj.start(command=STANDIN, name=f"rules-{time.monotonic_ns()}", display=False)
    yield s
    s.stop()


def in_panel(view: SessionView, dialog: object) -> object:
    """The panel's widget once it shows ``dialog`` (a dialog of no prompt on the page)."""
    panel = view.panel
    pump_until(
        view.dispatcher, lambda: dialog.id in panel.content.dialogs, "the dialog in the panel"
    )
    return panel


def rule_lines(view: SessionView) -> list[str]:
    view.refresh("policies")
    return [e.text for e in page_tree(view.panel).find_all("atomic-rule-text")]


def receipts(session: AgentSession) -> list[str]:
    return [n["message"] for n in session.notifications if n["message"].startswith("received")]


def test_a_rule_made_from_a_dialog_answers_the_next_ones_without_a_click(
    session: AgentSession,
) -> None:
    view = SessionView(session)
    session.prompt("/scenario dialogs 1", display=False)
    (first,) = wait_until(lambda: session.pending_dialogs, "the first dialog")
    widget = in_panel(view, first)  # the dialog as the panel shows it
    described = widget.content.dialogs[first.id]
    # The box is offered, in words of ours (no agent text: the title is not in it).
    assert described["rule_label"] == RULE_TEXT and "Soak 1" not in described["rule_label"]
    (label,) = page_tree(widget).find_all("atomic-make-rule")
    assert label.text.strip() == RULE_TEXT and label.find_tags("input")
    # "B", with the box ticked in the page: make it the rule.
    place = f'[data-dialog="{first.id}"] '
    act(
        widget,
        {"selector": place + ".atomic-make-rule input", "action": "check", "value": True},
        {"selector": place + ".atomic-option", "nth": 1},
    )
    assert first.outcome == "Soak 1 → B (clicked) · made the rule for this session"
    assert "made the rule for this session" in page_html(widget)
    (policy,) = session.policies
    assert policy.rule and policy.describe() == "select “Soak 1” → B (rule)"

    # The stand-in numbers its dialogs: make the next one carry the same title.
    session.prompt("/scenario dialogs 1", display=False)
    (second,) = wait_until(lambda: session.pending_dialogs, "the second dialog")
    assert second.title == "Soak 2"  # another title: a person decides
    second.respond("A")

    policy_b = session.answer_with("B", method="select", title="^Soak 3$")
    assert not policy_b.rule
    assert rule_lines(view) == [policy.describe(), policy_b.describe()]
    assert page_html(view.panel).count('data-action="remove-rule"') == 2
    remove = {"type": "remove-rule", "policy": str(policy.key)}  # the first line's Remove
    press(view.panel, remove)
    assert session.policies == [policy_b]
    assert rule_lines(view) == [policy_b.describe()]
    press(view.panel, remove)  # a late second click on that line removes nothing else
    assert session.policies == [policy_b]
    view.close()


def test_a_rule_answers_a_dialog_with_the_same_title_and_says_rule(session: AgentSession) -> None:
    session.prompt("/scenario dup", display=False)  # "Duplicated", twice with one id
    (dialog,) = wait_until(lambda: session.pending_dialogs, "the dialog")
    dialog.respond("A")
    policy = session.make_rule(dialog)
    assert policy.matches("select", "Duplicated") and not policy.matches("select", "Duplicated!")
    from atomic_jupyter.protocol.messages import parse_message
    from atomic_jupyter.session.dialogs import Dialog

    raw = {
        "type": "extension_ui_request",
        "id": "again",
        "method": "select",
        "title": "Duplicated",
        "options": ["A", "B"],
    }
    again = session.client.on_message.dialog(parse_message(raw))  # as the agent would send it
    assert isinstance(again, Dialog)
    assert again.state == "answered" and again.answer == "A"
    assert again.outcome == "Duplicated → A (rule)"


def test_cancel_with_the_box_ticked_makes_no_rule(session: AgentSession) -> None:
    view = SessionView(session)
    session.prompt("/scenario dialogs 1", display=False)
    (dialog,) = wait_until(lambda: session.pending_dialogs, "the dialog")
    widget = in_panel(view, dialog)
    assert widget.content.dialogs[dialog.id]["rule_label"] == RULE_TEXT
    press(widget, {"type": "dialog", "id": dialog.id, "action": "cancel", "make_rule": True})
    assert dialog.state == "cancelled" and session.policies == []
    assert "made the rule" not in dialog.outcome
    view.close()


def test_an_answer_with_the_box_left_unticked_makes_no_rule(session: AgentSession) -> None:
    view = SessionView(session)
    session.prompt("/scenario dialogs 1", display=False)
    (dialog,) = wait_until(lambda: session.pending_dialogs, "the dialog")
    widget = in_panel(view, dialog)
    press(
        widget,
        {"type": "dialog", "id": dialog.id, "action": "choose", "index": 0, "make_rule": False},
    )
    assert dialog.state == "answered" and dialog.answered_by == "clicked"
    assert session.policies == []
    view.close()


def test_an_option_with_a_secret_taken_out_is_not_made_a_rule() -> None:
    import json

    from atomic_jupyter.protocol.decode import MessageDecoder
    from atomic_jupyter.session.dialogs import Dialog
    from atomic_jupyter.transport.secrets import Redactor

    secret = "sk-rule-marker-99887766"
    line = json.dumps(
        {
            "type": "extension_ui_request",
            "id": "d1",
            "method": "select",
            "title": "Which key?",
            "options": [f"use {secret}", "none"],
        }
    ).encode()
    (request,) = MessageDecoder(scrubber=Redactor([secret])).feed(line + b"\n")
    dialog = Dialog(request, request.raw, lambda _r: None)
    dialog.choose(0)
    session = AgentSession("rules-unit")
    with pytest.raises(ValueError, match="secret"):
        session.make_rule(dialog)
    assert session.policies == []


def test_panel_work_queued_before_the_view_closed_builds_no_widget_after_it(
    session: AgentSession,
) -> None:
    """A dialog for the panel, or a panel part, that the agent sent just before the session
    stopped may be rendered after its view closed: it builds nothing then (a widget built there
    would stay open, with nothing to show or close it)."""
    import ipywidgets.widgets.widget as widget_module

    view = SessionView(session)
    session.prompt("/scenario dialogs 1", display=False)
    (dialog,) = wait_until(lambda: session.pending_dialogs, "the dialog")
    view.close()
    before = len(widget_module._instances)
    view.show_in_panel(dialog)
    for part in ("status", "widgets", "rules", "title", "notifications"):
        view.refresh(part)
    assert len(widget_module._instances) == before
    dialog.cancel()


def test_a_streaming_run_whose_render_is_slow_is_drawn_less_often(
    session: AgentSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The next render of a streaming output waits four times as long as the last one took
    (``RENDER_SHARE``): a megabyte paragraph, parsed again at every update, no longer takes
    the kernel's whole thread."""
    from types import SimpleNamespace

    from atomic_jupyter.session.runs import PromptRun
    from atomic_jupyter.ui import session_view

    clock = SimpleNamespace(now=0.0)
    monkeypatch.setattr(session_view, "time", SimpleNamespace(perf_counter=lambda: clock.now))
    view = SessionView(session)
    asked: list[float] = []

    def throttled(func, key, interval):  # the dispatcher's throttle, recorded; runs at once
        asked.append(interval)
        func()

    monkeypatch.setattr(view.dispatcher, "call_throttled", throttled)

    class Output:  # a run's output whose render takes ``cost`` seconds of the clock
        cost = 0.0

        def render(self) -> None:
            clock.now += self.cost

        def close(self) -> None:
            pass

    run, output = PromptRun("", "the long answer"), Output()
    view.run_outputs[id(run)] = output  # type: ignore[assignment]
    view._run_changed(run, "stream")
    output.cost = 0.5
    view._run_changed(run, "stream")  # drawn after the usual interval; takes half a second
    view._run_changed(run, "stream")  # so the next waits two seconds
    output.cost = 0.001
    view._run_changed(run, "stream")
    view._run_changed(run, "stream")  # a quick render again: the usual interval
    assert asked == [
        session_view.TRANSCRIPT_INTERVAL,
        session_view.TRANSCRIPT_INTERVAL,
        pytest.approx(2.0),
        pytest.approx(2.0),
        session_view.TRANSCRIPT_INTERVAL,
    ]
    view.close()
