"""``write``: the file's path and its new content, highlighted for its language."""

from __future__ import annotations

from atomic_jupyter.ui.tool_cards.card import ToolCall, ToolCard, final_text
from atomic_jupyter.ui.tool_cards.generic import render_generic
from atomic_jupyter.ui.tool_cards.lines import count_lines
from atomic_jupyter.ui.tool_cards.markup import error, kv_table, note, path_header, root
from atomic_jupyter.ui.tool_cards.values import (
    args_rest,
    as_dict,
    as_str,
    is_str,
    one_line,
    plural,
    text_of,
)
from atomic_jupyter.ui.tool_cards.views import code_view

__all__ = ["render_write"]


def render_write(call: ToolCall) -> ToolCard:
    """The card of a ``write``.

    Parameters
    ----------
    call:
        What is known of the call.

    Returns
    -------
    ToolCard
        Its summary (the path, how many lines); before it runs (``command_html``): the path
        and the content as code; after (``body_html``): the error, or the tool's closing
        message.
    """
    args = as_dict(call.args)
    path = as_str(args.get("path"))
    content = as_str(args.get("content"))
    if path is None and content is None:
        return render_generic(call)
    path = path or ""
    command = [path_header(path) if path else ""]
    summary = one_line(path, 100)
    if content is not None:
        lines = count_lines(content)
        summary = f"{summary}  {plural(lines, 'line')}".strip()
        command.append(code_view(content, path) if content else note("(empty file)"))
    body = ""
    if call.is_error:
        body = error(final_text(call))
    elif call.done and text_of(call.result):
        body = note(one_line(text_of(call.result), 500))
    known = {"path": is_str, "content": is_str}
    args_html = kv_table(call.args, ("content",)) if args_rest(call.args, known) else ""
    return ToolCard(
        summary,
        command_html=root("".join(command)),
        body_html=root(body),
        args_html=root(args_html),
    )
