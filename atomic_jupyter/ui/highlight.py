"""Syntax highlighting in the theme's editor colours, for the tool cards and the Markdown.

:func:`lexer_for` finds Pygments' lexer for a language name or a file's name;
:func:`highlight_lines` cuts code into lines of coloured runs; :func:`lines_html` and
:func:`line_html` write them as escaped HTML for element content (a ``<pre>``).

Colours
-------
Every colour is one of JupyterLab's CodeMirror theme variables
(``color:var(--jp-mirror-editor-keyword-color,#385)``), mapped from Pygments' tokens as
JupyterLab maps its own highlight tags (keywords and operators bold, comments italic; the dot of
``a.b`` plain, as JupyterLab's ``derefOperator``), so code follows the light and the dark theme.
The fallback after the comma, for pages without JupyterLab's variables (nbconvert's classic
template, other viewers), is a mid-tone of three hex digits, readable on light and dark.

Size
----
The HTML carries markup only where there is colour: adjacent tokens of one colour are one
``<span>``, whitespace (and, between lines, the line break) between two runs of one colour joins
them, and text without a colour (names, punctuation, whitespace) has no span at all. Text is
escaped for element content (``&``, ``<``, ``>``): it is never placed in an attribute.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

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

__all__ = [
    "ERROR_COLOR",
    "MUTED_COLOR",
    "SUCCESS_COLOR",
    "Line",
    "Run",
    "highlight_lines",
    "line_html",
    "lexer_for",
    "lines_html",
    "theme_var",
    "record_token_styles",
    "token_style",
]

#: One run of text in one style: ``(inline style or "", text)``; the text is not escaped.
Run = tuple[str, str]
#: The runs of one line of code, without its line break.
Line = tuple[Run, ...]


def theme_var(name: str, fallback: str) -> str:
    """``var(--jp-NAME,FALLBACK)``: a JupyterLab theme variable, ``fallback`` without one.

    Parameters
    ----------
    name:
        The variable's name after ``--jp-`` (ours, never the agent's).
    fallback:
        The value where the page has no such variable.

    Returns
    -------
    str
        The CSS value.
    """
    return f"var(--jp-{name},{fallback})"


#: Secondary text.
MUTED_COLOR = theme_var("content-font-color2", "#888")
#: Success (added lines, exit code 0).
SUCCESS_COLOR = theme_var("success-color1", "#43a047")
#: Errors (removed lines, failures).
ERROR_COLOR = theme_var("error-color1", "#e53935")


def _mirror(name: str, fallback: str, extra: str = "") -> str:
    return f"color:{theme_var(f'mirror-editor-{name}-color', fallback)}{extra}"


_BOLD = ";font-weight:bold"
# As JupyterLab's own highlight style (@jupyterlab/codemirror): keywords and operators bold,
# comments italic, definitions, builtins, strings, numbers... in the theme's editor colours.
_TOKEN_STYLES: dict[_TokenType, str] = {
    Keyword: _mirror("keyword", "#385", _BOLD),
    Operator: _mirror("operator", "#95d", _BOLD),
    Operator.Word: _mirror("keyword", "#385", _BOLD),
    Name.Builtin: _mirror("builtin", "#393"),
    Name.Builtin.Pseudo: _mirror("variable-2", "#38c"),
    Name.Exception: _mirror("builtin", "#393"),
    Name.Function: _mirror("def", "#37d"),
    Name.Class: _mirror("def", "#37d"),
    Name.Decorator: _mirror("meta", "#95e"),
    Name.Tag: _mirror("tag", "#384"),
    Name.Attribute: _mirror("attribute", "#47d"),
    Name.Variable: _mirror("variable-2", "#38c"),
    Name.Constant: _mirror("atom", "#67d"),
    Name.Entity: _mirror("atom", "#67d"),
    Name.Label: _mirror("string-2", "#95b"),
    Name.Property: _mirror("property", "#38b"),
    Literal: _mirror("atom", "#67d"),
    String: _mirror("string", "#c44"),
    String.Escape: _mirror("string-2", "#95b"),
    String.Regex: _mirror("string-2", "#95b"),
    String.Interpol: _mirror("string-2", "#95b"),
    Number: _mirror("number", "#394"),
    Comment: _mirror("comment", "#688", ";font-style:italic"),
    Comment.Preproc: _mirror("meta", "#95e"),
    Comment.PreprocFile: _mirror("string", "#c44"),
    Generic.Heading: _mirror("header", "#37d", _BOLD),
    Generic.Subheading: _mirror("header", "#37d", _BOLD),
    Generic.Emph: "font-style:italic",
    Generic.Strong: "font-weight:bold",
    Generic.Inserted: f"color:{SUCCESS_COLOR}",
    Generic.Deleted: f"color:{ERROR_COLOR}",
    Generic.Error: f"color:{ERROR_COLOR}",
    Generic.Prompt: f"color:{MUTED_COLOR};font-weight:bold",
}


_VAR_FALLBACK = re.compile(r"var\(--jp-[a-z0-9-]+,(#[0-9a-fA-F]{3,6})\)")


def record_token_styles() -> dict[str, str]:
    """Each token style -> its form in a saved record: the colour alone, as a literal colour.

    A record is kept small (a token's style is most of its markup), and a literal colour
    shows where a theme variable does not: an untrusted notebook's sanitiser keeps only
    literal colours. The editor colours' light-theme values are mid-tones that read on a
    light and on a dark background alike.
    """
    compact: dict[str, str] = {}
    for style in set(_TOKEN_STYLES.values()):
        found = _VAR_FALLBACK.search(style)
        if style.startswith("color:") and found:
            compact[style] = f"color:{found.group(1)}"
        elif not style.startswith("color:"):
            compact[style] = ""  # emphasis alone: the record shows the text plainly
    return compact


@lru_cache(maxsize=512)
def token_style(ttype: _TokenType) -> str:
    """The inline style of a Pygments token type: the theme's editor colour for it.

    Parameters
    ----------
    ttype:
        The token type; its closest ancestor with a colour decides.

    Returns
    -------
    str
        The style, ``""`` for text without a colour.
    """
    kind: _TokenType | None = ttype
    while kind is not None:
        style = _TOKEN_STYLES.get(kind)
        if style is not None:
            return style
        kind = kind.parent
    return ""


def _style(ttype: _TokenType, value: str) -> str:
    # Pygments calls the dot of ``a.b`` an operator; JupyterLab leaves it plain.
    if value == "." and ttype in Operator:
        return ""
    return token_style(ttype)


_LANGUAGE = re.compile(r"[A-Za-z0-9_+#.-]{1,40}")


@lru_cache(maxsize=256)
def lexer_for(filename: str | None = None, language: str | None = None) -> Lexer | None:
    """Pygments' lexer for a language name, else for a file's name.

    Parameters
    ----------
    filename:
        A file name or path (only its last part counts); agent text.
    language:
        A language name or alias such as ``python`` or ``bash``; agent text; wins over
        ``filename``.

    Returns
    -------
    Lexer or None
        The lexer, keeping the text as it is (no stripping, no final newline added); ``None``
        when there is none (or the name is malformed). Never raises.
    """
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
    except Exception:  # ClassNotFound, or a lookup's own bug: it must never break a view
        return None
    return None


def _plain(code: str) -> tuple[Line, ...]:
    return tuple((("", line),) if line else () for line in code.split("\n"))


@lru_cache(maxsize=64)
def highlight_lines(
    code: str, lexer: Lexer | None, max_chars: int | None = None
) -> tuple[Line, ...]:
    """The lines of ``code`` (``\\r\\n`` and ``\\r`` read as line breaks), as coloured runs.

    Parameters
    ----------
    code:
        The code (agent text).
    lexer:
        The lexer (see :func:`lexer_for`); ``None`` for plain text.
    max_chars:
        Longer code is left plain; ``None`` for no limit.

    Returns
    -------
    tuple of Line
        One line per line of ``code``; adjacent tokens of one style are one run. Plain text
        (one unstyled run a line) when there is no lexer, when the lexer fails, or when it
        would change the text's lines.
    """
    code = code.replace("\r\n", "\n").replace("\r", "\n")
    if lexer is None or (max_chars is not None and len(code) > max_chars):
        return _plain(code)
    lines: list[list[tuple[str, list[str]]]] = [[]]  # each run's pieces, joined at the end
    try:
        for ttype, value in lexer.get_tokens(code):
            style = _style(ttype, value)
            for index, part in enumerate(value.split("\n")):
                if index:
                    lines.append([])
                if not part:
                    continue
                runs = lines[-1]
                if runs and runs[-1][0] == style:
                    runs[-1][1].append(part)
                else:
                    runs.append((style, [part]))
    except Exception:  # a lexer bug must not break a view: show plain text
        return _plain(code)
    if len(lines) != code.count("\n") + 1:  # the lexer changed the text
        return _plain(code)
    return tuple(tuple((style, "".join(parts)) for style, parts in runs) for runs in lines)


def _runs_html(runs: Iterable[Run]) -> str:
    """Runs as HTML: a span a styled run, whitespace between two runs of one style joined."""
    parts: list[str] = []
    open_style = ""  # the style of the span still open, "" if none is
    held = ""  # whitespace after the open span: inside it if the same style comes next
    for style, text in runs:
        escaped = html.escape(text, quote=False)
        if open_style:
            if style == open_style:
                parts.append(held + escaped)
                held = ""
                continue
            if not style and not text.strip():
                held += escaped
                continue
            parts.append("</span>" + held)
            open_style = held = ""
        if style:
            parts.append(f'<span style="{style}">{escaped}')
            open_style = style
        else:
            parts.append(escaped)
    if open_style:
        parts.append("</span>" + held)
    return "".join(parts)


def line_html(line: Line) -> str:
    """One line as escaped HTML for element content.

    Parameters
    ----------
    line:
        Its runs (from :func:`highlight_lines`).

    Returns
    -------
    str
        The HTML, safe for ``innerHTML``.
    """
    return _runs_html(line)


def lines_html(lines: Sequence[Line]) -> str:
    """Lines joined by line breaks as escaped HTML (a run may go on across a line break).

    Parameters
    ----------
    lines:
        The lines (from :func:`highlight_lines`).

    Returns
    -------
    str
        The HTML for a ``<pre>``, safe for ``innerHTML``; its visible text is the lines
        joined by ``"\\n"``.
    """

    def runs() -> Iterable[Run]:
        for index, line in enumerate(lines):
            if index:
                yield ("", "\n")
            yield from line

    return _runs_html(runs())
