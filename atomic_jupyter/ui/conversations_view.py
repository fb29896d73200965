"""The listing of a notebook's saved conversations: a line each, with a Resume button."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from atomic_jupyter.ui.lines_output import Line, LinesOutput, error_text, text_line
from atomic_jupyter.ui.page_protocol import PageMessage, ResumeClicked
from atomic_jupyter.ui.text import button_html

__all__ = ["ConversationsView"]


class ConversationsView(LinesOutput):
    """A heading, then one row per conversation: a Resume button (none for a conversation
    that cannot be continued) and its line; below them, what the last Resume did. A click
    runs the row's action on the kernel's thread; what it returns (a sentence) or raises is
    shown below the rows. One resume at a time: the buttons wait while one runs.

    Parameters
    ----------
    heading:
        The line above the rows.
    rows:
        ``(line, action)`` per conversation; ``action`` is None when it cannot be resumed.
    """

    def __init__(self, heading: str, rows: Sequence[tuple[str, Callable[[], str] | None]]) -> None:
        super().__init__("conversations")
        self.heading = heading
        self.rows = list(rows)
        self.resuming: int | None = None  # the row whose resume runs
        self.resumed: int | None = None  # the row resumed last
        self.said = ""
        self.error = ""
        self.render()

    def lines(self) -> list[Line]:
        """The heading, a line per conversation, and what the last Resume did."""
        lines = [text_line("heading", "atomic-conversations-heading", self.heading, "bold")]
        for index, (line, action) in enumerate(self.rows):
            button = None
            if action is not None:
                label = (
                    "Resuming…"
                    if index == self.resuming
                    else "Resumed"
                    if index == self.resumed
                    else "Resume"
                )
                button = button_html(
                    label,
                    "resume",
                    "atomic-resume",
                    title="Continue this conversation",
                    disabled=self.resuming is not None,
                    row=str(index),
                )
            lines.append(text_line(f"row{index}", "atomic-conversation", line, live=button))
        if self.said:
            lines.append(text_line("said", "atomic-conversations-said", self.said))
        if self.error:
            lines.append(text_line("error", "atomic-conversations-error", self.error, "error"))
        return lines

    def act(self, message: PageMessage) -> None:
        """A click on a row's Resume (one while another runs, or of no row, does nothing)."""
        if not isinstance(message, ResumeClicked) or self.resuming is not None:
            return
        index = message.row if 0 <= message.row < len(self.rows) else None
        action = self.rows[index][1] if index is not None else None
        if index is None or action is None:
            return
        self.resuming, self.error = index, ""
        self.render()
        try:
            said = action()
        except BaseException as exc:  # shown below the rows, like a cell's error
            self.error = error_text(exc)
            self.resuming = None
            self.render()
            return
        self.resuming, self.resumed, self.said = None, index, said
        self.render()
