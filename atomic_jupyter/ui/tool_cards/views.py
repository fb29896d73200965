"""Views that several cards share: highlighted code, a command's output, images."""

from __future__ import annotations

from typing import Any

import atomic_jupyter.ui.tool_cards.limits as limits
from atomic_jupyter.ui.ansi import ansi_to_html
from atomic_jupyter.ui.highlight import Line, highlight_lines, lexer_for, lines_html
from atomic_jupyter.ui.images import RefusedImage, check_image
from atomic_jupyter.ui.tool_cards.limits import (
    CODE_FOLD,
    HIGHLIGHT_MAX_CHARS,
    MAX_IMAGES,
    OUTPUT_TAIL,
)
from atomic_jupyter.ui.tool_cards.lines import (
    cap_head,
    cap_tail,
    count_lines,
    fold_split,
    split_lines,
)
from atomic_jupyter.ui.tool_cards.markup import beside_numbers, details, div, note, pre
from atomic_jupyter.ui.tool_cards.styles import BOX_STYLE, IMG_STYLE
from atomic_jupyter.ui.tool_cards.values import plural, text_of

__all__ = ["code_lines", "code_view", "highlight_html", "images_html", "output_view"]


def code_lines(code: str, filename: str | None, language: str | None) -> tuple[Line, ...]:
    """The lines of ``code`` highlighted for ``language`` (else ``filename``'s language), up to
    :data:`HIGHLIGHT_MAX_CHARS` characters."""
    return highlight_lines(code, lexer_for(filename, language), HIGHLIGHT_MAX_CHARS)


def code_view(
    code: str,
    filename: str | None = None,
    language: str | None = None,
    first_line: int | None = 1,
    fold: int | None = CODE_FOLD,
) -> str:
    """Code in a box, highlighted, numbered from ``first_line``, folded after ``fold`` lines."""
    kept, left = cap_head(split_lines(code))
    lines = code_lines("\n".join(kept), filename, language)
    count = len(lines)
    digits = len(str((first_line or 1) + count - 1))

    def chunk(start: int, end: int) -> str:
        part = lines[start:end]
        code_html = lines_html(part)
        if first_line is None:
            return pre(code_html)
        if part and not part[-1]:
            code_html += "\n"  # a pre drops one final newline: keep the empty last line
        numbers = [str(first_line + start + index).rjust(digits) for index in range(len(part))]
        return beside_numbers(numbers, code_html)

    split = fold_split(count, fold)
    if split is None:
        inner = chunk(0, count)
    else:
        label = f"Show all {plural(count_lines(code), 'line')}"
        inner = chunk(0, split) + details(label, chunk(split, count))
    return div(BOX_STYLE, inner, "aj-tool-code") + (note(left) if left else "")


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
    code = code if isinstance(code, str) else text_of(code)
    filename = filename if isinstance(filename, str) else None
    language = language if isinstance(language, str) else None
    first = first_line if isinstance(first_line, int) and not isinstance(first_line, bool) else None
    return code_view(code, filename, language, first_line=first, fold=None)


def output_view(text: str, tail: bool = True) -> str:
    """Text output with its terminal colours, capped and folded.

    ``tail``: keep the end in view (a command's output), else the start (a tool's result).
    The colours are converted a whole fold at a time, so a colour set on one line and reset
    lines later colours the lines between.
    """
    lines, left = cap_tail(split_lines(text)) if tail else cap_head(split_lines(text))

    def chunk(part: list[str]) -> str:
        return pre(ansi_to_html("\n".join(part)))

    keep = OUTPUT_TAIL if tail else CODE_FOLD
    split = fold_split(len(lines), keep)
    if split is None:
        body = chunk(lines)
    elif tail:
        earlier = len(lines) - keep
        label = f"Show {plural(earlier, 'earlier line')}"
        body = details(label, chunk(lines[:earlier])) + chunk(lines[earlier:])
    else:
        label = f"Show all {plural(len(lines), 'line')}"
        body = chunk(lines[:keep]) + details(label, chunk(lines[keep:]))
    box = div(BOX_STYLE, body, "aj-tool-output")
    if not left:
        return box
    return note(left) + box if tail else box + note(left)


def _image(mime: Any, data: Any, index: int) -> str:
    """An ``<img>`` for one image block, or a note saying why it is not shown."""
    image = check_image(mime, data, max_base64=limits.IMAGE_MAX_BASE64)
    if isinstance(image, RefusedImage):
        return note(f"[image {index} not shown: {image.reason}]")
    alt = f"image {index} ({image.mime})"
    return f'<img class="aj-tool-image" style="{IMG_STYLE}" alt="{alt}" src="{image.data_url}">'


def images_html(images: Any) -> str:
    """The images of a result (``(mime, base64)`` pairs as sent), each shown or explained."""
    if not isinstance(images, (tuple, list)):
        return ""
    parts = []
    for index, item in enumerate(images[:MAX_IMAGES], start=1):
        if isinstance(item, (tuple, list)) and len(item) == 2:
            parts.append(_image(item[0], item[1], index))
        else:
            parts.append(note(f"[image {index} not shown: malformed]"))
    if len(images) > MAX_IMAGES:
        parts.append(note(f"[{plural(len(images) - MAX_IMAGES, 'more image')} not shown]"))
    return "".join(parts)
