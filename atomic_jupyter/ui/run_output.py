"""The live output of one prompt's run, or of one dialog: a single
:class:`~atomic_jupyter.ui.output_widget.OutputWidget` fed by the record's renderer.

:class:`RunOutput` describes the run with :mod:`atomic_jupyter.ui.run_parts` and renders
each part with :func:`~atomic_jupyter.ui.record.part_html`, the function that writes the
record, so the live view and the record cannot differ except where the live one is
interactive: a dialog waiting for an answer is a place for its controls
(:mod:`~atomic_jupyter.ui.dialog_controls`), a streamed answer a place for its chunks, and
a run still going has a Stop button. Only the blocks whose revision changed are rendered
again, and only what changed is sent. A streamed answer sends its settled Markdown blocks
once, gathered into chunks of at least :data:`CHUNK_BYTES`, and its unsettled tail at each
render, so an update does not grow with the answer's length.

The session view calls :meth:`RunOutput.render` at most about 20 times a second, plus once
at the end, and :meth:`RunOutput.close` once the output is its record. Render and close
hold the output's lock: the one render made off the kernel's thread (a kernel call waiting
while a cell computes) never overlaps another.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from atomic_jupyter.session.dialogs import Dialog
from atomic_jupyter.session.observers import Subscription
from atomic_jupyter.session.runs import PromptRun
from atomic_jupyter.session.transcript import Block, DialogBlock, ToolBlock
from atomic_jupyter.ui.dialog_controls import answer_from_page, describe_controls, dialog_place
from atomic_jupyter.ui.markdown import MarkdownStream, record_markup
from atomic_jupyter.ui.output_base import OutputBase
from atomic_jupyter.ui.page_protocol import (
    DialogAnswer,
    DialogControls,
    PageContent,
    PageMessage,
    StopClicked,
)
from atomic_jupyter.ui.record import NO_TYPESETTING, ROOT_STYLE, part_html
from atomic_jupyter.ui.run_parts import (
    AnswerSlot,
    DialogSlot,
    Part,
    StopSlot,
    describe_block,
    describe_dialog,
    run_sections,
)
from atomic_jupyter.ui.text import escape

__all__ = ["CHUNK_BYTES", "DialogOnPage", "RunOnPage", "RunOutput"]

#: Settled HTML of an answer gathered before it is sent as a chunk of its own.
CHUNK_BYTES = 4096

_STOP = (
    '<button type="button" class="atomic-stop jupyter-button widget-button" '
    'data-action="stop" title="Stop the agent\'s run">Stop</button>'
)

OnRule = Callable[[Dialog], None]


class _Answer:
    """One streamed answer's chunks and tail, in the record's form."""

    def __init__(self) -> None:
        self.stream = MarkdownStream()
        self.frozen = 0  # the answer's blocks that are in chunks
        self.chunks: list[str] = []
        self.tail = ""
        self.text = ""

    def update(self, text: str) -> None:
        pieces = self.stream.update(text)
        replaced = not text.startswith(self.text)  # not more of the text: another one
        self.text = text
        if replaced or pieces.settled < self.frozen:  # a block thought settled changed
            self.frozen, self.chunks = 0, []
        if pieces.settled > self.frozen:
            # Measured as sent: the record's form is much shorter than the rendering.
            settled = record_markup(pieces.html(self.frozen, pieces.settled))
            if len(settled) >= CHUNK_BYTES:
                self.chunks = [*self.chunks, settled]
                self.frozen = pieces.settled
        self.tail = record_markup(pieces.html(self.frozen))


class _Dialogs:
    """The dialogs an output draws: their controls' descriptions, the page's answers to
    them, and a subscription to each (a change is drawn at once)."""

    def __init__(self, on_rule: OnRule | None, changed: Callable[[], None]) -> None:
        self.on_rule = on_rule
        self._changed = changed
        self.known: dict[str, Dialog] = {}
        self.errors: dict[str, str] = {}
        self.described: dict[str, DialogControls] = {}
        self._subscriptions: list[Subscription] = []

    def place(self, dialog: Dialog) -> str:
        """The live place of ``dialog``; once it is settled, its record's form, marked
        with ``data-dialog-done``."""
        if dialog.id not in self.known:
            self.known[dialog.id] = dialog
            self._subscriptions.append(dialog.observe(lambda _d: self._changed()))
        if not dialog.pending:  # the record's form
            return part_html(describe_dialog(dialog))
        return dialog_place(dialog)

    def controls(self) -> dict[str, DialogControls]:
        """The descriptions of the open dialogs (made once each: the page counts down)."""
        shown = {}
        for dialog_id, dialog in self.known.items():
            if not dialog.pending:
                self.described.pop(dialog_id, None)
                continue
            described = self.described.get(dialog_id)
            error = self.errors.get(dialog_id, "")
            if described is None or described["error"] != error:
                described = describe_controls(dialog, self.on_rule is not None, error)
                self.described[dialog_id] = described
            shown[dialog_id] = described
        return shown

    def answer(self, message: DialogAnswer) -> None:
        """A person's answer from the page (to a dialog of this output only)."""
        dialog = self.known.get(message.id)
        if dialog is None:
            return
        self.errors[dialog.id] = answer_from_page(dialog, message, self.on_rule)
        self._changed()

    def close(self) -> None:
        for subscription in self._subscriptions:
            subscription.remove()
        self._subscriptions = []


class RunOnPage:
    """One run as the page draws it: its header with Stop, the prompt, the blocks, the footer,
    as keyed blocks of the record's HTML (keys start with ``prefix``, so a run can be drawn
    inside another output, as the panel draws the runs sent from its editor).

    Parameters
    ----------
    run:
        The run to show.
    on_stop:
        Called when its Stop is clicked (aborts the agent's run).
    on_rule:
        Called with a dialog answered with "answer this way from now on" checked.
    changed:
        Asks for a render on the kernel's thread (a dialog of the run changed).
    prefix:
        What every key of the run starts with.
    """

    def __init__(
        self,
        run: PromptRun,
        on_stop: Callable[[], None],
        on_rule: OnRule | None,
        changed: Callable[[], None],
        prefix: str = "",
    ) -> None:
        self.run = run
        self.prefix = prefix
        self._on_stop = on_stop
        self._dialogs = _Dialogs(on_rule, changed)
        self._blocks: dict[int, tuple[Any, ...]] = {}  # id -> (rev, key, its dialogs' states)
        self._answers: dict[str, _Answer] = {}
        self._html: dict[str, str] = {}
        self.renders = 0

    def fill(self, content: PageContent) -> None:
        """Add the run as it is now to ``content`` (rendering only the blocks that changed)."""
        self.renders += 1
        for section in run_sections(self.run, self.prefix):
            if section.block is not None:
                self._block(section.key, section.block, content)
            elif section.part is not None:
                self._part(section.key, section.part, content)
        content.dialogs.update(self._dialogs.controls())

    def _block(self, key: str, block: Block, content: PageContent) -> None:
        current = block.rev  # read before the block is read: a change after it shows next time
        # A block with a dialog is drawn again when the dialog changes (no new revision).
        seen = (current, key, _dialog_states(block))
        if self._blocks.get(id(block)) == seen:
            if key in self._html:
                content.order.append(key)
                content.blocks[key] = self._html[key]
                self._answer_content(key, content)
            return
        self._blocks[id(block)] = seen
        part = describe_block(block)
        if part is None:
            self._html.pop(key, None)
            return
        self._part(key, part, content)

    def _part(self, key: str, part: Part, content: PageContent) -> None:
        html = part_html(part, lambda slot: self._slot(key, slot))
        self._html[key] = html
        content.order.append(key)
        content.blocks[key] = html
        self._answer_content(key, content)

    def _answer_content(self, key: str, content: PageContent) -> None:
        answer = self._answers.get(key)
        if answer is not None:
            content.chunks[key] = answer.chunks
            content.tails[key] = answer.tail

    def _slot(self, key: str, part: Part) -> str | None:
        if isinstance(part, StopSlot):
            if not part.active:
                return ""
            return _STOP.replace(
                'data-action="stop"', f'data-action="stop" data-run="{escape(self.prefix)}"'
            )
        if isinstance(part, DialogSlot):
            return self._dialogs.place(part.dialog)
        assert isinstance(part, AnswerSlot)
        answer = self._answers.get(key)
        if answer is None:
            answer = self._answers[key] = _Answer()
        answer.update(part.text)
        return f'<div class="{escape(part.cls)} atomic-markdown" data-answer="{escape(key)}"></div>'

    def act(self, message: PageMessage) -> None:
        """A click from the page: this run's Stop, or an answer to one of its dialogs."""
        if isinstance(message, StopClicked) and message.run == self.prefix:
            if not self.run.finished:  # a click on its way as the run ended: no Stop now
                self._on_stop()
        elif isinstance(message, DialogAnswer):
            self._dialogs.answer(message)

    def close(self) -> None:
        """Let the run's dialogs go."""
        self._dialogs.close()
        self._blocks.clear()
        self._answers.clear()


class RunOutput(OutputBase):
    """The one widget of a run (:class:`RunOnPage` in an output of its own).

    Parameters
    ----------
    run:
        The run to show.
    on_stop:
        Called when Stop is clicked (aborts the agent's run).
    on_rule:
        Called with a dialog answered with "answer this way from now on" checked.
    schedule:
        Asks for a render on the kernel's thread (a dialog of the run changed).
    """

    def __init__(
        self,
        run: PromptRun,
        on_stop: Callable[[], None],
        on_rule: OnRule | None = None,
        schedule: Callable[[], None] | None = None,
    ) -> None:
        self.run = run
        self.blocks = RunOnPage(run, on_stop, on_rule, schedule or self.render)
        super().__init__(f"atomic-run atomic-transcript {NO_TYPESETTING}", ROOT_STYLE)
        self.render()

    def page_content(self) -> PageContent:
        """The run as it is now."""
        content = PageContent()
        self.blocks.fill(content)
        return content

    def act(self, message: PageMessage) -> None:
        """A click for the run (its Stop, an answer to one of its dialogs)."""
        self.blocks.act(message)

    def let_go(self) -> None:
        """Let the run's dialogs go."""
        self.blocks.close()

    @property
    def renders(self) -> int:
        """How many times the run was rendered."""
        return self.blocks.renders


class DialogOnPage:
    """A dialog shown on its own, as the page draws it (one block, keyed ``prefix + "dialog"``):
    its controls while it waits, then its question and outcome as the record has them."""

    def __init__(
        self,
        dialog: Dialog,
        on_rule: OnRule | None,
        changed: Callable[[], None],
        prefix: str = "",
    ) -> None:
        self.dialog = dialog
        self.prefix = prefix
        self._dialogs = _Dialogs(on_rule, changed)

    def fill(self, content: PageContent) -> None:
        """Add the dialog as it is now to ``content``."""
        key = f"{self.prefix}dialog"
        content.order.append(key)
        content.blocks[key] = self._dialogs.place(self.dialog)
        content.dialogs.update(self._dialogs.controls())

    def act(self, message: PageMessage) -> None:
        """An answer from the page (to this dialog only)."""
        if isinstance(message, DialogAnswer):
            self._dialogs.answer(message)

    def close(self) -> None:
        """Stop following the dialog."""
        self._dialogs.close()


def _dialog_states(block: Block) -> tuple[tuple[str, str, str], ...]:
    return tuple((d.id, d.state, d.outcome) for d in _dialogs_of(block))


def _dialogs_of(block: Block) -> list[Dialog]:
    if isinstance(block, DialogBlock):
        return [block.dialog] if block.dialog is not None else []
    if isinstance(block, ToolBlock):
        found = list(block.dialogs)
        for child in list(block.children):
            found += _dialogs_of(child)
        return found
    return []
