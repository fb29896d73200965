"""Assistant Markdown to HTML that is safe for an ipywidgets ``HTML`` widget.

The frontend of ``ipywidgets.HTML`` assigns ``innerHTML`` with no sanitising of its
own, and the Markdown comes from a model that may have been prompt-injected. So the
model's text is treated as hostile and goes through three independent layers:

1. **markdown-it-py with ``html=False``** (and the raw-HTML rules disabled on top):
   any HTML the model writes is escaped and shown as text, so ``<script>`` appears
   literally. Link and image destinations pass our own validator
   (:func:`_link_acceptable`): a destination with any scheme but ``http:``,
   ``https:`` and ``mailto:`` (or with a control or invisible character) is
   refused, which leaves the whole ``[label](dest)`` as visible text. (markdown-it's own validator already refuses
   ``javascript:``/``vbscript:``/``file:`` and non-image ``data:``, but it lets
   ``data:image/...`` through; ours is an allow-list and refuses every ``data:``.)
   Relative links (``[x](foo.py)``, ``#anchor``, ``//host``) are shown as their label
   only: in a notebook they resolve against the Jupyter server's own origin.
   Images are never loaded: ``![alt](https://...)`` becomes a link labelled
   ``image: alt``. An ``<img>`` fetches its URL as soon as it renders, which lets an
   injected model leak data in a query string with no click at all.
2. **Our own renderers** for code: fenced blocks are highlighted by
   :mod:`atomic_jupyter.ui.highlight` (as the tool cards), each run of tokens in the theme's
   editor colour (``color:var(--jp-mirror-editor-...-color,#fallback)``: code follows the
   light and dark themes; no global CSS needed); an unknown or malformed language falls back
   to escaped plain text. The info string is never copied into the output. All
   presentation styles (code block background, table borders, ...) are constants
   written by this module, never by the model.
3. **nh3 (ammonia)** as defence in depth with an explicit allow-list of tags and
   attributes. ``style`` survives only on the tags we style ourselves, and there
   only as one of our exact constant values (see ``_FIXED_STYLES``), except on
   ``span``, the highlighter's token colour, where only ``color``,
   ``background-color``, ``font-weight``, ``font-style`` and ``text-decoration``
   with plain values (no ``url(``, no escapes, no quotes) are kept. Trade-off: a
   ``span`` with a style can only come from our highlighter because raw HTML is off;
   if raw HTML were ever enabled, a model could write such spans itself, and the
   property filter is what would then keep them harmless (colours only, no layout).
   Links are re-checked (scheme allow-list, relative URLs denied) and get
   ``rel="noopener noreferrer"`` and ``target="_blank"``.

Finally the fragment is wrapped in ``<div class="atomic-markdown">`` whose inline
style includes ``contain:content``: paint containment clips descendants to the box
and makes it the containing block of any fixed-position descendant, so even a style
that slipped through could not overlay the rest of the notebook.

Incomplete Markdown (an unclosed fence, half a table) renders without raising, as
CommonMark defines a rendering for every input. Highlighted code blocks are cached,
so re-rendering a growing answer only re-highlights the block still being written.
"""

from __future__ import annotations

import html
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import nh3
from latex2mathml.converter import convert as latex_to_mathml
from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.dollarmath import dollarmath_plugin

from atomic_jupyter.ui.highlight import highlight_lines, lexer_for, lines_html, record_token_styles
from atomic_jupyter.ui.tool_cards.styles import record_styles as tool_card_record_styles

__all__ = [
    "MarkdownPieces",
    "MarkdownStream",
    "RECENT_RENDERS_CHARS",
    "forget_recent_renders",
    "markdown_blocks",
    "record_markup",
    "render_markdown",
    "wrap_markdown",
]

# --- presentation: constants written by this module only ---------------------------

_CONTAINER_STYLE = (
    "contain:content;max-width:100%;overflow-wrap:anywhere;line-height:1.5;"
    "font-size:var(--jp-content-font-size1,14px)"
)
_PRE_STYLE = (
    "margin:0.4em 0;padding:8px 10px;background-color:var(--jp-cell-editor-background,#f6f8fa);"
    "color:var(--jp-content-font-color1,#24292f);"
    "border:1px solid var(--jp-border-color2,#d0d7de);border-radius:4px;overflow-x:auto;white-space:pre;"
    "overflow-wrap:normal;font-family:var(--jp-code-font-family,monospace);font-size:12px;"
    "line-height:1.45"
)
_CODE_STYLE = (
    "padding:0.1em 0.3em;background-color:rgba(175,184,193,0.25);border-radius:3px;"
    "font-family:var(--jp-code-font-family,monospace);font-size:0.9em"
)
_TABLE_STYLE = (
    "border-collapse:collapse;margin:0.4em 0;display:block;max-width:100%;overflow-x:auto"
)
_CELL_STYLE = "border:1px solid var(--jp-border-color2,#d0d7de);padding:3px 8px"
_BLOCKQUOTE_STYLE = (
    "margin:0.4em 0;padding:0 0.8em;border-left:3px solid var(--jp-border-color2,#d0d7de);"
    "opacity:0.85"
)

_ALIGNS = ("left", "center", "right")
_CELL_STYLES = frozenset([_CELL_STYLE] + [f"{_CELL_STYLE};text-align:{a}" for a in _ALIGNS])

# tag -> the only style values the sanitizer keeps on it (``span`` is filtered instead).
_FIXED_STYLES: dict[str, frozenset[str]] = {
    "pre": frozenset([_PRE_STYLE]),
    "code": frozenset([_CODE_STYLE]),
    "table": frozenset([_TABLE_STYLE]),
    "th": _CELL_STYLES,
    "td": _CELL_STYLES,
    "blockquote": frozenset([_BLOCKQUOTE_STYLE]),
}


# --- links ------------------------------------------------------------------------

_ALLOWED_LINK = re.compile(r"(?:https?://[^/?#\s]|mailto:[^\s])", re.IGNORECASE)
# What browsers drop from URLs before looking at the scheme: C0 controls, space, DEL,
# and (conservatively) C1 controls and Unicode format characters such as U+200B.
_URL_JUNK = re.compile("[\x00-\x20\x7f-\x9f\u00ad\u200b-\u200f\u2028-\u202e\u2060-\u2064\ufeff]")


def _link_allowed(url: str) -> bool:
    """Whether ``url`` may be an ``href``: absolute http(s) or mailto, nothing else.

    ``url`` is already entity-decoded (by markdown-it, or by the HTML parser inside
    nh3). A URL carrying any control or invisible character is refused outright
    rather than cleaned, so what is checked is exactly what the browser gets.
    """
    return _URL_JUNK.search(url) is None and _ALLOWED_LINK.match(url) is not None


def _link_acceptable(url: str) -> bool:
    """markdown-it's link validator: allowed links, plus relative ones (shown as text).

    A destination with any other scheme (javascript:, data:, file:, ...) or with a
    control character is refused, which keeps the whole ``[label](dest)`` as literal,
    visible text.
    """
    if _link_allowed(url):
        return True
    return _URL_JUNK.search(url) is None and ":" not in url


# --- code highlighting --------------------------------------------------------------


@lru_cache(maxsize=512)
def _code_html(code: str, lang: str) -> str:
    """Highlighted (or, for an unknown language, escaped) ``code``, without the ``<pre>``."""
    return lines_html(highlight_lines(code, lexer_for(language=lang)))


def _pre(code: str, lang: str = "") -> str:
    # A newline right after <pre> is swallowed by HTML parsers (and doubling it does not
    # survive the sanitizer's re-serialisation): an empty span in front keeps it.
    lead = "<span></span>" if code.startswith("\n") else ""
    return f'<pre style="{_PRE_STYLE}">{lead}{_code_html(code, lang)}</pre>\n'


# --- markdown-it ----------------------------------------------------------------------


class _SafeMarkdownIt(MarkdownIt):
    def validateLink(self, url: str) -> bool:  # noqa: N802 (markdown-it's name)
        return _link_acceptable(url)


def _render_fence(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    info = token.info.strip()
    lang = info.split(maxsplit=1)[0] if info else ""
    return _pre(token.content, lang)


def _render_code_block(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    return _pre(tokens[idx].content)


def _render_link_open(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    href = str(token.attrGet("href") or "")
    if not _link_allowed(href):
        token.meta["dropped"] = True
        return ""
    # rel="noopener noreferrer" and target="_blank" are set by the sanitizer on every <a>.
    return str(self.renderToken(tokens, idx, options, env))


def _render_link_close(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    # Links do not nest in CommonMark: the matching opener is the last link_open.
    for j in range(idx - 1, -1, -1):
        if tokens[j].type == "link_open":
            if tokens[j].meta.get("dropped"):
                return ""
            break
    return "</a>"


def _render_image(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    alt = self.renderInlineAsText(token.children, options, env) or "image"
    label = html.escape(f"image: {alt}", quote=False)
    if not _link_allowed(src):
        return label
    return f'<a href="{html.escape(src, quote=True)}">{label}</a>'


def _render_math(token: Token) -> str:
    """LaTeX as MathML (no script, nothing loaded; the sanitiser keeps MathML's own elements
    and a few plain attributes only: a ``\\href``'s link or a ``\\style`` is dropped); LaTeX
    the converter cannot read stays text, dollars and all."""
    block = token.type.startswith("math_block")
    try:
        mathml = latex_to_mathml(token.content, display="block" if block else "inline")
    except Exception:
        dollars = "$$" if block or token.type == "math_inline_double" else "$"
        text = html.escape(f"{dollars}{token.content}{dollars}", quote=False)
        return f"<p>{text}</p>\n" if block else text
    return f"<p>{mathml}</p>\n" if block else mathml


_TASK = re.compile(r"\[([ xX])\](?=\s|$)")


def _styles_and_tasks(state: Any) -> None:
    """Core rule: our styles on tables, quotes and inline code; task-list boxes as text."""
    tokens: list[Token] = state.tokens
    for i, token in enumerate(tokens):
        kind = token.type
        if kind == "table_open":
            token.attrSet("style", _TABLE_STYLE)
        elif kind in ("th_open", "td_open"):
            align = str(token.attrGet("style") or "").removeprefix("text-align:")
            style = f"{_CELL_STYLE};text-align:{align}" if align in _ALIGNS else _CELL_STYLE
            token.attrSet("style", style)
        elif kind == "blockquote_open":
            token.attrSet("style", _BLOCKQUOTE_STYLE)
        elif kind == "inline" and token.children:
            for child in token.children:
                if child.type == "code_inline":
                    child.attrSet("style", _CODE_STYLE)
            first = token.children[0]
            if (
                i >= 2
                and tokens[i - 1].type == "paragraph_open"
                and tokens[i - 2].type == "list_item_open"
                and first.type == "text"
            ):
                match = _TASK.match(first.content)
                if match:
                    box = "\u2610" if match.group(1) == " " else "\u2611"
                    first.content = box + first.content[match.end() :]


_MD = _SafeMarkdownIt(
    "commonmark",
    {"html": False, "linkify": False, "typographer": False, "breaks": True},
)
_MD.enable(["table", "strikethrough"])
# $...$ and $$...$$: no space inside the dollars and no digit after the closing one, so "$5 or
# $6" and "$HOME and $PATH" stay text.
_MD.use(dollarmath_plugin, allow_space=False, allow_digits=False, double_inline=True)
_MD.disable(["html_block", "html_inline"])  # belt and braces on top of html=False
_MD.core.ruler.push("atomic_styles_and_tasks", _styles_and_tasks)
_MD.add_render_rule("fence", _render_fence)
_MD.add_render_rule("code_block", _render_code_block)
_MD.add_render_rule("link_open", _render_link_open)
_MD.add_render_rule("link_close", _render_link_close)
_MD.add_render_rule("image", _render_image)
for _kind in ("math_inline", "math_inline_double", "math_block", "math_block_label"):
    _MD.add_render_rule(_kind, lambda self, tokens, idx, options, env: _render_math(tokens[idx]))


# --- nh3 -------------------------------------------------------------------------------

_TAGS = {
    "a", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5", "h6",
    "hr", "li", "ol", "p", "pre", "s", "span", "strong", "table", "tbody", "td", "th",
    "thead", "tr", "ul",
}  # fmt: skip
#: MathML's presentation elements (what latex2mathml writes), and their plain attributes.
_MATH_TAGS = {
    "math", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace", "mfrac", "msqrt", "mroot",
    "msub", "msup", "msubsup", "munder", "mover", "munderover", "mtable", "mtr", "mtd",
    "mstyle", "mpadded", "mphantom", "menclose", "merror",
}  # fmt: skip
_MATH_ATTRIBUTES = {
    "display", "mathvariant", "stretchy", "fence", "separator", "accent", "accentunder",
    "lspace", "rspace", "linethickness", "columnalign", "columnspacing", "rowspacing",
    "displaystyle", "scriptlevel", "width", "height", "depth", "notation", "minsize",
    "maxsize", "symmetric", "largeop", "movablelimits", "form", "columnlines", "rowlines",
    "frame", "align", "xmlns",
}  # fmt: skip
_MATH_VALUE = re.compile(r"[A-Za-z0-9 .#%+-]{0,40}")
_MATHML_NS = "http://www.w3.org/1998/Math/MathML"
_TAGS |= _MATH_TAGS

_ATTRIBUTES = {
    "a": {"href", "title"},
    "ol": {"start"},
    "span": {"style"},
    **{tag: {"style"} for tag in _FIXED_STYLES},
    **{tag: _MATH_ATTRIBUTES for tag in _MATH_TAGS},
}
_SPAN_PROPERTIES = frozenset(
    {"color", "background-color", "font-weight", "font-style", "text-decoration"}
)
# Plain colour/keyword values, or one of the theme's variables with a hex fallback: no other
# parentheses (url(), expression()), no quotes, no backslash escapes, no comments.
_SPAN_VALUE = re.compile(r"[#A-Za-z0-9 .%-]{1,40}|var\(--jp-[a-z0-9-]{1,60},#[0-9a-fA-F]{3,8}\)")


def _span_style(value: str) -> str | None:
    kept = []
    for declaration in value.split(";"):
        name, sep, val = declaration.partition(":")
        name, val = name.strip().lower(), val.strip()
        if sep and name in _SPAN_PROPERTIES and _SPAN_VALUE.fullmatch(val):
            kept.append(f"{name}:{val}")
    return ";".join(kept) or None


def _attribute_filter(tag: str, attr: str, value: str) -> str | None:
    if tag in _MATH_TAGS:
        if attr == "xmlns":
            return value if value == _MATHML_NS else None
        return value if _MATH_VALUE.fullmatch(value) else None
    if attr == "style":
        if tag == "span":
            return _span_style(value)
        return value if value in _FIXED_STYLES.get(tag, ()) else None
    if attr == "href":
        return value if _link_allowed(value) else None
    if attr == "start":
        return value if value.isascii() and value.isdigit() and len(value) <= 9 else None
    return value


_CLEANER = nh3.Cleaner(
    tags=_TAGS,
    clean_content_tags={"script", "style"},
    attributes=_ATTRIBUTES,
    attribute_filter=_attribute_filter,
    strip_comments=True,
    link_rel="noopener noreferrer",
    set_tag_attribute_values={"a": {"target": "_blank"}},
    url_schemes={"http", "https", "mailto"},
    url_relative="deny",
)


# --- rendering, incremental for a growing answer ----------------------------------------
#
# markdown-it-py parses about 1 ms per KB, too slow to re-render a 20 KB answer 20 times
# a second from scratch. A streamed answer only grows at its end, and CommonMark fixes
# block structure line by line: once a top-level block is followed by a blank line and
# a *complete* (newline-terminated) line that starts the next top-level block, nothing
# appended later can change it. So the sanitised HTML of such blocks is kept, and only
# the text from the first block that is not yet settled is parsed again. The one global
# construct, link reference definitions, disables the reuse (a definition may change a
# link anywhere). tests/unit/ui/test_markdown.py checks that every prefix of varied documents
# renders exactly as a fresh render would.

_NEWLINES = re.compile(r"\r\n?")


@dataclass(frozen=True)
class _Block:
    start_line: int  # in the whole document
    start_char: int
    html: str  # sanitised


@dataclass(frozen=True)
class _Rendered:
    text: str  # normalised source
    blocks: tuple[_Block, ...]
    has_references: bool

    @property
    def html(self) -> str:
        return "".join(block.html for block in self.blocks)


def _normalise(text: str) -> str:
    # As markdown-it's own "normalize" rule, so that line and character offsets agree.
    return _NEWLINES.sub("\n", text).replace("\0", "\ufffd")


def _parse_blocks(src: str, line_offset: int, char_offset: int) -> tuple[list[_Block], bool]:
    """Sanitised HTML of each top-level block of ``src`` (a suffix of the document)."""
    env: dict[str, Any] = {}
    tokens = _MD.parse(src, env)
    line_starts = [0] + [m.end() for m in re.finditer("\n", src)]
    blocks = []
    start = 0
    for i, token in enumerate(tokens):
        if token.level == 0 and token.nesting <= 0:  # a top-level block ends here
            first = tokens[start]
            line = first.map[0] if first.map else 0
            raw = _MD.renderer.render(tokens[start : i + 1], _MD.options, env)
            blocks.append(
                _Block(line + line_offset, line_starts[line] + char_offset, _CLEANER.clean(raw))
            )
            start = i + 1
    return blocks, bool(env.get("references"))


def _render_full(text: str) -> _Rendered:
    blocks, refs = _parse_blocks(text, 0, 0)
    return _Rendered(text, tuple(blocks), refs)


def _settled(text: str, blocks: Sequence[_Block], has_references: bool) -> int:
    """How many leading ``blocks`` of ``text`` no text appended to it can change."""
    if has_references:
        return 0
    for k in range(len(blocks) - 1, 0, -1):
        start = blocks[k].start_char
        if start < 1 or text.find("\n", start) == -1:
            # Its first line is still being written: "2" may become "2. b" and join
            # the list above it, "#" may become "#tag" and join the paragraph above.
            continue
        # Also ask for a blank line before it. Not known to be needed (no block rule
        # looks back across a complete line that started a new block), but it costs
        # little: model answers separate nearly all blocks with blank lines.
        blank_start = text.rfind("\n", 0, start - 1) + 1
        if text[blank_start : start - 1].strip(" \t") == "":
            return k
    return 0


def _render_incremental(text: str, previous: _Rendered | None) -> _Rendered:
    if previous is None:
        return _render_full(text)
    keep = _settled(previous.text, previous.blocks, previous.has_references)
    if keep == 0:
        return _render_full(text)
    first = previous.blocks[keep]
    tail, refs = _parse_blocks(text[first.start_char :], first.start_line, first.start_char)
    if refs:  # a reference definition may change links in the settled blocks
        return _render_full(text)
    return _Rendered(text, previous.blocks[:keep] + tuple(tail), False)


_RECENT: list[_Rendered] = []  # most recent first; several answers may stream at once
_RECENT_MAX = 8
#: The source characters the recent renders may hold together (their HTML is about as long
#: again); the most recent is kept whatever its size, as the next update of its stream
#: extends it. See :func:`forget_recent_renders` for when they are let go altogether.
RECENT_RENDERS_CHARS = 1 << 20
_RECENT_LOCK = threading.Lock()


def _keep_recent(rendered: _Rendered, superseded: _Rendered | None) -> None:
    """Put ``rendered`` first among the recent renders (``superseded``, which it continues,
    leaves them), within :data:`_RECENT_MAX` and :data:`RECENT_RENDERS_CHARS`."""
    with _RECENT_LOCK:
        kept, chars = [rendered], len(rendered.text)
        for recent in _RECENT:
            if recent is superseded or len(kept) == _RECENT_MAX:
                continue
            chars += len(recent.text)
            if chars > RECENT_RENDERS_CHARS:
                break
            kept.append(recent)
        _RECENT[:] = kept


def forget_recent_renders() -> int:
    """Let go of the renders kept so that a growing text is rendered from where it changed
    (:func:`markdown_blocks`): once no answer streams, nothing will extend them. Returns the
    source characters they held."""
    with _RECENT_LOCK:
        chars = sum(len(recent.text) for recent in _RECENT)
        _RECENT.clear()
    return chars


def wrap_markdown(fragment: str) -> str:
    """``fragment`` (sanitised HTML) in the ``atomic-markdown`` container and its styles."""
    return f'<div class="atomic-markdown" style="{_CONTAINER_STYLE}">{fragment}</div>'


def render_markdown(text: str) -> str:
    """Render untrusted Markdown ``text`` to an HTML fragment safe for ``innerHTML``.

    The result is ``<div class="atomic-markdown" style="...">...</div>``. Never raises
    on incomplete Markdown. Cheap to call on every chunk of a streamed answer: the
    settled part of a text that extends one rendered recently is not parsed again.
    """
    return wrap_markdown(markdown_blocks(text))


def markdown_blocks(text: str) -> str:
    """The rendered blocks of :func:`render_markdown`, without their container (for a
    record, which puts them in a container of its own)."""
    src = _normalise(text)
    with _RECENT_LOCK:
        previous = max(
            (r for r in _RECENT if src.startswith(r.text)),
            key=lambda r: len(r.text),
            default=None,
        )
    if previous is not None and previous.text == src:
        rendered = previous
    else:
        rendered = _render_incremental(src, previous)
        _keep_recent(rendered, previous)  # ``previous`` is superseded by its continuation
    return rendered.html


class MarkdownPieces:
    """A Markdown text rendered block by block (see :class:`MarkdownStream`).

    Valid until the stream's next update. ``len(pieces)`` is the number of top-level blocks; :meth:`html` joins the sanitised HTML
    of a range of them. All of them joined and passed to :func:`wrap_markdown` are exactly
    ``render_markdown`` of the whole text.

    Attributes
    ----------
    settled:
        How many leading blocks no text appended later can change, with one exception: a
        link reference definition (``[r]: https://...``) may change a link anywhere, so
        once one appears nothing is settled (and blocks settled before may change).
    """

    def __init__(self, blocks: Sequence[_Block], settled: int) -> None:
        self._blocks = blocks
        self.settled = settled

    def __len__(self) -> int:
        return len(self._blocks)

    def html(self, start: int = 0, stop: int | None = None) -> str:
        """The HTML of blocks ``start`` to ``stop`` (the end by default), joined."""
        return "".join(block.html for block in self._blocks[start:stop])

    @property
    def blocks(self) -> tuple[str, ...]:
        """The HTML of each block."""
        return tuple(block.html for block in self._blocks)


class MarkdownStream:
    """Renders a Markdown text that grows at its end (a streamed answer), block by block.

    Each :meth:`update` parses only the text from the first block that may still change, so
    its cost follows the size of that unsettled end, not the length of the whole text (the
    text is still compared with the previous one, and normalised only where it is new).
    A text that does not extend the previous one is rendered afresh.
    """

    def __init__(self) -> None:
        self._raw = ""
        self._clean = ""  # the normalised text of ``_raw[:_cleaned]``
        self._cleaned = 0  # never just after a "\r" (it may be the start of "\r\n")
        self._src = ""  # the normalised text last rendered
        self._blocks: list[_Block] = []  # its blocks, updated in place
        self._references = False
        self._pieces = MarkdownPieces(self._blocks, 0)

    def update(self, text: str) -> MarkdownPieces:
        """The pieces of ``text``."""
        if text == self._raw and self._raw:
            return self._pieces
        if not text.startswith(self._raw):
            self._raw, self._clean, self._cleaned, self._src = "", "", 0, ""
            self._blocks.clear()
        end = len(text) - 1 if text.endswith("\r") else len(text)
        if end > self._cleaned:
            self._clean += _normalise(text[self._cleaned : end])
            self._cleaned = end
        src = self._clean + "\n" if end < len(text) else self._clean  # a last "\r" is a newline
        blocks = self._blocks
        keep = _settled(self._src, blocks, self._references) if blocks else 0
        if keep:
            first = blocks[keep]
            tail, refs = _parse_blocks(src[first.start_char :], first.start_line, first.start_char)
            if not refs:
                del blocks[keep:]
                blocks.extend(tail)
        if not keep or refs:  # from scratch (a reference definition may change any link)
            tail, refs = _parse_blocks(src, 0, 0)
            blocks[:] = tail
        self._raw, self._src, self._references = text, src, refs
        self._pieces = MarkdownPieces(blocks, _settled(src, blocks, refs))
        return self._pieces


# --- the record's form -----------------------------------------------------------

_TAG = re.compile(r"<(/?)([a-z][a-z0-9]*)([^<>]*)>(\n?)")
_STYLE_ATTRIBUTE = re.compile(r' style="([^"]*)"')
_BARE_SPAN = re.compile(r"<span>([^<]*)</span>")
#: Attributes the page gives links by itself where a record is shown.
_LINK_TARGET = ' target="_blank" rel="noopener noreferrer"'
#: Row groups a table reads the same without (its header cells are ``th``).
_DROPPED_TAGS = frozenset({"thead", "tbody"})
#: Tags around which a line break is only layout of the source (never inside ``pre``).
_BLOCK_TAGS = frozenset(
    {"p", "ul", "ol", "li", "table", "tr", "th", "td", "blockquote", "hr", "div"}
    | {f"h{level}" for level in range(1, 7)}
)
#: Token colours a record leaves out: operators (``*``, ``=``, ``->``) and numbers read
#: plainly (keywords, names, strings and comments keep theirs).
_PLAIN_IN_RECORD = ("operator", "number")


def _record_styles() -> dict[str, str]:
    styles = {
        style: ("" if any(f"-{kind}-" in style for kind in _PLAIN_IN_RECORD) else compact)
        for style, compact in record_token_styles().items()
    }
    # Code blocks, inline code, tables and quotes are styled by the page itself where a
    # record is shown (JupyterLab's and nbconvert's rendered-HTML styles, in either theme);
    # the container's containment is not needed where no style can position anything.
    styles[_CONTAINER_STYLE] = ""
    for fixed in _FIXED_STYLES.values():
        for style in fixed:
            _, _, align = style.partition(";text-align:")
            styles[style] = f"text-align:{align}" if align else ""
    # The tool cards' own styles: boxes and fonts left to the page, meaning kept short.
    styles.update(tool_card_record_styles())
    return styles


_RECORD_STYLES = _record_styles()


def _compact_style(match: re.Match[str]) -> str:
    style = _RECORD_STYLES.get(match.group(1))
    if style is None:
        return match.group(0)
    return f' style="{style}"' if style else ""


_ALIGN_STYLE = ' style="text-align:'


def _record_tag(match: re.Match[str]) -> str:
    close, name, attributes, newline = match.groups()
    if name in _DROPPED_TAGS:
        return ""
    if name in _BLOCK_TAGS or (close and name == "pre"):
        newline = ""
    if attributes:
        attributes = _STYLE_ATTRIBUTE.sub(_compact_style, attributes.replace(_LINK_TARGET, ""))
    if name == "pre":  # its text in a code element: see record_markup
        return "</code></pre>" if close else f"<pre{attributes}><code>{newline}"
    if name in ("td", "th") and attributes.startswith(_ALIGN_STYLE):
        # The cell's alignment as HTML's own attribute: shorter, and GitHub keeps it.
        attributes = ' align="' + attributes[len(_ALIGN_STYLE) :]
    return f"<{close}{name}{attributes}>{newline}"


def record_markup(html: str) -> str:
    """``html`` made by this package's renderers, in the form a saved record keeps.

    Only tags are touched (text holds no raw ``<``: the sanitiser escapes it), and only our
    own values in them: the styles the page already gives (code blocks, inline code,
    tables, quotes) and the link attributes it adds itself are left out, a table's row
    groups too, and the line breaks between blocks; code colours become short literal colours (see
    :func:`~atomic_jupyter.ui.highlight.record_token_styles`); a span left with nothing to
    say is dropped. A ``pre``'s text goes in a ``code`` element, as Markdown's code blocks
    have it: that is what gives it a code font where the record is shown (JupyterLab's and
    nbconvert's ``.jp-OutputArea-output pre`` take the text's font; ``code`` keeps the
    code font everywhere, GitHub and the docs site too), for 13 characters and no style. A
    table cell's alignment is its ``align`` attribute (which every sanitiser keeps).
    """
    return _BARE_SPAN.sub(r"\1", _TAG.sub(_record_tag, html))
