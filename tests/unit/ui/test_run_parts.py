"""The transcript described once (:mod:`atomic_jupyter.ui.run_parts`): the live view and the
record are made from the same parts, so they show the same things in the same order, each
once; inside a tool card, what it is about to do comes first, then the dialog deciding it,
then its output and result."""

from __future__ import annotations

import re
from typing import Any

from atomic_jupyter.session.dialogs import Dialog
from atomic_jupyter.session.runs import PromptRun
from atomic_jupyter.ui.record import run_record
from atomic_jupyter.ui.run_output import RunOutput
from atomic_jupyter.ui.run_parts import describe_entry
from tests.harness.output_page import page_html
from tests.harness.run_events import apply, confirm_dialog

#: Classes that name a thing the transcript shows (not a control, not a wrapper).
SHOWN = re.compile(
    r"atomic-(tool|tool-header|tool-command|tool-dialogs|tool-output|assistant|assistant-text|"
    r"note|user-message|entry|dialog-outcome|footer)$"
)


def guarded_run() -> tuple[PromptRun, Dialog]:
    """A run whose bash call was refused in its confirm dialog, with text around it."""
    run = PromptRun("r1", "clean up")
    apply(run, "agent_start")
    text = {"role": "assistant", "content": [{"type": "text", "text": "I will clean up."}]}
    apply(run, "message_start", message={"role": "assistant", "content": []})
    apply(run, "message_end", message=text)
    apply(run, "tool_execution_start", toolCallId="c1", toolName="bash", args={"command": "rm x"})
    dialog, _sent = confirm_dialog("d1", "Allow rm?")
    run.transcript.add_dialog(dialog)
    dialog.respond(False, by="clicked")
    apply(
        run,
        "tool_execution_end",
        toolCallId="c1",
        toolName="bash",
        result={"content": [{"type": "text", "text": "Blocked by the user"}]},
        isError=True,
    )
    apply(run, "entry_appended", entry={"type": "custom", "customType": "audit", "data": {"n": 1}})
    apply(run, "agent_end")
    return run, dialog


def live_classes(widget: Any) -> list[str]:
    """The shown classes of a widget tree, depth first, in page order."""
    found = [c for c in getattr(widget, "_dom_classes", ()) if SHOWN.match(c)]
    for child in getattr(widget, "children", ()):
        found += live_classes(child)
    return found


def record_classes(html: str) -> list[str]:
    """The shown classes of a record's tags, in document order."""
    return [
        c
        for attr in re.findall(r'<[a-z]+ class="([^"]*)"', html)
        for c in attr.split()
        if SHOWN.match(c)
    ]


def test_the_live_view_and_the_record_show_the_same_things_in_the_same_order() -> None:
    run, dialog = guarded_run()
    view = RunOutput(run, on_stop=lambda: None)
    live = record_classes(page_html(view.widget))
    recorded = record_classes(run_record(run).html)
    assert live == recorded
    assert live.count("atomic-tool") == 1 and live.count("atomic-entry") == 1


def test_in_a_card_the_command_comes_first_then_its_dialog_then_output_and_result() -> None:
    run, _dialog = guarded_run()
    html = run_record(run).html
    card = html[html.index('class="atomic-tool ') :]
    order = [c for c in record_classes(card) if c.startswith("atomic-tool-")]
    expected = ["atomic-tool-header", "atomic-tool-dialogs", "atomic-tool-output"]
    assert [c for c in order if c in expected] == expected
    if "atomic-tool-command" in order:  # the command or diff, above the dialog deciding it
        assert order.index("atomic-tool-command") < order.index("atomic-tool-dialogs")
    # The refusal's text is the result: after the dialog, never before the command.
    assert card.index("Blocked by the user") > card.index("Allow rm?")
    assert card.index("Blocked by the user") > card.index("rm x")


def test_each_thing_appears_once_in_the_record_and_in_the_live_view() -> None:
    run, dialog = guarded_run()
    record = run_record(run)
    # The dialog's title once (its question), then what came of it.
    assert record.plain.count("Allow rm?") == record.plain.count(dialog.result) == 1
    assert record.html.count("Allow rm?") == record.html.count("→ No (clicked)") == 1
    assert record.plain.count("I will clean up.") == 1
    view = RunOutput(run, on_stop=lambda: None)
    page = page_html(view.widget)
    assert page.count("Allow rm?") == page.count("→ No (clicked)") == 1


def _tree(widget: Any) -> list[Any]:
    out = [widget]
    for child in getattr(widget, "children", ()):
        out += _tree(child)
    return out


def test_a_custom_entry_is_a_small_card_with_its_type_and_folded_long_data() -> None:
    short = describe_entry("status-card", {"message": "hi"})
    assert [type(p).__name__ for p in short.children] == ["Text", "Text"]
    long = describe_entry("log", {"lines": [f"line {i}" for i in range(50)]})
    assert type(long.children[1]).__name__ == "Fold"
    run = PromptRun("r2", "/status-card hi")
    apply(
        run,
        "entry_appended",
        entry={"type": "custom", "customType": "status-card", "data": {"message": "<b>hi</b>"}},
    )
    apply(run, "entry_appended", entry={"type": "usage", "kind": "cache_warm"})  # not ours
    record = run_record(run)
    assert "entry status-card" in record.plain and "<b>hi</b>" in record.plain
    assert "<b>" not in record.html and "&lt;b&gt;hi&lt;/b&gt;" in record.html
    assert record.plain.count("entry ") == 1


def test_a_stop_is_said_one_way_however_the_run_was_stopped() -> None:
    """The Stop button and ``session.abort()`` stop a run the same way: the answer they cut
    and a dialog they cancelled both say "the run was stopped", never the agent's own words
    ("Request was aborted", which differ by line)."""
    for by in ("stop", "abort"):
        run = PromptRun("r1", "go slow")
        apply(run, "agent_start")
        apply(run, "message_start", message={"role": "assistant", "content": []})
        cut = {
            "role": "assistant",
            "content": [{"type": "text", "text": "slow slow"}],
            "stopReason": "aborted",
            "errorMessage": "Request was aborted",
        }
        apply(run, "message_end", message=cut)
        dialog, _sent = confirm_dialog("d1", "Go on?")
        run.transcript.add_dialog(dialog)
        dialog.cancel(by=by)
        apply(run, "agent_end")
        plain = run_record(run).plain
        assert "The answer ends here: the run was stopped." in plain, plain
        assert "→ cancelled (the run was stopped)" in plain, plain
        assert "aborted" not in plain and "error" not in plain, plain
