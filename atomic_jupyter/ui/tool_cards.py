"""Tool cards: one HTML renderer per kind of tool call, as pure functions.

:func:`render_tool` turns what is known of one tool call (:class:`ToolCall`) into a
:class:`ToolCard`: a one-line plain-text summary for the card's header, the main view as HTML,
and the arguments in full as HTML (for a toggle). The built-in tools of the agent (``read``,
``write``, ``edit``, ``bash``, ``grep``, ``find``, ``ls``) each get their own view; any other
tool (an extension's) gets a generic one. The shapes of arguments and results follow both
agent lines (0.73 and 1.6).

Safety
------
Everything in a :class:`ToolCall` comes from the agent and is hostile. The HTML is meant for
the ``value`` of an ipywidgets ``HTML`` widget (assigned to ``innerHTML``, no typesetting):

* every agent string is escaped with ``html.escape(..., quote=True)`` (or by
  :func:`~atomic_jupyter.ui.ansi.ansi_to_html`, which escapes too) and only ever placed in
  element content, never in an attribute;
* the only tags are ``div``, ``span``, ``pre``, ``table``, ``tr``, ``td``, ``details``,
  ``summary`` and ``img``, and the only attributes ``class`` and ``style`` (values built from
  this module's constants and integers), ``src`` and ``alt`` on ``img`` (the ``alt`` text is
  ours too: "image 1 (image/png)");
* the only URL is the ``src`` of an ``img``: a ``data:`` URL built here from base64 that was
  checked against ``[A-Za-z0-9+/]*={0,2}``, of a raster type on an allow-list (PNG, JPEG,
  GIF, WebP; never SVG), whose first bytes are that format's signature, and at most
  :data:`IMAGE_MAX_BASE64` characters long.

Colours
-------
Nothing is a fixed light-theme colour: syntax colours are JupyterLab's CodeMirror theme
variables (``--jp-mirror-editor-*-color``, mapped from Pygments tokens as JupyterLab maps its
own highlight tags), backgrounds and borders are ``--jp-cell-editor-background`` and
``--jp-border-color2``, diff lines are translucent green and red (readable on light and dark),
and every ``var()`` has a mid-tone fallback for pages without JupyterLab's variables.

Limits
------
A body shows at most :data:`MAX_LINES` lines and :data:`MAX_CHARS` characters of any one text
(the head of a file, the tail of a command's output) and says how much it left out. Code is
highlighted up to :data:`HIGHLIGHT_MAX_CHARS` characters, plain beyond. Files are folded after
:data:`CODE_FOLD` lines, diffs after :data:`DIFF_FOLD`, command output keeps its last
:data:`OUTPUT_TAIL` lines in view, and lists fold after :data:`LIST_FOLD` entries (a fold is a
``<details>`` element, which needs no script). Malformed input (arguments or details of any
JSON shape) never raises.
"""

from __future__ import annotations

import base64
import binascii
import difflib
import html
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
from pygments.token import (
    Comment,
    Generic,
    Keyword,
    Literal,
    Name,
    Number,
    Operator,
    String,
    _TokenType,
)
from pygments.util import ClassNotFound

from atomic_jupyter.ui.ansi import ansi_to_html, strip_ansi

__all__ = [
    "token_style",
    "CODE_FOLD",
    "DIFF_FOLD",
    "FOLD_SLACK",
    "HIGHLIGHT_MAX_CHARS",
    "IMAGE_MAX_BASE64",
    "LIST_FOLD",
    "MAX_CHARS",
    "MAX_IMAGES",
    "MAX_LINES",
    "OUTPUT_TAIL",
    "SUMMARY_MAX",
    "ToolCall",
    "ToolCard",
    "highlight_html",
    "render_tool",
]

#: The most lines of one text (file, output, diff, list) that a body renders.
MAX_LINES = 2000
#: The most characters of one text that a body renders.
MAX_CHARS = 200_000
#: Longer code is shown without highlighting.
HIGHLIGHT_MAX_CHARS = 100_000
#: Lines of a file (write, read) shown before the rest is folded.
CODE_FOLD = 40
#: Lines of a diff shown before the rest is folded.
DIFF_FOLD = 80
#: Last lines of a command's output kept in view; earlier ones are folded.
OUTPUT_TAIL = 40
#: Entries of a list (grep, find, ls) shown before the rest is folded.
LIST_FOLD = 50
#: A fold only hides more than this many lines (no toggle for a handful of lines).
FOLD_SLACK = 8
#: Images whose base64 is longer are not shown.
IMAGE_MAX_BASE64 = 4_000_000
#: The most images one card shows.
MAX_IMAGES = 8
#: The longest summary (characters).
SUMMARY_MAX = 160

# --- presentation: constants written by this module only ------------------------------------


def _var(name: str, fallback: str) -> str:
    return f"var(--jp-{name},{fallback})"


_MUTED = _var("content-font-color2", "#888")
_SUCCESS = _var("success-color1", "#43a047")
_ERROR = _var("error-color1", "#e53935")
_ADDED_BG = "rgba(76,175,80,0.18)"
_REMOVED_BG = "rgba(244,67,54,0.18)"
_HIT_BG = "rgba(255,193,7,0.38)"
_BORDER = _var("border-color2", "rgba(128,128,128,0.35)")
_CODE_FONT = "font-family:" + _var("code-font-family", "monospace") + ";font-size:12px"

_ROOT_STYLE = "line-height:1.4;font-size:13px;min-width:0"
_BOX_STYLE = (
    "margin:2px 0;border:1px solid " + _BORDER + ";border-radius:3px;"
    "background:" + _var("cell-editor-background", "transparent") + ";"
    "color:" + _var("content-font-color1", "inherit") + ";overflow:hidden"
)
_PRE_STYLE = (
    "margin:0;padding:3px 6px;white-space:pre-wrap;overflow-wrap:anywhere;"
    "line-height:1.4;tab-size:4;" + _CODE_FONT
)
# A numbered line of grep's output: a flex row (the number keeps its column when the text
# wraps); its number is never empty, so the row is one line high even for an empty line.
_LINE_STYLE = "display:flex"
_CODE_STYLE = "flex:1;min-width:0"
_NUMBERED_STYLE = "display:flex;align-items:flex-start"
_GUTTER_PRE_STYLE = (
    "margin:0;padding:3px 1ch 3px 6px;white-space:pre;flex:none;opacity:.6;user-select:none;"
    "line-height:1.4;" + _CODE_FONT
)
_CODE_PRE_STYLE = (
    "margin:0;padding:3px 6px 3px 0;white-space:pre;overflow-x:auto;flex:1;min-width:0;"
    "line-height:1.4;tab-size:4;" + _CODE_FONT
)
_PATH_STYLE = "font-weight:bold;overflow-wrap:anywhere;margin:2px 0;" + _CODE_FONT
_NOTE_STYLE = "color:" + _MUTED + ";white-space:pre-wrap;overflow-wrap:anywhere;margin:2px 0"
_ERROR_STYLE = (
    "margin:2px 0;padding:3px 6px;white-space:pre-wrap;overflow-wrap:anywhere;"
    "color:" + _ERROR + ";background:" + _var("rendermime-error-background", "rgba(244,67,54,0.12)")
    + ";border-left:3px solid " + _ERROR + ";line-height:1.4;" + _CODE_FONT
)  # fmt: skip
_STATUS_ERROR_STYLE = "color:" + _ERROR + ";font-weight:bold;margin:2px 0"
_SUMMARY_STYLE = "cursor:pointer;color:" + _var("brand-color1", "#1e88e5") + ";padding:1px 6px"
_PROMPT_STYLE = "color:" + _MUTED + ";user-select:none"
# A changed line of a diff: a block with its background (its height kept if it is empty).
_ADDED_LINE = f"display:block;min-height:1.4em;background:{_ADDED_BG}"
_REMOVED_LINE = f"display:block;min-height:1.4em;background:{_REMOVED_BG}"
_ADDED_MARK = f"color:{_SUCCESS};font-weight:bold;user-select:none"
_REMOVED_MARK = f"color:{_ERROR};font-weight:bold;user-select:none"
_SKIP_STYLE = f"color:{_MUTED};user-select:none"
# The diff's text column is as wide as its longest line, so a background spans the line.
_DIFF_TEXT_STYLE = "display:inline-block;min-width:100%"
_HIT_STYLE = f"background:{_HIT_BG};border-radius:2px"
_CONTEXT_STYLE = "color:" + _MUTED
_DIR_STYLE = "font-weight:bold;color:" + _var("mirror-editor-def-color", "#3a7bd5")
_FILE_HEAD_STYLE = "display:block;font-weight:bold;padding-top:2px"
_IMG_STYLE = "display:block;max-width:100%;height:auto;margin:4px 0"
_KV_TABLE_STYLE = "border-collapse:collapse;margin:2px 0;width:100%"
_KV_KEY_STYLE = (
    "vertical-align:top;padding:1px 8px 1px 0;color:" + _MUTED + ";white-space:nowrap;" + _CODE_FONT
)
_KV_VALUE_STYLE = (
    "vertical-align:top;padding:1px 0;white-space:pre-wrap;overflow-wrap:anywhere;" + _CODE_FONT
)
_LABEL_STYLE = "color:" + _MUTED + ";font-size:12px;margin:4px 0 0 0"


def _gutter_style(digits: int) -> str:
    """A line-number column wide enough for ``digits`` digits (``digits`` is ours: an int)."""
    width = max(1, min(int(digits), 12))
    return f"flex:none;min-width:{width}ch;padding-right:1ch;text-align:right;opacity:.6;user-select:none"


# --- syntax colours: Pygments tokens to JupyterLab's CodeMirror theme variables ----------------


def _mirror(name: str, fallback: str, extra: str = "") -> str:
    return f"color:{_var(f'mirror-editor-{name}-color', fallback)}{extra}"


_BOLD = ";font-weight:bold"
# As JupyterLab's own highlight style (@jupyterlab/codemirror): keywords and operators bold,
# comments italic, definitions, builtins, strings, numbers... in the theme's editor colours.
_TOKEN_STYLES: dict[_TokenType, str] = {
    Keyword: _mirror("keyword", "#2e8b57", _BOLD),
    Operator: _mirror("operator", "#a055d8", _BOLD),
    Operator.Word: _mirror("keyword", "#2e8b57", _BOLD),
    Name.Builtin: _mirror("builtin", "#3a9a3a"),
    Name.Builtin.Pseudo: _mirror("variable-2", "#3b82c4"),
    Name.Exception: _mirror("builtin", "#3a9a3a"),
    Name.Function: _mirror("def", "#3a7bd5"),
    Name.Class: _mirror("def", "#3a7bd5"),
    Name.Decorator: _mirror("meta", "#a055e8"),
    Name.Tag: _mirror("tag", "#2f8f3f"),
    Name.Attribute: _mirror("attribute", "#4a7ed8"),
    Name.Variable: _mirror("variable-2", "#3b82c4"),
    Name.Constant: _mirror("atom", "#6c7ee0"),
    Name.Entity: _mirror("atom", "#6c7ee0"),
    Name.Label: _mirror("string-2", "#a05cc0"),
    Name.Property: _mirror("property", "#3a86c0"),
    Literal: _mirror("atom", "#6c7ee0"),
    String: _mirror("string", "#d04848"),
    String.Escape: _mirror("string-2", "#a05cc0"),
    String.Regex: _mirror("string-2", "#a05cc0"),
    String.Interpol: _mirror("string-2", "#a05cc0"),
    Number: _mirror("number", "#3a9a4a"),
    Comment: _mirror("comment", "#5f8f8f", ";font-style:italic"),
    Comment.Preproc: _mirror("meta", "#a055e8"),
    Comment.PreprocFile: _mirror("string", "#d04848"),
    Generic.Heading: _mirror("header", "#3a7bd5", _BOLD),
    Generic.Subheading: _mirror("header", "#3a7bd5", _BOLD),
    Generic.Emph: "font-style:italic",
    Generic.Strong: "font-weight:bold",
    Generic.Inserted: f"color:{_SUCCESS}",
    Generic.Deleted: f"color:{_ERROR}",
    Generic.Error: f"color:{_ERROR}",
    Generic.Prompt: f"color:{_MUTED};font-weight:bold",
}


@lru_cache(maxsize=512)
def token_style(ttype: _TokenType) -> str:
    """The inline style of a Pygments token type: the theme's editor colour for it."""
    kind: _TokenType | None = ttype
    while kind is not None:
        style = _TOKEN_STYLES.get(kind)
        if style is not None:
            return style
        kind = kind.parent
    return ""


_LANGUAGE = re.compile(r"[A-Za-z0-9_+#.-]{1,40}")


@lru_cache(maxsize=256)
def _lexer(filename: str | None, language: str | None) -> Lexer | None:
    """The lexer for a language name or (else) a file's name, ``None`` if there is none."""
    options = {"stripnl": False, "stripall": False, "ensurenl": False}
    try:
        if language:
            if not _LANGUAGE.fullmatch(language):
                return None
            return get_lexer_by_name(language.lower(), **options)
        if filename:
            base = filename.replace("\\", "/").rsplit("/", 1)[-1][:200]
            if not base or "\x00" in base:
                return None
            return get_lexer_for_filename(base, **options)
    except ClassNotFound:
        return None
    except Exception:  # a lookup must never break a card
        return None
    return None


def _plain_lines(code: str) -> list[str]:
    return [html.escape(line, quote=True) for line in code.split("\n")]


@lru_cache(maxsize=64)
def _highlighted(code: str, lexer: Lexer | None) -> tuple[str, ...]:
    """The escaped HTML of each line of ``code`` (newlines normalised), highlighted if possible."""
    code = code.replace("\r\n", "\n").replace("\r", "\n")
    if lexer is None or len(code) > HIGHLIGHT_MAX_CHARS:
        return tuple(_plain_lines(code))
    lines: list[list[str]] = [[]]
    try:
        run_style = ""
        run: list[str] = []  # adjacent tokens of one style, merged

        def flush() -> None:
            if run:
                text = html.escape("".join(run), quote=True)
                lines[-1].append(f'<span style="{run_style}">{text}</span>' if run_style else text)
                run.clear()

        for ttype, value in lexer.get_tokens(code):
            style = token_style(ttype)
            for index, part in enumerate(value.split("\n")):
                if index:
                    flush()
                    lines.append([])
                if not part:
                    continue
                if style != run_style:
                    flush()
                    run_style = style
                run.append(part)
        flush()
    except Exception:  # a lexer bug must not break a card: show plain text
        return tuple(_plain_lines(code))
    result = ["".join(parts) for parts in lines]
    expected = code.count("\n") + 1
    if len(result) != expected:  # the lexer changed the text: plain keeps line numbers right
        return tuple(_plain_lines(code))
    return tuple(result)


def _code_lines(code: str, filename: str | None, language: str | None) -> list[str]:
    return list(_highlighted(code, _lexer(filename, language)))


# --- building blocks ------------------------------------------------------------------------------


def _esc(text: str) -> str:
    """Agent text as element content: control sequences removed, everything escaped."""
    return html.escape(strip_ansi(text), quote=True)


def _div(style: str, inner: str, cls: str = "") -> str:
    klass = f' class="{cls}"' if cls else ""
    return f'<div{klass} style="{style}">{inner}</div>'


def _pre(inner: str, style: str = _PRE_STYLE) -> str:
    # A newline right after <pre> is dropped by HTML parsers: an empty span keeps it.
    lead = "<span></span>" if inner.startswith("\n") else ""
    return f'<pre style="{style}">{lead}{inner}</pre>'


def _note(text: str) -> str:
    return _div(_NOTE_STYLE, _esc(text), "aj-tool-note")


def _error(text: str) -> str:
    return _div(_ERROR_STYLE, ansi_to_html(text) or "(error)", "aj-tool-error")


def _root(inner: str) -> str:
    return _div(_ROOT_STYLE, inner, "aj-tool-card") if inner else ""


def _plural(count: int, word: str, plural: str | None = None) -> str:
    return f"{count} {word if count == 1 else plural or word + 's'}"


def _fold_head(blocks: Sequence[str], keep: int, label: str, wrap: Callable[[str], str]) -> str:
    """The first ``keep`` blocks, the rest behind a ``<details>`` labelled ``label``."""
    split = _fold_split(len(blocks), keep)
    if split is None:
        return wrap("".join(blocks))
    return wrap("".join(blocks[:split])) + _details(label, wrap("".join(blocks[split:])))


def _cap_head(lines: list[str], max_lines: int = MAX_LINES) -> tuple[list[str], str]:
    """At most ``max_lines`` lines and :data:`MAX_CHARS` characters, from the start, and a
    note saying what was left out (``""`` if nothing was)."""
    kept: list[str] = []
    size = 0
    note = ""
    for line in lines[:max_lines]:
        room = MAX_CHARS - size
        if len(line) + 1 > room:
            kept.append(line[: max(0, room)])
            note = f"… the rest of line {len(kept)} is not shown"
            break
        kept.append(line)
        size += len(line) + 1
    left = len(lines) - len(kept)
    if left > 0:
        note = f"… {_plural(left, 'more line')} not shown"
    return kept, note


def _cap_tail(lines: list[str]) -> tuple[list[str], str]:
    """At most :data:`MAX_LINES` lines and :data:`MAX_CHARS` characters, from the end."""
    kept: list[str] = []
    size = 0
    note = ""
    for line in reversed(lines[-MAX_LINES:]):
        if size + len(line) + 1 > MAX_CHARS:
            kept.append("…" + line[len(line) - max(0, MAX_CHARS - size) :])
            note = "… the start of the first line shown is not shown"
            break
        kept.append(line)
        size += len(line) + 1
    kept.reverse()
    left = len(lines) - len(kept)
    if left > 0:
        note = f"… {_plural(left, 'earlier line')} not shown"
    return kept, note


def _split_lines(text: str) -> list[str]:
    """The lines of ``text``; a final newline does not start another line."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if text.endswith("\n"):
        text = text[:-1]
    return text.split("\n")


def _count_lines(text: str) -> int:
    return 0 if not text else len(_split_lines(text))


def _line(code_html: str, number: str, digits: int) -> str:
    """One numbered line (``number`` is ours: digits, or ``""`` for none)."""
    return (
        f'<span style="{_LINE_STYLE}"><span style="{_gutter_style(digits)}">{number or " "}</span>'
        f'<span style="{_CODE_STYLE}">{code_html}</span></span>'
    )


def _plain_blocks(html_lines: list[str]) -> list[str]:
    """Lines for a ``<pre>`` without numbers: each ends in a newline but the last."""
    blocks = [line + "\n" for line in html_lines]
    if blocks:
        blocks[-1] = blocks[-1][:-1]
    return blocks


def _fold_split(count: int, keep: int | None) -> int | None:
    """Where to fold ``count`` lines that keep ``keep`` in view (``None``: do not fold)."""
    if keep is None or count <= keep + FOLD_SLACK:
        return None
    return keep


def _details(label: str, inner: str) -> str:
    summary = f'<summary style="{_SUMMARY_STYLE}">{html.escape(label)}</summary>'
    return f'<details class="aj-fold">{summary}{inner}</details>'


def _numbered(html_lines: list[str], first: int, digits: int) -> str:
    """Lines of code beside their numbers: two columns, so no line carries markup of its own."""
    numbers = "\n".join(str(first + index).rjust(digits) for index in range(len(html_lines)))
    code = "\n".join(html_lines)
    if html_lines and not html_lines[-1]:
        code += "\n"  # a pre drops one final newline: keep the empty last line
    return (
        f'<div style="{_NUMBERED_STYLE}"><pre style="{_GUTTER_PRE_STYLE}">{numbers}</pre>'
        f"{_pre(code, _CODE_PRE_STYLE)}</div>"
    )


def _code_view(
    code: str,
    filename: str | None = None,
    language: str | None = None,
    first_line: int | None = 1,
    fold: int | None = CODE_FOLD,
) -> str:
    """Code in a box, highlighted, numbered from ``first_line``, folded after ``fold`` lines."""
    lines, left = _cap_head(_split_lines(code))
    html_lines = _code_lines("\n".join(lines), filename, language)
    count = len(html_lines)
    digits = len(str((first_line or 1) + count - 1))

    def chunk(start: int, end: int) -> str:
        if first_line is None:
            return _pre("".join(_plain_blocks(html_lines[start:end])))
        return _numbered(html_lines[start:end], first_line + start, digits)

    split = _fold_split(count, fold)
    if split is None:
        inner = chunk(0, count)
    else:
        label = f"Show all {_plural(_count_lines(code), 'line')}"
        inner = chunk(0, split) + _details(label, chunk(split, count))
    return _div(_BOX_STYLE, inner, "aj-tool-code") + (_note(left) if left else "")


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _as_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not value.is_integer():
        return None
    number = int(value) if abs(value) < 1e15 else None
    return number


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return "" if value is None else str(value)[:MAX_CHARS]


def _one_line(text: str, limit: int = SUMMARY_MAX) -> str:
    """Plain, single-line text for a summary."""
    line = " ".join(strip_ansi(text[: limit * 4]).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _compact_json(value: Any, limit: int = 20_000) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str, separators=(",", ":"))
    except Exception:  # too deep, or not JSON at all
        try:
            text = repr(value)
        except Exception:
            text = "(a value that cannot be shown)"
    if len(text) > limit:
        text = text[:limit] + f"… ({len(text) - limit} more characters)"
    return text


def _kv_table(args: Any, skip: Sequence[str] = ()) -> str:
    """Arguments as key/value rows: strings as text, other values as compact JSON."""
    if not isinstance(args, dict):
        if args is None:
            return ""
        return _div(_KV_VALUE_STYLE, _esc(_compact_json(args)), "aj-tool-args")
    rows = []
    items = [(k, v) for k, v in args.items() if k not in skip]
    for key, value in items[:200]:
        shown = value if isinstance(value, str) else _compact_json(value)
        if len(shown) > 20_000:
            shown = shown[:20_000] + f"… ({len(shown) - 20_000} more characters)"
        rows.append(
            f'<tr><td style="{_KV_KEY_STYLE}">{_esc(str(key)[:200])}</td>'
            f'<td style="{_KV_VALUE_STYLE}">{_esc(shown)}</td></tr>'
        )
    if not rows:
        return ""
    more = _note(f"… {_plural(len(items) - 200, 'more argument')}") if len(items) > 200 else ""
    return f'<table class="aj-tool-args" style="{_KV_TABLE_STYLE}">{"".join(rows)}</table>{more}'


def _output_view(text: str, tail: bool = True) -> str:
    """Text output with its terminal colours, capped and folded.

    ``tail``: keep the end in view (a command's output), else the start (a tool's result).
    The colours are converted a whole fold at a time, so a colour set on one line and reset
    lines later colours the lines between.
    """
    lines, left = _cap_tail(_split_lines(text)) if tail else _cap_head(_split_lines(text))

    def chunk(part: list[str]) -> str:
        return _pre(ansi_to_html("\n".join(part)))

    keep = OUTPUT_TAIL if tail else CODE_FOLD
    split = _fold_split(len(lines), keep)
    if split is None:
        body = chunk(lines)
    elif tail:
        earlier = len(lines) - keep
        label = f"Show {_plural(earlier, 'earlier line')}"
        body = _details(label, chunk(lines[:earlier])) + chunk(lines[earlier:])
    else:
        label = f"Show all {_plural(len(lines), 'line')}"
        body = chunk(lines[:keep]) + _details(label, chunk(lines[keep:]))
    box = _div(_BOX_STYLE, body, "aj-tool-output")
    if not left:
        return box
    return _note(left) + box if tail else box + _note(left)


def _path_header(path: str, extra: str = "") -> str:
    more = f'<span style="color:{_MUTED};font-weight:normal">{_esc(extra)}</span>' if extra else ""
    return _div(_PATH_STYLE, _esc(path) + more, "aj-tool-path")


# --- images ----------------------------------------------------------------------------------------

_IMAGE_TYPES = {
    "image/png": "image/png",
    "image/jpeg": "image/jpeg",
    "image/jpg": "image/jpeg",
    "image/gif": "image/gif",
    "image/webp": "image/webp",
}
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")


def _signature_ok(mime: str, head: bytes) -> bool:
    if mime == "image/png":
        return head.startswith(b"\x89PNG\r\n\x1a\n")
    if mime == "image/jpeg":
        return head.startswith(b"\xff\xd8\xff")
    if mime == "image/gif":
        return head.startswith((b"GIF87a", b"GIF89a"))
    return head.startswith(b"RIFF") and head[8:12] == b"WEBP"


def _image(mime: Any, data: Any, index: int) -> str:
    """An ``<img>`` for one image block, or a note saying why it is not shown."""
    kind = _IMAGE_TYPES.get(mime.strip().lower()) if isinstance(mime, str) else None
    if kind is None:
        shown = _one_line(mime, 60) if isinstance(mime, str) else type(mime).__name__
        return _note(f"[image {index} not shown: unsupported type {shown}]")
    if not isinstance(data, str) or not data:
        return _note(f"[image {index} not shown: no data]")
    if len(data) > IMAGE_MAX_BASE64:
        size = len(data) * 3 // 4 / 1_000_000
        return _note(f"[image {index} not shown: too large ({size:.1f} MB)]")
    if len(data) % 4 or not _BASE64.fullmatch(data):
        return _note(f"[image {index} not shown: the data is not valid base64]")
    try:
        head = base64.b64decode(data[:16], validate=True)
    except (binascii.Error, ValueError):
        return _note(f"[image {index} not shown: the data is not valid base64]")
    if not _signature_ok(kind, head):
        return _note(f"[image {index} not shown: the data is not a {kind} image]")
    alt = f"image {index} ({kind})"
    return f'<img class="aj-tool-image" style="{_IMG_STYLE}" alt="{alt}" src="data:{kind};base64,{data}">'


def _images(images: Any) -> str:
    if not isinstance(images, (tuple, list)):
        return ""
    parts = []
    for index, item in enumerate(images[:MAX_IMAGES], start=1):
        if isinstance(item, (tuple, list)) and len(item) == 2:
            parts.append(_image(item[0], item[1], index))
        else:
            parts.append(_note(f"[image {index} not shown: malformed]"))
    if len(images) > MAX_IMAGES:
        parts.append(_note(f"[{_plural(len(images) - MAX_IMAGES, 'more image')} not shown]"))
    return "".join(parts)


# --- the call and the card -------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolCall:
    """What a card needs to know of one tool call (built by the view from a ``ToolBlock``).

    Parameters
    ----------
    name:
        The tool's name (``read``, ``bash``, an extension's tool...).
    args:
        The arguments as the agent sent them: any JSON value (the model's raw arguments).
    output:
        The output streamed so far (the text of the last ``partialResult``).
    result:
        The final text content, ``None`` while the tool runs.
    details:
        ``result["details"]`` as sent (any value, usually a dict or ``None``).
    images:
        ``(mimeType, base64 data)`` of the result's image content blocks.
    is_error:
        Whether the call failed.
    done:
        Whether the call ended.
    """

    name: str
    args: Any
    output: str
    result: str | None
    details: Any = None
    images: tuple[tuple[str, str], ...] = ()
    is_error: bool = False
    done: bool = False


@dataclass(frozen=True)
class ToolCard:
    """A rendered tool call.

    Parameters
    ----------
    summary:
        Plain text for the card's header after ``tool NAME · ``, e.g. ``src/app.py  +3 −1``,
        ``$ ls -la``, ``print · 12 matches in 3 files`` (one line, no markup; show it as text).
    body_html:
        The main view: HTML safe for ``innerHTML`` (``""`` if there is nothing to show).
    args_html:
        The arguments in full, for a toggle: HTML safe for ``innerHTML``; ``""`` when the
        body shows them all.
    """

    summary: str
    body_html: str
    args_html: str


def _final_text(call: ToolCall) -> str:
    return _text(call.result) if call.done else ""


def _args_rest(args: Any, known: Mapping[str, Callable[[Any], bool]]) -> bool:
    """Whether ``args`` has anything a view does not show (keys beyond ``known``, bad types)."""
    if not isinstance(args, dict):
        return args is not None
    return any(key not in known or not known[key](value) for key, value in args.items())


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


def _is_int(value: Any) -> bool:
    return _as_int(value) is not None


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


# --- edit --------------------------------------------------------------------------------------------

_DIFF_LINE = re.compile(r"([ +\-])( *)(\d*) (.*)", re.DOTALL)


def _edits(args: dict[str, Any]) -> list[tuple[str, str]]:
    """The (oldText, newText) pairs of edit arguments in any of the accepted shapes."""
    edits = args.get("edits")
    if isinstance(edits, str) and len(edits) <= 2_000_000:
        try:
            edits = json.loads(edits)
        except Exception:
            edits = None
    if isinstance(edits, dict):
        edits = [edits]
    pairs: list[tuple[str, str]] = []
    if isinstance(edits, list):
        for edit in edits[:200]:
            if isinstance(edit, dict):
                old, new = edit.get("oldText"), edit.get("newText")
                if isinstance(old, str) or isinstance(new, str):
                    pairs.append((_text(old), _text(new)))
    old, new = args.get("oldText"), args.get("newText")
    if not pairs and (isinstance(old, str) or isinstance(new, str)):
        pairs.append((_text(old), _text(new)))
    return pairs


def _diff_line(kind: str, code_html: str) -> str:
    """One line of the diff's text column (context lines carry no markup of their own)."""
    if kind == "+":
        return f'<span class="aj-diff-add" style="{_ADDED_LINE}"><span style="{_ADDED_MARK}">+ </span>{code_html}</span>'
    if kind == "-":
        return f'<span class="aj-diff-del" style="{_REMOVED_LINE}"><span style="{_REMOVED_MARK}">− </span>{code_html}</span>'
    if kind == "…":
        return f'<span class="aj-diff-skip" style="{_SKIP_STYLE}">  ⋯</span>\n'
    return f"  {code_html}\n"


def _diff_chunk(rows: Sequence[tuple[str, str | None, str]], digits: int | None) -> str:
    """Rows of (kind, line number, text HTML): the numbers beside the lines, in two columns."""
    lines = [_diff_line(kind, code_html) for kind, _n, code_html in rows]
    code = f'<span style="{_DIFF_TEXT_STYLE}">{"".join(lines)}</span>'
    if digits is None:
        return _pre(code, _CODE_PRE_STYLE)
    numbers = "\n".join((number or "").rjust(digits) for _k, number, _t in rows)
    return (
        f'<div style="{_NUMBERED_STYLE}"><pre style="{_GUTTER_PRE_STYLE}">{numbers}</pre>'
        f"{_pre(code, _CODE_PRE_STYLE)}</div>"
    )


def _diff_view(rows: list[tuple[str, str | None, str]], filename: str | None) -> str:
    """Rows of (kind ``+ - space …``, line number or None, text) as a coloured diff."""
    left = f"… {_plural(len(rows) - MAX_LINES, 'more diff line')} not shown"
    left = left if len(rows) > MAX_LINES else ""
    rows = rows[:MAX_LINES]
    texts = [text for kind, _n, text in rows if kind != "…"]
    size = 0
    for index, text in enumerate(texts):
        size += len(text) + 1
        if size > MAX_CHARS:
            texts = texts[:index]
            left = "… the rest of the diff is not shown"
            break
    html_lines = iter(_code_lines("\n".join(texts), filename, None) if texts else [])
    shown: list[tuple[str, str | None, str]] = []
    for kind, number, _ in rows:
        if kind == "…":
            shown.append(("…", None, ""))
            continue
        code_html = next(html_lines, None)
        if code_html is None:
            break
        usable = number is not None and number.isdigit() and len(number) <= 9
        shown.append((kind, number if usable else None, code_html))
    numbers = [len(n) for _k, n, _t in shown if n]
    digits = max(numbers) if numbers else None
    split = _fold_split(len(shown), DIFF_FOLD)
    if split is None:
        inner = _diff_chunk(shown, digits)
    else:
        label = f"Show all {_plural(len(shown), 'diff line')}"
        inner = _diff_chunk(shown[:split], digits) + _details(
            label, _diff_chunk(shown[split:], digits)
        )
    return _div(_BOX_STYLE, inner, "aj-tool-diff") + (_note(left) if left else "")


def _parse_diff(diff: str) -> list[tuple[str, str | None, str]]:
    rows: list[tuple[str, str | None, str]] = []
    lines = diff.split("\n")
    for line in lines[: MAX_LINES + 1]:
        # A carriage return inside a line would start a new line when highlighted, and the
        # marks would then sit on the wrong lines: show it as a symbol.
        line = line.removesuffix("\r").replace("\r", "␍")
        match = _DIFF_LINE.fullmatch(line)
        if match is None:
            rows.append((" ", None, line))
            continue
        kind, _pad, number, text = match.groups()
        if kind == " " and not number and text.strip() == "...":
            rows.append(("…", None, ""))
        else:
            rows.append((kind, number or None, text))
    if len(lines) > MAX_LINES + 1:
        rows.append(("…", None, ""))
    return rows


def _pair_rows(pairs: list[tuple[str, str]]) -> list[tuple[str, str | None, str]]:
    """Old/new text pairs as diff rows (a line diff of each pair when small enough)."""
    rows: list[tuple[str, str | None, str]] = []
    for index, (old, new) in enumerate(pairs):
        if index:
            rows.append(("…", None, ""))
        old_lines = _split_lines(old) if old else []
        new_lines = _split_lines(new) if new else []
        if len(old_lines) + len(new_lines) > 600 or len(old) + len(new) > 60_000:
            rows += [("-", None, line) for line in old_lines]
            rows += [("+", None, line) for line in new_lines]
            continue
        matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                rows += [(" ", None, line) for line in old_lines[i1:i2]]
            else:
                rows += [("-", None, line) for line in old_lines[i1:i2]]
                rows += [("+", None, line) for line in new_lines[j1:j2]]
        if len(rows) > MAX_LINES:
            break
    return rows


def _edit_args_html(pairs: list[tuple[str, str]]) -> str:
    parts = []
    for index, (old, new) in enumerate(pairs, start=1):
        label = f"edit {index} of {len(pairs)}" if len(pairs) > 1 else "edit"
        parts.append(_div(_LABEL_STYLE, html.escape(f"{label}: old text"), "aj-tool-label"))
        parts.append(_code_view(old, first_line=None, fold=CODE_FOLD))
        parts.append(_div(_LABEL_STYLE, html.escape(f"{label}: new text"), "aj-tool-label"))
        parts.append(_code_view(new, first_line=None, fold=CODE_FOLD))
    return "".join(parts)


def _render_edit(call: ToolCall) -> ToolCard:
    args = _as_dict(call.args)
    path = _as_str(args.get("path")) or ""
    pairs = _edits(args)
    diff = _as_str(_as_dict(call.details).get("diff"))
    parts = []
    if call.is_error:
        parts.append(_error(_final_text(call)))
    parts.append(_path_header(path) if path else "")
    summary = _one_line(path, 100)
    shown = ("path", "edits", "oldText", "newText")
    args_html = ""
    rows = None
    if diff and not call.is_error:
        rows = _parse_diff(diff)
        if pairs:  # the diff shows the change; the texts sent go behind the toggle
            args_html = _edit_args_html(pairs) + _kv_table(call.args, shown)
        else:
            args_html = _kv_table(call.args, ("path",))
    elif pairs:
        rows = _pair_rows(pairs)
        args_html = _kv_table(call.args, shown)
    else:
        parts.append(_kv_table(call.args, ("path",) if path else ()))
    if rows is not None:
        if not call.is_error:
            added = sum(1 for kind, _n, _t in rows if kind == "+")
            removed = sum(1 for kind, _n, _t in rows if kind == "-")
            summary = f"{summary}  +{added} −{removed}".strip()
        parts.append(_diff_view(rows, path))
    if call.done and not call.is_error and _text(call.result):
        parts.append(_note(_one_line(_text(call.result), 500)))
    return ToolCard(summary, _root("".join(parts)), _root(args_html))


# --- write -------------------------------------------------------------------------------------------


def _render_write(call: ToolCall) -> ToolCard:
    args = _as_dict(call.args)
    path = _as_str(args.get("path"))
    content = _as_str(args.get("content"))
    if path is None and content is None:
        return _render_generic(call)
    path = path or ""
    parts = []
    if call.is_error:
        parts.append(_error(_final_text(call)))
    parts.append(_path_header(path) if path else "")
    summary = _one_line(path, 100)
    if content is not None:
        lines = _count_lines(content)
        summary = f"{summary}  {_plural(lines, 'line')}".strip()
        parts.append(_code_view(content, path) if content else _note("(empty file)"))
    if call.done and not call.is_error and _text(call.result):
        parts.append(_note(_one_line(_text(call.result), 500)))
    known = {"path": _is_str, "content": _is_str}
    args_html = _kv_table(call.args, ("content",)) if _args_rest(call.args, known) else ""
    return ToolCard(summary, _root("".join(parts)), _root(args_html))


# --- read --------------------------------------------------------------------------------------------

_READ_NOTICE = re.compile(
    r"\n\n(\[(?:\d+ more lines? in file\. Use offset=\d+ to continue\."
    r"|Showing lines (\d+)-(\d+) of \d+[^\]\n]*)\])\Z"
)
_TOO_LONG = re.compile(r"\[Line \d+ is [^\]\n]*\]\Z")


def _render_read(call: ToolCall) -> ToolCard:
    args = _as_dict(call.args)
    path = _as_str(args.get("path"))
    if path is None:
        return _render_generic(call)
    offset = _as_int(args.get("offset"))
    limit = _as_int(args.get("limit"))
    first = offset if offset is not None and offset > 0 else 1
    span = ""
    if limit is not None and limit > 0:
        span = f"lines {first}–{first + limit - 1}"
    elif offset is not None and offset > 1:
        span = f"from line {first}"
    parts = []
    text = _final_text(call)
    body = []
    if call.is_error:
        parts.append(_error(text))
    elif call.done:
        images = call.images if isinstance(call.images, (tuple, list)) else ()
        if images or text.startswith("Read image file ["):
            if text:
                body.append(_note(text[:5000]))
            body.append(_images(images))
            span = ""
        elif _TOO_LONG.fullmatch(text):
            body.append(_note(text))
        else:
            notice = ""
            match = _READ_NOTICE.search(text)
            content = text
            if match:
                notice = match.group(1)
                content = text[: match.start()]
            count = _count_lines(content)
            if match and match.group(2):
                span = f"lines {match.group(2)}–{match.group(3)}"
            elif count:
                span = f"lines {first}–{first + count - 1}"
            body.append(_code_view(content, path, first_line=first) if content else "")
            if notice:
                body.append(_note(notice))
        unsupported = _as_dict(call.details).get("imageUnsupportedByModel")
        if isinstance(unsupported, str):
            body.append(_note(f"[the model ({_one_line(unsupported, 80)}) cannot see images]"))
    parts.append(_path_header(path, f"  {span}" if span else ""))
    parts += body
    summary = _one_line(path, 100) + (f"  {span}" if span else "")
    known = {"path": _is_str, "offset": _is_int, "limit": _is_int}
    args_html = _kv_table(call.args) if _args_rest(call.args, known) else ""
    return ToolCard(summary, _root("".join(parts)), _root(args_html))


# --- bash --------------------------------------------------------------------------------------------

_STATUS = re.compile(
    r"(?:\A|\n)\n?(Command (?:exited with code (\d+)|timed out after [^\n]*|aborted"
    r"|terminated without an exit code[^\n]*))\Z"
)
_OUTPUT_NOTICE = re.compile(r"(?:\A|\n\n)(\[Showing (?:lines \d+-\d+ of \d+|last )[^\]\n]*\])\n*\Z")


def _parse_bash(text: str, failed: bool) -> tuple[str, str, str, int | None]:
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


def _render_bash(call: ToolCall, language: str = "bash", prompt: str = "$ ") -> ToolCard:
    args = _as_dict(call.args)
    command = _as_str(args.get("command"))
    if command is None:
        return _render_generic(call)
    first_line = command.strip().split("\n", 1)[0] if command.strip() else ""
    more = " …" if "\n" in command.strip() else ""
    summary = _one_line(f"{prompt}{first_line}", SUMMARY_MAX - 2) + more
    cmd_lines, cmd_left = _cap_head(_split_lines(command) if command else [""], 200)
    highlighted = _code_lines("\n".join(cmd_lines), None, language)
    prompt_html = f'<span style="{_PROMPT_STYLE}">{html.escape(prompt)}</span>'
    cmd_html = "\n".join(
        (prompt_html if index == 0 else "") + line for index, line in enumerate(highlighted)
    )
    parts = []
    timeout = _as_int(args.get("timeout"))
    head = _pre(cmd_html)
    if cmd_left:
        head += _note(cmd_left)
    if timeout is not None:
        head += _note(f"timeout {timeout} s")
    if call.done:
        text = _text(call.result)
        output, notice, status, code = _parse_bash(text, call.is_error)
        if call.is_error and not status:
            parts.append(_error(text))
            parts.append(_div(_BOX_STYLE, head, "aj-tool-command"))
        else:
            parts.append(_div(_BOX_STYLE, head, "aj-tool-command"))
            parts.append(_output_view(output) if output.strip() else _note("(no output)"))
            if notice:
                parts.append(_note(notice))
            if code is not None:
                style = _STATUS_ERROR_STYLE if code else _NOTE_STYLE
                parts.append(_div(style, f"exit code {code}", "aj-tool-status"))
            elif status:
                parts.append(_div(_STATUS_ERROR_STYLE, _esc(status), "aj-tool-status"))
            elif not call.is_error:
                parts.append(_div(_NOTE_STYLE, "exit code 0", "aj-tool-status"))
    else:
        parts.append(_div(_BOX_STYLE, head, "aj-tool-command"))
        output = _text(call.output)
        if output:
            parts.append(_output_view(output))
    known = {"command": _is_str, "timeout": _is_int}
    args_html = _kv_table(call.args) if _args_rest(call.args, known) or cmd_left else ""
    return ToolCard(summary, _root("".join(parts)), _root(args_html))


# --- grep, find, ls ---------------------------------------------------------------------------------

_LIST_NOTICE = re.compile(r"(?:\A|\n\n)(\[[^\n]*\])\Z")
_GREP_MATCH = re.compile(r"(.*?):(\d+): (.*)", re.DOTALL)
_GREP_CONTEXT = re.compile(r"(.*?)-(\d+)- (.*)", re.DOTALL)
_REGEX_META = re.compile(r"[.^$*+?()\[\]{}|\\]")


def _split_notice(text: str) -> tuple[str, str]:
    match = _LIST_NOTICE.search(text)
    if match and (match.start() > 0 or "\n" not in text):
        return text[: match.start()], match.group(1)
    return text, ""


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


def _hits_html(text: str, finder: re.Pattern[str] | None) -> str:
    if finder is None:
        return _esc(text)
    parts, position = [], 0
    for match in finder.finditer(text):
        if match.end() == match.start():
            continue
        parts.append(_esc(text[position : match.start()]))
        parts.append(f'<span class="aj-grep-hit" style="{_HIT_STYLE}">{_esc(match.group())}</span>')
        position = match.end()
    parts.append(_esc(text[position:]))
    return "".join(parts)


def _list_box(blocks: list[str], label: str) -> str:
    return _div(_BOX_STYLE, _fold_head(blocks, LIST_FOLD, label, _pre), "aj-tool-list")


def _render_grep(call: ToolCall) -> ToolCard:
    args = _as_dict(call.args)
    pattern = _as_str(args.get("pattern"))
    if pattern is None:
        return _render_generic(call)
    where = _as_str(args.get("path"))
    glob = _as_str(args.get("glob"))
    flags = [
        name
        for key, name in (("ignoreCase", "ignore case"), ("literal", "literal"))
        if args.get(key) is True
    ]
    context = _as_int(args.get("context"))
    if context:
        flags.append(f"context {context}")
    described = pattern + (f"  in {where}" if where else "") + (f"  ({glob})" if glob else "")
    parts = []
    text = _final_text(call)
    summary = _one_line(pattern, 80)
    body = []
    if call.is_error:
        parts.append(_error(text))
    elif call.done:
        content, notice = _split_notice(text)
        if content.strip() == "No matches found":
            summary += " · no matches"
            body.append(_note("No matches found"))
        else:
            finder = None
            if pattern and (args.get("literal") is True or not _REGEX_META.search(pattern)):
                ignore = re.IGNORECASE if args.get("ignoreCase") is True else 0
                finder = re.compile(re.escape(pattern[:1000]), ignore)
            lines, left = _cap_head([line for line in _split_lines(content) if line])
            groups: list[tuple[str | None, list[tuple[int | None, bool, str]]]] = []
            current: str | None = None
            matches = 0
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
                matches += is_match
            files = len({path for path, _rows in groups if path is not None})
            blocks = []
            for group_path, rows in groups:
                count = sum(1 for _n, is_match, _t in rows if is_match)
                if group_path is not None:
                    head = f"{group_path}  ({_plural(count, 'match', 'matches')})"
                    blocks.append(
                        f'<span class="aj-grep-file" style="{_FILE_HEAD_STYLE}">{_esc(head)}</span>'
                    )
                digits = max((len(str(n)) for n, _m, _t in rows if n is not None), default=1)
                for number, is_match, row_text in rows:
                    code = _hits_html(row_text, finder if is_match else None)
                    if not is_match:
                        code = f'<span style="{_CONTEXT_STYLE}">{code}</span>'
                    blocks.append(_line(code, str(number) if number is not None else "", digits))
            limited = bool(notice) or _as_dict(call.details).get("matchLimitReached") is not None
            summary += f" · {_plural(matches, 'match', 'matches')} in {_plural(files, 'file')}"
            summary += " (limit reached)" if limited else ""
            body.append(_list_box(blocks, f"Show all {_plural(len(blocks), 'line')}"))
            if left:
                body.append(_note(left))
        if notice:
            body.append(_note(notice))
    parts.append(_path_header(described, "  " + ", ".join(flags) if flags else ""))
    parts += body
    known = {
        "pattern": _is_str,
        "path": _is_str,
        "glob": _is_str,
        "ignoreCase": _is_bool,
        "literal": _is_bool,
        "context": _is_int,
        "limit": _is_int,
    }
    args_html = _kv_table(call.args) if _args_rest(call.args, known) else ""
    return ToolCard(summary, _root("".join(parts)), _root(args_html))


def _entries_view(
    text: str, empty: set[str], noun: str, nouns: str
) -> tuple[str, int | None, bool]:
    """(HTML, number of entries or None if there are none, limit reached) of find/ls output."""
    content, notice = _split_notice(text)
    parts = []
    if content.strip() in empty:
        parts.append(_note(content.strip()))
        count = None
    else:
        lines, left = _cap_head([line for line in _split_lines(content) if line])
        blocks = _plain_blocks(
            [
                f'<span class="aj-dir" style="{_DIR_STYLE}">{_esc(line)}</span>'
                if line.endswith("/")
                else _esc(line)
                for line in lines
            ]
        )
        count = len(lines) + (len(_split_lines(content)) - len(lines) if left else 0)
        parts.append(_list_box(blocks, f"Show all {_plural(count, noun, nouns)}"))
        if left:
            parts.append(_note(left))
    if notice:
        parts.append(_note(notice))
    return "".join(parts), count, bool(notice)


def _render_find(call: ToolCall) -> ToolCard:
    args = _as_dict(call.args)
    pattern = _as_str(args.get("pattern"))
    if pattern is None:
        return _render_generic(call)
    where = _as_str(args.get("path"))
    parts = []
    summary = _one_line(pattern, 100)
    text = _final_text(call)
    body = ""
    if call.is_error:
        parts.append(_error(text))
    elif call.done:
        body, count, limited = _entries_view(
            text, {"No files found matching pattern"}, "result", "results"
        )
        limited = limited or _as_dict(call.details).get("resultLimitReached") is not None
        summary += f" · {_plural(count or 0, 'result')}" + (" (limit reached)" if limited else "")
    parts.append(_path_header(pattern + (f"  in {where}" if where else "")))
    parts.append(body)
    known = {"pattern": _is_str, "path": _is_str, "limit": _is_int}
    args_html = _kv_table(call.args) if _args_rest(call.args, known) else ""
    return ToolCard(summary, _root("".join(parts)), _root(args_html))


def _render_ls(call: ToolCall) -> ToolCard:
    if call.args is not None and not isinstance(call.args, dict):
        return _render_generic(call)
    args = _as_dict(call.args)
    path = _as_str(args.get("path")) or "."
    parts = []
    summary = _one_line(path, 100)
    text = _final_text(call)
    body = ""
    if call.is_error:
        parts.append(_error(text))
    elif call.done:
        body, count, limited = _entries_view(text, {"(empty directory)"}, "entry", "entries")
        limited = limited or _as_dict(call.details).get("entryLimitReached") is not None
        noun = _plural(count or 0, "entry", "entries")
        summary += f" · {noun}" + (" (limit reached)" if limited else "")
    parts.append(_path_header(path))
    parts.append(body)
    known = {"path": _is_str, "limit": _is_int}
    args_html = _kv_table(call.args) if _args_rest(call.args, known) else ""
    return ToolCard(summary, _root("".join(parts)), _root(args_html))


# --- any other tool -------------------------------------------------------------------------------


def _generic_summary(args: Any) -> str:
    if isinstance(args, str):
        return _one_line(args, 100)
    if not isinstance(args, dict):
        return ""
    strings = [value for value in args.values() if isinstance(value, str) and value.strip()]
    for value in strings:
        if len(value) <= 100 and "\n" not in value.strip():
            return _one_line(value, 100)
    return _one_line(strings[0].strip().split("\n", 1)[0], 100) if strings else ""


def _render_generic(call: ToolCall) -> ToolCard:
    parts = []
    if call.done:
        text = _text(call.result)
        if call.is_error:
            parts.append(_error(text))
        parts.append(_kv_table(call.args))
        if text and not call.is_error:
            parts.append(_output_view(text, tail=False))
    else:
        parts.append(_kv_table(call.args))
        output = _text(call.output)
        if output:
            parts.append(_output_view(output))
    if call.done:
        parts.append(_images(call.images))
    return ToolCard(_generic_summary(call.args), _root("".join(parts)), "")


_RENDERERS: dict[str, Callable[[ToolCall], ToolCard]] = {
    "read": _render_read,
    "write": _render_write,
    "edit": _render_edit,
    "bash": _render_bash,
    "powershell": lambda call: _render_bash(call, "powershell", "PS> "),
    "grep": _render_grep,
    "find": _render_find,
    "ls": _render_ls,
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
        Its summary (plain text) and HTML safe for ``innerHTML``.
    """
    name = call.name if isinstance(call.name, str) else ""
    renderer = _RENDERERS.get(name, _render_generic)
    try:
        return renderer(call)
    except Exception:  # a bug here must not break the transcript
        pass
    try:
        return _render_generic(call)
    except Exception:
        text = _text(call.result) if call.done else _text(call.output)
        return ToolCard("", _root(_div(_NOTE_STYLE, _esc(text[:MAX_CHARS]))), "")


def highlight_html(
    code: str,
    filename: str | None = None,
    language: str | None = None,
    *,
    first_line: int | None = None,
) -> str:
    """Code highlighted in the theme's editor colours, escaped, in a ``<pre>``.

    The lexer is Pygments' for ``language`` (a name such as ``python`` or ``bash``), else for
    ``filename`` (by its name), else none (plain text). Token colours are JupyterLab's
    ``--jp-mirror-editor-*-color`` variables, so the code follows the light or dark theme.
    Code longer than :data:`HIGHLIGHT_MAX_CHARS` is not highlighted; more than
    :data:`MAX_LINES` lines or :data:`MAX_CHARS` characters are not shown (a line says so).

    Parameters
    ----------
    code:
        The code (agent text).
    filename:
        A file name or path to choose the lexer by.
    language:
        A Pygments language name; wins over ``filename``.
    first_line:
        Number the lines from this number; ``None`` for no line numbers.

    Returns
    -------
    str
        ``<div class="aj-tool-code" ...><pre ...>...</pre></div>``, safe for ``innerHTML``.
    """
    code = code if isinstance(code, str) else _text(code)
    filename = filename if isinstance(filename, str) else None
    language = language if isinstance(language, str) else None
    first = first_line if isinstance(first_line, int) and not isinstance(first_line, bool) else None
    return _code_view(code, filename, language, first_line=first, fold=None)
