"""A run's live output: one :class:`OutputWidget`, fed by the record's renderer.

A streamed answer renders block by block: ``MarkdownStream`` gives, for every prefix of a
document, exactly the whole document's rendering and never changes a block it called settled;
:class:`RunOutput` sends the settled blocks once, gathered in chunks of at least
``CHUNK_BYTES``, and the unsettled tail at each render, so what an update sends does not grow
with the answer, and the chunks and the tail joined are the record's answer.

The widget sends only what changed, numbered; a page that missed a message is sent the whole
output again; clicks come back as messages (Stop, a dialog's answer), for this output's
dialogs only; everything from the agent is escaped in the HTML it sends and plain text in a
dialog's description.
"""

from __future__ import annotations

import json
import logging
import random
import re
import types
from collections.abc import Iterator
from typing import Any

import pytest

from atomic_jupyter.errors import AgentNotRunningError
from atomic_jupyter.protocol.messages import AgentEvent, UIResponse, parse_message
from atomic_jupyter.session.dialogs import Dialog
from atomic_jupyter.session.runs import PromptRun
from atomic_jupyter.ui import markdown as md
from atomic_jupyter.ui import output_widget
from atomic_jupyter.ui.markdown import (
    MarkdownStream,
    markdown_blocks,
    record_markup,
    wrap_markdown,
)
from atomic_jupyter.ui.output_widget import OutputWidget
from atomic_jupyter.ui.page_protocol import PROTOCOL_VERSION, PageContent
from atomic_jupyter.ui.record import part_html
from atomic_jupyter.ui.run_output import CHUNK_BYTES, RunOutput
from atomic_jupyter.ui.run_parts import describe_block
from tests.harness.dialog_output import DialogOutput
from tests.harness.output_page import (
    Element,
    PageView,
    dom_form,
    page_html,
    page_text,
    page_tree,
    press,
)
from tests.harness.support import long_markdown
from tests.unit.ui.test_markdown import FRAGMENTS, REFERENCES, STREAMED, _fresh

#: The page protocol's version, in every message.
V = PROTOCOL_VERSION
#: What the page adds to a link.
NEW_TAB = ' target="_blank" rel="noopener noreferrer"'


@pytest.fixture(autouse=True)
def no_swallowed_errors(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """The widget's message handlers and listeners log and swallow what they raise: fail on
    any."""
    caplog.set_level(logging.WARNING)
    yield
    swallowed = [r.getMessage() for r in caplog.records if r.exc_info is not None]
    assert not swallowed, swallowed


class Sent:
    """What a widget sends from now on (every custom message, in order), passed on to a
    :class:`PageView` (the page's own module) in that order: those not yet delivered are
    delivered together when the page is read (one round trip to the module, not one a
    message). A widget that sent some already is asked for the whole output, as a page made
    late asks (that answer is not kept)."""

    def __init__(self, widget: OutputWidget) -> None:
        self.widget = widget
        self.messages: list[dict[str, Any]] = []
        self._page = PageView()
        self._undelivered: list[dict[str, Any]] = []
        send = widget.send

        def record(message: dict[str, Any], buffers: Any = None) -> None:
            self.messages.append(json.loads(json.dumps(message)))  # as sent: JSON
            self._undelivered.append(self.messages[-1])
            send(message, buffers)

        widget.send = record  # type: ignore[method-assign]
        if widget.messages:
            press(widget, {"type": "ready", "seq": 0})
            self.messages = []

    @property
    def page(self) -> PageView:
        """The page, once every message sent so far has reached it."""
        if self._undelivered:
            undelivered, self._undelivered = self._undelivered, []
            self._page.receive(*undelivered)
        return self._page

    def take(self) -> list[dict[str, Any]]:
        """The messages sent since the last take."""
        taken, self.messages = self.messages, []
        return taken


# --------------------------------------------------------------------------- the stream underneath


def steps(doc: str, rng: random.Random, most: int = 40) -> list[str]:
    """Growing prefixes of ``doc``, cut at random points, ending with ``doc``."""
    out, end = [], 0
    while end < len(doc):
        end = min(len(doc), end + rng.randrange(1, most))
        out.append(doc[:end])
    return out


@pytest.mark.parametrize(
    "doc", [STREAMED, STREAMED.replace("\n", "\r\n"), REFERENCES, long_markdown(1200)]
)
def test_every_prefix_renders_as_a_whole_document_and_settled_blocks_stay(doc: str) -> None:
    stream = MarkdownStream()
    settled: list[str] = []
    for end in range(1, len(doc) + 1):
        prefix = doc[:end]
        pieces = stream.update(prefix)
        assert wrap_markdown("".join(pieces.blocks)) == _fresh(prefix), repr(prefix[-40:])
        if pieces.settled or "]:" not in prefix:  # a reference definition may change any link
            assert list(pieces.blocks[: len(settled)]) == settled, repr(prefix[-40:])
        settled = list(pieces.blocks[: pieces.settled])


@pytest.mark.parametrize("seed", range(8))
def test_random_documents_in_random_steps(seed: int) -> None:
    rng = random.Random(seed)
    doc = "\n".join(rng.choice(FRAGMENTS) for _ in range(60)) + "\n"
    stream = MarkdownStream()
    for prefix in steps(doc, rng, 12):
        assert wrap_markdown("".join(stream.update(prefix).blocks)) == _fresh(prefix)


def test_a_text_that_does_not_extend_the_previous_one_is_rendered_afresh() -> None:
    stream = MarkdownStream()
    stream.update(STREAMED)
    other = "Something else\n\n- entirely\n"
    assert wrap_markdown("".join(stream.update(other).blocks)) == _fresh(other)


def test_the_streamed_text_is_joined_once_not_on_every_read() -> None:
    from atomic_jupyter.session.transcript import AssistantBlock

    block = AssistantBlock()
    for i in range(1000):
        block.add_delta("text", 0, f"{i} ")
    assert block.text == "".join(f"{i} " for i in range(1000))
    assert len(block.deltas[0][1]) == 1  # the pieces were replaced by their join
    block.add_delta("text", 0, "end")
    assert block.text.endswith("999 end")
    md._RECENT.clear()


# --------------------------------------------------------------------------- a streamed answer


class Answering:
    """A run whose assistant streams an answer, in its :class:`RunOutput`."""

    KEY = "b0"  # the answer's block: the transcript's first

    def __init__(self) -> None:
        self.run = PromptRun("r1", "write at length")
        self.apply("agent_start")
        self.apply("message_start", message={"role": "assistant", "content": []})
        self.text = ""
        self.output = RunOutput(self.run, on_stop=lambda: None)
        self.sent = Sent(self.output.widget)

    def apply(self, kind: str, **fields: Any) -> None:
        self.run.transcript.apply(AgentEvent(kind, fields))

    def stream_to(self, prefix: str) -> None:
        """The agent's next delta makes the answer ``prefix``; then a render."""
        assert prefix.startswith(self.text)
        delta = {"type": "text_delta", "contentIndex": 0, "delta": prefix[len(self.text) :]}
        self.apply("message_update", assistantMessageEvent=delta)
        self.text = prefix
        self.output.render()

    @property
    def chunks(self) -> list[str]:
        return self.output.content.chunks.get(self.KEY, [])

    @property
    def tail(self) -> str:
        return self.output.content.tails.get(self.KEY, "")

    def shown(self) -> str:
        """The answer as the page draws it: its chunks, then its tail."""
        return "".join(self.chunks) + self.tail

    def record_block(self) -> str:
        """The record's HTML of the answer's block."""
        (block,) = self.run.transcript.snapshot()
        part = describe_block(block)
        assert part is not None
        return part_html(part)


def record_answer(text: str) -> str:
    """The record's HTML of an answer's text (inside its block's element)."""
    return record_markup(markdown_blocks(text))


def test_the_page_shows_exactly_the_records_answer_at_every_step() -> None:
    answering = Answering()
    for prefix in steps(long_markdown(40_000), random.Random(5), 300):
        answering.stream_to(prefix)
        assert answering.shown() == record_answer(prefix)
    # The page's block is the record's, with the answer's place marked for the page.
    page = page_html(answering.output.widget)
    live = page.replace(f' data-answer="{Answering.KEY}"', "")
    live = live.replace(NEW_TAB, "")  # the page opens links in a new tab
    assert dom_form(answering.record_block()) in live
    assert len(answering.chunks) > 3, "a 40 KB answer should have been split into chunks"
    # A page that received every message in order shows the same.
    assert page_html(answering.sent.page) == page


def test_settled_blocks_go_once_in_chunks_of_at_least_chunk_bytes_and_only_the_tail_changes() -> (
    None
):
    """What an update costs: each chunk is sent once, at least ``CHUNK_BYTES`` of it, and
    never changed or sent again; the answer's block is sent once; the tail holds less than a
    chunk's worth of settled blocks plus the blocks still growing."""
    doc = long_markdown(150_000)  # some 35 chunks
    answering = Answering()
    answering.sent.take()
    chunks_sent: list[str] = []
    largest_tail = largest_patch = 0
    for prefix in steps(doc, random.Random(9), 400):
        answering.stream_to(prefix)
        for message in answering.sent.take():
            assert message["type"] == "patch" and "reset" not in message, message.keys()
            chunks_sent += message.get("chunks", {}).get(Answering.KEY, [])
            largest_patch = max(largest_patch, len(json.dumps(message)))
        assert answering.chunks == chunks_sent  # each sent once, in order, never changed
        largest_tail = max(largest_tail, len(answering.tail))
    largest_block = max(len(record_markup(b)) for b in MarkdownStream().update(doc).blocks)
    assert len(chunks_sent) > 10
    assert all(len(chunk) >= CHUNK_BYTES for chunk in chunks_sent), [
        len(chunk) for chunk in chunks_sent if len(chunk) < CHUNK_BYTES
    ]
    assert largest_tail < CHUNK_BYTES + 3 * largest_block + 500, largest_tail
    assert largest_patch < 2 * (CHUNK_BYTES + 3 * largest_block + 500), largest_patch
    assert answering.shown() == record_answer(doc)
    assert page_html(answering.sent.page) == page_html(answering.output.widget)


def test_a_reference_definition_arriving_late_starts_the_chunks_over() -> None:
    doc = long_markdown(20_000) + "\n[late][r]\n\n[r]: https://example.com/late\n"
    answering = Answering()
    resets = 0
    for prefix in steps(doc, random.Random(2), 500):
        answering.stream_to(prefix)
        for message in answering.sent.take():
            resets += Answering.KEY in message.get("reset", [])
    assert resets >= 1  # the chunks sent before the definition were taken back
    assert answering.shown() == record_answer(doc)
    assert 'href="https://example.com/late"' in answering.shown()
    # The page that followed the messages, resets included, shows the same.
    assert page_html(answering.sent.page) == page_html(answering.output.widget)


def test_a_final_text_that_replaces_the_streamed_one_starts_the_chunks_over() -> None:
    """The agent's last word on a message (``message_end``) is its whole text, which need
    not extend what was streamed: the page then shows that text, not the chunks of the other."""
    answering = Answering()
    for prefix in steps(long_markdown(20_000, seed=1), random.Random(3), 600):
        answering.stream_to(prefix)
    assert answering.chunks
    final = long_markdown(30_000, seed=2)
    message = {"role": "assistant", "content": [{"type": "text", "text": final}]}
    answering.apply("message_end", message=message)
    answering.output.render()
    assert answering.shown() == record_answer(final)
    (patch,) = answering.sent.take()[-1:]
    assert patch.get("reset") == [Answering.KEY]
    assert page_html(answering.sent.page) == page_html(answering.output.widget)


def test_the_first_text_of_an_answer_needs_no_chunk() -> None:
    answering = Answering()
    assert answering.chunks == [] and answering.tail == ""  # no text yet: nothing shown
    assert page_tree(answering.output.widget).find_all("atomic-assistant-text")[0].text == ""
    answering.stream_to("Hello **world**")
    assert answering.chunks == []
    assert (
        answering.tail == record_answer("Hello **world**") == "<p>Hello <strong>world</strong></p>"
    )
    (message,) = answering.sent.take()
    assert set(message) == {"type", "v", "seq", "tails"}  # the tail alone, nothing else


# --------------------------------------------------------------------------- the widget


def content(**blocks: str) -> PageContent:
    """Blocks in the order given."""
    return PageContent(list(blocks), dict(blocks))


def test_only_what_changed_is_sent_numbered_one_by_one() -> None:
    widget = OutputWidget("atomic-run")
    sent = Sent(widget)
    widget.update_page(content(a="<p>A</p>", b="<p>B</p>"))
    (first,) = sent.take()
    assert first == {
        "type": "patch",
        "v": V,
        "seq": 1,
        "blocks": {"a": "<p>A</p>", "b": "<p>B</p>"},
        "order": ["a", "b"],
    }
    widget.update_page(content(a="<p>A</p>", b="<p>B</p>"))  # nothing new
    assert sent.take() == []
    widget.update_page(content(a="<p>A</p>", b="<p>B2</p>"))  # one block changed
    assert sent.take() == [{"type": "patch", "v": V, "seq": 2, "blocks": {"b": "<p>B2</p>"}}]
    widget.update_page(content(b="<p>B2</p>", a="<p>A</p>"))  # the same blocks, moved
    assert sent.take() == [{"type": "patch", "v": V, "seq": 3, "order": ["b", "a"]}]
    widget.update_page(content(b="<p>B2</p>"))  # one gone
    assert sent.take() == [{"type": "patch", "v": V, "seq": 4, "drop": ["a"], "order": ["b"]}]
    answer = PageContent(["b"], {"b": "<p>B2</p>"}, {"b": ["<p>1</p>"]}, {"b": "<p>t</p>"})
    widget.update_page(answer)
    assert sent.take() == [
        {
            "type": "patch",
            "v": V,
            "seq": 5,
            "chunks": {"b": ["<p>1</p>"]},
            "tails": {"b": "<p>t</p>"},
        }
    ]
    grown = PageContent(["b"], {"b": "<p>B2</p>"}, {"b": ["<p>1</p>", "<p>2</p>"]}, {"b": ""})
    widget.update_page(grown)  # a chunk more (only the new one is sent) and a new tail
    assert sent.take() == [
        {"type": "patch", "v": V, "seq": 6, "chunks": {"b": ["<p>2</p>"]}, "tails": {"b": ""}}
    ]
    other = PageContent(["b"], {"b": "<p>B2</p>"}, {"b": ["<p>x</p>"]}, {"b": ""})
    widget.update_page(other)  # a chunk changed: they start over
    assert sent.take() == [
        {"type": "patch", "v": V, "seq": 7, "chunks": {"b": ["<p>x</p>"]}, "reset": ["b"]}
    ]
    dialog = {"id": "d1", "title": "t"}
    widget.update_page(
        PageContent(["b"], {"b": "<p>B2</p>"}, {"b": ["<p>x</p>"]}, {"b": ""}, {"d1": dialog})
    )
    widget.update_page(PageContent(["b"], {"b": "<p>B2</p>"}, {"b": ["<p>x</p>"]}, {"b": ""}))
    assert sent.take() == [
        {"type": "patch", "v": V, "seq": 8, "dialogs": {"d1": dialog}},
        {"type": "patch", "v": V, "seq": 9, "dialogs": {"d1": None}},  # gone from the page
    ]
    assert widget.messages == 9
    # The page that followed every message draws what a page made now draws.
    assert sent.page.html == page_html(widget) and sent.page.sent == [
        {"type": "ready", "v": V, "seq": 0}
    ]


def test_a_page_that_missed_a_message_is_sent_the_whole_output_and_an_up_to_date_one_nothing() -> (
    None
):
    widget = OutputWidget("atomic-run")
    sent = Sent(widget)
    widget.update_page(content(a="<p>A</p>"))
    widget.update_page(content(a="<p>A</p>", b="<p>B</p>"))
    widget.update_page(content(a="<p>A2</p>", b="<p>B</p>"))
    late = PageView()  # a page made after the first message: it missed it
    asked = late.receive(*sent.take()[1:])
    assert asked == [{"type": "ready", "v": V, "seq": 0}]  # asked once for the whole output
    assert page_text(late).split() == []
    press(widget, asked[0])  # what the page's module asks
    (snapshot,) = sent.take()
    assert snapshot["type"] == "snapshot" and snapshot["seq"] == 3
    assert late.receive(snapshot) == []
    assert late.html == page_html(widget)
    assert page_text(late).split() == ["A2", "B"]
    assert widget.messages == 4
    press(widget, {"type": "ready", "seq": 3})  # it has all: nothing to send
    assert sent.take() == []
    widget.update_page(content(a="<p>A2</p>", b="<p>B3</p>"))  # and the numbering goes on
    (patch,) = sent.take()
    assert patch["seq"] == 4 and late.receive(patch) == []
    assert page_text(late).split() == ["A2", "B3"]


def test_a_page_made_before_anything_was_sent_is_sent_nothing() -> None:
    widget = OutputWidget("atomic-run")
    sent = Sent(widget)
    press(widget, {"type": "ready", "seq": 0})
    assert sent.take() == [] and widget.messages == 0


def test_finish_empties_the_model_and_closes_it_and_the_last_closes_what_they_share(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each output's model holds a short stub; the page side is carried once, by the holder,
    with the one layout every output shares; the last output to finish empties and closes
    them (a frontend that keeps closed models, nbclient, keeps a few bytes of each)."""
    shared = output_widget._Shared()  # no output of another test is counted
    monkeypatch.setattr(output_widget, "_SHARED", shared)
    widget = OutputWidget("atomic-run atomic-transcript", "border-left:3px solid #48c")
    other = OutputWidget("atomic-run")
    assert other.layout is widget.layout
    holder = shared.holder
    assert holder is not None and "render" in holder._esm and len(widget._esm) < 600
    assert "atomic-output" in widget._dom_classes
    sent = Sent(widget)
    widget.update_page(content(a="<p>A</p>"))
    acted: list[Any] = []
    widget.on_action.add(acted.append)
    layout = widget.layout
    assert widget.comm is not None and layout.comm is not None
    widget.empty_and_close()
    assert (widget._esm, widget.root_class, widget.root_style) == ("", "", "")
    assert widget._dom_classes == ()
    assert widget.comm is None and layout.comm is not None  # closed; the layout is shared
    other.empty_and_close()
    assert layout.comm is None and holder.comm is None and holder._esm == ""
    assert shared.holder is None and shared.users == 0
    assert widget.content == PageContent()
    sent.take()
    widget.update_page(content(a="<p>A2</p>"))  # nothing more is sent or done
    press(widget, {"type": "ready", "seq": 0})
    press(widget, {"type": "stop"})
    assert sent.take() == [] and acted == []
    widget.empty_and_close()  # twice is once


# --------------------------------------------------------------------------- clicks


class Wire:
    """A dialog's ``send``: what was answered."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def __call__(self, response: UIResponse) -> None:
        self.sent.append(response.to_dict())


def make_dialog(rid: str, title: str = "Pick", **fields: Any) -> tuple[Dialog, Wire]:
    raw = {
        "type": "extension_ui_request",
        "id": rid,
        "method": "select",
        "title": title,
        "options": ["Alpha", "Beta"],
        **fields,
    }
    wire = Wire()
    return Dialog(parse_message(raw), raw, wire), wire  # type: ignore[arg-type]


def run_asking(*dialogs: Dialog, on_stop: Any = None) -> RunOutput:
    run = PromptRun("r1", "ask")
    run.transcript.apply(AgentEvent("agent_start", {}))
    for dialog in dialogs:
        run.transcript.add_dialog(dialog)
    return RunOutput(run, on_stop=on_stop or (lambda: None))


def choose(output: RunOutput | DialogOutput, rid: str, index: int, **extra: Any) -> None:
    press(output.widget, {"type": "dialog", "id": rid, "action": "choose", "index": index, **extra})


def test_a_dialog_answered_from_the_page_reaches_the_dialog_once() -> None:
    dialog, wire = make_dialog("d1")
    output = run_asking(dialog)
    assert list(output.content.dialogs) == ["d1"]
    choose(output, "d1", 1)
    assert wire.sent == [{"type": "extension_ui_response", "id": "d1", "value": "Beta"}]
    assert dialog.answered_by == "clicked" and dialog.outcome == "Pick → Beta (clicked)"
    assert output.content.dialogs == {}
    sent = output.widget.messages
    choose(output, "d1", 0)  # a second click (on its way before the page changed)
    press(output.widget, {"type": "dialog", "id": "d1", "action": "cancel"})
    assert len(wire.sent) == 1 and dialog.answer == "Beta"
    assert output.widget.messages == sent  # the page had nothing new to show
    (outcome,) = page_tree(output.widget).find_all("atomic-dialog-outcome")
    assert outcome.text == "→ Beta (clicked)"


def test_an_answer_that_was_not_sent_says_why_under_the_controls() -> None:
    def not_running(_response: UIResponse) -> None:
        raise AgentNotRunningError("the agent has exited")

    raw = {"type": "extension_ui_request", "id": "d1", "method": "confirm", "title": "Sure?"}
    dialog = Dialog(parse_message(raw), raw, not_running)  # type: ignore[arg-type]
    output = DialogOutput(dialog, on_rule=None)
    press(output.widget, {"type": "dialog", "id": "d1", "action": "respond", "value": True})
    assert dialog.pending
    assert output.content.dialogs["d1"]["error"] == "Not sent: the agent has exited"
    (error,) = page_tree(output.widget).find_all("atomic-dialog-error")
    assert error.text == "Not sent: the agent has exited"
    # Only the error was sent: the page keeps its controls (and what was typed in them).
    sent = Sent(output.widget)
    press(output.widget, {"type": "dialog", "id": "d1", "action": "respond", "value": "yes"})
    (patch,) = sent.take()
    assert set(patch) == {"type", "v", "seq", "dialogs"}
    assert patch["dialogs"]["d1"]["error"].startswith("Not sent: ")


def clicked(button: Element) -> dict[str, Any]:
    """What the page's module sends for a click on a ``data-action`` button: ``type`` is the
    action, and its other ``data-`` attributes go with it (``data-run`` as ``run``)."""
    fields = {k[len("data-") :]: v for k, v in button.attrs.items() if k.startswith("data-")}
    return {"type": fields.pop("action"), **fields}


def test_stop_calls_on_stop_only_while_the_run_goes() -> None:
    from atomic_jupyter.session.run_tracker import RunTracker

    stops: list[str] = []
    output = run_asking(on_stop=lambda: stops.append("stop"))
    tracker = RunTracker(lambda callback: callback(None))
    tracker.sent(output.run)
    (stop,) = page_tree(output.widget).find_all("atomic-stop")
    assert stop.attrs["data-action"] == "stop" and stop.text == "Stop"
    click = clicked(stop)
    assert click["type"] == "stop"
    press(output.widget, click)
    assert stops == ["stop"]
    output.run.transcript.apply(AgentEvent("agent_end", {}))
    tracker.finish([output.run])
    output.render()
    assert output.run.finished
    assert page_tree(output.widget).find_all("atomic-stop") == []
    # A click on its way when the run ended stops nothing (the agent may be on the next run).
    press(output.widget, click)
    assert stops == ["stop"]


def test_a_message_for_a_dialog_not_in_this_output_is_ignored() -> None:
    mine, my_wire = make_dialog("mine")
    theirs, their_wire = make_dialog("theirs")
    output = run_asking(mine)
    elsewhere = run_asking(theirs)
    sent = output.widget.messages
    choose(output, "theirs", 0)
    press(output.widget, {"type": "dialog", "id": "nobody", "action": "cancel"})
    press(output.widget, {"type": "dialog", "action": "cancel"})  # no id at all
    press(output.widget, {"type": "something else"})
    press(output.widget, ["not", "a", "dict"])  # type: ignore[arg-type]
    assert theirs.pending and mine.pending
    assert my_wire.sent == their_wire.sent == []
    assert output.widget.messages == sent
    choose(elsewhere, "theirs", 0)  # where it is shown, it is answered
    assert their_wire.sent and mine.pending


def test_a_dialog_settled_elsewhere_is_drawn_settled() -> None:
    dialog, _wire = make_dialog("d1")
    output = run_asking(dialog)
    dialog.respond("Alpha", by="code")  # no click: the output follows the dialog
    assert output.content.dialogs == {}
    assert 'data-dialog="d1"' not in page_html(output.widget)  # no place for controls
    assert "select dialog: Pick → Alpha (answered by code)" in " ".join(
        page_text(output.widget).split()
    )


EVIL_TITLE = '<script>alert("t")</script>'
EVIL_OPTION = "<img src=x onerror=alert(1)>"


def test_every_string_from_the_agent_is_escaped_in_the_page_and_plain_in_the_description() -> None:
    dialog, wire = make_dialog("d1", title=EVIL_TITLE, options=[EVIL_OPTION, "\x1b[31mred\x1b[0m"])
    run = PromptRun("r1", EVIL_TITLE)
    run.transcript.apply(AgentEvent("agent_start", {}))
    text = {
        "role": "assistant",
        "content": [{"type": "text", "text": f"{EVIL_OPTION} {EVIL_TITLE}"}],
    }
    run.transcript.apply(AgentEvent("message_start", {"message": text}))
    run.transcript.apply(AgentEvent("message_end", {"message": text}))
    run.transcript.add_dialog(dialog)
    output = RunOutput(run, on_stop=lambda: None)
    described = output.content.dialogs["d1"]
    assert described["title"] == EVIL_TITLE  # text: the page sets it with textContent
    assert described["options"] == [EVIL_OPTION, "red"]  # text, with no control sequence

    def no_markup_from_the_agent() -> None:
        sent = [
            *output.content.blocks.values(),
            *(c for cs in output.content.chunks.values() for c in cs),
            *output.content.tails.values(),
        ]
        for html in sent:
            lowered = html.lower()
            assert "<script" not in lowered and "<img" not in lowered, html
        page = page_tree(output.widget)  # the page's own elements: none made of the agent's
        assert not page.find_tags("script") and not page.find_tags("img")

    no_markup_from_the_agent()
    assert page_text(output.widget).count(EVIL_TITLE) >= 3  # prompt, answer, dialog's title
    choose(output, "d1", 0)
    assert wire.sent[0]["value"] == EVIL_OPTION
    no_markup_from_the_agent()
    (outcome,) = page_tree(output.widget).find_all("atomic-dialog-outcome")
    assert outcome.text == f"→ {EVIL_OPTION} (clicked)"
    assert re.search(r"<(script|img)\b", json.dumps(output.widget.snapshot()).lower()) is None


def test_a_page_made_later_is_told_the_seconds_left_then(monkeypatch: pytest.MonkeyPatch) -> None:
    """The page counts a timed dialog down from the seconds left it is told; a page made
    later (a reload) that asks for the whole output is told the seconds left when it asks,
    not those of when the dialog was first sent."""
    from atomic_jupyter.session import dialogs as dialogs_module
    from atomic_jupyter.ui import output_widget as output_widget_module

    fake = types.SimpleNamespace(now=1000.0)
    clock = types.SimpleNamespace(monotonic=lambda: fake.now)
    monkeypatch.setattr(dialogs_module, "time", clock)
    monkeypatch.setattr(output_widget_module, "time", clock, raising=False)
    dialog, _wire = make_dialog("d1", timeout=60_000)
    output = run_asking(dialog)
    told = output.content.dialogs["d1"]["seconds_left"]
    assert 55 < told <= 60
    fake.now += 20.0
    output.render()  # the page counts down by itself: nothing to send
    assert output.content.dialogs["d1"]["seconds_left"] == told
    sent = Sent(output.widget)
    for later in (0.0, 100.0):  # then after it expired (its expiry is not the page's)
        fake.now += later
        press(output.widget, {"type": "ready", "seq": 0})  # a page made now
        (snapshot,) = sent.take()
        assert snapshot["type"] == "snapshot"
        left = snapshot["dialogs"]["d1"]["seconds_left"]
        assert left == pytest.approx(max(0.0, told - 20.0 - later), abs=0.05)


def test_a_finished_run_is_drawn_as_its_record_draws_it() -> None:
    """Nothing is interactive once the run is over and its dialogs settled: the page is the
    record, tag for tag (but for the marks of an answer's place and a settled dialog), also
    where a dialog sits in a tool card."""
    from atomic_jupyter.session.run_tracker import RunTracker
    from atomic_jupyter.ui.record import run_record
    from tests.unit.ui.test_run_parts import guarded_run

    run, dialog = guarded_run()  # a bash call refused in its dialog, text around it
    tracker = RunTracker(lambda callback: callback(None))
    tracker.sent(run)
    tracker.finish([run])
    output = RunOutput(run, on_stop=lambda: None)
    live = page_html(output.widget)
    assert f'data-dialog="{dialog.id}"' not in live  # settled: the record's card
    record = run_record(run).html
    inner = record[record.index(">") + 1 : -len("</div>")]
    assert re.sub(r' data-answer="[^"]*"', "", live) == dom_form(inner)


def test_close_lets_the_dialogs_go_and_closes_the_widget() -> None:
    dialog, wire = make_dialog("d1")
    output = run_asking(dialog)
    renders = output.renders
    output.close()
    assert output.widget.comm is None and output.content == PageContent()
    dialog.respond("Alpha")  # the output no longer follows it
    choose(output, "d1", 1)
    output.render()
    assert output.renders == renders and len(wire.sent) == 1
    output.close()  # twice is once
