"""A run's transcript described once, as a tree of parts: what the live view and the record
are both made from.

A *part* says what is shown (a line of text, sanitised markup, a group of parts, a fold, a
dialog, a streamed answer, the Stop button), in the order it is shown, with the class names
a page (or a test) finds it by. It holds no widget and no HTML of the whole: the record
renderer (:mod:`atomic_jupyter.ui.record`) turns parts into static HTML and plain text, and
the live output (:mod:`atomic_jupyter.ui.run_output`) sends the same HTML to its widget,
with places for the interactive parts. Neither decides what a run shows or in which order,
so the two cannot drift, and each thing appears once in each.

Parts of a block are described from the block as it is (:func:`describe_block`); a view calls
it again only when the block's revision changed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from atomic_jupyter.protocol.messages import ConfirmRequest, SelectRequest
from atomic_jupyter.session.dialogs import STOPPED_BY
from atomic_jupyter.session.transcript import (
    AssistantBlock,
    Block,
    DialogBlock,
    EntryBlock,
    NoteBlock,
    ToolBlock,
    Usage,
    UserBlock,
)
from atomic_jupyter.ui.ansi import strip_ansi
from atomic_jupyter.ui.tool_cards import ToolCall, render_tool

if TYPE_CHECKING:
    from atomic_jupyter.session.dialogs import Dialog
    from atomic_jupyter.session.runs import PromptRun
    from atomic_jupyter.session.transcript import Transcript

__all__ = [
    "AnswerSlot",
    "DialogSlot",
    "Fold",
    "Group",
    "Markup",
    "Part",
    "RunSection",
    "StopSlot",
    "Text",
    "describe_block",
    "describe_dialog",
    "describe_footer",
    "describe_header",
    "describe_tool",
    "footer_text",
    "run_sections",
    "run_state",
    "tool_heading",
    "usage_text",
]

#: Lines of a tool's output the plain text keeps (the HTML folds the rest).
PLAIN_TOOL_LINES = 20
#: Characters of an entry's data shown unfolded; longer data is folded.
ENTRY_INLINE_CHARS = 200


@dataclass(frozen=True)
class Text:
    """A line (or lines) of text, shown exactly as given (its terminal colours as spans).

    ``tone`` is one of ours: ``""``, ``"muted"``, ``"bold"``, ``"info"``, ``"warning"``,
    ``"error"``. ``mono``: in the code font, its columns kept (text laid out in columns, such
    as a data frame's summary), long lines still wrapped.
    """

    cls: str
    text: str
    tone: str = ""
    plain: str | None = None  # what the plain text says instead (None: the text itself)
    placeholder: bool = False  # kept in the record when empty (a place filled later)
    mono: bool = False


@dataclass(frozen=True)
class Markup:
    """HTML made by this package's sanitising renderers, with its plain-text form."""

    cls: str
    html: str
    plain: str = ""


@dataclass(frozen=True)
class Group:
    """Parts shown together, in order. ``look``: ``""`` (a column), ``"row"``, ``"card"``
    (framed), ``"indent"``; ``indent`` prefixes the plain text of every child but the first
    (a card's heading)."""

    cls: str
    children: tuple[Part, ...]
    look: str = ""
    indent: str = ""


@dataclass(frozen=True)
class Fold:
    """A part folded under a summary line. ``keeps_open``: the live view keeps the fold
    open across updates (a growing part, such as thinking)."""

    cls: str
    summary: str
    child: Part
    keeps_open: bool = False
    plain: str | None = None  # what the plain text says instead of the child's text


@dataclass(frozen=True)
class DialogSlot:
    """A dialog where it was raised: live, its interactive widget; in the record, its
    question and outcome (:func:`describe_dialog`)."""

    dialog: Dialog


@dataclass(frozen=True)
class AnswerSlot:
    """The assistant's Markdown text: live, streamed chunk by chunk; in the record, rendered
    whole by the sanitising Markdown renderer."""

    cls: str
    text: str


@dataclass(frozen=True)
class StopSlot:
    """The Stop button of a run that is still going (nothing in the record)."""

    active: bool


Part = Text | Markup | Group | Fold | DialogSlot | AnswerSlot | StopSlot


# --------------------------------------------------------------------------- the run's frame


def run_state(run: PromptRun, finished: bool | None = None) -> str:
    """What a run's header says of it: ``done``, ``failed``, ``working…`` or ``sent``
    (``finished``: whether it is over, as read by the caller before the blocks)."""
    if run.finished if finished is None else finished:
        return "failed" if run.error else "done"
    return "working…" if run.transcript.started or run.answered else "sent"


def usage_text(usage: Usage) -> str:
    """Model turns (the run's assistant messages: one a model request, with the tool calls it
    made), then tokens, cache and cost when the model reported them (a model that reports no
    usage gets no figures, not zeros); a free model's cost is left out."""
    parts = [f"{usage.turns} model turn{'s' if usage.turns != 1 else ''}"]
    if usage.reported:
        parts.append(f"{usage.input:,} in / {usage.output:,} out tokens")
        if usage.cache_read or usage.cache_write:
            parts.append(f"cache {usage.cache_read:,} read / {usage.cache_write:,} written")
        if usage.cost:
            parts.append(f"${usage.cost:.4f}")
    return " · ".join(parts)


def footer_text(transcript: Transcript, finished: bool) -> str:
    """The run's footer: once it is over, the model(s) and the thinking level, turns,
    tokens, cost and time; while
    it works, what its finished turns used so far; empty for a run that took no turn (an
    extension command) or none yet."""
    if not finished:
        so_far = transcript.usage_so_far()
        return f"so far: {usage_text(so_far)}" if so_far.turns else ""
    usage, elapsed = transcript.usage, transcript.elapsed
    if usage is None or elapsed is None or usage.turns == 0:
        return ""
    parts = [", ".join(usage.models)] if usage.models else []
    if transcript.thinking:
        parts.append(f"thinking {transcript.thinking}")
    parts += [usage_text(usage), f"{elapsed:.1f} s"]
    return " · ".join(parts)


def describe_header(run: PromptRun, finished: bool) -> Group:
    """The run's header: the prompt's first line, its state, the Stop button while it runs."""
    first = run.message.split("\n", 1)[0]
    more = " …" if "\n" in run.message else ""
    return Group(
        "atomic-run-header",
        (
            Text("atomic-run-prompt", f"> {first}{more}", "bold", plain=f"> {run.message}"),
            Text("atomic-run-state", run_state(run, finished), "muted", plain=""),
            StopSlot(active=not finished),
        ),
        look="row",
    )


def describe_message(run: PromptRun) -> Part | None:
    """The whole prompt, when it is longer than the header's first line, and, when it cited
    values, a fold with the prompt exactly as the agent got it."""
    parts: list[Part] = []
    if "\n" in run.message:
        parts.append(Text("atomic-run-message", run.message, "muted", plain=""))
    if run.sent != run.message:
        count = len(run.cited)
        names = ", ".join(run.cited)
        summary = f"Sent to the agent, with {count} cited value{'s' if count != 1 else ''}: {names}"
        # The cited values' summaries are laid out in columns (a data frame's head): the code
        # font keeps them lined up.
        sent = Text("atomic-run-sent-text", run.sent, "muted", mono=True)
        parts.append(Fold("atomic-run-sent", summary, sent, plain=f"{summary}:\n{run.sent}"))
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else Group("atomic-run-details", tuple(parts))


def describe_footer(run: PromptRun, finished: bool) -> Text:
    """The run's footer (empty until it is over); its plain text also says how it ended."""
    footer, state = footer_text(run.transcript, finished), run_state(run, finished)
    plain = f"({state} · {footer})" if footer else f"({state})"
    return Text("atomic-footer", footer, "muted", plain=plain, placeholder=True)


# --------------------------------------------------------------------------- blocks


def describe_block(block: Block) -> Part | None:
    """The parts of one transcript block as it is now (None: nothing to show)."""
    if isinstance(block, AssistantBlock):
        return _assistant(block)
    if isinstance(block, ToolBlock):
        return describe_tool(block)
    if isinstance(block, DialogBlock):
        return DialogSlot(block.dialog) if block.dialog is not None else None
    if isinstance(block, NoteBlock):
        return Text(f"atomic-note atomic-note-{block.level}", block.text, block.level)
    if isinstance(block, UserBlock):
        return Text("atomic-user-message", f"you: {block.text}")
    if isinstance(block, EntryBlock):
        return describe_entry(block.custom_type, block.data)
    return None


#: What an answer cut short by a stop says, however the run was stopped (its Stop button,
#: ``session.abort()``, ``%atomic_agent abort``): the words a dialog it cancelled says too.
STOPPED = f"The answer ends here: {STOPPED_BY}."


def _assistant(block: AssistantBlock) -> Group:
    thinking, text, error = block.thinking, block.text, block.error
    parts: list[Part] = []
    if thinking:
        parts.append(
            Fold(
                "atomic-thinking",
                "Thinking",
                Text("atomic-thinking-text", thinking, "muted"),
                keeps_open=True,
                plain=f"(thinking, {len(thinking):,} characters)",
            )
        )
    parts.append(AnswerSlot("atomic-assistant-text", text))
    if block.stopped:  # the agent's own words for it differ by line and by where it stopped
        parts.append(Text("atomic-assistant-error atomic-assistant-stopped", STOPPED, "warning"))
    elif error:
        parts.append(
            Text("atomic-assistant-error", f"The answer ended with an error: {error}", "error")
        )
    return Group("atomic-assistant", tuple(parts))


def describe_entry(custom_type: str, data: Any) -> Group:
    """An extension's custom session entry (``pi.appendEntry``): its type, and its data as
    readable JSON (long data folded)."""
    try:  # a string as it is, anything else as readable JSON
        shown = (
            data
            if isinstance(data, str)
            else json.dumps(data, ensure_ascii=False, indent=2, default=str)
        )
    except (TypeError, ValueError):
        shown = repr(data)
    head = Text("atomic-entry-type", f"entry {custom_type}", "bold", plain=f"[entry {custom_type}]")
    if data is None:
        body: Part | None = None
    elif len(shown) <= ENTRY_INLINE_CHARS and shown.count("\n") < 8:
        body = Text("atomic-entry-data", shown, "muted")
    else:
        lines = shown.count("\n") + 1
        body = Fold(
            "atomic-entry-fold",
            f"data ({lines:,} lines)",
            Text("atomic-entry-data", shown, "muted"),
            plain=_shortened(shown),
        )
    children = (head,) if body is None else (head, body)
    return Group("atomic-entry", children, look="card", indent="  ")


def _shortened(text: str, limit: int = ENTRY_INLINE_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit] + "…"


# --------------------------------------------------------------------------- tool calls


def _duration(ms: float) -> str:
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


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
    return f"tool {block.name}{within}{summary} · {card.state or state}{took}", card


def _output_plain(block: ToolBlock) -> str:
    output = strip_ansi(block.result if block.result is not None else block.output)
    if not output:
        return ""
    lines = output.rstrip("\n").split("\n")
    kept = lines[:PLAIN_TOOL_LINES]
    if len(lines) > PLAIN_TOOL_LINES:
        kept.append(f"… ({len(lines):,} lines in all)")
    return "\n".join(kept)


def describe_tool(block: ToolBlock) -> Group:
    """One tool call's card, in this order: its heading; what it is about to do (the
    command, the diff, the arguments); the dialogs that decided it; its output and result;
    the calls it made itself."""
    heading, card = tool_heading(block)
    kind = "error" if block.is_error else "done" if block.done else "running"
    if card.state:  # decided (a change rejected): drawn as a decided dialog is, not as failed
        kind = f"done atomic-tool-{card.state}"
    parts: list[Part] = [Text("atomic-tool-header", heading, "bold", plain=f"[{heading}]")]
    command = card.command_html
    if command:
        parts.append(Markup("atomic-tool-command", command))
    if card.args_html:
        args = json.dumps(block.args, ensure_ascii=False, default=str)
        parts.append(
            Group(
                "atomic-tool-args",
                (
                    Fold(
                        "atomic-tool-args-fold",
                        "arguments",
                        Markup("atomic-tool-args-table", card.args_html),
                        plain="arguments: " + (args if len(args) <= 300 else args[:300] + "…"),
                    ),
                ),
            )
        )
    dialogs = tuple(DialogSlot(d) for d in list(block.dialogs))
    if dialogs:
        parts.append(Group("atomic-tool-dialogs", dialogs))
    parts.append(Markup("atomic-tool-output", card.body_html, _output_plain(block)))
    children = tuple(describe_tool(child) for child in list(block.children))
    if children:
        parts.append(Group("atomic-tool-nested", children, look="indent"))
    return Group(f"atomic-tool atomic-tool-{kind}", tuple(parts), look="card", indent="  ")


# --------------------------------------------------------------------------- dialogs


def _question(dialog: Dialog) -> str:
    shown = dialog.shown
    question = dialog.title
    if isinstance(shown, ConfirmRequest) and shown.message:
        question += f"\n{shown.message}"
    if isinstance(shown, SelectRequest) and dialog.pending:
        question += "\n" + " / ".join(shown.options)
    return question


def describe_dialog(dialog: Dialog) -> Group:
    """A dialog as the record keeps it: its question, and what came of it (who decided, and
    how), in the words of the collapsed live dialog."""
    asked = _question(dialog)
    said_asked = f": {asked}" if asked else ""
    question = Text(
        "atomic-dialog-question",
        f"{dialog.method} dialog{said_asked}",
        "muted",
        plain=f"[{dialog.method} dialog]{' ' if asked else ''}{asked}",
    )
    if dialog.pending:
        said = Text("atomic-dialog-waiting", "waiting for an answer", "bold")
    else:
        said = Text(f"atomic-dialog-outcome atomic-dialog-{dialog.state}", dialog.result, "bold")
    return Group(
        f"atomic-dialog atomic-dialog-{dialog.method} atomic-record-dialog",
        (question, said),
        look="card",
        indent="  ",
    )


@dataclass(frozen=True)
class RunSection:
    """One section of a run, keyed as the live view keys its blocks: a part, or one block of
    the transcript (which the caller describes, and may keep the description of)."""

    key: str
    part: Part | None = None
    block: Block | None = None


def run_sections(run: PromptRun, prefix: str = "") -> list[RunSection]:
    """A run's sections in page order, the one place that order is written: its header (state
    and Stop), the whole prompt, every block of its transcript, the footer; each key starts
    with ``prefix``. Whether the run is over is read first: a run that ends while its blocks
    are read is shown still working, and the next reading shows the end, every block final."""
    finished = run.finished
    sections = [RunSection(f"{prefix}header", describe_header(run, finished))]
    message = describe_message(run)
    if message is not None:
        sections.append(RunSection(f"{prefix}message", message))
    blocks = run.transcript.snapshot()
    sections += [RunSection(f"{prefix}b{i}", block=block) for i, block in enumerate(blocks)]
    sections.append(RunSection(f"{prefix}footer", describe_footer(run, finished)))
    return sections
