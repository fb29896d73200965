r"""Showing untrusted text. Every string from the agent goes through here or into a text trait.

``Button`` descriptions, ``Text``/``Textarea`` values and placeholders and ``Dropdown``
option labels are rendered as text by the frontend. ``Label`` is not safe for agent text:
its view hands the value to the page's LaTeX typesetter, so ``$...$`` in a title would be
typeset as maths (and MathJax's ``\style`` could restyle the page). So every line of agent
text is a :class:`TextLine`: an ``HTML`` widget (whose view only assigns ``innerHTML``,
with no typesetting) holding the text escaped here, inside markup written by this package.
Terminal colour codes in it (extensions colour their status lines with the agent's theme,
tools colour their output) become styled spans, and every other control sequence is
removed (:mod:`atomic_jupyter.ui.ansi`); text traits get :func:`plain`.
"""

from __future__ import annotations

import html
from collections.abc import Iterable

import ipywidgets as w

from atomic_jupyter.ui.ansi import ansi_to_html, strip_ansi

__all__ = ["TextLine", "escape", "plain", "pre_block", "pre_html"]

_PRE_STYLE = "margin:0;white-space:pre-wrap;word-break:break-word;font-family:var(--jp-code-font-family,monospace);font-size:12px"


def escape(text: str) -> str:
    """HTML-escape ``text`` (``<``, ``>``, ``&`` and both quotes)."""
    return html.escape(text, quote=True)


def plain(text: str) -> str:
    """Agent text for a text trait (a button's description, an option's label): without
    terminal control sequences."""
    return strip_ansi(text)


def pre_html(lines: Iterable[str], color: str | None = None) -> str:
    """Escaped lines in a ``<pre>`` block (terminal colours as styled spans), optionally
    coloured (that colour is ours, not the agent's)."""
    style = _PRE_STYLE + (f";color:{color}" if color else "")
    return f'<pre style="{style}">' + ansi_to_html("\n".join(lines)) + "</pre>"


def pre_block(lines: Iterable[str], color: str | None = None, **kwargs: object) -> w.HTML:
    """An ``HTML`` widget showing escaped lines verbatim."""
    return w.HTML(value=pre_html(lines, color), **kwargs)


class TextLine(w.HTML):  # type: ignore[misc]
    """One block of plain text, shown exactly as given (escaped into an ``HTML`` widget).

    Parameters
    ----------
    text:
        The text.
    bold:
        Show it in bold.
    color:
        A CSS colour of ours (never the agent's).
    """

    def __init__(
        self, text: str = "", *, bold: bool = False, color: str | None = None, **kwargs: object
    ) -> None:
        self._text = text
        self._bold = bold
        self._color = color
        super().__init__(value=self._markup(), **kwargs)

    def _markup(self) -> str:
        style = "white-space:pre-wrap;word-break:break-word"
        if self._bold:
            style += ";font-weight:bold"
        if self._color:
            style += f";color:{self._color}"
        return f'<span style="{style}">{ansi_to_html(self._text)}</span>'

    @property
    def text(self) -> str:
        """The text shown."""
        return self._text

    @text.setter
    def text(self, text: str) -> None:
        if text != self._text:
            self._text = text
            self.value = self._markup()

    @property
    def color(self) -> str | None:
        """The text's colour."""
        return self._color

    @color.setter
    def color(self, color: str | None) -> None:
        if color != self._color:
            self._color = color
            self.value = self._markup()
