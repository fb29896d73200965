"""A streamed answer renders block by block: settled blocks once, only the end again.

``MarkdownStream`` must give, for every prefix of a document, exactly the whole-document
rendering, and never change a block it called settled. ``AnswerView`` must show that rendering
(chunks + tail, in order) while the widget that changes, the tail, stays small however long
the answer grows, and chunk widgets are never touched once sent.
"""

from __future__ import annotations

import random
import re

import pytest

from atomic_jupyter.ui import markdown as md
from atomic_jupyter.ui.answer_view import CHUNK_BYTES, GROUP_SIZE, AnswerView
from atomic_jupyter.ui.markdown import MarkdownStream, render_markdown, wrap_markdown
from tests.harness.support import long_markdown
from tests.test_markdown import FRAGMENTS, REFERENCES, STREAMED, _fresh

WRAPPER = re.compile(r'^<div class="atomic-markdown" style="[^"]*">(.*)</div>$', re.S)


def inner(value: str) -> str:
    """An answer piece's HTML without its ``atomic-markdown`` container."""
    if not value:
        return ""
    match = WRAPPER.match(value)
    assert match, value[:80]
    return match.group(1)


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


def shown(view: AnswerView) -> str:
    return "".join(inner(c.value) for c in view.chunks) + inner(view.tail.value)


def test_the_view_shows_exactly_the_whole_rendering_at_every_step() -> None:
    rng = random.Random(5)
    doc = long_markdown(40_000)
    view = AnswerView()
    for prefix in steps(doc, rng, 300):
        view.update(prefix)
        assert shown(view) == inner(render_markdown(prefix))
    assert len(view.chunks) > 3, "a 40 KB answer should have been split into chunks"


def test_only_the_tail_changes_and_it_stays_small_however_long_the_answer() -> None:
    """The cost of an update: chunk widgets are never changed once made, and the tail holds
    less than a chunk's worth of settled blocks plus the blocks still growing."""
    rng = random.Random(9)
    doc = long_markdown(300_000)
    view = AnswerView()
    first_values: dict[int, str] = {}
    largest_tail = 0
    for prefix in steps(doc, rng, 400):
        view.update(prefix)
        for chunk in view.chunks:
            assert first_values.setdefault(id(chunk), chunk.value) == chunk.value
        largest_tail = max(largest_tail, len(view.tail.value))
    largest_block = max(len(b) for b in MarkdownStream().update(doc).blocks)
    assert largest_tail < CHUNK_BYTES + 3 * largest_block + 500, largest_tail
    assert all(len(g.children) <= GROUP_SIZE for g in view._groups)
    assert len(view.root.children) <= len(view.chunks) // GROUP_SIZE + 2
    assert shown(view) == inner(render_markdown(doc))


def test_a_reference_definition_arriving_late_rebuilds_the_view_correctly() -> None:
    doc = long_markdown(20_000) + "\n[late][r]\n\n[r]: https://example.com/late\n"
    view = AnswerView()
    for prefix in steps(doc, random.Random(2), 500):
        view.update(prefix)
    assert shown(view) == inner(render_markdown(doc))
    assert 'href="https://example.com/late"' in shown(view)


def test_the_first_text_of_an_answer_needs_no_chunk() -> None:
    view = AnswerView()
    view.update("Hello **world**")
    assert view.chunks == [] and inner(view.tail.value) == inner(render_markdown("Hello **world**"))
    view.update("")
    assert view.tail.value == "" and view.tail.layout.display == "none"


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
