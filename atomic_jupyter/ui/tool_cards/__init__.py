"""Tool cards: one HTML renderer per kind of tool call, as pure functions.

:func:`render_tool` turns what is known of one tool call (:class:`ToolCall`) into a
:class:`ToolCard`: a one-line plain-text summary for the card's header, then as HTML what the
call is about to do (the command, the diff, the content written, the pattern...), what came of
it (its output, then its result: exit code, error, notice), and the arguments in full (for a
toggle). The view places the dialogs that decide a call between the first two. The built-in tools of the agent (``read``,
``write``, ``edit``, ``bash``, ``grep``, ``find``, ``ls``) each get their own view; any other
tool (an extension's) gets a generic one. The shapes of arguments and results follow both
agent lines (0.73 and 1.6).

The package's modules: ``card`` (the call and the card), ``registry`` (which view renders which
tool), a module per kind of tool (``read``, ``write``, ``edit``, ``bash``, ``grep``,
``listing`` for find and ls, ``generic``), ``diff`` (diffs read and shown), ``views`` (code,
output and images, which several cards show), ``markup`` (the HTML building blocks),
``styles``, ``lines`` (capping and folding), ``values`` (reading the agent's JSON values) and
``limits``. Highlighting is :mod:`atomic_jupyter.ui.highlight`'s, shared with the Markdown;
images are checked by :mod:`atomic_jupyter.ui.images`.

Safety
------
Everything in a :class:`ToolCall` comes from the agent and is hostile. The HTML is meant for
the ``value`` of an ipywidgets ``HTML`` widget (assigned to ``innerHTML``, no typesetting):

* every agent string is escaped with ``html.escape`` (or by
  :func:`~atomic_jupyter.ui.ansi.ansi_to_html`, which escapes too; highlighted code escapes
  ``&``, ``<`` and ``>``) and only ever placed in element content, never in an attribute;
* the only tags are ``div``, ``span``, ``pre``, ``table``, ``tr``, ``td``, ``details``,
  ``summary`` and ``img``, and the only attributes ``class`` and ``style`` (values built from
  this package's constants and integers), ``src`` and ``alt`` on ``img`` (the ``alt`` text is
  ours too: "image 1 (image/png)");
* the only URL is the ``src`` of an ``img``: a ``data:`` URL built by
  :mod:`atomic_jupyter.ui.images` from base64 that was checked against ``[A-Za-z0-9+/]*={0,2}``,
  of a raster type on an allow-list (PNG, JPEG, GIF, WebP; never SVG), whose first bytes are
  that format's signature, and at most :data:`IMAGE_MAX_BASE64` characters long.

Colours
-------
Nothing is a fixed light-theme colour: syntax colours are JupyterLab's CodeMirror theme
variables (``--jp-mirror-editor-*-color``, mapped from Pygments tokens as JupyterLab maps its
own highlight tags), backgrounds and borders are ``--jp-cell-editor-background`` and
``--jp-border-color2``, diff lines are translucent green and red (readable on light and dark),
and every ``var()`` has a mid-tone fallback for pages without JupyterLab's variables. A saved
record of a card keeps each style in a short form with literal colours
(:func:`.styles.record_styles`, applied by :func:`atomic_jupyter.ui.markdown.record_markup`).

Limits
------
A body shows at most :data:`MAX_LINES` lines and :data:`MAX_CHARS` characters of any one text
(the head of a file, the tail of a command's output) and says how much it left out. Code is
highlighted up to :data:`HIGHLIGHT_MAX_CHARS` characters, plain beyond. Files are folded after
:data:`CODE_FOLD` lines, diffs after :data:`DIFF_FOLD`, command output keeps its last
:data:`OUTPUT_TAIL` lines in view, and lists fold after :data:`LIST_FOLD` entries (a fold is a
``<details>`` element, which needs no script). Malformed input (arguments or details of any
JSON shape) never raises. The limits are read from :mod:`.limits` when a card is rendered (set
them there, not here).
"""

from __future__ import annotations

from atomic_jupyter.ui.highlight import token_style
from atomic_jupyter.ui.tool_cards.card import ToolCall, ToolCard
from atomic_jupyter.ui.tool_cards.limits import (
    CODE_FOLD,
    DIFF_FOLD,
    FOLD_SLACK,
    HIGHLIGHT_MAX_CHARS,
    IMAGE_MAX_BASE64,
    LIST_FOLD,
    MAX_CHARS,
    MAX_IMAGES,
    MAX_LINES,
    OUTPUT_TAIL,
    SUMMARY_MAX,
)
from atomic_jupyter.ui.tool_cards.registry import render_tool
from atomic_jupyter.ui.tool_cards.views import highlight_html

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
