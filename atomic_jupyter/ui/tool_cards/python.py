"""``python``: code the agent ran in the notebook's kernel, then what came of it, in order.

While the code runs the card shows the kernel side's status ("waiting for the kernel…"). Once
done, ``details["outputs"]`` lists what happened: streams (stdout, stderr marked), displays and
the last expression's value (each its sanitised HTML table, else its image, else its text),
and notes; a last line says how long it took and which ``Agent[n]`` it can be cited as. A
failed call shows its traceback as the error. Every field is untrusted and may be missing or
of another type; a display's HTML keeps only table markup and text
(:func:`~atomic_jupyter.ui.sanitize.sanitize_table_html`).
"""

from __future__ import annotations

import math
import re
from typing import Any

import atomic_jupyter.ui.tool_cards.limits as limits
from atomic_jupyter.ui.sanitize import sanitize_table_html
from atomic_jupyter.ui.tool_cards.card import ToolCall, ToolCard
from atomic_jupyter.ui.tool_cards.generic import render_generic
from atomic_jupyter.ui.tool_cards.lines import cap_tail, split_lines
from atomic_jupyter.ui.tool_cards.markup import div, error, kv_table, note, root
from atomic_jupyter.ui.tool_cards.styles import LABEL_STYLE
from atomic_jupyter.ui.tool_cards.values import (
    args_rest,
    as_dict,
    as_str,
    is_str,
    one_line,
    plural,
    text_of,
)
from atomic_jupyter.ui.tool_cards.views import code_view, images_html, output_view

__all__ = ["HTML_MAX_CHARS", "render_python"]

#: A display's HTML longer than this is shown as its text instead.
HTML_MAX_CHARS = 200_000
#: The most outputs shown, and the most HTML characters they make (the rest is a note).
_MAX_OUTPUTS = 200
_BODY_BUDGET = 1_000_000
#: A sanitised table scrolls sideways in its box; its cells are spaced and right-aligned.
_HTML_BOX_STYLE = "overflow-x:auto;max-width:100%"
_TABLE_STYLE = "border-collapse:collapse;margin:2px 0"
_CELL_STYLE = "padding:1px 8px;text-align:right"
#: The opening tags to style in the sanitiser's output (its text holds no raw ``<``).
_STYLED_TAG = re.compile(r"<(table|th|td)(?=[\s>])")
_TAG = re.compile(r"<[^>]*>")


def _table_html(markup: Any) -> str:
    """A display's HTML sanitised and styled, ``""`` if too long or nothing is left of it."""
    if not isinstance(markup, str) or len(markup) > HTML_MAX_CHARS:
        return ""
    clean = sanitize_table_html(markup)
    if not _TAG.sub("", clean).strip():
        return ""
    styled = _STYLED_TAG.sub(
        lambda m: f'<{m[1]} style="{_TABLE_STYLE if m[1] == "table" else _CELL_STYLE}"', clean
    )
    return div(_HTML_BOX_STYLE, styled, "aj-python-html")


def _rich(item: dict[str, Any], images: tuple[Any, ...], shown: set[int]) -> str:
    """A display or value: its table, else its image (``shown`` notes it), else its text."""
    table = _table_html(item.get("html"))
    if table:
        return table
    index = item.get("image")
    index = index if type(index) is int and 0 <= index < len(images) else None
    if index is not None and index not in shown and len(shown) < limits.MAX_IMAGES:
        shown.add(index)
        return images_html((images[index],))
    text = text_of(item.get("text"))
    return output_view(text, tail=False) if text else ""


def _entries(outputs: list[Any]) -> list[dict[str, Any]]:
    """The outputs as dicts (a bare string as a display's text), a run of one stream joined."""
    entries: list[dict[str, Any]] = []
    for raw in outputs:
        item = {"type": "display", "text": raw} if isinstance(raw, str) else as_dict(raw)
        if item.get("type") != "stream":
            entries.append(item)
            continue
        name = "stderr" if item.get("name") == "stderr" else "stdout"
        last = entries[-1] if entries else {}
        if last.get("type") == "stream" and last.get("name") == name:
            last["text"] += text_of(item.get("text"))
        else:
            entries.append({"type": "stream", "name": name, "text": text_of(item.get("text"))})
    return entries


def _entry(entry: dict[str, Any], images: tuple[Any, ...], shown: set[int]) -> str:
    """One output: printed text (stderr under a label), a note, or a display or value."""
    kind = entry.get("type")
    if kind == "stream":
        if not entry["text"]:
            return ""
        label = div(LABEL_STYLE, "stderr", "aj-python-stderr") if entry["name"] == "stderr" else ""
        return label + output_view(entry["text"])
    if kind == "note":
        text = text_of(entry.get("text"))
        return note(text) if text else ""
    value = _rich(entry, images, shown)
    if value and kind == "value":
        return div(LABEL_STYLE, "Out:", "aj-python-out") + value
    return value


def _outputs(outputs: list[Any], images: tuple[Any, ...]) -> str:
    """The outputs in order, then any image none of them showed; capped, each cap noted."""
    entries = _entries(outputs[:_MAX_OUTPUTS])
    left = max(0, len(outputs) - _MAX_OUTPUTS)
    parts: list[str] = []
    shown: set[int] = set()
    size = 0
    for position, entry in enumerate(entries):
        if size > _BODY_BUDGET:
            left += len(entries) - position
            break
        parts.append(_entry(entry, images, shown))
        size += len(parts[-1])
    if left:
        parts.append(note(f"… {plural(left, 'more output')} not shown"))
    rest = tuple(image for k, image in enumerate(images) if k not in shown)
    room = max(0, limits.MAX_IMAGES - len(shown))
    parts.append(images_html(rest[:room]))
    if len(rest) > room:
        parts.append(note(f"[{plural(len(rest) - room, 'more image')} not shown]"))
    return "".join(parts) or note("(no output)")


def _duration(ms: Any) -> str:
    """``1234.5`` (milliseconds) as ``1.2 s``; ``""`` for anything but a sane number."""
    if isinstance(ms, bool) or not isinstance(ms, (int, float)) or not 0 <= ms < 1e12:
        return ""
    if ms < 1000:
        return f"{ms:.0f} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    minutes, seconds = divmod(math.floor(ms / 1000), 60)
    return f"{minutes} min {seconds} s"


def _footer(details: dict[str, Any]) -> str:
    """``ran in the kernel in 1.2 s · Agent[3]``, leaving out what is not known."""
    took = _duration(details.get("duration_ms"))
    cell = details.get("agent_cell")
    cell = cell if type(cell) is int and 0 <= cell < 10**9 else None
    if not (took or cell is not None or details.get("kernel") is True):
        return ""
    line = "ran in the kernel" + (f" in {took}" if took else "")
    return note(line + (f" · Agent[{cell}]" if cell is not None else ""))


def _error(text: str) -> str:
    """The traceback, its end in view, as the error."""
    kept, left = cap_tail(split_lines(text)) if text else ([], "")
    return (note(left) if left else "") + error("\n".join(kept))


_IMPORT = re.compile(r"(?:import|from)\s+[\w.]+")


def code_heading(code: str, width: int = 100) -> str:
    """What a python card's heading says of ``code``: what it does, as its opening comment
    says it (``# Plot the sales by month``), else its first line that is not an import; then
    how many lines it has, when more than one. At most ``width`` characters."""
    lines = [line.strip() for line in code.splitlines() if line.strip()]
    if not lines:
        return ""
    numbered = len(code.strip("\n").splitlines())  # as the card's numbers count them
    if lines[0].startswith("#") and lines[0].lstrip("#").strip():
        said = lines[0].lstrip("#").strip()
    else:
        statements = [line for line in lines if not line.startswith("#")]
        said = next((line for line in statements if not _IMPORT.match(line)), lines[0])
    count = f" · {numbered} lines" if numbered > 1 else ""
    return one_line(said, width - len(count)) + count


def render_python(call: ToolCall) -> ToolCard:
    """The card of code run in the notebook's kernel.

    Parameters
    ----------
    call:
        What is known of the call: ``args["code"]``; while it runs, ``output`` is the kernel
        side's status; once done, ``details`` lists its outputs (see the module docstring)
        and ``images`` holds the images they refer to by index.

    Returns
    -------
    ToolCard
        Its summary (:func:`code_heading`); before it runs (``command_html``) the
        code, highlighted as Python and numbered; after (``body_html``) the status while it
        runs, else its outputs in order and how long it took, else (a failed call) the
        traceback as the error; without ``details["outputs"]``, the result text and images.
        Arguments other than ``code`` go to ``args_html``.
    """
    args = as_dict(call.args)
    code = as_str(args.get("code"))
    if code is None:  # arguments still streaming, or not the shape expected
        generic = render_generic(call)
        summary, command, args_html = generic.summary, generic.command_html, ""
    else:
        summary = code_heading(code)
        command = root(code_view(code, language="python")) if code.strip() else ""
        rest = args_rest(call.args, {"code": is_str})
        args_html = root(kv_table(call.args)) if rest else ""
    details = as_dict(call.details)
    outputs = details.get("outputs")
    images = tuple(call.images) if isinstance(call.images, (tuple, list)) else ()
    if not call.done:
        status = text_of(call.output).strip()
        body = note(status[:2000]) if status else ""
    elif call.is_error:
        body = _error(text_of(call.result)) + images_html(images) + _footer(details)
    elif isinstance(outputs, list):
        body = _outputs(outputs, images) + _footer(details)
    else:
        text = text_of(call.result)
        shown = output_view(text, tail=False) if text.strip() else ""
        body = shown + images_html(images) + _footer(details)
    return ToolCard(summary, command_html=command, body_html=root(body), args_html=args_html)
