"""``bash`` (and 1.6's ``powershell``): the command, highlighted, then its output and status."""

from __future__ import annotations

import html
import re

from atomic_jupyter.ui.highlight import lines_html
from atomic_jupyter.ui.tool_cards.card import ToolCall, ToolCard
from atomic_jupyter.ui.tool_cards.generic import render_generic
from atomic_jupyter.ui.tool_cards.limits import SUMMARY_MAX
from atomic_jupyter.ui.tool_cards.lines import cap_head, split_lines
from atomic_jupyter.ui.tool_cards.markup import div, error, esc, kv_table, note, pre, root
from atomic_jupyter.ui.tool_cards.styles import (
    BOX_STYLE,
    NOTE_STYLE,
    PROMPT_STYLE,
    STATUS_ERROR_STYLE,
)
from atomic_jupyter.ui.tool_cards.values import (
    args_rest,
    as_dict,
    as_int,
    as_str,
    is_int,
    is_str,
    one_line,
    text_of,
)
from atomic_jupyter.ui.tool_cards.views import code_lines, output_view

__all__ = ["parse_bash", "render_bash"]

#: The most lines of a command shown.
_COMMAND_MAX_LINES = 200

_STATUS = re.compile(
    r"(?:\A|\n)\n?(Command (?:exited with code (\d+)|timed out after [^\n]*|aborted"
    r"|terminated without an exit code[^\n]*))\Z"
)
_OUTPUT_NOTICE = re.compile(r"(?:\A|\n\n)(\[Showing (?:lines \d+-\d+ of \d+|last )[^\]\n]*\])\n*\Z")


def parse_bash(text: str, failed: bool) -> tuple[str, str, str, int | None]:
    """(output, truncation notice, status line, exit code) of a bash result text.

    The agent appends a status line ("Command exited with code 3", "Command timed out after
    ...") only to a failed call, so only a failed call's last line is taken for one.
    """
    status, code = "", None
    match = _STATUS.search(text) if failed else None
    if match:
        status = match.group(1)
        code = int(match.group(2)) if match.group(2) and len(match.group(2)) < 10 else None
        text = text[: match.start()]
        text = text.removesuffix("\n")
    notice = ""
    found = _OUTPUT_NOTICE.search(text)
    if found:
        notice = found.group(1)
        text = text[: found.start()].rstrip("\n")
    if text.strip() == "(no output)":
        text = ""
    return text, notice, status, code


def _status(code: int | None, status: str, failed: bool) -> str:
    """The exit code or status line under the output (``""`` when there is none)."""
    if code is not None:
        style = STATUS_ERROR_STYLE if code else NOTE_STYLE
        return div(style, f"exit code {code}", "aj-tool-status")
    if status:
        return div(STATUS_ERROR_STYLE, esc(status), "aj-tool-status")
    if not failed:
        return div(NOTE_STYLE, "exit code 0", "aj-tool-status")
    return ""


def render_bash(call: ToolCall, language: str = "bash", prompt: str = "$ ") -> ToolCard:
    """The card of a command.

    Parameters
    ----------
    call:
        What is known of the call.
    language:
        The language the command is highlighted as.
    prompt:
        What is shown before the command (``$ ``).

    Returns
    -------
    ToolCard
        Before it runs (``command_html``): ``prompt`` and the command, highlighted, and its
        timeout. After (``body_html``): its output (the end in view), then the truncation
        notice, then its exit code or status; or, for a call that failed with no status (a
        command a guard blocked, an aborted call), the error text alone.
    """
    args = as_dict(call.args)
    command = as_str(args.get("command"))
    if command is None:
        return render_generic(call)
    first_line = command.strip().split("\n", 1)[0] if command.strip() else ""
    more = " …" if "\n" in command.strip() else ""
    summary = one_line(f"{prompt}{first_line}", SUMMARY_MAX - 2) + more
    cmd_lines, cmd_left = cap_head(split_lines(command) if command else [""], _COMMAND_MAX_LINES)
    highlighted = code_lines("\n".join(cmd_lines), None, language)
    prompt_html = f'<span style="{PROMPT_STYLE}">{html.escape(prompt)}</span>'
    head = pre(prompt_html + lines_html(highlighted))
    if cmd_left:
        head += note(cmd_left)
    timeout = as_int(args.get("timeout"))
    if timeout is not None:
        head += note(f"timeout {timeout} s")
    command_box = div(BOX_STYLE, head, "aj-tool-command")
    parts = []
    if call.done:
        text = text_of(call.result)
        output, notice, status, code = parse_bash(text, call.is_error)
        if call.is_error and not status:
            parts.append(error(text))
        else:
            parts.append(output_view(output) if output.strip() else note("(no output)"))
            if notice:
                parts.append(note(notice))
            parts.append(_status(code, status, call.is_error))
    else:
        output = text_of(call.output)
        if output:
            parts.append(output_view(output))
    known = {"command": is_str, "timeout": is_int}
    args_html = kv_table(call.args) if args_rest(call.args, known) or cmd_left else ""
    return ToolCard(
        summary,
        command_html=root(command_box),
        body_html=root("".join(parts)),
        args_html=root(args_html),
    )
