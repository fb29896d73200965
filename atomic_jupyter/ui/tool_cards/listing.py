"""``find`` and ``ls``: the entries found, directories in bold, long lists folded."""

from __future__ import annotations

import re
from dataclasses import dataclass

from atomic_jupyter.ui.tool_cards.card import ToolCall, ToolCard, final_text
from atomic_jupyter.ui.tool_cards.generic import render_generic
from atomic_jupyter.ui.tool_cards.limits import LIST_FOLD
from atomic_jupyter.ui.tool_cards.lines import cap_head, split_lines
from atomic_jupyter.ui.tool_cards.markup import (
    div,
    error,
    esc,
    fold_head,
    kv_table,
    note,
    path_header,
    plain_blocks,
    pre,
    root,
)
from atomic_jupyter.ui.tool_cards.styles import BOX_STYLE, DIR_STYLE
from atomic_jupyter.ui.tool_cards.values import (
    Known,
    args_rest,
    as_dict,
    as_str,
    is_int,
    is_str,
    one_line,
    plural,
)

__all__ = ["list_box", "render_find", "render_ls", "split_notice"]

_LIST_NOTICE = re.compile(r"(?:\A|\n\n)(\[[^\n]*\])\Z")


def split_notice(text: str) -> tuple[str, str]:
    """(the list, the agent's closing ``[...]`` notice or ``""``) of a list tool's result."""
    match = _LIST_NOTICE.search(text)
    if match and (match.start() > 0 or "\n" not in text):
        return text[: match.start()], match.group(1)
    return text, ""


def list_box(blocks: list[str], label: str) -> str:
    """Lines of a list in a box, folded after :data:`LIST_FOLD` behind ``label``."""
    return div(BOX_STYLE, fold_head(blocks, LIST_FOLD, label, pre), "aj-tool-list")


@dataclass(frozen=True)
class _Listing:
    """How the agent words one list tool's result."""

    empty: str  # the whole text when nothing was found
    noun: str
    nouns: str
    limit_key: str  # in the details when the list was cut at its limit


_FIND = _Listing("No files found matching pattern", "result", "results", "resultLimitReached")
_LS = _Listing("(empty directory)", "entry", "entries", "entryLimitReached")


def _entries_view(text: str, listing: _Listing) -> tuple[str, int | None, bool]:
    """(HTML, number of entries or None if there are none, limit reached) of find/ls output."""
    content, notice = split_notice(text)
    parts = []
    if content.strip() == listing.empty:
        parts.append(note(content.strip()))
        count = None
    else:
        lines, left = cap_head([line for line in split_lines(content) if line])
        blocks = plain_blocks(
            [
                f'<span class="aj-dir" style="{DIR_STYLE}">{esc(line)}</span>'
                if line.endswith("/")
                else esc(line)
                for line in lines
            ]
        )
        count = len(lines) + (len(split_lines(content)) - len(lines) if left else 0)
        parts.append(list_box(blocks, f"Show all {plural(count, listing.noun, listing.nouns)}"))
        if left:
            parts.append(note(left))
    if notice:
        parts.append(note(notice))
    return "".join(parts), count, bool(notice)


def _listing_card(
    call: ToolCall, listing: _Listing, header: str, summary: str, known: Known
) -> ToolCard:
    """The card of a list tool: ``header`` before it runs, then the entries (or the error);
    ``summary`` and their count."""
    body = ""
    if call.is_error:
        body = error(final_text(call))
    elif call.done:
        body, count, limited = _entries_view(final_text(call), listing)
        limited = limited or as_dict(call.details).get(listing.limit_key) is not None
        summary += f" · {plural(count or 0, listing.noun, listing.nouns)}"
        summary += " (limit reached)" if limited else ""
    args_html = kv_table(call.args) if args_rest(call.args, known) else ""
    return ToolCard(
        summary,
        command_html=root(path_header(header)),
        body_html=root(body),
        args_html=root(args_html),
    )


def render_find(call: ToolCall) -> ToolCard:
    """The card of a ``find``: the pattern and where, how many results, the paths."""
    args = as_dict(call.args)
    pattern = as_str(args.get("pattern"))
    if pattern is None:
        return render_generic(call)
    where = as_str(args.get("path"))
    header = pattern + (f"  in {where}" if where else "")
    known = {"pattern": is_str, "path": is_str, "limit": is_int}
    return _listing_card(call, _FIND, header, one_line(pattern, 100), known)


def render_ls(call: ToolCall) -> ToolCard:
    """The card of an ``ls``: the directory, how many entries, the entries."""
    if call.args is not None and not isinstance(call.args, dict):
        return render_generic(call)
    path = as_str(as_dict(call.args).get("path")) or "."
    known = {"path": is_str, "limit": is_int}
    return _listing_card(call, _LS, path, one_line(path, 100), known)
