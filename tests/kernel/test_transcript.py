"""The transcript in a real kernel, driven like a browser, with the real agent and a scripted model.

These tests read a run's output as the page draws it (its one output widget, fed by custom
messages: ``patch`` and ``snapshot``) and count what the frontend receives: those messages.
"""

from __future__ import annotations

import re

import pytest

from atomic_jupyter.notebook.presentation import REMOVED_VIEW
from tests.harness.kernel_client import BrowserLikeKernel
from tests.harness.kernel_runs import wait_done
from tests.harness.kernel_widgets import (
    WIDGET_VIEW,
    answer_html,
    answers,
    dialog_in,
    displayed,
    element_text,
    elements,
    is_record_copy,
    live_view,
    page_of,
    record_copy,
    record_of,
    run_state,
)
from tests.harness.plugin import scripted_start
from tests.harness.support import CURRENT_LINE, EXTENSIONS, LONG_ANSWER, LONG_MARKDOWN
from tests.harness.widget_text import visible_text

pytestmark = [pytest.mark.kernel, pytest.mark.agent, pytest.mark.scripted_kernel]


@pytest.fixture(scope="module")
def kernel_setup(scripted_model) -> list[str]:
    """The default session runs the guard extension against the scripted model."""
    return [scripted_start(scripted_model, f"-e {EXTENSIONS / 'guard.ts'}")]


def run_cell(kernel: BrowserLikeKernel, prompt: str, flags: str = "") -> str:
    """Run a prompt cell; return the comm id of its output widget."""
    result = kernel.execute(f"%%atomic_agent {flags}\n{prompt}")
    (output,) = result.widget_ids
    assert output in kernel.tracker.pages, "the cell's output is not one of our outputs"
    return output


def patches(kernel: BrowserLikeKernel, output: str) -> list[dict]:
    """The ``patch`` messages the output's widget sent (whole IOPub messages: their times)."""
    return [
        m
        for m in kernel.iter_messages("comm_msg")
        if m["content"]["comm_id"] == output
        and m["content"]["data"].get("method") == "custom"
        and m["content"]["data"]["content"].get("type") == "patch"
    ]


def sent(message: dict) -> dict:
    """What a ``patch`` message carries."""
    return message["content"]["data"]["content"]


def test_long_answer_streams_with_bounded_updates_and_exact_final_text(
    kernel: BrowserLikeKernel,
) -> None:
    output = run_cell(kernel, "Give me the long answer please")
    # The kernel runs other cells while the answer streams.
    assert kernel.execute("6 * 7").result == "42"
    wait_done(kernel, output)
    (answer,) = answers(kernel, output)
    shown = visible_text(answer_html(kernel, answer))
    # The final update carries the whole answer: the last and the first lines are there.
    assert "Line 599: the quick brown fox jumps over the lazy dog." in shown
    assert "Line 0: the quick brown fox" in shown
    deltas = len(LONG_ANSWER) // 8
    updates = [m for m in patches(kernel, output) if answer.key in sent(m).get("tails", {})]
    assert len(updates) > 1, "the answer was not streamed"
    assert len(updates) < deltas / 10, f"{len(updates)} frontend updates for {deltas} deltas"
    # And at most about 20 a second (the kernel's own message times), plus the final one.
    times = sorted(m["header"]["date"] for m in patches(kernel, output))
    span = (times[-1] - times[0]).total_seconds()
    assert len(times) <= 20 * span + 3, f"{len(times)} updates in {span:.2f} s"
    footer = element_text(page_of(kernel, output), "atomic-footer")
    assert "1 model turn" in footer and "1,200 in / 9,000 out tokens" in footer
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
    once, as chunks never sent again; only the tail is sent again, and it stays small."""
    from atomic_jupyter.ui.markdown import markdown_blocks, record_markup

    whole = record_markup(markdown_blocks(LONG_MARKDOWN))  # the answer as its record has it
    output = run_cell(kernel, "stream a long markdown answer")
    wait_done(kernel, output)
    (answer,) = answers(kernel, output)
    assert visible_text(answer_html(kernel, answer)) == visible_text(whole)
    chunks = kernel.tracker.pages[output].content.chunks[answer.key]
    assert len(chunks) >= 3, f"{len(chunks)} chunks for an answer of {len(LONG_MARKDOWN):,} chars"
    updates = [sent(m) for m in patches(kernel, output)]
    # Each chunk was sent once, in order, and none was taken back.
    assert not any(answer.key in u.get("reset", []) for u in updates)
    assert [c for u in updates for c in u.get("chunks", {}).get(answer.key, [])] == chunks
    sizes = [len(u["tails"][answer.key]) for u in updates if answer.key in u.get("tails", {})]
    assert len(sizes) > 5, sizes
    # The whole answer's HTML is several times this; a tail update never carries much of it.
    assert max(sizes) < 24_000 < len(whole) / 4, max(sizes)


def test_tool_call_shows_a_card_with_arguments_and_result(kernel: BrowserLikeKernel) -> None:
    output = run_cell(kernel, "please use a tool")
    wait_done(kernel, output)
    (card,) = elements(page_of(kernel, output), "atomic-tool")
    assert "atomic-tool-done" in card[: card.index(">")]
    header = element_text(card, "atomic-tool-header")
    if CURRENT_LINE:  # the current line says how long the call took
        assert re.fullmatch(r"tool bash · \$ echo hello-from-tool · done · \d+ ms", header), header
    else:
        assert header == "tool bash · $ echo hello-from-tool · done"
    # What it was about to run, then its output and result.
    assert element_text(card, "atomic-tool-command") == "$ echo hello-from-tool"
    assert element_text(card, "atomic-tool-output") == "hello-from-tool" + "exit code 0"
    texts = [visible_text(answer_html(kernel, a)) for a in answers(kernel, output)]
    assert "Let me check." in texts[0] and "The tool said hello." in texts[-1]


def test_coloured_tool_output_is_shown_in_colour_not_as_escape_codes(
    kernel: BrowserLikeKernel,
) -> None:
    output = run_cell(kernel, "show me coloured output")
    wait_done(kernel, output)
    (card,) = elements(page_of(kernel, output), "atomic-tool")
    (value,) = elements(card, "atomic-tool-output")
    # The command, the output, the end.
    assert visible_text(value).endswith("FAILED 1 testexit code 0")
    assert "\x1b" not in value  # the escape codes of the output became styles
    assert re.search(
        r'<span class="[^"]*ansi-red-fg[^"]*" style="[^"]*font-weight: bold[^"]*">FAILED</span>',
        value,
    )


def test_thinking_is_folded_away(kernel: BrowserLikeKernel) -> None:
    output = run_cell(kernel, "think about it")
    wait_done(kernel, output)
    (fold,) = elements(page_of(kernel, output), "atomic-thinking")
    opening = fold[: fold.index(">") + 1]
    assert opening.startswith("<details") and not re.search(r"\sopen\b", opening)  # closed
    assert "Let me think step by step." in element_text(fold, "atomic-thinking-text")


def test_a_finished_run_reads_as_the_record_that_replaced_it(kernel: BrowserLikeKernel) -> None:
    """Once a run is over its output is replaced by its record and closed; the live view's last
    patch may be older than the record (the final render can come after the output was made
    final), so the page, and the helpers that read it, show the record."""
    output = run_cell(kernel, "think about it")
    wait_done(kernel, output)
    kernel.wait_for(lambda: output not in kernel.models, what="the run's output to be closed")
    record = record_of(kernel, output)
    assert record is not None and page_of(kernel, output) == record
    (fold,) = elements(record, "atomic-thinking")
    assert "Let me think step by step." in element_text(fold, "atomic-thinking-text")
    (answer,) = answers(kernel, output)
    # (Its key is the live view's when the live view streamed it; a run that ended before its
    # first patch was drawn has none: the record is what the page shows either way.)
    assert "Thought it through." in visible_text(answer_html(kernel, answer))


def test_markdown_payloads_render_without_script(kernel: BrowserLikeKernel) -> None:
    output = run_cell(kernel, "show me the payload")
    wait_done(kernel, output)
    (answer,) = answers(kernel, output)
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
    (output,) = result.widget_ids
    dialog = dialog_in(kernel, output, "confirm")
    assert dialog.output == output  # in the run's own output
    dialog.confirm(True)
    waited = kernel.execute("%atomic_agent wait --timeout 60")
    assert waited.stdout == "" and waited.stderr == ""
    assert run_state(kernel, output) == "done"
    # The notice no longer says the dialog waits, nor repeats its outcome: the run's record
    # below holds it, once.
    now = displayed(kernel, notice)
    assert "needs your answer" not in now.get("text/plain", "")
    assert "Yes (clicked)" not in now.get("text/plain", "") + now.get("text/html", "")
    # The run is over: its output is now its record alone, with the dialog's outcome in it.
    area = live_view(result.outputs)
    final = kernel.wait_for(
        lambda: (lambda d: d if WIDGET_VIEW not in d else None)(displayed(kernel, area)),
        what="the run's output to become its record",
    )
    record = visible_text(final["text/html"])
    assert displayed(kernel, copy) == REMOVED_VIEW  # the copy is removed: one record per output
    assert "> run the dangerous command" in record
    assert "dangerous-but-fine" in record and "→ Yes (clicked)" in record
    assert record.count("Run a dangerous command?") == 1, record  # the dialog named once
    assert record.count("Yes (clicked)") == 1, record  # in the card, and nowhere else
    # The live card, as the page last showed it before its record replaced it (the output's
    # widget is closed now).
    assert output not in kernel.models
    (card,) = elements(page_of(kernel, output), "atomic-tool")
    assert "dangerous-but-fine" in element_text(card, "atomic-tool-output")
    # The dialog sits in the card of the command it asks about, above its output, settled.
    (in_card,) = elements(card, "atomic-tool-dialogs")
    assert "data-dialog=" not in in_card  # settled: the record's card, no place for controls
    assert "Run a dangerous command?" in visible_text(in_card)
    assert "→ Yes (clicked)" in visible_text(in_card)
    assert card.index(in_card) < card.index(elements(card, "atomic-tool-output")[0])


def test_policy_from_the_magic_answers_and_is_shown_like_a_click(kernel: BrowserLikeKernel) -> None:
    listed = kernel.execute('%atomic_agent policy --method confirm --title "dangerous" no')
    assert "confirm titled /dangerous/ → No" in listed.stdout
    try:
        result = kernel.execute(
            "%%atomic_agent --wait --timeout 60\nrun the dangerous command again"
        )
        assert result.stderr == ""
        (output,) = result.widget_ids
        outcome = kernel.wait_for(
            lambda: (lambda found: visible_text(found[0]) if found else None)(
                elements(page_of(kernel, output), "atomic-dialog-outcome")
            ),
            what="the dialog's outcome",
        )
        assert outcome == "→ No (answer policy: confirm titled /dangerous/ → No)"
        assert "atomic-dialog-controls" not in page_of(kernel, output)  # never asked a person
    finally:
        kernel.execute("%atomic_agent policy --clear")


def test_stop_button_aborts_the_run(kernel: BrowserLikeKernel) -> None:
    output = run_cell(kernel, "go slow please")
    streamed = kernel.wait_for(
        lambda: next(
            (a for a in answers(kernel, output) if "slow" in visible_text(answer_html(kernel, a))),
            None,
        ),
        what="the first streamed words",
    )
    (stop,) = elements(page_of(kernel, output), "atomic-stop")
    assert 'data-action="stop"' in stop and visible_text(stop) == "Stop"
    kernel.send_custom(output, {"type": "stop"})  # what a click on it sends
    wait_done(kernel, output, timeout=15)
    page = page_of(kernel, output)
    assert (
        element_text(page, "atomic-assistant-stopped")
        == "The answer ends here: the run was stopped."
    )
    assert elements(page, "atomic-stop") == []  # a run that is over has no Stop button
    (answer,) = [a for a in answers(kernel, output) if a.key == streamed.key]
    assert "slow" in visible_text(answer.html)
    assert len(visible_text(answer.html)) < len("slow " * 400)


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
    output = run_cell(kernel, "go slow again")
    kernel.wait_for(
        lambda: any(
            "slow" in visible_text(answer_html(kernel, a)) for a in answers(kernel, output)
        ),
        what="the first streamed words",
    )
    said = kernel.execute("%atomic_agent steer and now, change course").stdout.strip()
    assert (
        said == "Steering message queued; the agent reads it after the current turn's tool calls."
    )
    wait_done(kernel, output, timeout=30)
    users = elements(page_of(kernel, output), "atomic-user-message")
    assert [visible_text(u) for u in users] == ["you: and now, change course"]


def test_long_answer_after_a_tool_call_shows_the_right_transcript_with_bounded_updates(
    kernel: BrowserLikeKernel,
) -> None:
    output = run_cell(kernel, "a long tool answer please")
    wait_done(kernel, output)
    content = kernel.tracker.pages[output].content
    blocks = [key for key in content.order if key not in {"header", "message", "footer"}]
    kinds = [
        next(k for k in ("atomic-assistant", "atomic-tool") if elements(content.blocks[key], k))
        for key in blocks
    ]
    assert kinds == ["atomic-assistant", "atomic-tool", "atomic-assistant"]
    card = content.blocks[blocks[1]]
    assert element_text(card, "atomic-tool-command") == "$ seq 1 3"
    assert element_text(card, "atomic-tool-output") == "1\n2\n3" + "exit code 0"
    (final,) = [a for a in answers(kernel, output) if a.key == blocks[2]]
    assert "Line 599: the quick brown fox" in visible_text(answer_html(kernel, final))
    # The run's output got a bounded number of updates, all of it together.
    updates = [m for m in kernel.iter_messages("comm_msg") if m["content"]["comm_id"] == output]
    assert 1 < len(updates) < len(LONG_ANSWER) // 8 // 10, len(updates)
    footer = element_text(page_of(kernel, output), "atomic-footer")
    assert re.match(
        r"scripted · thinking \w+ · 2 model turns · 400 in / 9,020 out tokens", footer
    ), footer


def test_wait_keeps_the_transcript_updating_while_the_cell_blocks(
    kernel: BrowserLikeKernel,
) -> None:
    result = kernel.execute("%%atomic_agent --wait --timeout 60\ngo slow while I wait")
    assert result.stderr == ""
    (output,) = result.widget_ids
    (answer,) = answers(kernel, output)
    assert visible_text(answer_html(kernel, answer)).strip() == ("slow " * 400).strip()
    during = [
        m
        for m in patches(kernel, output)
        if m["parent_header"].get("msg_id") == result.msg_id
        and answer.key in sent(m).get("tails", {})
    ]
    # The answer streams for about 4 s: the frontend saw it grow while the cell was blocked.
    assert len(during) > 5
