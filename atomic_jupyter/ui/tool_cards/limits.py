"""How much of a tool call a card shows: the limits every view keeps to."""

from __future__ import annotations

__all__ = [
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
