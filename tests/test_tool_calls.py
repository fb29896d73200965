"""Tool calls in a transcript, as the current agent line reports them: durations, and calls a
tool makes itself (``parentToolCallId``) nested inside its card, escaped like everything else."""

from __future__ import annotations

from typing import Any

from atomic_jupyter.protocol.messages import AgentEvent
from atomic_jupyter.session.runs import PromptRun
from atomic_jupyter.session.transcript import ToolBlock
from atomic_jupyter.ui.transcript_view import TranscriptView


def apply(run: PromptRun, kind: str, **fields: Any) -> None:
    run.transcript.apply(AgentEvent(kind, fields))


def text_of(widget: Any) -> str:
    import html
    import re

    return html.unescape(re.sub(r"<[^>]+>", "", widget.value))


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


def child(box: Any, cls: str) -> Any:
    """The one direct child of ``box`` carrying class ``cls``."""
    (found,) = [c for c in box.children if cls in c._dom_classes]
    return found


def test_the_card_shows_durations_and_the_nested_call_inside_it_as_text() -> None:
    run = nested_run()
    apply(run, "tool_execution_end", toolCallId="c1", toolName="codemode", durationMs=1500)
    view = TranscriptView(run, on_stop=lambda: None, dialog_widget=lambda d: None)
    (card,) = view.blocks.children
    header, nested = child(card, "atomic-tool-header"), child(card, "atomic-tool-nested")
    assert text_of(header) == "tool codemode · x · done · 1.5 s"
    (inner,) = nested.children
    inner_header = child(inner, "atomic-tool-header")
    inner_args = [c.children[0] for c in inner.children if "atomic-tool-args" in c._dom_classes]
    inner_output = child(inner, "atomic-tool-output")
    assert text_of(inner_header) == (
        "tool read (called by codemode) · <b>a.txt</b>  lines 1–1 · done · 12 ms"
    )
    assert "<script>" not in inner_output.value and "&lt;script&gt;" in inner_output.value
    assert all("<b>" not in a.value for a in inner_args) and "<b>" not in inner_header.value
    # A later change to the child reaches its card through the parent.
    apply(
        run,
        "tool_execution_start",
        toolCallId="c1/2",
        toolName="ls",
        args={},
        parentToolCallId="c1",
    )
    view.render()
    assert [text_of(c.children[0]) for c in nested.children][1] == (
        "tool ls (called by codemode) · . · running…"
    )


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
    view = TranscriptView(run, on_stop=lambda: None, dialog_widget=lambda d: None)
    final = {"role": "assistant", "content": [{"type": "text", "text": "partial, then whole"}]}
    real_snapshot = run.transcript.snapshot

    def snapshot_then_the_agent_finishes() -> list[Any]:
        blocks = real_snapshot()  # the render has read the blocks ...
        run.transcript.snapshot = real_snapshot  # type: ignore[method-assign]
        apply(run, "message_end", message=final)  # ... and now the run ends
        tracker.finish([run])
        return blocks

    run.transcript.snapshot = snapshot_then_the_agent_finishes  # type: ignore[method-assign]
    view.render()
    assert run.finished
    assert text_of(view.state) == "sent"  # not "done": this render read the stale blocks
    view.render()  # the final render the end schedules
    assert text_of(view.state) == "done"
    answer = child(view.blocks.children[0], "atomic-assistant-text")  # its chunks and tail
    assert "partial, then whole" in " ".join(text_of(piece) for piece in answer.children)


# --------------------------------------------------------------------------- dialogs in cards


def _confirm(rid: str, title: str):
    from atomic_jupyter.protocol.messages import parse_message
    from atomic_jupyter.session.dialogs import Dialog

    raw = {"type": "extension_ui_request", "id": rid, "method": "confirm", "title": title}
    sent: list = []
    return Dialog(parse_message(raw), raw, sent.append), sent  # type: ignore[arg-type]


def test_a_dialog_raised_while_a_tool_runs_sits_in_its_card() -> None:
    """A ``tool_call`` hook asks before the tool runs (the agent has announced the call):
    the dialog goes into that call's card, under the command it is about to run."""
    import ipywidgets as w

    run = PromptRun("r1", "clean up")
    apply(run, "tool_execution_start", toolCallId="c1", toolName="bash", args={"command": "ls"})
    apply(run, "tool_execution_end", toolCallId="c1", toolName="bash", result={"content": []})
    apply(
        run, "tool_execution_start", toolCallId="c2", toolName="bash", args={"command": "rm -rf x"}
    )
    dialog, _sent = _confirm("d1", "Run a dangerous command?")
    run.transcript.add_dialog(dialog)
    blocks = run.transcript.snapshot()
    tools = [b for b in blocks if isinstance(b, ToolBlock)]
    assert [len(t.dialogs) for t in tools] == [0, 1] and len(blocks) == 2
    assert run.transcript.pending_dialogs() == [dialog]

    shown = w.HTML(value="the dialog")
    view = TranscriptView(run, on_stop=lambda: None, dialog_widget=lambda d: shown)
    cards = [c for c in view.blocks.children if "atomic-tool" in c._dom_classes]
    assert shown in child(cards[1], "atomic-tool-dialogs").children
    assert not [c for c in cards[0].children if "atomic-tool-dialogs" in c._dom_classes]
    # In the card: what the tool is about to do, then the dialog deciding it, then output.
    order = [c._dom_classes[0] for c in cards[1].children]
    assert order.index("atomic-tool-dialogs") < order.index("atomic-tool-output"), order

    apply(run, "tool_execution_end", toolCallId="c2", toolName="bash", result={"content": []})
    later, _ = _confirm("d2", "Anything else?")
    run.transcript.add_dialog(later)  # no tool runs now: a block of its own
    assert len(run.transcript.snapshot()) == 3


def test_a_dialog_while_calls_run_side_by_side_is_not_put_in_either_card() -> None:
    run = PromptRun("r1", "two at once")
    for cid in ("c1", "c2"):
        apply(run, "tool_execution_start", toolCallId=cid, toolName="bash", args={"command": cid})
    dialog, _sent = _confirm("d1", "Which one?")
    run.transcript.add_dialog(dialog)
    tools = [b for b in run.transcript.snapshot() if isinstance(b, ToolBlock)]
    assert [t.dialogs for t in tools] == [[], []]
    assert run.transcript.pending_dialogs() == [dialog]
