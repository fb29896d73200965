"""The transcript in a real kernel, driven like a browser, with the real agent and a scripted model.

These tests count what the frontend receives: the comm messages of the transcript's widgets.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.harness.kernel_client import BrowserLikeKernel, WidgetRef
from tests.harness.kernel_widgets import (
    WIDGET_VIEW,
    answer_html,
    answers,
    displayed,
    is_record_copy,
    last_run_report,
    record_copy,
)
from tests.harness.support import CURRENT_LINE, EXTENSIONS, LONG_ANSWER, LONG_MARKDOWN
from tests.harness.widget_text import has_class, text, visible_text

pytestmark = [pytest.mark.kernel, pytest.mark.agent]


@pytest.fixture(scope="module")
def kernel_agent_home(scripted_model) -> Path:
    """The module's ``kernel`` (tests/harness/plugin.py) talks to the scripted model."""
    _server, home, _args = scripted_model
    return home


@pytest.fixture(scope="module")
def kernel_setup(scripted_model) -> list[str]:
    """The default session runs the guard extension against the scripted model."""
    _server, _home, args = scripted_model
    return [f"%atomic_agent start -e {EXTENSIONS / 'guard.ts'} -- {' '.join(args)}"]


def run_cell(kernel: BrowserLikeKernel, prompt: str, flags: str = "") -> WidgetRef:
    """Run a prompt cell; return its transcript widget."""
    result = kernel.execute(f"%%atomic_agent {flags}\n{prompt}")
    (transcript_id,) = result.widget_ids
    ref = kernel.widget(transcript_id)
    assert "atomic-transcript" in ref.state["_dom_classes"]
    return ref


def run_state(kernel: BrowserLikeKernel, transcript: WidgetRef) -> WidgetRef:
    return kernel.find(
        "HTML",
        last_shown=True,
        within=transcript.comm_id,
        _dom_classes=has_class("atomic-run-state"),
    )


def wait_done(kernel: BrowserLikeKernel, transcript: WidgetRef, timeout: float = 30) -> None:
    state = run_state(kernel, transcript)
    try:
        kernel.wait_for(lambda: text(state) == "done", timeout=timeout, what="the run to finish")
    except AssertionError as exc:  # say what it reads instead, and what the run got
        said = last_run_report(kernel)
        open_ = state.comm_id in kernel.models
        raise AssertionError(f"state reads {text(state)!r} (open: {open_}); {said}") from exc


def updates_of(kernel: BrowserLikeKernel, comm_id: str, key: str = "value") -> list[dict]:
    return [
        m
        for m in kernel.iter_messages("comm_msg")
        if m["content"]["comm_id"] == comm_id and key in m["content"]["data"].get("state", {})
    ]


def test_long_answer_streams_with_bounded_updates_and_exact_final_text(
    kernel: BrowserLikeKernel,
) -> None:
    transcript = run_cell(kernel, "Give me the long answer please")
    # The kernel runs other cells while the answer streams.
    assert kernel.execute("6 * 7").result == "42"
    wait_done(kernel, transcript)
    (answer,) = answers(kernel, transcript.comm_id)
    shown = visible_text(answer_html(kernel, answer))
    # The final update carries the whole answer: the last and the first lines are there.
    assert "Line 599: the quick brown fox jumps over the lazy dog." in shown
    assert "Line 0: the quick brown fox" in shown
    deltas = len(LONG_ANSWER) // 8
    updates = [
        m
        for w in kernel.descendants(answer.comm_id, last_shown=True)
        for m in updates_of(kernel, w.comm_id)
    ]
    assert len(updates) < deltas / 10, f"{len(updates)} frontend updates for {deltas} deltas"
    # And at most about 20 a second (the kernel's own message times), plus the final one.
    times = sorted(m["header"]["date"] for m in updates)  # jupyter_client parses them
    span = (times[-1] - times[0]).total_seconds()
    assert len(updates) <= 20 * span + 3, f"{len(updates)} updates in {span:.2f} s"
    footer = kernel.find(
        "HTML", last_shown=True, within=transcript.comm_id, _dom_classes=has_class("atomic-footer")
    )
    assert "1 turn" in text(footer) and "1,200 in / 9,000 out tokens" in text(footer)
    # The Python side has the exact text.
    result = kernel.execute(
        "import atomic_jupyter as aj\nprint(aj.session().runs[-1].text == LONG_ANSWER_LEN)".replace(
            "LONG_ANSWER_LEN", repr(LONG_ANSWER)
        )
    )
    assert result.stdout.strip() == "True"


def test_a_long_markdown_answer_sends_each_finished_chunk_once_and_only_the_tail_again(
    kernel: BrowserLikeKernel,
) -> None:
    """What the frontend receives per update does not grow with the answer: finished blocks go
    once, in chunk widgets never updated after; only the tail is sent again, and it stays small."""
    from atomic_jupyter.ui.markdown import render_markdown

    transcript = run_cell(kernel, "stream a long markdown answer")
    wait_done(kernel, transcript)
    (answer,) = answers(kernel, transcript.comm_id)
    assert visible_text(answer_html(kernel, answer)) == visible_text(render_markdown(LONG_MARKDOWN))
    pieces = kernel.descendants(answer.comm_id, last_shown=True)
    chunks = [p for p in pieces if "atomic-assistant-chunk" in p.state["_dom_classes"]]
    (tail,) = [p for p in pieces if "atomic-assistant-tail" in p.state["_dom_classes"]]
    assert len(chunks) >= 3, f"{len(chunks)} chunks for an answer of {len(LONG_MARKDOWN):,} chars"
    for chunk in chunks:
        assert updates_of(kernel, chunk.comm_id) == [], "a finished chunk was sent again"
    sizes = [len(m["content"]["data"]["state"]["value"]) for m in updates_of(kernel, tail.comm_id)]
    assert len(sizes) > 5, sizes
    # The whole answer's HTML is several times this; a tail update never carries much of it.
    assert max(sizes) < 24_000 < len(render_markdown(LONG_MARKDOWN)) / 4, max(sizes)


def test_tool_call_shows_a_card_with_arguments_and_result(kernel: BrowserLikeKernel) -> None:
    transcript = run_cell(kernel, "please use a tool")
    wait_done(kernel, transcript)
    card = kernel.find(
        "VBox", last_shown=True, within=transcript.comm_id, _dom_classes=has_class("atomic-tool")
    )
    assert "atomic-tool-done" in card.state["_dom_classes"]
    header = kernel.find(
        "HTML", last_shown=True, within=card.comm_id, _dom_classes=has_class("atomic-tool-header")
    )
    if CURRENT_LINE:  # the current line says how long the call took
        assert re.fullmatch(r"tool bash · \$ echo hello-from-tool · done · \d+ ms", text(header)), (
            text(header)
        )
    else:
        assert text(header) == "tool bash · $ echo hello-from-tool · done"
    command = kernel.find(
        "HTML", last_shown=True, within=card.comm_id, _dom_classes=has_class("atomic-tool-command")
    )
    output = kernel.find(
        "HTML", last_shown=True, within=card.comm_id, _dom_classes=has_class("atomic-tool-output")
    )
    assert text(command) == "$ echo hello-from-tool"  # what it was about to run, then
    assert text(output) == "hello-from-tool" + "exit code 0"  # its output and result
    texts = [visible_text(answer_html(kernel, a)) for a in answers(kernel, transcript.comm_id)]
    assert "Let me check." in texts[0] and "The tool said hello." in texts[-1]


def test_coloured_tool_output_is_shown_in_colour_not_as_escape_codes(
    kernel: BrowserLikeKernel,
) -> None:
    transcript = run_cell(kernel, "show me coloured output")
    wait_done(kernel, transcript)
    card = kernel.find(
        "VBox", last_shown=True, within=transcript.comm_id, _dom_classes=has_class("atomic-tool")
    )
    output = kernel.find(
        "HTML", last_shown=True, within=card.comm_id, _dom_classes=has_class("atomic-tool-output")
    )
    value = output.state["value"]
    assert text(output).endswith("FAILED 1 testexit code 0")  # the command, the output, the end
    assert "\x1b" not in value  # the escape codes of the output became styles
    assert re.search(
        r'<span class="[^"]*ansi-red-fg[^"]*" style="[^"]*font-weight: bold[^"]*">FAILED</span>',
        value,
    )


def test_thinking_is_folded_away(kernel: BrowserLikeKernel) -> None:
    transcript = run_cell(kernel, "think about it")
    wait_done(kernel, transcript)
    fold = kernel.find(
        "Accordion",
        last_shown=True,
        within=transcript.comm_id,
        _dom_classes=has_class("atomic-thinking"),
    )
    assert fold.state["selected_index"] is None  # closed
    (inner,) = kernel.widgets("HTML", last_shown=True, within=fold.comm_id)
    assert "Let me think step by step." in (text(inner))


def test_markdown_payloads_render_without_script(kernel: BrowserLikeKernel) -> None:
    transcript = run_cell(kernel, "show me the payload")
    wait_done(kernel, transcript)
    (answer,) = answers(kernel, transcript.comm_id)
    value = answer_html(kernel, answer)
    assert "<h1" in value and "<li>" in value and "<strong>" in value  # Markdown still renders
    lowered = value.lower()
    assert "<script" not in lowered and "<img" not in lowered and "<iframe" not in lowered
    assert not re.search(r"<[^>]*\son\w+\s*=", lowered), "an event-handler attribute survived"
    assert not any(
        h.strip().startswith("javascript:") for h in re.findall(r'href="([^"]*)"', lowered)
    )
    shown = visible_text(value)
    assert "<script>window.__pwned='script'</script>" in shown  # the payload is shown as text
    assert "print('highlighted')" in shown


def test_wait_stops_early_for_a_dialog_then_finishes_after_the_click(
    kernel: BrowserLikeKernel,
) -> None:
    result = kernel.execute("%%atomic_agent --wait --timeout 60\nrun the dangerous command")
    assert result.stdout == "" and result.stderr == ""
    # Why the wait stopped, as an output of its own (kept current: see below).
    (notice,) = [
        o
        for o in result.outputs
        if o["output_type"] == "display_data"
        and WIDGET_VIEW not in o["data"]
        and not is_record_copy(o)
    ]
    said = notice["data"]["text/plain"]
    assert "dialog needs your answer" in said and "Run a dangerous command?" in said
    # The run's record copy is kept current: a notebook saved now holds the waiting dialog.
    copy = record_copy(result.outputs)
    waiting = kernel.wait_for(
        lambda: (lambda d: d if "waiting for an answer" in d.get("text/plain", "") else None)(
            displayed(kernel, copy)
        ),
        what="the record copy to show the waiting dialog",
    )
    assert "> run the dangerous command" in waiting["text/plain"]
    assert "Run a dangerous command?" in visible_text(waiting["text/html"])
    (transcript_id,) = result.widget_ids
    dialog = kernel.wait_for(
        lambda: next(
            iter(
                kernel.widgets(
                    "VBox",
                    last_shown=True,
                    within=transcript_id,
                    _dom_classes=has_class("atomic-dialog-confirm"),
                )
            ),
            None,
        ),
        what="the guard's dialog in the transcript",
    )
    yes = kernel.find("Button", last_shown=True, within=dialog.comm_id, description="Yes")
    kernel.click(yes.comm_id)
    waited = kernel.execute("%atomic_agent wait --timeout 60")
    assert waited.stdout == "" and waited.stderr == ""
    transcript = kernel.widget(transcript_id)
    assert text(run_state(kernel, transcript)) == "done"
    # The notice no longer says the dialog waits, nor repeats its outcome: the run's record
    # below holds it, once.
    now = displayed(kernel, notice)
    assert "needs your answer" not in now.get("text/plain", "")
    assert "Yes (clicked)" not in now.get("text/plain", "") + now.get("text/html", "")
    # The run is over: its output is now its record alone, with the dialog's outcome in it.
    (area,) = [o for o in result.outputs if WIDGET_VIEW in o["data"]]
    final = kernel.wait_for(
        lambda: (lambda d: d if WIDGET_VIEW not in d else None)(displayed(kernel, area)),
        what="the run's output to become its record",
    )
    record = visible_text(final["text/html"])
    assert displayed(kernel, copy) == {}  # the copy is emptied: one record per output
    assert "> run the dangerous command" in record
    assert "dangerous-but-fine" in record and "Run a dangerous command? → Yes (clicked)" in record
    assert record.count("Yes (clicked)") == 1, record  # in the card, and nowhere else
    # The live card, as the page last showed it before its record replaced it (its widgets
    # are closed now).
    assert kernel.widget(transcript_id).comm_id not in kernel.models
    card = kernel.find(
        "VBox",
        last_shown=True,
        within=transcript_id,
        _dom_classes=has_class("atomic-tool"),
    )
    assert "dangerous-but-fine" in visible_text(
        kernel.find(
            "HTML",
            last_shown=True,
            within=card.comm_id,
            _dom_classes=has_class("atomic-tool-output"),
        ).state["value"]
    )
    # The dialog sits in the card of the command it asks about, above its output.
    in_card = kernel.find(
        "VBox",
        last_shown=True,
        within=card.comm_id,
        _dom_classes=has_class("atomic-tool-dialogs"),
    )
    assert dialog.comm_id in [c.removeprefix("IPY_MODEL_") for c in in_card.state["children"]]


def test_policy_from_the_magic_answers_and_is_shown_like_a_click(kernel: BrowserLikeKernel) -> None:
    listed = kernel.execute('%atomic_agent policy --method confirm --title "dangerous" no')
    assert "confirm titled /dangerous/ → No" in listed.stdout
    try:
        result = kernel.execute(
            "%%atomic_agent --wait --timeout 60\nrun the dangerous command again"
        )
        assert result.stderr == ""
        (transcript_id,) = result.widget_ids
        outcome = kernel.find(
            "HTML",
            last_shown=True,
            within=transcript_id,
            _dom_classes=has_class("atomic-dialog-outcome"),
        )
        assert (
            text(outcome)
            == "Run a dangerous command? → No (answer policy: confirm titled /dangerous/ → No)"
        )
    finally:
        kernel.execute("%atomic_agent policy --clear")


def test_stop_button_aborts_the_run(kernel: BrowserLikeKernel) -> None:
    transcript = run_cell(kernel, "go slow please")
    streamed = kernel.wait_for(
        lambda: next(
            (
                a
                for a in answers(kernel, transcript.comm_id)
                if "slow" in visible_text(answer_html(kernel, a))
            ),
            None,
        ),
        what="the first streamed words",
    )
    kernel.click(
        kernel.find(
            "Button", last_shown=True, within=transcript.comm_id, description="Stop"
        ).comm_id
    )
    wait_done(kernel, transcript, timeout=15)
    error = kernel.find(
        "HTML",
        last_shown=True,
        within=transcript.comm_id,
        _dom_classes=has_class("atomic-assistant-error"),
    )
    assert "aborted" in text(error).lower()
    assert len(visible_text(answer_html(kernel, streamed))) < len("slow " * 400)


def test_status_is_a_readable_table_with_the_model(kernel: BrowserLikeKernel) -> None:
    out = kernel.execute("%atomic_agent status").stdout
    rows = dict(
        re.split(r"\s{2,}", line.strip(), maxsplit=1) for line in out.splitlines() if line.strip()
    )
    assert (
        rows["model"] == "scripted/scripted"
        and rows["state"] == "idle"
        and rows["streaming"] == "no"
    )


def test_steer_from_the_magic_reaches_the_running_agent(kernel: BrowserLikeKernel) -> None:
    transcript = run_cell(kernel, "go slow again")
    kernel.wait_for(
        lambda: any(
            "slow" in visible_text(answer_html(kernel, a))
            for a in answers(kernel, transcript.comm_id)
        ),
        what="the first streamed words",
    )
    said = kernel.execute("%atomic_agent steer and now, change course").stdout.strip()
    assert (
        said == "Steering message queued; the agent reads it after the current turn's tool calls."
    )
    wait_done(kernel, transcript, timeout=30)
    users = kernel.widgets(
        "HTML",
        last_shown=True,
        within=transcript.comm_id,
        _dom_classes=has_class("atomic-user-message"),
    )
    assert [text(u) for u in users] == ["you: and now, change course"]


def test_long_answer_after_a_tool_call_shows_the_right_transcript_with_bounded_updates(
    kernel: BrowserLikeKernel,
) -> None:
    transcript = run_cell(kernel, "a long tool answer please")
    wait_done(kernel, transcript)
    blocks = kernel.find(
        "VBox",
        last_shown=True,
        within=transcript.comm_id,
        _dom_classes=has_class("atomic-transcript-blocks"),
    )
    order = [kernel.widget(c.removeprefix("IPY_MODEL_")) for c in blocks.state["children"]]
    kinds = [
        next(k for k in ("atomic-assistant", "atomic-tool") if k in w.state["_dom_classes"])
        for w in order
    ]
    assert kinds == ["atomic-assistant", "atomic-tool", "atomic-assistant"]
    card = order[1]
    command = kernel.find(
        "HTML", last_shown=True, within=card.comm_id, _dom_classes=has_class("atomic-tool-command")
    )
    output = kernel.find(
        "HTML", last_shown=True, within=card.comm_id, _dom_classes=has_class("atomic-tool-output")
    )
    assert text(command) == "$ seq 1 3"
    assert text(output) == "1\n2\n3" + "exit code 0"
    (final,) = answers(kernel, order[2].comm_id)
    assert "Line 599: the quick brown fox" in visible_text(answer_html(kernel, final))
    # Every widget of the transcript together got a bounded number of updates.
    ids = {w.comm_id for w in kernel.descendants(transcript.comm_id, last_shown=True)} | {
        transcript.comm_id
    }
    updates = [m for m in kernel.iter_messages("comm_msg") if m["content"]["comm_id"] in ids]
    assert len(updates) < len(LONG_ANSWER) // 8 // 10
    footer = kernel.find(
        "HTML", last_shown=True, within=transcript.comm_id, _dom_classes=has_class("atomic-footer")
    )
    assert text(footer).startswith("2 turns · 400 in / 9,020 out tokens")


def test_wait_keeps_the_transcript_updating_while_the_cell_blocks(
    kernel: BrowserLikeKernel,
) -> None:
    result = kernel.execute("%%atomic_agent --wait --timeout 60\ngo slow while I wait")
    assert result.stderr == ""
    (transcript_id,) = result.widget_ids
    (answer,) = answers(kernel, transcript_id)
    assert visible_text(answer_html(kernel, answer)).strip() == ("slow " * 400).strip()
    pieces = {w.comm_id for w in kernel.descendants(answer.comm_id, last_shown=True)}
    during = [
        m
        for m in kernel.iter_messages("comm_msg")
        if m["content"]["comm_id"] in pieces and m["parent_header"].get("msg_id") == result.msg_id
    ]
    # The answer streams for about 4 s: the frontend saw it grow while the cell was blocked.
    assert len(during) > 5
