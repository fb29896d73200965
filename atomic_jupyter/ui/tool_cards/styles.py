"""The cards' inline styles: constants written by this package only, never by the agent.

Nothing is a fixed light-theme colour: backgrounds and borders are
``--jp-cell-editor-background`` and ``--jp-border-color2``, diff lines are translucent green and
red (readable on light and dark), and every ``var()`` has a mid-tone fallback for pages without
JupyterLab's variables.

A saved record of a card (the static HTML a notebook keeps) carries each style in the short
form :func:`record_styles` gives it.
"""

from __future__ import annotations

from atomic_jupyter.ui.highlight import ERROR_COLOR, MUTED_COLOR, SUCCESS_COLOR, theme_var

_ADDED_BG = "rgba(76,175,80,0.18)"
_REMOVED_BG = "rgba(244,67,54,0.18)"
_HIT_BG = "rgba(255,193,7,0.38)"
_BORDER = theme_var("border-color2", "rgba(128,128,128,0.35)")
#: The most digits a line-number column is made wide enough for (see :func:`gutter_style`).
_MAX_DIGITS = 12
_CODE_FONT = "font-family:" + theme_var("code-font-family", "monospace") + ";font-size:12px"

#: A card's outer element.
ROOT_STYLE = "line-height:1.4;font-size:13px;min-width:0"
#: A bordered box (code, diff, output, list).
BOX_STYLE = (
    "margin:2px 0;border:1px solid " + _BORDER + ";border-radius:3px;"
    "background:" + theme_var("cell-editor-background", "transparent") + ";"
    "color:" + theme_var("content-font-color1", "inherit") + ";overflow:hidden"
)
#: Text in a box, wrapped.
PRE_STYLE = (
    "margin:0;padding:3px 6px;white-space:pre-wrap;overflow-wrap:anywhere;"
    "line-height:1.4;tab-size:4;" + _CODE_FONT
)
#: A numbered line of grep's output: a flex row (the number keeps its column when the text
#: wraps); its number is never empty, so the row is one line high even for an empty line.
LINE_STYLE = "display:flex"
#: The text of a numbered line of grep's output.
CODE_STYLE = "flex:1;min-width:0"
#: Line numbers beside code: two columns.
NUMBERED_STYLE = "display:flex;align-items:flex-start"
#: The column of line numbers.
GUTTER_PRE_STYLE = (
    "margin:0;padding:3px 1ch 3px 6px;white-space:pre;flex:none;opacity:.6;user-select:none;"
    "line-height:1.4;" + _CODE_FONT
)
#: The column of code beside its numbers (scrolls, never wraps).
CODE_PRE_STYLE = (
    "margin:0;padding:3px 6px 3px 0;white-space:pre;overflow-x:auto;flex:1;min-width:0;"
    "line-height:1.4;tab-size:4;" + _CODE_FONT
)
#: A file's path over its view.
PATH_STYLE = "font-weight:bold;overflow-wrap:anywhere;margin:2px 0;" + _CODE_FONT
#: The muted part of a path header.
PATH_EXTRA_STYLE = f"color:{MUTED_COLOR};font-weight:normal"
#: A note (what was left out, a notice).
NOTE_STYLE = "color:" + MUTED_COLOR + ";white-space:pre-wrap;overflow-wrap:anywhere;margin:2px 0"
#: An error.
ERROR_STYLE = (
    "margin:2px 0;padding:3px 6px;white-space:pre-wrap;overflow-wrap:anywhere;"
    "color:" + ERROR_COLOR + ";background:"
    + theme_var("rendermime-error-background", "rgba(244,67,54,0.12)")
    + ";border-left:3px solid " + ERROR_COLOR + ";line-height:1.4;" + _CODE_FONT
)  # fmt: skip
#: A failed command's status line.
STATUS_ERROR_STYLE = "color:" + ERROR_COLOR + ";font-weight:bold;margin:2px 0"
#: A link to a notebook's cell (the notebook extension scrolls to it).
CELL_LINK_STYLE = "cursor:pointer;text-decoration:underline;color:inherit"
#: A decided outcome that is not a failure (a change the person rejected): the text's own
#: colour, in bold, as a decided dialog's outcome.
STATUS_STYLE = "font-weight:bold;white-space:pre-wrap;overflow-wrap:anywhere;margin:2px 0"
#: The label of a fold.
SUMMARY_STYLE = "cursor:pointer;color:" + theme_var("brand-color1", "#1e88e5") + ";padding:1px 6px"
#: A command's prompt (``$ ``).
PROMPT_STYLE = "color:" + MUTED_COLOR + ";user-select:none"
#: A changed line of a diff: a block with its background (its height kept if it is empty).
ADDED_LINE = f"display:block;min-height:1.4em;background:{_ADDED_BG}"
#: A removed line of a diff.
REMOVED_LINE = f"display:block;min-height:1.4em;background:{_REMOVED_BG}"
#: The ``+`` of an added line.
ADDED_MARK = f"color:{SUCCESS_COLOR};font-weight:bold;user-select:none"
#: The ``−`` of a removed line.
REMOVED_MARK = f"color:{ERROR_COLOR};font-weight:bold;user-select:none"
#: The mark of lines a diff skips.
SKIP_STYLE = f"color:{MUTED_COLOR};user-select:none"
#: The diff's text column is as wide as its longest line, so a background spans the line.
DIFF_TEXT_STYLE = "display:inline-block;min-width:100%"
#: A match of grep's pattern.
HIT_STYLE = f"background:{_HIT_BG};border-radius:2px"
#: A context line of grep's output.
CONTEXT_STYLE = "color:" + MUTED_COLOR
#: A directory in a listing.
DIR_STYLE = "font-weight:bold;color:" + theme_var("mirror-editor-def-color", "#3a7bd5")
#: A file's name over its matches.
FILE_HEAD_STYLE = "display:block;font-weight:bold;padding-top:2px"
#: An image.
IMG_STYLE = "display:block;max-width:100%;height:auto;margin:4px 0"
#: Arguments as key/value rows.
KV_TABLE_STYLE = "border-collapse:collapse;margin:2px 0;width:100%"
#: An argument's name.
KV_KEY_STYLE = (
    "vertical-align:top;padding:1px 8px 1px 0;color:" + MUTED_COLOR + ";white-space:nowrap;"
    + _CODE_FONT
)  # fmt: skip
#: An argument's value.
KV_VALUE_STYLE = (
    "vertical-align:top;padding:1px 0;white-space:pre-wrap;overflow-wrap:anywhere;" + _CODE_FONT
)
#: A label over a block (``edit 1 of 2: old text``).
LABEL_STYLE = "color:" + MUTED_COLOR + ";font-size:12px;margin:4px 0 0 0"


def gutter_style(digits: int) -> str:
    """A line-number column wide enough for ``digits`` digits.

    Parameters
    ----------
    digits:
        How many digits (ours: an int), kept between 1 and 12.

    Returns
    -------
    str
        The inline style.
    """
    width = max(1, min(int(digits), _MAX_DIGITS))
    return f"flex:none;min-width:{width}ch;padding-right:1ch;text-align:right;opacity:.6;user-select:none"


#: Literal colours of the record form: mid tones that read on a light and on a dark background
#: (an untrusted notebook's sanitiser keeps literal colours and drops ``var()``).
_RECORD_MUTED = "color:#888"
_RECORD_ERROR = "color:#d44"


def record_styles() -> dict[str, str]:
    """Each fixed inline style of the cards -> its short form in a saved record.

    A record is kept small: the page where it is shown (JupyterLab, nbconvert's HTML) styles
    ``pre`` and ``code`` itself (a code font, ``white-space:pre-wrap``, no margin), so box,
    font and spacing styles go (``""``). What carries meaning stays, in literal mid-tone
    colours that read on light and dark and that an untrusted notebook's sanitiser keeps
    (it drops ``var()``): the diff's added and removed lines (a translucent green or red
    behind the line, whose ``+``/``−`` mark is its text), errors in red, muted notes, prompts
    and line numbers, bold paths and directories, grep's hits, ``pre-wrap`` where a ``div``
    holds lines, and the layout that keeps line numbers beside their lines (code beside
    numbers does not wrap, so the two columns stay in step). Every form only uses properties
    and values JupyterLab's sanitiser allows (no ``ch`` unit, no ``flex`` shorthand).

    Returns
    -------
    dict[str, str]
        ``{style the cards write: its record form}``; every form at most 45 characters.
    """
    styles = {
        ROOT_STYLE: "",
        BOX_STYLE: "",
        PRE_STYLE: "",
        LINE_STYLE: "",
        CODE_STYLE: "",
        NUMBERED_STYLE: "display:flex",
        GUTTER_PRE_STYLE: f"{_RECORD_MUTED};padding-right:.6em",
        CODE_PRE_STYLE: "white-space:pre;overflow-x:auto;min-width:0",
        PATH_STYLE: "font-weight:bold",
        PATH_EXTRA_STYLE: f"{_RECORD_MUTED};font-weight:normal",
        NOTE_STYLE: f"{_RECORD_MUTED};white-space:pre-wrap",
        ERROR_STYLE: f"{_RECORD_ERROR};white-space:pre-wrap",
        STATUS_ERROR_STYLE: f"{_RECORD_ERROR};font-weight:bold",
        STATUS_STYLE: "font-weight:bold;white-space:pre-wrap",
        CELL_LINK_STYLE: "",  # a record has no link to the cell: plain text
        SUMMARY_STYLE: "color:#38c",
        PROMPT_STYLE: _RECORD_MUTED,
        ADDED_LINE: "background:#2a73",
        REMOVED_LINE: "background:#d443",
        ADDED_MARK: "",
        REMOVED_MARK: "",
        SKIP_STYLE: _RECORD_MUTED,
        DIFF_TEXT_STYLE: "",
        HIT_STYLE: "background:#fb15",
        CONTEXT_STYLE: _RECORD_MUTED,
        DIR_STYLE: "font-weight:bold;color:#37d",
        FILE_HEAD_STYLE: "display:block;font-weight:bold",
        IMG_STYLE: "max-width:100%",
        KV_TABLE_STYLE: "table-layout:auto",
        KV_KEY_STYLE: f"{_RECORD_MUTED};text-align:left;vertical-align:top",
        KV_VALUE_STYLE: "white-space:pre-wrap;text-align:left",
        LABEL_STYLE: _RECORD_MUTED,
    }
    # grep's numbered lines read as plain lines: the number right-aligned in its text, a
    # space, the code and its line break (see ``numbered_line``).
    for digits in range(1, _MAX_DIGITS + 1):
        styles[gutter_style(digits)] = _RECORD_MUTED
    return styles
