"""Saved conversations: each session's conversation is kept with its notebook, and a new
kernel can continue it.

The addon chooses the file the agent saves the conversation in (``--session FILE``, under
the notebook's folder of :class:`~atomic_jupyter.transport.conversation_store.ConversationStore`)
and holds a lock on it while the session lives, so a restart of the agent continues the same
file and a second kernel of the notebook does not write it at once (it continues in a copy,
and is told). ``save=False`` gives ``--no-session``. A command line that already says how
sessions are kept (``--no-session``, ``--session``, ``--continue``, ``--fork``, ...) is left
to the agent.

After a start that continued a conversation, :meth:`ConversationsAddon.load_earlier` asks
the agent for its messages (``get_messages``) and keeps them as runs for the panel. The
sources of the prototype extensions defined in cells (``%%atomic_extension``) are kept beside
the conversation (``FILE.prototypes.json``, written when one is loaded or removed), and a
continued conversation defines them again.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atomic_jupyter.errors import AgentStartError, AtomicAgentError
from atomic_jupyter.protocol.messages import AgentEvent
from atomic_jupyter.protocol.session_file import COUNTED_ROLES
from atomic_jupyter.session.earlier import earlier_runs
from atomic_jupyter.session.plugins import LaunchAdditions
from atomic_jupyter.session.runs import PromptRun
from atomic_jupyter.transport.conversation_store import (
    NOTEBOOK_ENV,
    Conversation,
    ConversationLock,
    ConversationStore,
    conversations_root,
    describe_time,
    notebook_of,
)
from atomic_jupyter.transport.private_files import make_private, write_private

if TYPE_CHECKING:
    from atomic_jupyter.session.session import AgentSession

__all__ = ["SESSION_OPTIONS", "ConversationsAddon", "conversations_addon"]

#: The agent's own options that say how its sessions are kept: given any, the agent decides.
#: The agent events after which the conversation's file is made 0600 again (the agent
#: creates it at the first message of a run, and again after new, fork or switch).
PRIVATE_AFTER = frozenset({"agent_end", "agent_settled"})
SESSION_OPTIONS = frozenset(
    {
        "--no-session",
        "--session",
        "--session-id",
        "--session-dir",
        "--continue",
        "-c",
        "--resume",
        "-r",
        "--fork",
    }
)


def conversations_addon(session: AgentSession) -> ConversationsAddon:
    """The saved-conversations addon of ``session``."""
    return ConversationsAddon(session)


def _whose_conversations(environ: Mapping[str, str] | None = None) -> str:
    """Whose saved conversations a note speaks of, as the subject of its sentence: "This
    notebook" when a Jupyter server named it (``$JPY_SESSION_NAME``); else the kernel's working
    folder, and that no notebook file is known (a kernel started by jupyter_client alone:
    nbclient, nbconvert, nbval), never a notebook that the kernel cannot know."""
    environ = os.environ if environ is None else environ
    if environ.get(NOTEBOOK_ENV, "").strip():
        return "This notebook"
    return (
        "No notebook file is known (no Jupyter server named one), so conversations are kept "
        "for the kernel's working folder, which"
    )


def store_for(settings: Any, environ: Any = None) -> ConversationStore:
    """The conversation store of this kernel's notebook, in the configured folder."""
    root = conversations_root(getattr(settings, "conversations_dir", None), environ)
    return ConversationStore(root, notebook_of(environ))


class ConversationsAddon:
    """Keeps one session's conversation in a file of its notebook's folder."""

    name = "conversations"

    def __init__(self, session: AgentSession) -> None:
        self._session = session
        self._resume = session.spec.resume
        self.store: ConversationStore | None = None
        #: The file the agent keeps the conversation in (None: not saved, or the agent's own
        #: options decide).
        self.path: Path | None = None
        self._lock: ConversationLock | None = None
        #: What the start did, in a sentence for the panel ("continued: 4 messages since …").
        self.continued = ""
        #: Things the person should know about the last start (a copy, nothing to continue).
        self.notes: list[str] = []
        #: The continued conversation's earlier turns, as finished runs.
        self.earlier: list[PromptRun] = []
        #: The conversation continued at the last start, if any.
        self.resumed: Conversation | None = None
        self._watching_prototypes = False
        # The agent writes the conversation's file with its own mode: made 0600 after each
        # run (the folder is 0700, so nobody else reaches it in between).
        self._events: Any = None

    @property
    def managed_by_agent(self) -> bool:
        """Whether the command line already says how the agent keeps sessions (a short
        option counts only among the agent's own arguments, not an interpreter's)."""
        command = [a for a in self._session.resolved.argv if a.startswith("--")]
        argv = [*command, *self._session.spec.extra_args]
        return any(arg.split("=", 1)[0] in SESSION_OPTIONS for arg in argv)

    @property
    def keeps_conversation(self) -> bool:
        """Whether the agent's conversation is in a file this session holds (so an agent put
        to sleep continues it when started again)."""
        lock = self._lock
        return self.path is not None and lock is not None and lock.held

    def resume(self, key: str) -> None:
        """Continue the saved conversation ``key`` (``"latest"``, an id or a file) at the
        next start, instead of this one (whose lock is let go only then, once its agent has
        ended).

        Raises
        ------
        AgentStartError
            When this session saves nothing (``--no-save``, or a command line that keeps
            sessions its own way): nothing is changed, its agent goes on.
        """
        if not self._session.spec.save or self.managed_by_agent:
            raise AgentStartError(
                f"session {self._session.name!r} does not save its conversation, so it cannot "
                "continue a saved one: start it again without --no-save (or without the "
                "agent's own session options), then resume"
            )
        self.path = None
        self._resume = key

    def follow_agent(self) -> None:
        """Follow the agent to the file it writes now (``new``, ``fork``, ``clone`` and
        ``switch_session`` move it to another file of the notebook's folder), so a restart
        goes on there; a file outside the folder, or held elsewhere, is not followed."""
        if self.path is None or self.store is None or not self._session.alive:
            return
        try:
            state = self._session.request({"type": "get_state"}, timeout=10).data
        except AtomicAgentError:
            return
        now = state.get("sessionFile") if isinstance(state, dict) else None
        if not isinstance(now, str) or Path(now) == self.path:
            return
        moved = Path(now)
        if self.store.folder not in moved.parents:
            return
        lock = self.store.lock(moved)
        if lock is not None:
            self._let_go()
            self.path, self._lock = moved, lock

    def launch(self) -> LaunchAdditions:
        """The agent's ``--session FILE`` (or ``--no-session``) for this start.

        Raises
        ------
        AgentStartError
            When the conversation asked for does not exist or cannot be continued.
        """
        if self.managed_by_agent:
            if self._resume:
                raise AgentStartError(
                    "--resume cannot continue a saved conversation: the agent command already "
                    "says how the agent keeps sessions (--no-session, --session, --continue, "
                    "...). Take that option out of the command to use --resume."
                )
            return LaunchAdditions()
        if not self._session.spec.save:
            if self._resume:
                raise AgentStartError("choose one of --resume and --no-save")
            return LaunchAdditions(args=["--no-session"])
        if self.path is not None and self._lock is not None and self._lock.held:
            make_private(self.path)
            self._follow_events()
            return LaunchAdditions(args=["--session", str(self.path)])  # a restart
        self.notes, self.continued, self.earlier, self.resumed = [], "", [], None
        store = self.store = store_for(self._session.config)
        name = self._session.name
        chosen = self._chosen(store, name) if self._resume else None
        self._resume = None
        if chosen is None and not self.notes:
            saved = store.count(name)  # a count, on every start: no file is read
            option = "" if name == "default" else f" --name {name}"
            if saved:
                plural = "s" if saved != 1 else ""
                self.notes.append(
                    f"{_whose_conversations()} has {saved} saved conversation{plural} of session "
                    f"{name!r}: %atomic_agent start --resume{option} continues the latest, and "
                    "%atomic_agent conversations lists them."
                )
        try:
            path = chosen.path if chosen is not None else store.new_path(name)
        except OSError as exc:  # the folder cannot be made: the conversation is not saved
            self.notes.append(
                f"This conversation is not saved: {store.folder} cannot be written "
                f"({exc.strerror or type(exc).__name__})."
            )
            return LaunchAdditions(args=["--no-session"])
        held = self._lock
        if held is not None and held.held and held.path == path:
            lock: ConversationLock | None = held  # the conversation this session already holds
            self._lock = None
        else:
            lock = store.lock(path)
        if chosen is not None and (lock is None or chosen.saved.torn):
            if lock is None:
                self.notes.append(
                    f"This conversation is open {store.holder(path)}: "
                    "this session continues it in a copy."
                )
            else:
                lock.release()
                self.notes.append("Its last line was cut short: it is continued in a copy.")
            path = store.fork(chosen, name)
            lock = store.lock(path)
        if lock is None:  # a brand-new file held by another: never happens but by a race
            raise AgentStartError(f"the conversation file {path} is in use by another kernel")
        self._let_go()
        if chosen is not None and path != chosen.path:  # a copy: its prototypes too
            kept, copied = _prototypes_file(chosen.path), _prototypes_file(path)
            if kept.exists():
                write_private(copied, kept.read_text(encoding="utf-8"))
        self.path, self._lock, self.resumed = path, lock, chosen
        make_private(path)  # a continued conversation written before files were kept private
        self._follow_events()
        self._watch_prototypes()
        return LaunchAdditions(args=["--session", str(path)])

    def _watch_prototypes(self) -> None:
        manager = self._session.addon("prototypes")
        if manager is not None and not self._watching_prototypes:
            self._watching_prototypes = True
            manager.changed.add(self._save_prototypes)

    def _save_prototypes(self) -> None:
        """Keep the sources of the prototypes loaded now beside the conversation."""
        manager, path = self._session.addon("prototypes"), self.path
        if manager is None or path is None:
            return
        sources = {name: manager.source(name) for name in manager.names()}
        kept = _prototypes_file(path)
        write_private(kept, json.dumps(sources))

    def restore_prototypes(self) -> None:
        """Define again the prototypes kept with a continued conversation (a note says which,
        and which failed)."""
        manager = self._session.addon("prototypes")
        if self.resumed is None or manager is None or self.path is None:
            return
        try:
            sources = json.loads(_prototypes_file(self.path).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        back: list[str] = []
        failed: list[str] = []
        for name, source in sources.items() if isinstance(sources, dict) else []:
            try:
                result = manager.define(str(name), str(source))
            except AtomicAgentError as exc:
                failed.append(f"{name} ({exc})")
                continue
            (back if result.ok else failed).append(name)
        if back:
            self.notes.append("Prototype extensions defined again: " + ", ".join(back) + ".")
        if failed:
            self.notes.append("Prototype extensions that did not load: " + ", ".join(failed) + ".")

    def _chosen(self, store: ConversationStore, name: str) -> Conversation | None:
        key = self._resume or "latest"
        if key == "latest":
            found = store.latest(name)
            if found is None:
                self.notes.append(
                    f"{_whose_conversations()} has no saved conversation of session {name!r} "
                    "yet: a new one starts."
                )
            return found
        try:
            found = store.find(key)
        except KeyError as exc:
            raise AgentStartError(str(exc.args[0])) from None
        if found.saved.problem is not None:
            raise AgentStartError(
                f"the conversation {found.path.name} cannot be continued: {found.saved.problem}. "
                "It is left as it is."
            )
        return found

    def load_earlier(self) -> None:
        """After a start that continued a conversation: its messages, as runs, and the
        sentence the panel shows."""
        if self.resumed is None:
            return
        try:
            data = self._session.request({"type": "get_messages"}, timeout=30).data
            messages = data.get("messages") if isinstance(data, dict) else None
            self.earlier = earlier_runs(messages)
        except Exception as exc:  # the conversation goes on; only the view of it is missing
            self.notes.append(f"The earlier messages could not be read: {exc}")
            return
        counted = [
            m
            for m in (messages if isinstance(messages, list) else [])
            if isinstance(m, dict) and m.get("role") in COUNTED_ROLES
        ]
        since = describe_time(self.resumed.saved.started)
        self.continued = f"continued: {len(counted)} messages" + (
            f" since {since}" if since else ""
        )
        self.restore_prototypes()

    def _follow_events(self) -> None:
        if self._events is None:
            self._events = self._session.on_event(self._on_event)

    def _on_event(self, event: AgentEvent) -> None:
        if event.type in PRIVATE_AFTER and self.path is not None:
            make_private(self.path)

    def agent_exited(self) -> None:
        """The file and its lock are kept for a restart; the file is left 0600."""
        if self.path is not None:
            make_private(self.path)

    def _let_go(self) -> None:
        lock, self._lock = self._lock, None
        if lock is not None:
            lock.release()

    def close(self) -> None:
        """The session is stopped: let other kernels continue the conversation."""
        self._let_go()
        events, self._events = self._events, None
        if events is not None:
            events.remove()


def _prototypes_file(path: Path) -> Path:
    """Where the prototypes of the conversation at ``path`` are kept."""
    return path.with_name(path.name + ".prototypes.json")
