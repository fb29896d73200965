"""The session panel described once, as sections of the record's HTML: what the saved panel
(:func:`panel_record`) and the live panel (:mod:`atomic_jupyter.ui.panel_output`) are both
made of.

Each section function returns the HTML of one part of the panel (escaped agent text, our own
markup) with the panel's class names; the live panel adds only what a person acts on (the
editor, Send, the rules' Remove buttons) and what only matters while the agent runs (the
ignored messages, how the agent exited).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from atomic_jupyter.session.standing import CONTEXT_WARNING
from atomic_jupyter.ui.ansi import ansi_to_html, strip_ansi
from atomic_jupyter.ui.record import (
    Record,
    earlier_record,
    part_html,
    part_plain,
    root_html,
    run_record,
    text_html,
)
from atomic_jupyter.ui.run_parts import Text, describe_entry
from atomic_jupyter.ui.text import escape

if TYPE_CHECKING:
    from atomic_jupyter.session.runs import PromptRun
    from atomic_jupyter.session.session import AgentSession
    from atomic_jupyter.session.standing import Standing

__all__ = [
    "LIVE_STATES",
    "NOTIFICATION_COLORS",
    "about_text",
    "entries_html",
    "head_html",
    "notification_html",
    "panel_record",
    "saved_state",
    "standing_parts",
    "status_html",
    "widget_block_html",
]

#: The colour of a notification of each type (ours, never the agent's).
NOTIFICATION_COLORS = {
    "info": "var(--jp-info-color1,#0277bd)",
    "warning": "var(--jp-warn-color1,#e65100)",
    "error": "var(--jp-error-color1,#c62828)",
}
_MUTED = "opacity:.7"
#: The states of a session whose agent is there (or may start again at the next prompt): the
#: saved panel never says one as if it still held (see :func:`saved_state`).
LIVE_STATES = frozenset({"new", "starting", "idle", "working", "asleep"})


def head_html(title: str, state: str) -> str:
    """The panel's first line: the title (the extension's, or ours) and the state."""
    return (
        f'<div><strong class="atomic-title">{ansi_to_html(title)}</strong> '
        f'<span class="atomic-state">{escape(state)}</span></div>'
    )


def saved_state(state: str) -> str:
    """The session's state as the saved panel says it: what it knew last, and that the agent
    is gone.

    The saved panel (the record, and its copy beside the live panel) is read where its agent no
    longer exists: a notebook reopened after a restart, nbconvert's HTML, GitHub. So a live
    state is said as the last one seen (``stopped (last seen: idle)``); ``stopped`` and
    ``exited`` are said as they are. The live panel says the live state.
    """
    return f"stopped (last seen: {state})" if state in LIVE_STATES else state


def about_text(session: AgentSession) -> str:
    """Which agent runs (name and version), when known."""
    agent = session.agent
    return str(agent) if agent.name or agent.version else ""


def status_html(status: dict[str, str], live: bool = False) -> str:
    """The extensions' status entries on one line (on the live panel, each titled with its
    key)."""
    entries = " · ".join(
        '<span class="atomic-status-entry"'
        + (f' title="{escape(key)}"' if live else "")
        + f">{ansi_to_html(value)}</span>"
        for key, value in status.items()
    )
    return f'<div class="atomic-status" style="{_MUTED}">{entries}</div>'


def standing_parts(standing: Standing) -> tuple[str, str]:
    """Where the session stands, as HTML and plain lines ("" before the agent has said):
    the model and thinking level, the conversation's tokens and cost (none when the model
    reports none), and the context window's fill as a bar that warns past
    :data:`~atomic_jupyter.session.standing.CONTEXT_WARNING`."""
    if standing.model is None and not standing.reported_tokens:
        return "", ""
    said = []
    if standing.model is not None:
        said.append(f"model {standing.model.key}")
        if standing.model.reasoning and standing.thinking:
            said.append(f"thinking {standing.thinking}")
    tokens = standing.tokens or {}
    if standing.reported_tokens:
        used = f"{tokens.get('input', 0):,} in / {tokens.get('output', 0):,} out tokens"
        if standing.cost:
            used += f" · ${standing.cost:.4f}"
        said.append(f"this conversation: {used}")
    line = " · ".join(said)
    html = text_html(Text("atomic-standing", line, "muted"))
    plain = [line]
    fraction = standing.context_fraction
    # The fill is counted from the model's reported usage: with none reported, it says nothing.
    if fraction is not None and standing.context_window and standing.reported_tokens:
        full = fraction >= CONTEXT_WARNING
        context = f"context {fraction:.0%} of {standing.context_window:,} tokens"
        if full:
            context += " · nearly full: compact it, or start a new conversation"
        color = "var(--jp-warn-color1,#e65100)" if full else "var(--jp-brand-color1,#1976d2)"
        width = f"{min(fraction, 1.0) * 100:.1f}%"
        bar = (
            '<div class="atomic-context-bar" role="meter" aria-valuemin="0" aria-valuemax="100" '
            f'aria-valuenow="{fraction * 100:.0f}" aria-label="context window used" '
            'style="height:4px;max-width:16em;background:var(--jp-layout-color3,#ddd)">'
            f'<div style="height:4px;width:{width};background:{color}"></div></div>'
        )
        tone = "warning" if full else "muted"
        cls = "atomic-context atomic-context-full" if full else "atomic-context"
        html += (
            f'<div class="{cls}">{text_html(Text("atomic-context-text", context, tone))}{bar}</div>'
        )
        plain.append(context)
    return html, "\n".join(plain)


def widget_block_html(lines: Sequence[Any]) -> str:
    """An extension's widget (``setWidget``): its lines, as given."""
    return text_html(Text("atomic-widget-block", "\n".join(str(line) for line in lines)))


def entries_html(entries: Sequence[tuple[str, Any]]) -> tuple[str, list[str]]:
    """Extensions' custom entries of no run, as cards: their HTML and plain lines."""
    parts = [describe_entry(kind, data) for kind, data in entries]
    return "".join(part_html(p) for p in parts), [part_plain(p) for p in parts]


def notification_html(note: dict[str, str], live: bool = False) -> str:
    """One notification line, ``[type] message`` (coloured by its type on the live panel)."""
    kind = str(note.get("type", "info"))
    text = f"[{kind}] {note.get('message', '')}"
    if not live:
        return text_html(Text("atomic-notification", text, "muted"))
    color = NOTIFICATION_COLORS.get(kind, "")
    style = f"white-space:pre-wrap;color:{color}" if color else "white-space:pre-wrap"
    return (
        f'<div class="atomic-notification atomic-notify-{escape(kind)}" style="{style}">'
        f"{ansi_to_html(text)}</div>"
    )


def panel_record(session: AgentSession, runs: Sequence[PromptRun] = ()) -> Record:
    """The panel's record: session, state, title, agent, status, widget lines, the runs sent
    from its editor (``runs``), the newest notifications (with the live panel's class names).
    No local paths or process ids. Its state is never a live one (:func:`saved_state`): the
    record is read once the agent is gone."""
    state = saved_state(session.state)
    lines = [f"agent session {session.name!r} · {state}"]
    html = [
        head_html(session.title or "", state),
        text_html(Text("atomic-session-name", f"agent session {session.name!r}", "muted")),
    ]
    if session.title:
        lines.append(session.title)
    about = about_text(session)
    if about:
        lines.append(about)
        html.append(text_html(Text("atomic-about", about, "muted")))
    standing = getattr(session, "standing", None)
    if standing is not None:
        standing_html, standing_plain = standing_parts(standing.current)
        if standing_plain:
            lines.append(standing_plain)
            html.append(standing_html)
    status = session.status
    if status:
        lines.append(" · ".join(f"{key}: {value}" for key, value in status.items()))
        html.append(status_html(status))
    conversations = session.addon("conversations")
    if conversations is not None:
        earlier = earlier_record(
            conversations.continued, conversations.notes, conversations.earlier
        )
        if earlier.plain:
            lines.append(earlier.plain)
            html.append(earlier.html)
    for block in session.widgets.values():
        block_lines = [str(line) for line in block.get("lines") or []]
        lines.extend(block_lines)
        html.append(widget_block_html(block_lines))
    for run in list(runs):
        record = run_record(run)
        lines.append(record.plain)
        html.append(f'<div class="atomic-panel-dialogs">{record.html}</div>')
    entries, entry_lines = entries_html(session.entries)
    html.append(entries)
    lines += entry_lines
    for note in list(session.notifications)[-5:]:
        lines.append(f"[{note.get('type', 'info')}] {note.get('message', '')}")
        html.append(notification_html(note))
    return Record(
        root_html("panel atomic-panel", html), "\n".join(strip_ansi(line) for line in lines)
    )
