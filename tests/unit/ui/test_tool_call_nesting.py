"""Tool calls in a transcript, as the current agent line reports them: durations, and calls a
tool makes itself (``parentToolCallId``) nested inside its card, escaped like everything else."""

from __future__ import annotations

from typing import Any

from atomic_jupyter.session.runs import PromptRun
from atomic_jupyter.session.transcript import ToolBlock
from atomic_jupyter.ui.run_output import RunOutput
from tests.harness.output_page import Element, page_tree, press
from tests.harness.run_events import apply, confirm_dialog


def cards(view: RunOutput) -> list[Element]:
    """The tool cards of a run's page, in order (not those nested in a card)."""
    return [e for e in page_tree(view.widget).elements if "atomic-tool" in e.classes]


def sent_by(view: RunOutput) -> list[dict[str, Any]]:
    """Records the messages ``view``'s widget sends from now on."""
    sent: list[dict[str, Any]] = []
    send = view.widget.send

    def record(message: dict[str, Any], buffers: Any = None) -> None:
        sent.append(message)
        send(message, buffers)

    view.widget.send = record  # type: ignore[method-assign]
    return sent


def nested_run() -> PromptRun:
    run = PromptRun("r1", "run a script")
    apply(run, "tool_execution_start", toolCallId="c1", toolName="codemode", args={"code": "x"})
    apply(
        run,
        "tool_execution_start",
        toolCallId="c1/1",
        toolName="read",
        args={"path": "<b>a.txt</b>"},
        parentToolCallId="c1",
    )
    apply(
        run,
        "tool_execution_end",
        toolCallId="c1/1",
        toolName="read",
        result={"content": [{"type": "text", "text": "<script>x</script>"}]},
        isError=False,
        durationMs=12,
        parentToolCallId="c1",
    )
    return run


def test_a_nested_call_belongs_to_its_parent_not_to_the_transcript() -> None:
    run = nested_run()
    (parent,) = run.transcript.snapshot()
    assert isinstance(parent, ToolBlock) and parent.name == "codemode"
    (child,) = parent.children
    assert (child.name, child.parent, child.duration_ms, child.done) == ("read", parent, 12.0, True)


def test_a_child_changing_marks_its_parent_changed() -> None:
    run = nested_run()
    (parent,) = run.transcript.snapshot()
    before = parent.rev
    apply(
        run,
        "tool_execution_end",
        toolCallId="c1",
        toolName="codemode",
        result={"content": [{"type": "text", "text": "ok"}]},
        durationMs=1500,
    )
    assert parent.rev > before and parent.duration_ms == 1500.0


def test_the_card_shows_durations_and_the_nested_call_inside_it_as_text() -> None:
    run = nested_run()
    apply(run, "tool_execution_end", toolCallId="c1", toolName="codemode", durationMs=1500)
    view = RunOutput(run, on_stop=lambda: None)
    (card,) = cards(view)
    header, nested = card.child("atomic-tool-header"), card.child("atomic-tool-nested")
    assert header.text == "tool codemode · x · done · 1.5 s"
    (inner,) = nested.elements
    assert "atomic-tool" in inner.classes
    inner_header = inner.child("atomic-tool-header")
    inner_output = inner.child("atomic-tool-output")
    assert inner_header.text == (
        "tool read (called by codemode) · <b>a.txt</b>  lines 1–1 · done · 12 ms"
    )
    assert "<script>" in inner_output.text  # shown as text ...
    assert "<script>" not in inner_output.inner and "&lt;script&gt;" in inner_output.inner
    assert "<b>" not in inner.inner and "&lt;b&gt;a.txt&lt;/b&gt;" in inner.inner  # ... escaped
    # A later change to the child reaches its card through the parent: that card alone is
    # sent again.
    sent = sent_by(view)
    apply(
        run,
        "tool_execution_start",
        toolCallId="c1/2",
        toolName="ls",
        args={},
        parentToolCallId="c1",
    )
    view.render()
    (card,) = cards(view)
    headers = [
        e.child("atomic-tool-header").text for e in card.child("atomic-tool-nested").elements
    ]
    assert headers == [
        "tool read (called by codemode) · <b>a.txt</b>  lines 1–1 · done · 12 ms",
        "tool ls (called by codemode) · . · running…",
    ]
    assert [set(m.get("blocks", {})) for m in sent] == [{"b0"}]


def test_a_call_without_a_known_parent_is_a_card_of_its_own() -> None:
    run = PromptRun("r2", "x")
    apply(run, "tool_execution_start", toolCallId="z", toolName="bash", parentToolCallId="gone")
    (block,) = run.transcript.snapshot()
    assert isinstance(block, ToolBlock) and block.parent is None


def test_a_run_that_ends_while_a_render_reads_it_is_not_shown_done_over_a_stale_answer() -> None:
    """The reader thread may finish the run while the loop renders: "done" must only ever be
    shown by a render whose blocks were all read after the end."""
    from atomic_jupyter.session.run_tracker import RunTracker

    tracker = RunTracker(lambda callback: callback(None))
    run = PromptRun("r3", "answer")
    tracker.sent(run)
    apply(run, "message_start", message={"role": "assistant", "content": []})
    apply(
        run,
        "message_update",
        assistantMessageEvent={"type": "text_delta", "contentIndex": 0, "delta": "par"},
    )
    view = RunOutput(run, on_stop=lambda: None)
    final = {"role": "assistant", "content": [{"type": "text", "text": "partial, then whole"}]}
    real_snapshot = run.transcript.snapshot

    def snapshot_then_the_agent_finishes() -> list[Any]:
        blocks = real_snapshot()  # the render has read the blocks ...
        run.transcript.snapshot = real_snapshot  # type: ignore[method-assign]
        apply(run, "message_end", message=final)  # ... and now the run ends
        tracker.finish([run])
        return blocks

    def state() -> str:
        (shown,) = page_tree(view.widget).find_all("atomic-run-state")
        return shown.text

    run.transcript.snapshot = snapshot_then_the_agent_finishes  # type: ignore[method-assign]
    view.render()
    assert run.finished
    assert state() == "sent"  # not "done": this render read the stale blocks
    assert page_tree(view.widget).find_all("atomic-stop")  # and Stop is still there
    view.render()  # the final render the end schedules
    assert state() == "done"
    assert not page_tree(view.widget).find_all("atomic-stop")
    (answer,) = page_tree(view.widget).find_all("atomic-assistant-text")  # its chunks and tail
    assert answer.text == "partial, then whole"


# --------------------------------------------------------------------------- dialogs in cards


def test_a_dialog_raised_while_a_tool_runs_sits_in_its_card() -> None:
    """A ``tool_call`` hook asks before the tool runs (the agent has announced the call):
    the dialog goes into that call's card, under the command it is about to run."""
    run = PromptRun("r1", "clean up")
    apply(run, "tool_execution_start", toolCallId="c1", toolName="bash", args={"command": "ls"})
    apply(run, "tool_execution_end", toolCallId="c1", toolName="bash", result={"content": []})
    apply(
        run, "tool_execution_start", toolCallId="c2", toolName="bash", args={"command": "rm -rf x"}
    )
    dialog, sent = confirm_dialog("d1", "Run a dangerous command?")
    run.transcript.add_dialog(dialog)
    blocks = run.transcript.snapshot()
    tools = [b for b in blocks if isinstance(b, ToolBlock)]
    assert [len(t.dialogs) for t in tools] == [0, 1] and len(blocks) == 2
    assert run.transcript.pending_dialogs() == [dialog]

    view = RunOutput(run, on_stop=lambda: None)
    first, second = cards(view)
    assert not first.find_all("atomic-tool-dialogs")
    dialogs = second.child("atomic-tool-dialogs")
    assert dialogs.attrs.get("data-dialog") == "d1"  # the place of the dialog's controls
    (controls,) = dialogs.find_all("atomic-dialog-controls")
    assert controls.child("atomic-dialog-title").text == "Run a dangerous command?"
    # In the card: what the tool is about to do, then the dialog deciding it, then output.
    order = [e.classes[0] for e in second.elements]
    assert order.index("atomic-tool-command") < order.index("atomic-tool-dialogs"), order
    assert order.index("atomic-tool-dialogs") < order.index("atomic-tool-output"), order
    # Answered from the page: the card shows the outcome where the controls were (the card
    # has no new revision; its dialog changed).
    press(view.widget, {"type": "dialog", "id": "d1", "action": "respond", "value": False})
    assert len(sent) == 1 and dialog.answer is False
    _first, second = cards(view)
    (outcome,) = second.child("atomic-tool-dialogs").find_all("atomic-dialog-outcome")
    assert outcome.text == "→ No (clicked)"
    assert not second.find_all("atomic-dialog-controls") and view.content.dialogs == {}

    apply(run, "tool_execution_end", toolCallId="c2", toolName="bash", result={"content": []})
    later, _ = confirm_dialog("d2", "Anything else?")
    run.transcript.add_dialog(later)  # no tool runs now: a block of its own
    assert len(run.transcript.snapshot()) == 3


def test_a_dialog_while_calls_run_side_by_side_is_not_put_in_either_card() -> None:
    run = PromptRun("r1", "two at once")
    for cid in ("c1", "c2"):
        apply(run, "tool_execution_start", toolCallId=cid, toolName="bash", args={"command": cid})
    dialog, _sent = confirm_dialog("d1", "Which one?")
    run.transcript.add_dialog(dialog)
    tools = [b for b in run.transcript.snapshot() if isinstance(b, ToolBlock)]
    assert [t.dialogs for t in tools] == [[], []]
    assert run.transcript.pending_dialogs() == [dialog]


def test_the_sessions_own_words_and_diff_outlast_a_late_update_of_the_extension() -> None:
    """The kernel-tools extension says "waiting for the kernel…" as a call starts; that update
    can reach the reader thread after the kernel already showed the call's diff and said it
    waits for a decision. The card keeps the kernel's diff and words (it once flipped back
    to the bare arguments and "waiting for the kernel…" for as long as the decision took)."""
    run = PromptRun("r1", "change cell 2")
    apply(run, "agent_start")
    apply(
        run,
        "tool_execution_start",
        toolCallId="c1",
        toolName="notebook_edit",
        args={"operations": [{"op": "replace", "source": "x = 2"}]},
    )
    diff = {"notebook": "n.ipynb", "changes": [{"op": "replace", "old": "x = 1", "new": "x = 2"}]}
    assert run.transcript.show_details("c1", diff)
    assert run.transcript.show_progress("c1", "waiting for a decision")
    late = {"content": [{"type": "text", "text": "waiting for the kernel…"}], "details": {}}
    apply(
        run, "tool_execution_update", toolCallId="c1", toolName="notebook_edit", partialResult=late
    )
    (block,) = [b for b in run.transcript.snapshot() if getattr(b, "call_id", "") == "c1"]
    assert block.details == diff and block.output == "waiting for a decision"
    # Details an update brings (a tool's own partial result) still replace the preview.
    fresh = {"content": [{"type": "text", "text": "half"}], "details": {"step": 2}}
    apply(
        run, "tool_execution_update", toolCallId="c1", toolName="notebook_edit", partialResult=fresh
    )
    (block,) = [b for b in run.transcript.snapshot() if getattr(b, "call_id", "") == "c1"]
    assert block.details == {"step": 2}
