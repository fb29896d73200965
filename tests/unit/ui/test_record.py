"""The static record of an output: what it says, who decided each dialog, and that nothing the
agent sends becomes markup in it (the same rules as the live view)."""

from __future__ import annotations

import re
from html import unescape
from html.parser import HTMLParser
from typing import Any

import pytest

from atomic_jupyter.session.citations import expand
from atomic_jupyter.session.dialogs import Dialog
from atomic_jupyter.session.earlier import earlier_runs
from atomic_jupyter.session.runs import PromptRun
from atomic_jupyter.session.transcript import Usage
from atomic_jupyter.ui.ansi import strip_ansi
from atomic_jupyter.ui.record import (
    Record,
    dialog_notice,
    dialog_record,
    footer_text,
    live_class,
    live_copy,
    part_html,
    run_record,
)
from atomic_jupyter.ui.run_parts import Text
from tests.harness.run_events import apply, confirm_dialog

PAYLOADS = [
    "<script>window.__pwned='record'</script>",
    "<img src=x onerror=\"window.__pwned='img'\">",
    '"><svg onload=alert(1)>',
    "[click](javascript:alert(1))",
    "\x1b[31mred\x1b[0m <b>bold?</b>",
]
EVIL = " ".join(PAYLOADS)

#: Tags a record may hold, and the attributes each may carry (style values are ours).
ALLOWED = {
    "div": {"class", "style"},
    "span": {"class", "style"},
    "details": {"class", "open"},
    "summary": {"style", "class"},
    "pre": {"style", "class"},
    "code": {"style", "class"},
    "a": {"href", "rel", "target", "title"},
    "strong": {"class"},  # a bold line of ours (its class names what it is)
    **{t: set() for t in ("p", "ul", "ol", "li", "em", "del", "s", "br", "hr")},
    **{t: {"style"} for t in ("table", "thead", "tbody", "tr", "th", "td", "blockquote")},
    **{f"h{i}": set() for i in range(1, 7)},
}


class Checker(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ALLOWED:
            self.problems.append(f"<{tag}>")
            return
        for name, value in attrs:
            if name not in ALLOWED[tag]:
                self.problems.append(f"{name}= on <{tag}>")
            if name == "href" and not re.match(r"https?://|mailto:", value or ""):
                self.problems.append(f"href={value!r}")
            if name == "style" and re.search(
                r"url\(|expression|position|@import", value or "", re.I
            ):
                self.problems.append(f"style={value!r}")

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def check(html: str) -> str:
    checker = Checker()
    checker.feed(html)
    assert checker.problems == [], checker.problems
    return "".join(checker.text)


def hostile_run() -> tuple[PromptRun, Dialog]:
    run = PromptRun("r1", f"prompt {EVIL}")
    apply(run, "agent_start")
    apply(run, "message_start", message={"role": "assistant", "content": []})
    apply(
        run,
        "message_end",
        message={
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": f"thinking {EVIL}"},
                {"type": "text", "text": f"# Answer\n\n{EVIL}\n\n```python\nprint('hi')\n```\n"},
            ],
        },
    )
    apply(run, "tool_execution_start", toolCallId="c1", toolName="bash", args={"command": EVIL})
    dialog, _ = confirm_dialog("d1", f"Allow {EVIL}?", message=EVIL)
    run.transcript.add_dialog(dialog)
    dialog.respond(False, by="clicked")
    apply(
        run,
        "tool_execution_end",
        toolCallId="c1",
        toolName="bash",
        result={"content": [{"type": "text", "text": f"out {EVIL}\n" * 3}]},
        isError=False,
    )
    run.transcript.note(f"note {EVIL}", "warning")
    return run, dialog


def test_a_hostile_run_is_recorded_as_text() -> None:
    run, _ = hostile_run()
    record = run_record(run)
    shown = check(record.html)
    for payload in PAYLOADS[:3]:
        assert payload in shown  # visible, as text
    assert "Allow" in shown and "→ No (clicked)" in shown
    lowered = record.html.lower()
    assert "<script" not in lowered and "<img" not in lowered and "<svg" not in lowered
    assert "javascript:" not in re.sub(r">[^<]*<", "><", lowered)  # only in text, never markup
    assert "\x1b" not in record.plain
    # Plain text: the same conversation, readable.
    assert record.plain.startswith(f"> prompt {PAYLOADS[0]}")
    assert "[confirm dialog] Allow" in record.plain and "→ No (clicked)" in record.plain


def test_the_record_carries_the_live_views_class_names() -> None:
    run, _ = hostile_run()
    html = run_record(run).html
    for cls in (
        "atomic-transcript",
        "atomic-run-state",
        "atomic-assistant-text",
        "atomic-tool atomic-tool-done",
        "atomic-tool-dialogs",
        "atomic-dialog-outcome",
        "atomic-footer",
    ):
        assert cls in html, cls


class Classes(HTMLParser):
    """Every class name in an HTML fragment, and its text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.classes: list[str] = []
        self.text: list[str] = []
        self.style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.style = tag == "style"
        self.classes.extend(n for name, v in attrs if name == "class" for n in (v or "").split())

    def handle_endtag(self, tag: str) -> None:
        self.style = False

    def handle_data(self, data: str) -> None:
        if not self.style:
            self.text.append(data)


def parsed(html: str) -> Classes:
    parser = Classes()
    parser.feed(html)
    return parser


def test_a_record_copy_renames_its_classes_and_never_its_text() -> None:
    run = PromptRun("r2", 'why <div class="atomic-run">?')
    apply(run, "agent_start")
    apply(run, "message_start", message={"role": "assistant", "content": []})
    said = 'Use `<div class="atomic-run">` and class="atomic-x" (_not_ <b class="atomic-y">)'
    apply(
        run,
        "message_end",
        message={"role": "assistant", "content": [{"type": "text", "text": said}]},
    )
    record = run_record(run)
    copy = live_copy(record, "k1")
    assert copy["text/plain"] == record.plain
    original, copied = parsed(record.html), parsed(copy["text/html"])
    # The same text, word for word (the agent's class="atomic-..." too); only the classes
    # differ: each atomic- class of the record is an atomic-copy- class of the copy.
    assert "".join(copied.text) == "".join(original.text)
    assert 'class="atomic-x"' in "".join(copied.text)
    renamed = [
        "atomic-copy-" + c.removeprefix("atomic-") if c.startswith("atomic-") else c
        for c in original.classes
    ]
    assert copied.classes == ["atomic-record-copy", "atomic-record-copy-k1", *renamed]
    assert not any(c.startswith("atomic-") and "copy" not in c for c in copied.classes)
    # Its style names this output's live widget and this copy only.
    style = copy["text/html"][: copy["text/html"].index("</style>")]
    assert f".{live_class('k1')}" in style and ".atomic-record-copy-k1" in style
    assert set(re.findall(r"\.([\w-]+)", style)) == {
        live_class("k1"),
        "atomic-record-copy-k1",
        "jp-OutputArea-child",
        "jupyter-widgets-disconnected",  # ipywidgets' mark of a view whose kernel is gone
    }


def test_a_record_copy_of_a_fragment_with_attributes_before_the_class() -> None:
    copy = live_copy(Record('<a href="https://x.test/" class="atomic-link">a</a>', "a"), "k2")
    assert '<a href="https://x.test/" class="atomic-copy-link">a</a>' in copy["text/html"]


def test_long_tool_output_is_trimmed_in_plain_text_with_its_length() -> None:
    run = PromptRun("r1", "count")
    apply(
        run, "tool_execution_start", toolCallId="c1", toolName="bash", args={"command": "seq 500"}
    )
    output = "\n".join(str(i) for i in range(1, 501))
    apply(
        run,
        "tool_execution_end",
        toolCallId="c1",
        toolName="bash",
        result={"content": [{"type": "text", "text": output}]},
    )
    plain = run_record(run).plain
    assert "  20" in plain.split("\n") and "  21" not in plain.split("\n")
    assert "… (500 lines in all)" in plain
    html = run_record(run).html
    assert "500" in check(html)  # the HTML keeps it all, folded


@pytest.mark.parametrize(
    "answer, how, said",
    [
        (lambda d: d.respond(True, by="clicked"), None, "Proceed? → Yes (clicked)"),
        (lambda d: d.respond(True), None, "Proceed? → Yes (answered by code)"),
        (
            lambda d: d.respond(False, by="policy", how="answer policy: confirm titled /P/ → No"),
            None,
            "Proceed? → No (answer policy: confirm titled /P/ → No)",
        ),
        (lambda d: d.respond(True, by="rule"), None, "Proceed? → Yes (rule)"),
        (lambda d: d.cancel(by="stop"), None, "Proceed? → cancelled (the run was stopped)"),
        (lambda d: d.expire(), None, "Proceed? → timed out: No (the agent's default)"),
    ],
)
def test_a_dialog_says_who_decided_and_how(answer: Any, how: Any, said: str) -> None:
    dialog, _ = confirm_dialog("d1", "Proceed?")
    answer(dialog)
    assert dialog.outcome == said
    record = dialog_record(dialog)
    # The record names the dialog once, in its question, then says what came of it.
    result = said.removeprefix("Proceed? ")
    assert result == dialog.result
    assert f"Proceed?{result}" in check(record.html) and check(record.html).count("Proceed?") == 1
    assert record.plain == f"[confirm dialog] Proceed?\n  {result}"


def test_a_notice_says_a_dialog_waits_then_how_it_was_settled() -> None:
    dialog, _ = confirm_dialog("d1", "Proceed?")
    waiting = dialog_notice(dialog)
    assert "needs your answer" in waiting.plain
    dialog.respond(False, by="clicked")
    settled = dialog_notice(dialog)
    assert "needs your answer" not in settled.plain + settled.html
    assert settled.plain == "The confirm dialog 'Proceed?' was settled: Proceed? → No (clicked)"


def test_the_footer_hides_a_free_models_cost_and_a_command_runs_nothing() -> None:
    run = PromptRun("r1", "hi")
    transcript = run.transcript
    transcript.usage, transcript.elapsed = Usage(1, 10, 5, 0, 0, 0.0), 1.5
    assert footer_text(transcript, True) == "1 model turn · 10 in / 5 out tokens · 1.5 s"
    transcript.usage = Usage(2, 10, 5, 0, 0, 0.25)
    assert footer_text(transcript, True) == "2 model turns · 10 in / 5 out tokens · $0.2500 · 1.5 s"
    transcript.usage = Usage(0, 0, 0, 0, 0, 0.0)  # an extension command: no turn
    assert footer_text(transcript, True) == ""
    assert footer_text(transcript, False) == ""


def test_the_footer_counts_turns_as_they_end_and_shows_no_figures_a_model_did_not_report() -> None:
    from atomic_jupyter.protocol.messages import AgentEvent

    run = PromptRun("r1", "hi")
    transcript = run.transcript

    def turn(usage: dict[str, Any] | None) -> None:
        message = {"role": "assistant", "content": [], "model": "m-1", "provider": "p"}
        if usage is not None:
            message["usage"] = usage
        transcript.apply(AgentEvent("message_start", {"message": message}))
        transcript.apply(AgentEvent("message_end", {"message": message}))

    assert footer_text(transcript, False) == ""
    turn({"input": 100, "output": 20, "cost": {"total": 0.5}})
    assert (
        footer_text(transcript, False) == "so far: 1 model turn · 100 in / 20 out tokens · $0.5000"
    )
    turn({"input": 150, "output": 10, "cost": {"total": 0.25}})
    assert (
        footer_text(transcript, False) == "so far: 2 model turns · 250 in / 30 out tokens · $0.7500"
    )
    transcript.close()
    transcript.elapsed = 2.0
    assert (
        footer_text(transcript, True)
        == "m-1 · 2 model turns · 250 in / 30 out tokens · $0.7500 · 2.0 s"
    )

    silent = PromptRun("r2", "hi").transcript
    transcript = silent
    turn({"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "cost": {"total": 0}})
    turn(None)
    assert footer_text(silent, False) == "so far: 2 model turns"
    silent.close()
    silent.elapsed = 1.0
    assert footer_text(silent, True) == "m-1 · 2 model turns · 1.0 s"


def test_the_panels_record_holds_its_state_runs_and_notes_but_no_local_details() -> None:
    from types import SimpleNamespace

    from atomic_jupyter.ui.panel_parts import panel_record

    run, _ = hostile_run()
    session = SimpleNamespace(
        name="default",
        state="stopped",
        title=f"title {EVIL}",
        agent=SimpleNamespace(name="pi", version="1.6.0", __str__=lambda self: "pi 1.6.0"),
        status={"turns": "turns: 2"},
        widgets={"demo": {"lines": [f"line {EVIL}"]}},
        notifications=[{"type": "info", "message": f"note {EVIL}"}],
        entries=[("audit", f"entry {EVIL}")],
        pid=4242,
        command_line="/home/someone/secret/path/pi --mode rpc",
        addon=lambda name: continued if name == "conversations" else None,
    )
    earlier = earlier_runs(
        [
            {"role": "user", "content": f"earlier {EVIL}"},
            {"role": "assistant", "content": [{"type": "text", "text": f"said {EVIL}"}]},
        ]
    )
    continued = SimpleNamespace(
        continued=f"continued: 2 messages {EVIL}", notes=[f"told {EVIL}"], earlier=earlier
    )
    record = panel_record(session, [run])  # type: ignore[arg-type]
    shown = check(record.html)
    assert "Earlier in this conversation (1 turn)" in shown  # a continued conversation
    assert f"earlier {PAYLOADS[0]}" in shown and f"told {PAYLOADS[0]}" in shown
    assert "Earlier in this conversation (1 turn):" in record.plain
    assert "stopped" in shown and PAYLOADS[0] in shown and "turns: 2" in shown
    assert "> prompt" in shown and "→ No (clicked)" in shown  # the run sent from the panel
    assert f"entry {PAYLOADS[0]}" in shown  # an extension's custom entry of no run, as text
    for local in ("4242", "/home/someone"):
        assert local not in record.html and local not in record.plain
    assert "mathjax_ignore" in record.html.split(">", 1)[0]  # the page's MathJax stays out


@pytest.mark.parametrize(
    ("state", "said"),
    [
        ("idle", "stopped (last seen: idle)"),
        ("working", "stopped (last seen: working)"),
        ("starting", "stopped (last seen: starting)"),
        ("asleep", "stopped (last seen: asleep)"),
        ("stopped", "stopped"),
        ("exited", "exited"),
    ],
)
def test_the_saved_panel_says_the_agent_is_gone_never_a_live_state(state: str, said: str) -> None:
    """The panel's record (saved into the notebook, shown after a restart and by nbconvert)
    is read once its agent no longer exists: a live state is said as the last one seen."""
    from types import SimpleNamespace

    from atomic_jupyter.ui.panel_parts import panel_record

    session = SimpleNamespace(
        name="default",
        state=state,
        title="",
        agent=SimpleNamespace(name="", version=""),
        status={},
        widgets={},
        notifications=[],
        entries=[],
        addon=lambda name: None,
    )
    record = panel_record(session)  # type: ignore[arg-type]
    assert record.plain.splitlines()[0] == f"agent session 'default' · {said}"
    assert f'<span class="atomic-state">{said}</span>' in record.html


def test_a_512_kb_answer_with_code_weighs_at_most_three_times_its_text() -> None:
    """The record of a long Markdown answer (code blocks, tables, lists, links) is small: the
    page styles code, tables and quotes itself, and code colours are short literal colours
    (which an untrusted notebook keeps, unlike theme variables)."""
    from tests.harness.support import long_markdown
    from tests.harness.widget_text import shown_text

    answer = long_markdown(512 << 10)
    run = PromptRun("r", "write a long answer")
    message = {"role": "assistant", "content": [{"type": "text", "text": answer}]}
    for kind, fields in (
        ("agent_start", {}),
        ("message_start", {"message": {"role": "assistant", "content": []}}),
        ("message_end", {"message": message}),
        ("agent_end", {}),
    ):
        apply(run, kind, **fields)
    html = run_record(run).html
    assert len(html) <= 3 * len(shown_text(html)) <= 3 * len(answer), len(html) / len(answer)
    assert "var(" not in html.split(">", 1)[1]  # no theme variable past the root's own
    assert re.search(r'<span style="color:#[0-9a-f]{3}">def</span>', html)  # code coloured


def test_the_prompt_as_sent_keeps_its_columns_in_the_code_font_long_lines_wrapped() -> None:
    """A cited data frame's summary is a table: the record (what nbconvert shows, and the
    HTML the live view draws) puts the prompt as sent in a pre in the code font, wrapping long
    lines, its text exactly as sent and nothing in it markup."""
    frame = (
        "             city  population\n"
        "0            Oslo      709000\n"
        "1  Rio de Janeiro     6211000"
    )
    expanded = expand(f"largest in $`cities`? {EVIL}", lambda expression: frame)
    run = PromptRun("r1", expanded.written)
    run.sent, run.cited = expanded.sent, ("cities",)
    html = run_record(run).html
    check(html)
    ((style, inner),) = re.findall(
        r'<pre class="atomic-run-sent-text" style="([^"]*)">(.*?)</pre>', html, re.S
    )
    assert "font-family:var(--jp-code-font-family,monospace)" in style
    assert "white-space:pre-wrap" in style and "overflow-wrap:anywhere" in style
    assert unescape(re.sub(r"<[^>]*>", "", inner)) == strip_ansi(run.sent)  # colours: spans
    assert frame in run.sent
    # A text starting with a line break keeps it (a parser drops one right after <pre>).
    first = part_html(Text("atomic-x", "\nsecond line", mono=True))
    assert re.match(r'<pre class="atomic-x" style="[^"]*"><span></span>\nsecond line</pre>$', first)
