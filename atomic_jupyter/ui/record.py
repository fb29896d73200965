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

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from atomic_jupyter.protocol.messages import ConfirmRequest, SelectRequest
from atomic_jupyter.session.transcript import (
    AssistantBlock,
    DialogBlock,
    NoteBlock,
    ToolBlock,
    UserBlock,
)
from atomic_jupyter.ui.ansi import ansi_to_html, strip_ansi
from atomic_jupyter.ui.markdown import render_markdown
from atomic_jupyter.ui.text import escape
from atomic_jupyter.ui.tool_cards import ToolCall, render_tool

if TYPE_CHECKING:
    from atomic_jupyter.session.dialogs import Dialog
    from atomic_jupyter.session.runs import PromptRun
    from atomic_jupyter.session.session import AgentSession
    from atomic_jupyter.session.transcript import Transcript

__all__ = [
    "Record",
    "dialog_notice",
    "dialog_record",
    "footer_text",
    "live_class",
    "live_copy",
    "panel_record",
    "run_record",
    "run_state",
    "text_record",
    "tool_heading",
]

#: Lines of a tool's output the plain-text record keeps (the HTML folds the rest).
PLAIN_TOOL_LINES = 20

_MUTED = "var(--jp-ui-font-color2,#616161)"
_BORDER = "var(--jp-border-color2,#d0d7de)"
_ROOT_STYLE = (
    "font-family:var(--jp-ui-font-family,system-ui,sans-serif);"
    "font-size:var(--jp-ui-font-size1,13px);color:var(--jp-ui-font-color1,#1f2328);"
    "border-left:3px solid var(--jp-brand-color1,#1976d2);padding:2px 0 2px 10px;margin:4px 0"
)
_LINE_STYLE = "white-space:pre-wrap;word-break:break-word;margin:2px 0"
_BOX_STYLE = f"border:1px solid {_BORDER};border-radius:4px;padding:4px 8px;margin:4px 0"


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
_NO_TYPESETTING = "tex2jax_ignore mathjax_ignore"


def _root(kind: str, parts: Iterable[str]) -> str:
    return (
        f'<div class="atomic-record atomic-record-{kind} {_NO_TYPESETTING}" '
        f'style="{_ROOT_STYLE}">' + "".join(parts) + "</div>"
    )


def _line(text: str, cls: str, style: str = "") -> str:
    """One line of agent (or our) text, escaped, its terminal colours as our spans."""
    return f'<div class="{cls}" style="{_LINE_STYLE};{style}">{ansi_to_html(text)}</div>'


def text_record(text: str, kind: str = "text") -> Record:
    """A record of plain text (a command's result, a notice); nothing for no text."""
    if not text:
        return Record("", "")
    return Record(_root(kind, [_line(text, "atomic-record-line")]), strip_ansi(text))


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
    the copy while the widget carrying :func:`live_class` of ``key`` is on the page, and
    hides the widget's output when it is not (a notebook reopened without its kernel shows
    "Error displaying widget" there). JupyterLab keeps the style only in a trusted notebook:
    an untrusted one shows the error line and the copy. Viewers that show no widget
    (nbconvert, GitHub) show the copy. Its class names are the record's with ``atomic-copy-``
    for ``atomic-``, so a page (or a test) never takes the hidden copy for the live view.
    """
    live, copy = live_class(key), f"atomic-record-copy-{key}"
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


def run_state(run: PromptRun, finished: bool | None = None) -> str:
    """What a run's header says of it: ``done``, ``failed``, ``working…`` or ``sent``
    (``finished``: whether it is over, as read by the caller before the blocks)."""
    if run.finished if finished is None else finished:
        return "failed" if run.error else "done"
    return "working…" if run.transcript.started or run.answered else "sent"


def footer_text(transcript: Transcript, finished: bool) -> str:
    """A finished run's footer: turns, tokens, cost (when not free) and time; empty for a run
    that took no turn (an extension command) or that is still going."""
    usage, elapsed = transcript.usage, transcript.elapsed
    if not finished or usage is None or elapsed is None or usage.turns == 0:
        return ""
    parts = [f"{usage.turns} turn{'s' if usage.turns != 1 else ''}"]
    parts.append(f"{usage.input:,} in / {usage.output:,} out tokens")
    if usage.cache_read or usage.cache_write:
        parts.append(f"cache {usage.cache_read:,} read / {usage.cache_write:,} written")
    if usage.cost:
        parts.append(f"${usage.cost:.4f}")
    parts.append(f"{elapsed:.1f} s")
    return " · ".join(parts)


def tool_heading(block: ToolBlock) -> tuple[str, Any]:
    """A tool call's heading ("tool NAME · summary · state · time") and its rendered card."""
    state = "error" if block.is_error else "done" if block.done else "running…"
    took = f" · {_duration(block.duration_ms)}" if block.duration_ms is not None else ""
    within = f" (called by {block.parent.name})" if block.parent is not None else ""
    card = render_tool(
        ToolCall(
            block.name,
            block.args,
            block.output,
            block.result,
            block.details,
            block.images,
            block.is_error,
            block.done,
        )
    )
    summary = f" · {card.summary}" if card.summary else ""
    return f"tool {block.name}{within}{summary} · {state}{took}", card


def _duration(ms: float) -> str:
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


def _div(cls: str, inner: str, style: str = "") -> str:
    return (
        f'<div class="{cls}" style="{style}">{inner}</div>'
        if style
        else f'<div class="{cls}">{inner}</div>'
    )


def run_record(run: PromptRun) -> Record:
    """The record of a prompt's (or command's) run: the prompt, every block, the footer.

    The HTML carries the live view's class names (``atomic-transcript``, ``atomic-run-state``,
    ``atomic-tool``, ``atomic-dialog-outcome``, ...), so a page (or a test) finds the same
    parts whether it shows the live widgets or, once the run is over, its record.
    """
    finished = run.finished  # before the blocks, as the live view reads it
    first = run.message.split("\n", 1)[0]
    state = run_state(run, finished)
    head = (
        f'<div class="atomic-run-header" style="display:flex;gap:12px;font-weight:bold">'
        f'<span class="atomic-run-prompt" style="white-space:pre-wrap;word-break:break-word">'
        f"{ansi_to_html('> ' + first)}</span>"
        f'<span class="atomic-run-state" style="font-weight:normal;color:{_MUTED}">'
        f"{escape(state)}</span></div>"
    )
    html = [head]
    if "\n" in run.message:
        html.append(_line(run.message, "atomic-run-message", f"color:{_MUTED}"))
    plain = [f"> {strip_ansi(run.message)}"]
    blocks: list[str] = []
    for block in run.transcript.snapshot():
        if isinstance(block, AssistantBlock):
            parts = []
            thinking = block.thinking
            if thinking:
                parts.append(
                    '<details class="atomic-thinking"><summary style="color:'
                    f'{_MUTED}">Thinking</summary>{_line(thinking, "atomic-thinking-text")}'
                    "</details>"
                )
                plain.append(f"(thinking, {len(thinking):,} characters)")
            text = block.text
            if text:
                parts.append(_div("atomic-assistant-text", render_markdown(text)))
                plain.append(strip_ansi(text))
            if block.error:
                said = f"The answer ended with an error: {block.error}"
                parts.append(
                    _line(said, "atomic-assistant-error", "color:var(--jp-error-color1,#c62828)")
                )
                plain.append(strip_ansi(said))
            blocks.append(_div("atomic-assistant", "".join(parts)))
        elif isinstance(block, ToolBlock):
            tool_html, tool_plain = _tool(block)
            blocks.append(tool_html)
            plain.extend(tool_plain)
        elif isinstance(block, DialogBlock) and block.dialog is not None:
            record = dialog_record(block.dialog)
            blocks.append(record.html)
            plain.append(record.plain)
        elif isinstance(block, NoteBlock):
            blocks.append(
                _line(
                    block.text, f"atomic-note atomic-note-{escape(block.level)}", f"color:{_MUTED}"
                )
            )
            plain.append(strip_ansi(block.text))
        elif isinstance(block, UserBlock):
            blocks.append(_line(f"you: {block.text}", "atomic-user-message"))
            plain.append(f"you: {strip_ansi(block.text)}")
    html.append(_div("atomic-transcript-blocks", "".join(blocks)))
    footer = footer_text(run.transcript, finished)
    html.append(_line(footer, "atomic-footer", f"color:{_MUTED}"))
    plain.append(f"({state} · {footer})" if footer else f"({state})")
    return Record(_root("run atomic-run atomic-transcript", html), "\n".join(plain))


def _tool(block: ToolBlock) -> tuple[str, list[str]]:
    heading, card = tool_heading(block)
    kind = "error" if block.is_error else "done" if block.done else "running"
    parts = [_line(heading, "atomic-tool-header", "font-weight:bold")]
    if card.args_html:
        parts.append(
            '<div class="atomic-tool-args"><details class="atomic-tool-args-fold"><summary '
            f'style="color:{_MUTED}">arguments</summary>{card.args_html}</details></div>'
        )
    dialogs = "".join(dialog_record(d).html for d in list(block.dialogs))
    if dialogs:
        parts.append(_div("atomic-tool-dialogs", dialogs))
    parts.append(_div("atomic-tool-output", card.body_html))
    nested = "".join(_tool(child)[0] for child in list(block.children))
    if nested:
        parts.append(_div("atomic-tool-nested", nested, "margin-left:16px"))
    plain = [f"[{strip_ansi(heading)}]"]
    if block.args is not None:
        args = json.dumps(block.args, ensure_ascii=False, default=str)
        plain.append("  arguments: " + (args if len(args) <= 300 else args[:300] + "…"))
    plain.extend("  " + dialog_record(d).plain for d in list(block.dialogs))
    output = strip_ansi(block.result if block.result is not None else block.output)
    if output:
        lines = output.rstrip("\n").split("\n")
        plain.extend("  " + line for line in lines[:PLAIN_TOOL_LINES])
        if len(lines) > PLAIN_TOOL_LINES:
            plain.append(f"  … ({len(lines):,} lines in all)")
    html = _div(f"atomic-tool atomic-tool-{kind}", "".join(parts), _BOX_STYLE)
    return html, plain


# --------------------------------------------------------------------------- dialogs


def _question(dialog: Dialog) -> str:
    shown = dialog.shown
    question = dialog.title or dialog.method
    if isinstance(shown, ConfirmRequest) and shown.message:
        question += f"\n{shown.message}"
    if isinstance(shown, SelectRequest) and dialog.pending:
        question += "\n" + " / ".join(shown.options)
    return question


def dialog_record(dialog: Dialog) -> Record:
    """A dialog's question and what came of it (who decided, and how). Its outcome line is the
    collapsed dialog's line, word for word."""
    question = _question(dialog)
    state = escape(dialog.state)
    inner = _line(
        f"{dialog.method} dialog: {question}", "atomic-dialog-question", f"color:{_MUTED}"
    )
    if dialog.pending:
        inner += _line("waiting for an answer", "atomic-dialog-waiting", "font-weight:bold")
        plain = f"[{dialog.method} dialog] {strip_ansi(question)}\n  waiting for an answer"
    else:
        inner += _line(
            dialog.outcome, f"atomic-dialog-outcome atomic-dialog-{state}", "font-weight:bold"
        )
        plain = f"[{dialog.method} dialog] {strip_ansi(question)}\n  {strip_ansi(dialog.outcome)}"
    cls = f"atomic-dialog atomic-dialog-{escape(dialog.method)} atomic-record-dialog"
    return Record(_div(cls, inner, _BOX_STYLE), plain)


def dialog_notice(dialog: Dialog) -> Record:
    """What a wait that stopped for ``dialog`` says: that it needs an answer, or, once it is
    settled, how (so that no saved notebook says a dialog waits when it does not)."""
    if dialog.pending:
        return text_record(
            f"A {dialog.method} dialog needs your answer: {dialog.title!r}. Answer it where it "
            "is shown, then wait again (or give an answer policy).",
            "notice",
        )
    record = dialog_record(dialog)
    said = f"The {dialog.method} dialog {dialog.title!r} was settled: {dialog.outcome}"
    return Record(_root("notice", [record.html]), strip_ansi(said))


# --------------------------------------------------------------------------- the panel


def panel_record(session: AgentSession, runs: Sequence[PromptRun] = ()) -> Record:
    """The panel's record: session, state, title, agent, status, widget lines, the runs sent
    from its editor (``runs``), the newest notifications (with the live panel's class names).
    No local paths or process ids."""
    state = session.state
    head = f"agent session {session.name!r} · {state}"
    lines = [head]
    html = [
        '<div style="display:flex;justify-content:space-between;font-weight:bold">'
        f'<span class="atomic-title">{ansi_to_html(session.title or "")}</span>'
        f'<span class="atomic-state" style="font-weight:normal">{escape(state)}</span></div>',
        _line(f"agent session {session.name!r}", "atomic-session-name", f"color:{_MUTED}"),
    ]
    if session.title:
        lines.append(session.title)
    about = str(session.agent) if session.agent.name or session.agent.version else ""
    if about:
        lines.append(about)
        html.append(_line(about, "atomic-about", f"color:{_MUTED}"))
    status = session.status
    if status:
        lines.append(" · ".join(f"{key}: {value}" for key, value in status.items()))
        entries = "".join(
            f'<span class="atomic-status-entry" style="margin-right:12px">'
            f"{ansi_to_html(value)}</span>"
            for value in status.values()
        )
        html.append(_div("atomic-status", entries, f"color:{_MUTED}"))
    for block in session.widgets.values():
        block_lines = [str(line) for line in block.get("lines") or []]
        lines.extend(block_lines)
        html.append(_line("\n".join(block_lines), "atomic-widget-block"))
    for run in list(runs):
        record = run_record(run)
        lines.append(record.plain)
        html.append(_div("atomic-panel-dialogs", record.html))
    for note in list(session.notifications)[-5:]:
        text = f"[{note.get('type', 'info')}] {note.get('message', '')}"
        lines.append(text)
        html.append(_line(text, "atomic-notification", f"color:{_MUTED}"))
    return Record(_root("panel atomic-panel", html), "\n".join(strip_ansi(line) for line in lines))
