"""Terminal escape codes in agent text: removed, or shown as colour in escaped HTML.

Extensions colour their status lines, widget lines and titles with SGR codes, and tools
(``ls --color``, test runners) colour their output. The text is the agent's, so it is hostile
input: every character of it is HTML-escaped, and the only markup in the result is the
``<span>`` tags written here, whose ``class`` and ``style`` values are built from this module's
own constants and from integers parsed out of the escape codes (never from text copied out of
the input).

Colours
-------
JupyterLab 4 defines no CSS variables for the ANSI palette: its output area styles the classes
``ansi-red-fg``, ``ansi-red-intense-fg``, ``ansi-red-bg``, ``ansi-red-intense-bg``, ...,
``ansi-bold``, ``ansi-underline``, ``ansi-default-inverse-fg`` and ``ansi-default-inverse-bg``,
and only inside ``.jp-RenderedText pre``; the colours there are fixed hex values, the same in
the light and the dark theme. So a span carries JupyterLab's class names (a hook for a
stylesheet) *and* the same colour inline (``color: #e75c58``), which renders identically to a
cell's output without any stylesheet. Inverse video of the default colours uses the theme
variables JupyterLab itself uses for it, ``--jp-ui-inverse-font-color0`` and
``--jp-inverse-layout-color0``, with a fallback. Colours 16-255 of the 256-colour palette and
24-bit colours are inline ``rgb(r, g, b)``.

The module imports nothing but the standard library.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TypeAlias

__all__ = ["Color", "Style", "ansi_spans", "ansi_to_html", "has_ansi", "strip_ansi"]

Color: TypeAlias = int | tuple[int, int, int]
"""A colour: an index 0-15 into the themed 16-colour palette, or a 24-bit ``(r, g, b)``."""

# Every control sequence and control character, in the order a terminal would recognise them:
# CSI (7-bit ESC [ or 8-bit U+009B): parameter bytes, intermediate bytes, a final byte (which
# may be missing when the sequence is cut off or broken; what was read of it is dropped).
_CSI = r"(?:\x1b\[|\x9b)([0-?]*)([ -/]*)([@-~]?)"
# Control strings: OSC (ESC ]), DCS (ESC P), SOS (ESC X), PM (ESC ^), APC (ESC _) and their 8-bit
# forms, ended by BEL or ST (ESC \ or U+009C), by any other ESC (which starts a new sequence,
# as in a VT500 parser), or by the end of the text.
_STRING = r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
# Any other escape sequence: ESC, intermediate bytes, a final byte (ESC 7, ESC c, ESC ( B);
# a lone ESC.
_ESCAPE = r"\x1b[ -/]*[0-~]?"
# C0 controls but \t and \n (so \r, BS, BEL, NUL...), DEL and the C1 controls.
_CONTROL_CHAR = r"[\x00-\x08\x0b-\x1f\x7f-\x9f]"

_SEQUENCE = re.compile(f"{_CSI}|{_STRING}|{_ESCAPE}|{_CONTROL_CHAR}")
_ANY_CONTROL = re.compile(_CONTROL_CHAR)
_SGR_PARAMS = re.compile(r"[0-9:;]*")

_NAMES = ("black", "red", "green", "yellow", "blue", "magenta", "cyan", "white")
# JupyterLab 4's palette (packages/rendermime/style/base.css): 0-7, then the "intense" 8-15.
_PALETTE = (
    "#3e424d",
    "#e75c58",
    "#00a250",
    "#ddb62b",
    "#208ffb",
    "#d160c4",
    "#60c6c8",
    "#c5c1b4",
    "#282c36",
    "#b22b31",
    "#007427",
    "#b27d12",
    "#0065ca",
    "#a03196",
    "#258f8f",
    "#a1a6b2",
)
_INVERSE_FG = "var(--jp-ui-inverse-font-color0, #fff)"
_INVERSE_BG = "var(--jp-inverse-layout-color0, #111)"
_CUBE_LEVELS = (0, 95, 135, 175, 215, 255)
_CACHED_PARAMS = 32  # the longest SGR parameters whose effect is cached


@dataclass(frozen=True)
class Style:
    """The graphic rendition of a run of text.

    Parameters
    ----------
    fg, bg:
        The foreground and background colour, ``None`` for the default.
    bold, dim, italic, underline, inverse, strike:
        SGR 1, 2, 3, 4, 7 and 9.
    """

    fg: Color | None = None
    bg: Color | None = None
    bold: bool = False
    dim: bool = False
    italic: bool = False
    underline: bool = False
    inverse: bool = False
    strike: bool = False


_PLAIN = Style()


def has_ansi(text: str) -> bool:
    """Whether ``text`` may hold a terminal escape sequence (it has an ESC or an 8-bit CSI).

    Parameters
    ----------
    text:
        Any text.

    Returns
    -------
    bool
        ``True`` if ``text`` contains ``\\x1b`` or ``\\x9b``.
    """
    return "\x1b" in text or "\x9b" in text


def strip_ansi(text: str) -> str:
    """The text with every terminal control sequence and control character removed.

    Removed: CSI sequences (SGR, cursor moves, erase, private modes; 7-bit and 8-bit), control
    strings (OSC such as window titles and OSC 8 hyperlinks, whose link text stays and whose
    URL goes; DCS, SOS, PM, APC), other ESC sequences (``ESC 7``, ``ESC ( B``), and every C0
    control but ``\\n`` and ``\\t`` (so ``\\r\\n`` becomes ``\\n`` and a lone ``\\r``,
    backspace and BEL go), DEL and the C1 controls. A sequence cut off at the end of the text
    is dropped. Never raises.

    Parameters
    ----------
    text:
        Any text.

    Returns
    -------
    str
        The text a person should read.
    """
    if _ANY_CONTROL.search(text) is None:
        return text
    return _SEQUENCE.sub("", text)


def ansi_spans(text: str) -> list[tuple[str, Style]]:
    """The text split into runs of one style, control sequences removed.

    Adjacent runs of the same style are merged and empty runs left out; the texts joined are
    ``strip_ansi(text)``.

    Parameters
    ----------
    text:
        Any text.

    Returns
    -------
    list of (str, Style)
        The runs, in order.
    """
    spans: list[tuple[str, Style]] = []
    pieces: list[str] = []
    current = _PLAIN
    for chunk, style in _runs(text):
        if not chunk:
            continue
        if style != current and pieces:
            spans.append(("".join(pieces), current))
            pieces = []
        current = style
        pieces.append(chunk)
    if pieces:
        spans.append(("".join(pieces), current))
    return spans


def ansi_to_html(text: str) -> str:
    """HTML showing the text in the colours and styles its SGR codes ask for.

    Every character of the text is escaped with ``html.escape(..., quote=True)``; each styled
    run is wrapped in ``<span class="aj-ansi ..." style="...">``: the classes are JupyterLab's
    output-area classes (``ansi-red-fg``, ``ansi-red-intense-bg``, ``ansi-bold``,
    ``ansi-underline``, ``ansi-default-inverse-fg``...), and the style holds the same look
    inline, so the result renders without any stylesheet (see the module's docstring for the
    palette). Supported SGR codes: 0 (and empty), 1, 2, 3, 4 (and ``4:n``), 7, 9, 22, 23, 24,
    27, 29, 30-37, 39, 40-47, 49, 90-97, 100-107, and ``38``/``48`` with ``5;n``, ``2;r;g;b``
    or the colon forms ``5:n``, ``2::r:g:b`` and ``2:r:g:b``. Others, and malformed or out of
    range parameters, are ignored. Every other control sequence is removed as by
    :func:`strip_ansi`. Newlines stay ``\\n`` (put the result in a ``<pre>`` or an element
    with ``white-space: pre-wrap``). Never raises.

    Parameters
    ----------
    text:
        Any text.

    Returns
    -------
    str
        HTML whose text content is ``strip_ansi(text)``.
    """
    if _ANY_CONTROL.search(text) is None:
        return html.escape(text, quote=True)
    parts: list[str] = []
    for chunk, style in ansi_spans(text):
        escaped = html.escape(chunk, quote=True)
        if style == _PLAIN:
            parts.append(escaped)
            continue
        parts.append(f"{_open_tag(style)}{escaped}</span>")
    return "".join(parts)


def _runs(text: str) -> Iterator[tuple[str, Style]]:
    """Each stretch of text between control sequences, with the style in force over it."""
    style = _PLAIN
    position = 0
    for match in _SEQUENCE.finditer(text):
        yield text[position : match.start()], style
        position = match.end()
        params, intermediates, final = match.group(1, 2, 3)
        if final == "m" and not intermediates:
            # The same few codes come again and again (colour on, colour off).
            short = len(params) <= _CACHED_PARAMS
            style = _apply_sgr_cached(style, params) if short else _apply_sgr(style, params)
    yield text[position:], style


def _number(field: str) -> int | None:
    """A parameter's value (empty means 0), or ``None`` if it is not a small decimal number."""
    if not field:
        return 0
    if not (field.isascii() and field.isdigit()):
        return None
    digits = field.lstrip("0")
    # Long enough to be out of range for everything, and short of int()'s digit limit.
    if len(digits) > 6:
        return None
    return int(digits or "0")


def _byte(field: str) -> int | None:
    """A colour component or palette index 0-255, or ``None``."""
    value = _number(field)
    return value if value is not None and value <= 255 else None


def _palette_colour(index: int) -> Color:
    """Colour ``index`` (0-255) of the 256-colour palette."""
    if index < 16:
        return index
    if index < 232:
        cube = index - 16
        return (_CUBE_LEVELS[cube // 36], _CUBE_LEVELS[cube // 6 % 6], _CUBE_LEVELS[cube % 6])
    grey = 8 + 10 * (index - 232)
    return (grey, grey, grey)


def _rgb(fields: list[str]) -> Color | None:
    components = [_byte(field) for field in fields]
    if len(components) != 3:
        return None
    red, green, blue = components
    if red is None or green is None or blue is None:
        return None
    return (red, green, blue)


def _extended_colon(subfields: list[str]) -> Color | None:
    """The colour of ``38:...`` from the subparameters after 38."""
    if not subfields:
        return None
    mode = _number(subfields[0])
    if mode == 5 and len(subfields) >= 2:
        index = _byte(subfields[1])
        return None if index is None else _palette_colour(index)
    if mode == 2:
        rest = subfields[1:]
        # 38:2:<colour space>:r:g:b[:...], or the common 38:2:r:g:b without the colour space.
        return _rgb(rest) if len(rest) == 3 else _rgb(rest[1:4])
    return None


def _extended_semicolon(fields: list[str], start: int) -> tuple[Color | None, int]:
    """The colour of ``38;...`` from ``fields[start:]`` and how many fields it used."""
    if start >= len(fields):
        return None, 0
    mode = _number(fields[start])
    if mode == 5:
        chosen = fields[start + 1 : start + 2]
        index = _byte(chosen[0]) if chosen else None
        return (None if index is None else _palette_colour(index)), 1 + len(chosen)
    if mode == 2:
        chosen = fields[start + 1 : start + 4]
        return _rgb(chosen), 1 + len(chosen)
    return None, 1


def _set_colour(style: Style, code: int, colour: Color | None) -> Style:
    if colour is None:
        return style
    if code == 38:
        return replace(style, fg=colour)
    if code == 48:
        return replace(style, bg=colour)
    return style  # 58, the underline colour: not shown.


_FLAGS: dict[int, dict[str, bool]] = {
    1: {"bold": True},
    2: {"dim": True},
    3: {"italic": True},
    4: {"underline": True},
    7: {"inverse": True},
    9: {"strike": True},
    22: {"bold": False, "dim": False},
    23: {"italic": False},
    24: {"underline": False},
    27: {"inverse": False},
    29: {"strike": False},
}


def _apply_code(style: Style, code: int) -> Style:
    """The style after one plain SGR code."""
    if code == 0:
        return _PLAIN
    if code in _FLAGS:
        return replace(style, **_FLAGS[code])
    if 30 <= code <= 37:
        return replace(style, fg=code - 30)
    if 90 <= code <= 97:
        return replace(style, fg=code - 90 + 8)
    if 40 <= code <= 47:
        return replace(style, bg=code - 40)
    if 100 <= code <= 107:
        return replace(style, bg=code - 100 + 8)
    if code == 39:
        return replace(style, fg=None)
    if code == 49:
        return replace(style, bg=None)
    return style


def _apply_sgr(style: Style, params: str) -> Style:
    """The style after ``ESC [ params m``."""
    if not _SGR_PARAMS.fullmatch(params):
        return style  # a private SGR (ESC [ > ... m, ESC [ ? ... m) or a malformed one
    fields = params.split(";")
    index = 0
    while index < len(fields):
        field = fields[index]
        index += 1
        if ":" in field:
            code, *subfields = field.split(":")
            number = _number(code)
            if number in (38, 48, 58):
                style = _set_colour(style, number, _extended_colon(subfields))
            elif number == 4:
                kind = _number(subfields[0])
                if kind is not None and kind <= 5:
                    style = replace(style, underline=kind != 0)
            continue
        number = _number(field)
        if number in (38, 48, 58):
            colour, used = _extended_semicolon(fields, index)
            index += used
            style = _set_colour(style, number, colour)
        elif number is not None:
            style = _apply_code(style, number)
    return style


@lru_cache(maxsize=1024)
def _apply_sgr_cached(style: Style, params: str) -> Style:
    return _apply_sgr(style, params)


def _colour_css(colour: Color) -> str:
    if isinstance(colour, int):
        return _PALETTE[colour]
    red, green, blue = colour
    return f"rgb({red:d}, {green:d}, {blue:d})"


def _colour_class(colour: Color | None, layer: str) -> list[str]:
    if not isinstance(colour, int):
        return []
    name = _NAMES[colour % 8]
    return [f"ansi-{name}-intense-{layer}" if colour >= 8 else f"ansi-{name}-{layer}"]


def _css(style: Style) -> tuple[list[str], list[str]]:
    """The classes and the inline CSS declarations of a style."""
    fg, bg = (style.bg, style.fg) if style.inverse else (style.fg, style.bg)
    classes = _colour_class(fg, "fg") + _colour_class(bg, "bg")
    declarations: list[str] = []
    if fg is not None:
        declarations.append(f"color: {_colour_css(fg)}")
    elif style.inverse:
        classes.append("ansi-default-inverse-fg")
        declarations.append(f"color: {_INVERSE_FG}")
    if bg is not None:
        declarations.append(f"background-color: {_colour_css(bg)}")
    elif style.inverse:
        classes.append("ansi-default-inverse-bg")
        declarations.append(f"background-color: {_INVERSE_BG}")
    if style.bold:
        classes.append("ansi-bold")
        declarations.append("font-weight: bold")
    if style.dim:
        declarations.append("opacity: 0.7")
    if style.italic:
        declarations.append("font-style: italic")
    lines: list[str] = []
    if style.underline:
        classes.append("ansi-underline")
        lines.append("underline")
    if style.strike:
        lines.append("line-through")
    if lines:
        declarations.append(f"text-decoration: {' '.join(lines)}")
    return classes, declarations


@lru_cache(maxsize=256)
def _open_tag(style: Style) -> str:
    """The ``<span>`` start tag of a (not plain) style."""
    classes, declarations = _css(style)
    return f'<span class="{" ".join(["aj-ansi", *classes])}" style="{"; ".join(declarations)}">'
