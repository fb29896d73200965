"""Any other tool (an extension's): its arguments as rows, its result, its images."""

from __future__ import annotations

from typing import Any

from atomic_jupyter.ui.tool_cards.card import ToolCall, ToolCard
from atomic_jupyter.ui.tool_cards.markup import error, kv_table, root
from atomic_jupyter.ui.tool_cards.values import one_line, text_of
from atomic_jupyter.ui.tool_cards.views import images_html, output_view

__all__ = ["render_generic"]


def _summary(args: Any) -> str:
    """The first short one-line string argument (else the first line of the first one)."""
    if isinstance(args, str):
        return one_line(args, 100)
    if not isinstance(args, dict):
        return ""
    strings = [value for value in args.values() if isinstance(value, str) and value.strip()]
    for value in strings:
        if len(value) <= 100 and "\n" not in value.strip():
            return one_line(value, 100)
    return one_line(strings[0].strip().split("\n", 1)[0], 100) if strings else ""


def render_generic(call: ToolCall) -> ToolCard:
    """The card of any tool.

    Parameters
    ----------
    call:
        What is known of the call.

    Returns
    -------
    ToolCard
        Before it runs (``command_html``): the arguments as key/value rows; after
        (``body_html``): the text result with its terminal colours (or the output so far),
        then any images; or the error.
    """
    parts = []
    if call.done:
        text = text_of(call.result)
        if call.is_error:
            parts.append(error(text))
        elif text:
            parts.append(output_view(text, tail=False))
        parts.append(images_html(call.images))
    else:
        output = text_of(call.output)
        if output:
            parts.append(output_view(output))
    return ToolCard(
        _summary(call.args),
        command_html=root(kv_table(call.args)),
        body_html=root("".join(parts)),
    )
