"""``edit``: the change as a coloured diff (the agent's own, or one made from the texts sent)."""

from __future__ import annotations

import html
import json
from typing import Any

from atomic_jupyter.ui.tool_cards.card import ToolCall, ToolCard, final_text
from atomic_jupyter.ui.tool_cards.diff import DiffRow, diff_view, pair_rows, parse_diff
from atomic_jupyter.ui.tool_cards.limits import CODE_FOLD
from atomic_jupyter.ui.tool_cards.markup import div, error, kv_table, note, path_header, root
from atomic_jupyter.ui.tool_cards.styles import LABEL_STYLE
from atomic_jupyter.ui.tool_cards.values import as_dict, as_str, one_line, text_of
from atomic_jupyter.ui.tool_cards.views import code_view

__all__ = ["render_edit"]

#: The most edits of one call read, and the longest ``edits`` JSON string parsed.
_MAX_EDITS = 200
_EDITS_JSON_MAX = 2_000_000


def _edits(args: dict[str, Any]) -> list[tuple[str, str]]:
    """The (oldText, newText) pairs of edit arguments in any of the accepted shapes."""
    edits = args.get("edits")
    if isinstance(edits, str) and len(edits) <= _EDITS_JSON_MAX:
        try:
            edits = json.loads(edits)
        except Exception:
            edits = None
    if isinstance(edits, dict):
        edits = [edits]
    pairs: list[tuple[str, str]] = []
    if isinstance(edits, list):
        for edit in edits[:_MAX_EDITS]:
            if isinstance(edit, dict):
                old, new = edit.get("oldText"), edit.get("newText")
                if isinstance(old, str) or isinstance(new, str):
                    pairs.append((text_of(old), text_of(new)))
    old, new = args.get("oldText"), args.get("newText")
    if not pairs and (isinstance(old, str) or isinstance(new, str)):
        pairs.append((text_of(old), text_of(new)))
    return pairs


def _edit_args_html(pairs: list[tuple[str, str]]) -> str:
    """The old and new texts sent, each as code."""
    parts = []
    for index, (old, new) in enumerate(pairs, start=1):
        label = f"edit {index} of {len(pairs)}" if len(pairs) > 1 else "edit"
        parts.append(div(LABEL_STYLE, html.escape(f"{label}: old text"), "aj-tool-label"))
        parts.append(code_view(old, first_line=None, fold=CODE_FOLD))
        parts.append(div(LABEL_STYLE, html.escape(f"{label}: new text"), "aj-tool-label"))
        parts.append(code_view(new, first_line=None, fold=CODE_FOLD))
    return "".join(parts)


def render_edit(call: ToolCall) -> ToolCard:
    """The card of an ``edit``.

    Parameters
    ----------
    call:
        What is known of the call.

    Returns
    -------
    ToolCard
        Its summary (the path, ``+added −removed``); before it runs (``command_html``): the
        path and the change as a diff (the agent's own once it sent one, else made from the
        texts sent), or the arguments when there are no texts; after (``body_html``): the
        error, or the tool's closing message; the texts sent behind the toggle when the
        agent's diff shows the change.
    """
    args = as_dict(call.args)
    path = as_str(args.get("path")) or ""
    pairs = _edits(args)
    diff = as_str(as_dict(call.details).get("diff"))
    command = [path_header(path) if path else ""]
    summary = one_line(path, 100)
    shown = ("path", "edits", "oldText", "newText")
    args_html = ""
    rows: list[DiffRow] | None = None
    if diff and not call.is_error:
        rows = parse_diff(diff)
        if pairs:  # the diff shows the change; the texts sent go behind the toggle
            args_html = _edit_args_html(pairs) + kv_table(call.args, shown)
        else:
            args_html = kv_table(call.args, ("path",))
    elif pairs:
        rows = pair_rows(pairs)
        args_html = kv_table(call.args, shown)
    else:
        command.append(kv_table(call.args, ("path",) if path else ()))
    if rows is not None:
        if not call.is_error:
            added = sum(1 for kind, _n, _t in rows if kind == "+")
            removed = sum(1 for kind, _n, _t in rows if kind == "-")
            summary = f"{summary}  +{added} −{removed}".strip()
        command.append(diff_view(rows, path))
    body = ""
    if call.is_error:
        body = error(final_text(call))
    elif call.done and text_of(call.result):
        body = note(one_line(text_of(call.result), 500))
    return ToolCard(
        summary,
        command_html=root("".join(command)),
        body_html=root(body),
        args_html=root(args_html),
    )
