r"""Showing untrusted text. Every string from the agent goes through here (or through the
record's renderer, which uses these) before it is part of a page.

Text is escaped into markup written by this package, and never handed to the page's LaTeX
typesetter (the outputs carry :data:`~atomic_jupyter.ui.record.NO_TYPESETTING`), so ``$...$``
in a title is shown as written. Terminal colour codes in it (extensions colour their status
lines with the agent's theme, tools colour their output) become styled spans, and every other
control sequence is removed (:mod:`atomic_jupyter.ui.ansi`); :func:`plain` gives the text
alone.
"""

from __future__ import annotations

import html
from collections.abc import Iterable

from atomic_jupyter.ui.ansi import ansi_to_html, strip_ansi

__all__ = ["button_html", "escape", "plain", "pre_html"]

_PRE_STYLE = "margin:0;white-space:pre-wrap;word-break:break-word;font-family:var(--jp-code-font-family,monospace);font-size:12px"


def escape(text: str) -> str:
    """HTML-escape ``text`` (``<``, ``>``, ``&`` and both quotes)."""
    return html.escape(text, quote=True)


def plain(text: str) -> str:
    """Agent text without terminal control sequences (for a label, a plain-text record)."""
    return strip_ansi(text)


def pre_html(lines: Iterable[str], color: str | None = None) -> str:
    """Escaped lines in a ``<pre>`` block (terminal colours as styled spans), optionally
    coloured (that colour is ours, not the agent's)."""
    style = _PRE_STYLE + (f";color:{color}" if color else "")
    return f'<pre style="{style}">' + ansi_to_html("\n".join(lines)) + "</pre>"


def button_html(
    label: str,
    action: str,
    cls: str,
    *,
    title: str = "",
    disabled: bool = False,
    **data: str,
) -> str:
    """A real ``<button>`` for an output's page: a click sends ``{"type": action, **data}``
    to the kernel (see ``output_widget.js``); ``data`` keys are single lowercase words."""
    attrs = "".join(f' data-{key}="{escape(str(value))}"' for key, value in data.items())
    if title:
        attrs += f' title="{escape(title)}"'
    if disabled:
        attrs += " disabled"
    return (
        f'<button type="button" class="jupyter-button widget-button {escape(cls)}" '
        f'data-action="{escape(action)}"{attrs}>{escape(label)}</button>'
    )
