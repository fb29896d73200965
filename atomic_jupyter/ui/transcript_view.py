"""The transcript of one prompt: streamed Markdown, thinking, tool cards, notes and dialogs.

:class:`TranscriptView` turns a :class:`~atomic_jupyter.session.transcript.Transcript` into
widgets. It only ever reads the transcript, and only re-renders blocks whose revision changed;
a streaming answer converts and sends only its unsettled end (see
:mod:`~atomic_jupyter.ui.answer_view`). The session view
calls
:meth:`TranscriptView.render` at most about 20 times a second, plus once at the end.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ipywidgets as w

from atomic_jupyter.session.dialogs import Dialog
from atomic_jupyter.session.runs import PromptRun
from atomic_jupyter.session.transcript import (
    AssistantBlock,
    Block,
    DialogBlock,
    NoteBlock,
    ToolBlock,
    UserBlock,
)
from atomic_jupyter.ui.answer_view import AnswerView
from atomic_jupyter.ui.record import footer_text, run_state, tool_heading
from atomic_jupyter.ui.text import TextLine, pre_html

__all__ = ["TranscriptView"]


_LEVEL_COLORS = {
    "info": "var(--jp-ui-font-color2,#555)",
    "warning": "var(--jp-warn-color1,#e65100)",
    "error": "var(--jp-error-color1,#c62828)",
}


class _AssistantView:
    def __init__(self) -> None:
        self.thinking = w.HTML("")
        self.fold = w.Accordion(children=[self.thinking], titles=("Thinking",), selected_index=None)
        self.fold.add_class("atomic-thinking")
        self.fold.layout.display = "none"
        self.answer = AnswerView()
        self.error = TextLine("", color=_LEVEL_COLORS["error"])
        self.error.add_class("atomic-assistant-error")
        self.error.layout.display = "none"
        self.root = w.VBox([self.fold, self.answer.root, self.error])
        self.root.add_class("atomic-assistant")
        self._text: str | None = None
        self._thinking: str | None = None

    def update(self, block: AssistantBlock) -> None:
        thinking = block.thinking
        if thinking != self._thinking:
            self._thinking = thinking
            self.thinking.value = pre_html(thinking.split("\n"))
            self.fold.layout.display = None if thinking else "none"
        text = block.text
        if text != self._text:
            self._text = text
            self.answer.update(text)
        error = block.error
        self.error.text = f"The answer ended with an error: {error}" if error else ""
        self.error.layout.display = None if error else "none"


class _ToolView:
    def __init__(self, dialog_widget: Callable[[Dialog], w.Widget]) -> None:
        self._dialog_widget = dialog_widget
        self.dialogs = w.VBox([])
        self.dialogs.add_class("atomic-tool-dialogs")
        self._dialogs_shown: set[str] = set()
        self.header = TextLine("", bold=True)
        self.header.add_class("atomic-tool-header")
        self.args = w.HTML("")
        self.args.add_class("atomic-tool-args")
        self.output = w.HTML("")
        self.output.add_class("atomic-tool-output")
        self.nested = w.VBox([], layout=w.Layout(margin="0 0 0 16px"))
        self.nested.add_class("atomic-tool-nested")
        self._children: dict[int, tuple[int, _ToolView]] = {}
        self.root = w.VBox(
            [self.header, self.args, self.dialogs, self.output, self.nested],
            layout=w.Layout(
                border="1px solid var(--jp-border-color2,#ddd)", padding="4px", margin="4px 0"
            ),
        )
        self.root.add_class("atomic-tool")

    def update(self, block: ToolBlock) -> None:
        self.header.text, card = tool_heading(block)
        for cls in ("atomic-tool-running", "atomic-tool-done", "atomic-tool-error"):
            self.root.remove_class(cls)
        self.root.add_class(
            "atomic-tool-" + ("error" if block.is_error else "done" if block.done else "running")
        )
        args = (
            f'<details class="atomic-tool-args-fold"><summary>arguments</summary>'
            f"{card.args_html}</details>"
            if card.args_html
            else ""
        )
        if args != self.args.value:
            self.args.value = args
        self.args.layout.display = None if args else "none"
        if card.body_html != self.output.value:
            self.output.value = card.body_html
        self._update_dialogs(block)
        self._update_children(block)

    def _update_dialogs(self, block: ToolBlock) -> None:
        """Show the dialogs a hook raised before the call ran, under what it is about to do."""
        new = [d for d in list(block.dialogs) if d.id not in self._dialogs_shown]
        if new:
            self._dialogs_shown.update(d.id for d in new)
            widgets = [self._dialog_widget(d) for d in new]
            self.dialogs.children = (*self.dialogs.children, *widgets)

    def _update_children(self, block: ToolBlock) -> None:
        added = []
        for child in list(block.children):
            rev, view = self._children.get(id(child), (-1, None))
            if view is None:
                view = _ToolView(self._dialog_widget)
                added.append(view.root)
            current = child.rev
            if rev != current:
                view.update(child)
                self._children[id(child)] = (current, view)
        if added:
            self.nested.children = (*self.nested.children, *added)


class TranscriptView:
    """The widget of one run: a header with a Stop button, the blocks, and a footer.

    Parameters
    ----------
    run:
        The run to show.
    on_stop:
        Called when the Stop button is clicked (aborts the agent's run).
    dialog_widget:
        Gives the widget of a dialog raised during the run (built once, where it is kept).
    """

    def __init__(
        self,
        run: PromptRun,
        on_stop: Callable[[], None],
        dialog_widget: Callable[[Dialog], w.Widget],
    ) -> None:
        self.run = run
        self._dialog_widget = dialog_widget
        first = run.message.split("\n", 1)[0]
        self.prompt = TextLine(f"> {first}" + (" …" if "\n" in run.message else ""))
        self.prompt.add_class("atomic-run-prompt")
        self.state = TextLine("", color=_LEVEL_COLORS["info"])
        self.state.add_class("atomic-run-state")
        self.state.layout.margin = "0 12px"
        self.stop = w.Button(
            description="Stop", tooltip="Abort the agent's run", layout=w.Layout(width="auto")
        )
        self.stop.add_class("atomic-stop")
        self.stop.on_click(lambda _b: on_stop())
        self.blocks = w.VBox([])
        self.blocks.add_class("atomic-transcript-blocks")
        self.footer = TextLine("", color=_LEVEL_COLORS["info"])
        self.footer.add_class("atomic-footer")
        self.root = w.VBox(
            [
                w.HBox([self.prompt, self.state, self.stop], layout=w.Layout(align_items="center")),
                self.blocks,
                self.footer,
            ]
        )
        self.root.add_class("atomic-run")
        self.root.add_class("atomic-transcript")
        self._views: dict[int, tuple[int, Any]] = {}
        self.renders = 0
        self.render()

    def render(self) -> None:
        """Bring the widgets in line with the transcript."""
        self.renders += 1
        transcript = self.run.transcript
        # Whether the run is over is read before the blocks: a run that ends while this render
        # reads them is shown as still working, and the final render that follows shows the
        # end with every block final. (Read after, a frontend could see "done" over a stale
        # answer.)
        finished = self.run.finished
        added = []
        for block in transcript.snapshot():
            known = self._views.get(id(block))
            if known is None:
                view = self._make(block)
                added.append(view)
                self._views[id(block)] = (-1, view)
                known = (-1, view)
            rev, view = known
            current = block.rev  # read before the block is read: a change after it shows next time
            if rev != current:
                self._update(block, view)
                self._views[id(block)] = (current, view)
        if added:
            self.blocks.children = (*self.blocks.children, *(self._root(v) for v in added))
        self._render_state(finished)

    @staticmethod
    def _root(view: Any) -> w.Widget:
        return view if isinstance(view, w.Widget) else view.root

    def _make(self, block: Block) -> Any:
        if isinstance(block, AssistantBlock):
            return _AssistantView()
        if isinstance(block, ToolBlock):
            return _ToolView(self._dialog_widget)
        if isinstance(block, DialogBlock):
            assert block.dialog is not None
            return self._dialog_widget(block.dialog)
        label = TextLine("")
        label.add_class("atomic-note" if isinstance(block, NoteBlock) else "atomic-user-message")
        return label

    def _update(self, block: Block, view: Any) -> None:
        if isinstance(block, (AssistantBlock, ToolBlock)):
            view.update(block)
        elif isinstance(block, NoteBlock):
            view.text = block.text
            view.add_class(f"atomic-note-{block.level}")
            view.color = _LEVEL_COLORS.get(block.level)
        elif isinstance(block, UserBlock):
            view.text = f"you: {block.text}"

    def _render_state(self, finished: bool) -> None:
        run = self.run
        transcript = run.transcript
        # The footer first: a frontend that sees "done" sees the footer too.
        footer = footer_text(transcript, finished)
        if footer:
            self.footer.text = footer
        self.state.text = run_state(run, finished)
        self.stop.disabled = finished
        self.stop.layout.display = "none" if finished else None
