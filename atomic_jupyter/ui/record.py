"""The static record of an output: what a saved notebook keeps once the kernel is gone.

Widgets need a live kernel (or saved widget state, which JupyterLab does not keep by default):
a notebook reopened without one shows "Error displaying widget: model not found", and
``nbconvert``, nbviewer and GitHub show a widget's ``text/plain`` repr. So every output the
product shows also carries a :class:`Record`: a self-contained, sanitised ``text/html`` and a
readable ``text/plain`` of the same content. The notebook layer puts it next to the live
widget, and replaces the widget by it once the output is final (see
:mod:`atomic_jupyter.notebook.presentation`).

The HTML needs no script, no stylesheet and no network: inline styles with JupyterLab's
theme variables (and light fallbacks for other viewers). Nothing the agent sends becomes
markup: its text is escaped (terminal colours become our own spans), its Markdown goes
through :func:`~atomic_jupyter.ui.markdown.render_markdown`, its tool calls through the
sanitising tool renderers of :mod:`~atomic_jupyter.ui.tool_cards`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from atomic_jupyter.ui.ansi import ansi_to_html, strip_ansi
from atomic_jupyter.ui.markdown import markdown_blocks, record_markup
from atomic_jupyter.ui.run_parts import (
    AnswerSlot,
    DialogSlot,
    Fold,
    Group,
    Markup,
    Part,
    StopSlot,
    Text,
    describe_block,
    describe_dialog,
    footer_text,
    run_sections,
    run_state,
    tool_heading,
)
from atomic_jupyter.ui.text import escape

if TYPE_CHECKING:
    from atomic_jupyter.session.dialogs import Dialog
    from atomic_jupyter.session.runs import PromptRun

__all__ = [
    "NO_TYPESETTING",
    "ROOT_STYLE",
    "LiveSlots",
    "Record",
    "dialog_notice",
    "dialog_record",
    "earlier_record",
    "footer_text",
    "live_class",
    "live_copy",
    "part_html",
    "part_plain",
    "run_record",
    "root_html",
    "run_state",
    "text_html",
    "text_record",
    "tool_heading",
]

#: The record's few styles, kept short: a record is mostly the agent's text. Muted text is
#: dimmed rather than coloured, so it reads in a light and a dark theme alike.
_TONES = {
    "": "",
    "muted": "opacity:.7",
    "info": "opacity:.7",
    "bold": "font-weight:bold",
    "warning": "color:var(--jp-warn-color1,#e65100)",
    "error": "color:var(--jp-error-color1,#c62828)",
}
_LOOKS = {
    "": "",
    "row": "",  # its parts are inline: see _row_html
    "card": "border:1px solid #aaa;padding:2px 6px",
    "indent": "margin-left:16px",
}
ROOT_STYLE = "border-left:3px solid #48c;padding-left:8px"  # a literal colour: untrusted too
_PRE_WRAP = "white-space:pre-wrap"
#: Text in the code font (:attr:`Text.mono`): a ``<pre>``, so a viewer that drops the style
#: keeps the font; its lines wrapped (a long word too), without the page's own margins,
#: padding and background for a ``<pre>``.
_MONO = (
    "margin:0;padding:0;background:none;white-space:pre-wrap;overflow-wrap:anywhere;"
    "font-family:var(--jp-code-font-family,monospace);font-size:var(--jp-code-font-size,13px)"
)


@dataclass(frozen=True)
class Record:
    """One output's static form: sanitised ``html`` and ``plain`` text of the same content."""

    html: str
    plain: str

    def bundle(self) -> dict[str, str]:
        """The MIME bundle of the record (``text/html`` and ``text/plain``)."""
        return {"text/html": self.html, "text/plain": self.plain}


#: Classes that keep the page's maths typesetter out of the record: JupyterLab typesets LaTeX
#: in ``text/html`` outputs (MathJax 3: ``mathjax_ignore``), and so does nbconvert's HTML
#: (MathJax 2: ``tex2jax_ignore``). Agent text such as ``$\\style{...}{x}$`` would otherwise
#: be typeset, its ``\\style`` applied. (The answer's maths is MathML already.)
NO_TYPESETTING = "tex2jax_ignore mathjax_ignore"


def root_html(kind: str, parts: Iterable[str]) -> str:
    """A record's root element around ``parts`` (``kind``: its ``atomic-record-`` class)."""
    return (
        f'<div class="atomic-record atomic-record-{kind} {NO_TYPESETTING}" '
        f'style="{ROOT_STYLE}">' + "".join(parts) + "</div>"
    )


def _tag(cls: str, inner: str, style: str = "", tag: str = "div") -> str:
    styled = f' style="{style}"' if style else ""
    return f'<{tag} class="{escape(cls)}"{styled}>{inner}</{tag}>'


def _needs_pre_wrap(text: str) -> bool:
    return "\n" in text or "  " in text or text[:1].isspace() or text[-1:].isspace()


def text_html(part: Text) -> str:
    """The record's HTML of a line (or lines) of text."""
    return _text_html(part)


def _text_html(part: Text, inline: bool = False) -> str:
    bold = part.tone == "bold"  # a tag, not a style: shorter
    styles = [] if bold else [_TONES.get(part.tone, "")]
    if part.mono:
        styles.append(_MONO)
    elif _needs_pre_wrap(part.text):
        styles.append(_PRE_WRAP)
    inner, style = ansi_to_html(part.text), ";".join(s for s in styles if s)
    if part.mono and not inline and inner.startswith("\n"):
        inner = "<span></span>" + inner  # a newline right after <pre> would be dropped
    if inline:
        return _tag(part.cls, inner, style, tag="strong" if bold else "span")
    inner = f"<strong>{inner}</strong>" if bold else inner
    return _tag(part.cls, inner, style, tag="pre" if part.mono else "div")


# --------------------------------------------------------------------------- parts


#: How a live view draws its interactive parts (a dialog waiting for an answer, a streamed
#: answer, the Stop button) inside the record's HTML: given such a part, the HTML to put in
#: its place, or None for the record's own form.
LiveSlots = Callable[[Part], "str | None"]


def part_html(part: Part, live: LiveSlots | None = None) -> str:
    """The static HTML of a part (and of every part in it): escaped text, our markup, the
    sanitised renderers' markup; no script, no stylesheet.

    ``live``: the live view's form of the interactive parts (see :data:`LiveSlots`); the
    record's form of every other part is the live view's too, so the two cannot differ.
    """
    if live is not None and isinstance(part, (DialogSlot, AnswerSlot, StopSlot)):
        drawn = live(part)
        if drawn is not None:
            return drawn
    if isinstance(part, Text):
        if not part.text:  # a place filled later keeps its class, nothing else
            return _tag(part.cls, "") if part.placeholder else ""
        return _text_html(part)
    if isinstance(part, Markup):
        html = record_markup(part.html)
        if html.startswith(_CARD_ROOT) and html.endswith("</div>"):  # its styles are gone
            html = html[len(_CARD_ROOT) : -len("</div>")]
        if html.count("<div") == 1:  # one div: one tag with both classes
            return _merged(part.cls, html)
        return _tag(part.cls, html)
    if isinstance(part, Group):
        if part.look == "row":
            return _row_html(part, live)
        inner = [html for html in (part_html(c, live) for c in part.children) if html]
        if len(inner) == 1 and not part.look:  # one thing in a plain group: one tag
            return _merged(part.cls, inner[0])
        return _tag(part.cls, "".join(inner), _LOOKS[part.look])
    if isinstance(part, Fold):
        summary = f'<summary style="{_TONES["muted"]}">{escape(part.summary)}</summary>'
        return _tag(part.cls, summary + part_html(part.child, live), tag="details")
    if isinstance(part, DialogSlot):
        return part_html(describe_dialog(part.dialog))
    if isinstance(part, AnswerSlot):
        if not part.text:
            return ""
        return _tag(f"{part.cls} atomic-markdown", record_markup(markdown_blocks(part.text)))
    assert isinstance(part, StopSlot)
    return ""  # a control: nothing to keep


_DIV_CLASS = '<div class="'
#: The root of a tool card's markup: only a carrier of live styles, which the record drops.
_CARD_ROOT = '<div class="aj-tool-card">'


def _merged(cls: str, html: str) -> str:
    """``html`` in a div of class ``cls``: when ``html`` is itself one div with a class, one
    div with both classes."""
    if html.startswith(_DIV_CLASS) and html.endswith("</div>"):
        return f'<div class="{escape(cls)} {html[len(_DIV_CLASS) :]}'
    return _tag(cls, html)


def _row_html(part: Group, live: LiveSlots | None = None) -> str:
    """A row's parts as inline spans, a space apart."""
    spans = []
    for child in part.children:
        if isinstance(child, Text) and child.text:
            spans.append(_text_html(child, inline=True))
        elif not isinstance(child, Text):
            spans.append(part_html(child, live))
    return _tag(part.cls, " ".join(s for s in spans if s))


def part_plain(part: Part) -> str:
    """The plain text of a part (and of every part in it), one line per line shown."""
    if isinstance(part, Text):
        return strip_ansi(part.text if part.plain is None else part.plain)
    if isinstance(part, Markup):
        return part.plain
    if isinstance(part, Group):
        lines: list[str] = []
        for index, child in enumerate(part.children):
            said = part_plain(child)
            if not said:
                continue
            if index and part.indent:
                said = "\n".join(part.indent + line for line in said.split("\n"))
            lines.append(said)
        return "\n".join(lines)
    if isinstance(part, Fold):
        return part_plain(part.child) if part.plain is None else part.plain
    if isinstance(part, DialogSlot):
        return part_plain(describe_dialog(part.dialog))
    if isinstance(part, AnswerSlot):
        return strip_ansi(part.text)
    return ""


def _parts_record(kind: str, parts: Sequence[Part]) -> Record:
    html = "".join(part_html(p) for p in parts)
    plain = "\n".join(said for said in (part_plain(p) for p in parts) if said)
    return Record(root_html(kind, [html]), plain)


def text_record(text: str, kind: str = "text") -> Record:
    """A record of plain text (a command's result, a notice); nothing for no text."""
    if not text:
        return Record("", "")
    return Record(root_html(kind, [_text_html(Text("atomic-record-line", text))]), strip_ansi(text))


# --------------------------------------------------------------------------- the copy


def live_class(key: str) -> str:
    """The class a live widget carries while its output is shown (see :func:`live_copy`)."""
    return f"atomic-live-{key}"


def _copy_classes(html: str) -> str:
    """``html`` with each ``atomic-`` class of its tags renamed ``atomic-copy-``.

    Only real tags are touched: text never holds a raw ``<`` or ``>`` (the sanitiser escapes
    them), and attribute values are written in double quotes with ``"`` escaped, so a
    ``class="`` whose nearest ``<`` or ``>`` before it is a ``<`` is in a tag.
    """
    out: list[str] = []
    done = 0
    at = html.find(' class="')
    while at >= 0:
        start = at + len(' class="')
        end = html.find('"', start)
        if end < 0:
            break
        if html.rfind("<", 0, at) > html.rfind(">", 0, at):
            names = " ".join(
                "atomic-copy-" + name[len("atomic-") :] if name.startswith("atomic-") else name
                for name in html[start:end].split()
            )
            out += [html[done:start], names]
            done = end
        at = html.find(' class="', end)
    out.append(html[done:])
    return "".join(out)


def live_copy(record: Record, key: str) -> dict[str, str]:
    """The bundle of an output's record copy: the record as it is now, in an output of its
    own next to the live widget, kept current while the widget is live (a display update of
    the widget's own output would rebuild its view in JupyterLab).

    A notebook saved at any moment so holds the conversation so far. Its ``<style>`` hides
    the copy while the widget carrying :func:`live_class` of ``key`` is on the page and
    connected, and hides the widget's output when it is not (a notebook reopened without its
    kernel shows "Error displaying widget" there; after a restart, ipywidgets draws each
    disconnected view as a broken link). JupyterLab keeps the style only in a trusted notebook:
    an untrusted one shows the error line and the copy. Viewers that show no widget
    (nbconvert, GitHub) show the copy. Its class names are the record's with ``atomic-copy-``
    for ``atomic-``, so a page (or a test) never takes the hidden copy for the live view.
    """
    # A widget counts as live while its kernel is there: after a restart or a shutdown,
    # ipywidgets marks each view it drew "disconnected" (and draws a broken link).
    live = f"{live_class(key)}:not(.jupyter-widgets-disconnected)"
    copy = f"atomic-record-copy-{key}"
    style = (
        f"<style>body:has(.{live}) .{copy},"
        f"body:has(.{live}) .jp-OutputArea-child:has(.{copy}){{display:none}}"
        f".jp-OutputArea-child:has(+ .jp-OutputArea-child .{copy}):not(:has(.{live}))"
        "{display:none}</style>"
    )
    html = _copy_classes(record.html)
    return {
        "text/html": f'{style}<div class="atomic-record-copy {copy}">{html}</div>',
        "text/plain": record.plain,
    }


# --------------------------------------------------------------------------- runs


def run_parts(run: PromptRun) -> list[Part]:
    """A run as parts, in the order of its sections (:func:`~atomic_jupyter.ui.run_parts.
    run_sections`, which the live view follows too): blocks with nothing to show left out."""
    parts = [s.part if s.block is None else describe_block(s.block) for s in run_sections(run)]
    return [part for part in parts if part is not None]


def run_record(run: PromptRun) -> Record:
    """The record of a prompt's (or command's) run: the prompt, every block, the footer.

    It is made from the same parts as the live view (:mod:`atomic_jupyter.ui.run_parts`), so
    it carries the live view's class names (``atomic-transcript``, ``atomic-run-state``,
    ``atomic-tool``, ``atomic-dialog-outcome``, ...) and shows each thing once, in the same
    order.
    """
    return _parts_record("run atomic-transcript", run_parts(run))


# --------------------------------------------------------------------------- dialogs


def dialog_record(dialog: Dialog) -> Record:
    """A dialog's question and what came of it (who decided, and how). Its outcome line is the
    collapsed dialog's line, word for word."""
    part = describe_dialog(dialog)
    return Record(part_html(part), part_plain(part))


def dialog_notice(dialog: Dialog) -> Record:
    """What a wait that stopped for ``dialog`` says: that it needs an answer; once it is
    settled, nothing when the dialog's own run shows the outcome (so the record says it
    once), else how it was settled."""
    if dialog.pending:
        return text_record(
            f"A {dialog.method} dialog needs your answer: {dialog.title!r}. Answer it where it "
            "is shown, then wait again (or give an answer policy).",
            "notice",
        )
    host = dialog.host
    if host is not None and host.shown:
        return Record("", "")
    record = dialog_record(dialog)
    said = f"The {dialog.method} dialog {dialog.title!r} was settled: {dialog.outcome}"
    return Record(root_html("notice", [record.html]), strip_ansi(said))


# --------------------------------------------------------------------------- earlier turns

#: The most earlier turns a continued conversation shows (the newest).
EARLIER_SHOWN = 20


def earlier_record(continued: str, notes: Sequence[str], runs: Sequence[PromptRun]) -> Record:
    """What a continued conversation shows under its panel's header: ``continued`` ("continued:
    N messages since DATE"), the start's ``notes``, and the earlier turns (``runs``, the
    newest :data:`EARLIER_SHOWN`) folded behind "Earlier in this conversation", each as its
    run's record. Empty when there is nothing to say."""
    lines = [line for line in (continued, *notes) if line]
    html = [_text_html(Text("atomic-continued", line, "muted")) for line in lines]
    shown = list(runs)[-EARLIER_SHOWN:]
    if shown:
        left = len(runs) - len(shown)
        label = f"Earlier in this conversation ({len(runs)} turn{'s' if len(runs) != 1 else ''})"
        inner = (
            [_text_html(Text("atomic-earlier-left", f"({left} older turns not shown)", "muted"))]
            if left
            else []
        )
        records = [run_record(run) for run in shown]
        inner += [record.html for record in records]
        summary = f"<summary>{escape(label)}</summary>"
        html.append(_tag("atomic-earlier", summary + "".join(inner), tag="details"))
        lines.append(label + ":")
        lines += [record.plain for record in records]
    if not html:
        return Record("", "")
    return Record("".join(html), "\n".join(strip_ansi(line) for line in lines))
