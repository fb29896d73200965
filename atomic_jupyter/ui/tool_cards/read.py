"""``read``: the file's lines, numbered from where the read began, or the image read."""

from __future__ import annotations

import re

from atomic_jupyter.ui.tool_cards.card import ToolCall, ToolCard, final_text
from atomic_jupyter.ui.tool_cards.generic import render_generic
from atomic_jupyter.ui.tool_cards.lines import count_lines
from atomic_jupyter.ui.tool_cards.markup import error, kv_table, note, path_header, root
from atomic_jupyter.ui.tool_cards.values import (
    args_rest,
    as_dict,
    as_int,
    as_str,
    is_int,
    is_str,
    one_line,
)
from atomic_jupyter.ui.tool_cards.views import code_view, images_html

__all__ = ["render_read"]

_READ_NOTICE = re.compile(
    r"\n\n(\[(?:\d+ more lines? in file\. Use offset=\d+ to continue\."
    r"|Showing lines (\d+)-(\d+) of \d+[^\]\n]*)\])\Z"
)
_TOO_LONG = re.compile(r"\[Line \d+ is [^\]\n]*\]\Z")


def _asked_span(offset: int | None, limit: int | None, first: int) -> str:
    """The lines asked for, as the header shows them (``""`` for the whole file)."""
    if limit is not None and limit > 0:
        return f"lines {first}–{first + limit - 1}"
    if offset is not None and offset > 1:
        return f"from line {first}"
    return ""


def render_read(call: ToolCall) -> ToolCard:
    """The card of a ``read``.

    Parameters
    ----------
    call:
        What is known of the call.

    Returns
    -------
    ToolCard
        Its summary (the path and the lines read); before it runs (``command_html``): the
        path and the lines asked for (the lines read, once known); after (``body_html``): the
        text as numbered code (or the image read), then the agent's notices; or the error.
    """
    args = as_dict(call.args)
    path = as_str(args.get("path"))
    if path is None:
        return render_generic(call)
    offset = as_int(args.get("offset"))
    limit = as_int(args.get("limit"))
    first = offset if offset is not None and offset > 0 else 1
    span = _asked_span(offset, limit, first)
    text = final_text(call)
    body = []
    if call.is_error:
        body.append(error(text))
    elif call.done:
        images = call.images if isinstance(call.images, (tuple, list)) else ()
        if images or text.startswith("Read image file ["):
            if text:
                body.append(note(text[:5000]))
            body.append(images_html(images))
            span = ""
        elif _TOO_LONG.fullmatch(text):
            body.append(note(text))
        else:
            notice = ""
            match = _READ_NOTICE.search(text)
            content = text
            if match:
                notice = match.group(1)
                content = text[: match.start()]
            count = count_lines(content)
            if match and match.group(2):
                span = f"lines {match.group(2)}–{match.group(3)}"
            elif count:
                span = f"lines {first}–{first + count - 1}"
            body.append(code_view(content, path, first_line=first) if content else "")
            if notice:
                body.append(note(notice))
        unsupported = as_dict(call.details).get("imageUnsupportedByModel")
        if isinstance(unsupported, str):
            body.append(note(f"[the model ({one_line(unsupported, 80)}) cannot see images]"))
    command = path_header(path, f"  {span}" if span else "")
    summary = one_line(path, 100) + (f"  {span}" if span else "")
    known = {"path": is_str, "offset": is_int, "limit": is_int}
    args_html = kv_table(call.args) if args_rest(call.args, known) else ""
    return ToolCard(
        summary,
        command_html=root(command),
        body_html=root("".join(body)),
        args_html=root(args_html),
    )
