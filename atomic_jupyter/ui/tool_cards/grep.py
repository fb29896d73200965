"""``grep``: the matches by file, numbered, the pattern's hits marked, context lines muted."""

from __future__ import annotations

import re
from typing import Any

from atomic_jupyter.ui.tool_cards.card import ToolCall, ToolCard, final_text
from atomic_jupyter.ui.tool_cards.generic import render_generic
from atomic_jupyter.ui.tool_cards.lines import cap_head, split_lines
from atomic_jupyter.ui.tool_cards.listing import list_box, split_notice
from atomic_jupyter.ui.tool_cards.markup import (
    error,
    esc,
    kv_table,
    note,
    numbered_line,
    path_header,
    root,
)
from atomic_jupyter.ui.tool_cards.styles import CONTEXT_STYLE, FILE_HEAD_STYLE, HIT_STYLE
from atomic_jupyter.ui.tool_cards.values import (
    args_rest,
    as_dict,
    as_int,
    as_str,
    is_bool,
    is_int,
    is_str,
    one_line,
    plural,
)

__all__ = ["render_grep"]

_GREP_MATCH = re.compile(r"(.*?):(\d+): (.*)", re.DOTALL)
_GREP_CONTEXT = re.compile(r"(.*?)-(\d+)- (.*)", re.DOTALL)
_REGEX_META = re.compile(r"[.^$*+?()\[\]{}|\\]")
_KNOWN_ARGS = {
    "pattern": is_str,
    "path": is_str,
    "glob": is_str,
    "ignoreCase": is_bool,
    "literal": is_bool,
    "context": is_int,
    "limit": is_int,
}

#: One row of grep's output: (line number or None, is a match, text).
_Row = tuple[int | None, bool, str]
#: The rows of one file (``None`` for lines that name no file).
_Group = tuple[str | None, list[_Row]]


def _grep_line(line: str, current: str | None) -> tuple[str, int | None, bool, str] | None:
    """(path, line number, is a match, text) of one line of grep output."""
    if current is not None:
        for sep, is_match in ((":", True), ("-", False)):
            if line.startswith(current + sep):
                rest = line[len(current) + 1 :]
                found = re.match(r"(\d+)" + re.escape(sep) + " ", rest)
                if found:
                    return current, int(found.group(1)[:9]), is_match, rest[found.end() :]
    candidates = []
    for regex, is_match in ((_GREP_MATCH, True), (_GREP_CONTEXT, False)):
        found = regex.fullmatch(line)
        if found:
            candidates.append((len(found.group(1)), found, is_match))
    if not candidates:
        return None
    _len, found, is_match = min(candidates, key=lambda item: item[0])
    return found.group(1), int(found.group(2)[:9]), is_match, found.group(3)


def _groups(lines: list[str]) -> list[_Group]:
    """The lines of grep's output grouped by file, in order."""
    groups: list[_Group] = []
    current: str | None = None
    for line in lines:
        parsed = _grep_line(line, current)
        if parsed is None:
            if not groups:
                groups.append((None, []))
            groups[-1][1].append((None, True, line))
            continue
        path, number, is_match, rest = parsed
        if path != current or not groups:
            groups.append((path, []))
            current = path
        groups[-1][1].append((number, is_match, rest))
    return groups


def _finder(pattern: str, args: dict[str, Any]) -> re.Pattern[str] | None:
    """What marks the hits in a line: the pattern when it is literal text, else nothing."""
    if pattern and (args.get("literal") is True or not _REGEX_META.search(pattern)):
        ignore = re.IGNORECASE if args.get("ignoreCase") is True else 0
        return re.compile(re.escape(pattern[:1000]), ignore)
    return None


def _hits_html(text: str, finder: re.Pattern[str] | None) -> str:
    if finder is None:
        return esc(text)
    parts, position = [], 0
    for match in finder.finditer(text):
        if match.end() == match.start():
            continue
        parts.append(esc(text[position : match.start()]))
        parts.append(f'<span class="aj-grep-hit" style="{HIT_STYLE}">{esc(match.group())}</span>')
        position = match.end()
    parts.append(esc(text[position:]))
    return "".join(parts)


def _blocks(groups: list[_Group], finder: re.Pattern[str] | None) -> list[str]:
    """Each file's name and match count, then its numbered lines."""
    blocks = []
    for group_path, rows in groups:
        count = sum(1 for _n, is_match, _t in rows if is_match)
        if group_path is not None:
            head = f"{group_path}  ({plural(count, 'match', 'matches')})"
            blocks.append(
                f'<span class="aj-grep-file" style="{FILE_HEAD_STYLE}">{esc(head)}</span>'
            )
        digits = max((len(str(n)) for n, _m, _t in rows if n is not None), default=1)
        for number, is_match, row_text in rows:
            code = _hits_html(row_text, finder if is_match else None)
            if not is_match:
                code = f'<span style="{CONTEXT_STYLE}">{code}</span>'
            blocks.append(numbered_line(code, str(number) if number is not None else "", digits))
    return blocks


def render_grep(call: ToolCall) -> ToolCard:
    """The card of a ``grep``.

    Parameters
    ----------
    call:
        What is known of the call.

    Returns
    -------
    ToolCard
        Its summary (the pattern, how many matches in how many files); before it runs
        (``command_html``): the pattern, where and how; after (``body_html``): the matches by
        file, then what was left out and the agent's notice; or the error.
    """
    args = as_dict(call.args)
    pattern = as_str(args.get("pattern"))
    if pattern is None:
        return render_generic(call)
    where = as_str(args.get("path"))
    glob = as_str(args.get("glob"))
    flags = [
        name
        for key, name in (("ignoreCase", "ignore case"), ("literal", "literal"))
        if args.get(key) is True
    ]
    context = as_int(args.get("context"))
    if context:
        flags.append(f"context {context}")
    described = pattern + (f"  in {where}" if where else "") + (f"  ({glob})" if glob else "")
    text = final_text(call)
    summary = one_line(pattern, 80)
    body = []
    if call.is_error:
        body.append(error(text))
    elif call.done:
        content, notice = split_notice(text)
        if content.strip() == "No matches found":
            summary += " · no matches"
            body.append(note("No matches found"))
        else:
            lines, left = cap_head([line for line in split_lines(content) if line])
            groups = _groups(lines)
            matches = sum(  # lines that name no file are shown, not counted
                1 for _p, rows in groups for n, is_match, _t in rows if is_match and n is not None
            )
            files = len({path for path, _rows in groups if path is not None})
            blocks = _blocks(groups, _finder(pattern, args))
            limited = bool(notice) or as_dict(call.details).get("matchLimitReached") is not None
            summary += f" · {plural(matches, 'match', 'matches')} in {plural(files, 'file')}"
            summary += " (limit reached)" if limited else ""
            body.append(list_box(blocks, f"Show all {plural(len(blocks), 'line')}"))
            if left:
                body.append(note(left))
        if notice:
            body.append(note(notice))
    command = path_header(described, "  " + ", ".join(flags) if flags else "")
    args_html = kv_table(call.args) if args_rest(call.args, _KNOWN_ARGS) else ""
    return ToolCard(
        summary,
        command_html=root(command),
        body_html=root("".join(body)),
        args_html=root(args_html),
    )
