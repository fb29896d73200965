"""Which view renders which tool, and :func:`render_tool`, which never raises."""

from __future__ import annotations

from collections.abc import Callable

from atomic_jupyter.ui.tool_cards.bash import render_bash
from atomic_jupyter.ui.tool_cards.card import ToolCall, ToolCard
from atomic_jupyter.ui.tool_cards.edit import render_edit
from atomic_jupyter.ui.tool_cards.generic import render_generic
from atomic_jupyter.ui.tool_cards.grep import render_grep
from atomic_jupyter.ui.tool_cards.limits import MAX_CHARS
from atomic_jupyter.ui.tool_cards.listing import render_find, render_ls
from atomic_jupyter.ui.tool_cards.markup import div, esc, root
from atomic_jupyter.ui.tool_cards.notebook import (
    render_notebook_edit,
    render_notebook_read,
    render_notebook_run,
)
from atomic_jupyter.ui.tool_cards.python import render_python
from atomic_jupyter.ui.tool_cards.read import render_read
from atomic_jupyter.ui.tool_cards.styles import NOTE_STYLE
from atomic_jupyter.ui.tool_cards.values import text_of
from atomic_jupyter.ui.tool_cards.write import render_write

__all__ = ["RENDERERS", "render_tool"]


def _render_powershell(call: ToolCall) -> ToolCard:
    return render_bash(call, "powershell", "PS> ")


#: The view of each built-in tool, by its name; any other tool gets :func:`render_generic`.
RENDERERS: dict[str, Callable[[ToolCall], ToolCard]] = {
    "read": render_read,
    "write": render_write,
    "edit": render_edit,
    "bash": render_bash,
    "powershell": _render_powershell,
    "grep": render_grep,
    "find": render_find,
    "ls": render_ls,
    "python": render_python,
    "notebook_read": render_notebook_read,
    "notebook_edit": render_notebook_edit,
    "notebook_run": render_notebook_run,
}


def render_tool(call: ToolCall) -> ToolCard:
    """The card of one tool call: a summary, the main view and the arguments.

    The view is chosen by the tool's name (``read``, ``write``, ``edit``, ``bash``,
    ``grep``, ``find``, ``ls``; 1.6's ``powershell`` is shown as ``bash``); any other tool gets
    the generic view (arguments as key/value rows, then the text result with its terminal
    colours, then any images). Never raises: input a view cannot make sense of is shown by the
    generic view.

    Parameters
    ----------
    call:
        What is known of the call.

    Returns
    -------
    ToolCard
        Its summary (plain text), and HTML safe for ``innerHTML``: what the call is about to
        do, what came of it (its output, then its result), and its arguments in full.
    """
    name = call.name if isinstance(call.name, str) else ""
    renderer = RENDERERS.get(name, render_generic)
    try:
        return renderer(call)
    except Exception:  # a bug here must not break the transcript
        pass
    try:
        return render_generic(call)
    except Exception:
        text = text_of(call.result) if call.done else text_of(call.output)
        return ToolCard("", body_html=root(div(NOTE_STYLE, esc(text[:MAX_CHARS]))))
