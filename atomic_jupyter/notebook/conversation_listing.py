"""``%atomic_agent conversations``: this notebook's saved conversations, each with a Resume button,
and what a click does (continue that conversation in its session)."""

from __future__ import annotations

import os
from functools import partial
from typing import Any

from atomic_jupyter.addons.saved_conversations.runtime import store_for
from atomic_jupyter.errors import SessionNotFoundError
from atomic_jupyter.notebook import api, registry
from atomic_jupyter.notebook.config import AtomicAgent
from atomic_jupyter.notebook.presentation import LiveDisplay, in_ipython, in_place_of, view_of
from atomic_jupyter.transport.conversation_store import Conversation, describe_time
from atomic_jupyter.transport.secrets import Redactor

__all__ = ["conversation_line", "resume_conversation", "show_conversations"]


def conversation_line(conversation: Conversation, redact: Any = None) -> str:
    """One conversation in a line: when, how many messages, the first prompt, the model."""
    saved = conversation.saved
    redact = redact or Redactor.for_launch({}, os.environ)
    if saved.problem is not None:
        return f"{conversation.path.name}: cannot be continued ({saved.problem})"
    prompt = " ".join(redact(saved.first_prompt).split())  # redacted whole, then cut
    prompt = (prompt[:77] + "…") if len(prompt) > 78 else prompt
    parts = [
        describe_time(saved.updated or saved.started),
        f"{saved.messages} messages",
        repr(prompt) if prompt else "(no prompt yet)",
    ]
    if saved.model:
        parts.append(saved.model)
    if saved.name:
        parts.append(f"named {redact(saved.name)!r}")
    return f"{conversation.id[:13]} · session {conversation.session!r} · " + " · ".join(parts)


def resume_conversation(conversation: Conversation, config: AtomicAgent) -> str:
    """Continue ``conversation`` in the session it was saved under: that session's agent
    restarts on it when it runs, else a session starts on it (its panel is displayed).
    Returns what happened, in a sentence."""
    name = conversation.session
    try:
        session = registry.get(name)
    except SessionNotFoundError:
        session = api.start(name=name, config=config, resume=str(conversation.path))
    else:
        addon = session.addon("conversations")
        addon.resume(str(conversation.path))
        session.restart()
        addon.load_earlier()
        view_of(session).refresh("conversation")
    addon = session.addon("conversations")
    said = addon.continued or "continued"
    notes = " ".join(addon.notes)
    return f"Session {name!r} {said}." + (f" {notes}" if notes else "")


def show_conversations(config: AtomicAgent, name: str | None = None) -> None:
    """Display the listing: one line per conversation with a Resume button (a text in a
    viewer without widgets). A Resume that starts the conversation's session shows the
    session's panel in the listing's place (a click has no cell to display in)."""
    store = store_for(config)
    found = store.conversations(name)
    if not found:
        print(f"This notebook has no saved conversations yet (they are kept in {store.folder}).")
        return
    lines = [conversation_line(c) for c in found]
    heading = f"Saved conversations of this notebook ({store.notebook}), newest first:"
    plain = "\n".join([heading, *lines])
    if not in_ipython():
        print(plain)
        return
    from atomic_jupyter.ui.conversations_view import ConversationsView

    def resume(conversation: Conversation) -> str:
        return in_place_of(shown, view.close, lambda: resume_conversation(conversation, config))

    rows = [
        (line, None if c.saved.problem else partial(resume, c))
        for line, c in zip(lines, found, strict=True)
    ]
    view = ConversationsView(heading, rows)
    shown = LiveDisplay(view.widget, view.record)
    view.rendered.add(shown.refresh)  # the record copy follows what the listing says
    shown.display()
