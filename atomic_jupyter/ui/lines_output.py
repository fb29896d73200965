"""An output of a few lines and buttons, drawn by one
:class:`~atomic_jupyter.ui.output_widget.OutputWidget`: the saved conversations' listing, an
install's progress and the offer to install, ``%atomic_agent bash``'s live output, a
prototype's result.

Each line is made by the record's renderer (:func:`~atomic_jupyter.ui.record.text_html`);
the live view draws the same lines, with buttons where a person acts, so the live view and
the record (:meth:`LinesOutput.record`) differ only by the buttons. A click comes back as a
message on the kernel's thread (:meth:`LinesOutput.act`).
"""

from __future__ import annotations

from dataclasses import dataclass

from atomic_jupyter.ui.ansi import strip_ansi
from atomic_jupyter.ui.output_base import OutputBase
from atomic_jupyter.ui.page_protocol import PageContent
from atomic_jupyter.ui.record import NO_TYPESETTING, ROOT_STYLE, Record, root_html, text_html
from atomic_jupyter.ui.run_parts import Text

__all__ = ["Line", "LinesOutput", "error_text", "text_line"]


@dataclass(frozen=True)
class Line:
    """One keyed line of an output.

    Attributes
    ----------
    key:
        Its key among the output's lines.
    html:
        Its record's HTML (empty: the line is a control only, not in the record).
    plain:
        Its record's plain text.
    live:
        What the live view draws instead (with its buttons); None: ``html``.
    """

    key: str
    html: str
    plain: str = ""
    live: str | None = None


_ROW = "display:flex;align-items:baseline;gap:.5em"


def text_line(key: str, cls: str, text: str, tone: str = "", live: str | None = None) -> Line:
    """A line of text (shown exactly as given), in the record's form; ``live``: HTML the live
    view puts before it, in a row (a button)."""
    html = text_html(Text(cls, text, tone))
    row = (
        None if live is None else f'<div class="atomic-line-row" style="{_ROW}">{live}{html}</div>'
    )
    return Line(key, html, strip_ansi(text), row)


def error_text(exc: BaseException) -> str:
    """What a button's action that raised ``exc`` says, as a cell would (IPython's own
    rendering of its errors, where it has one)."""
    rendered = getattr(exc, "_render_traceback_", None)
    return "\n".join(rendered()) if rendered else f"{type(exc).__name__}: {exc}"


class LinesOutput(OutputBase):
    """The base of an output of lines: its record made from the same lines.

    Parameters
    ----------
    kind:
        What the output is: its root's ``atomic-`` class, and its record's
        ``atomic-record-`` class.
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        super().__init__(f"atomic-{kind} {NO_TYPESETTING}", ROOT_STYLE)

    def lines(self) -> list[Line]:
        """The output's lines as they are now (none, unless a kind has some)."""
        return []

    def record_lines(self) -> list[Line]:
        """The lines the record is made of (the output's own, unless a kind adds some)."""
        return self.lines()

    def fill(self, content: PageContent) -> None:
        """Add what the output shows besides its lines to ``content`` (nothing, unless a kind
        shows more: runs drawn inside it)."""

    def page_content(self) -> PageContent:
        """The lines (each as the live view draws it), then what :meth:`fill` adds."""
        content = PageContent()
        for line in self.lines():
            shown = line.html if line.live is None else line.live
            if shown:
                content.order.append(line.key)
                content.blocks[line.key] = shown
        self.fill(content)
        return content

    def record(self) -> Record:
        """The output's record: its lines without their buttons (nothing for no line)."""
        lines = [line for line in self.record_lines() if line.html]
        if not lines:
            return Record("", "")
        return Record(
            root_html(self.kind, [line.html for line in lines]),
            "\n".join(line.plain for line in lines if line.plain),
        )
