"""A notebook's saved conversations with the agent: where they are kept, which there are, and
one kernel at a time on each.

The agent saves each conversation as a JSON-lines file (read by
:mod:`atomic_jupyter.protocol.session_file`). atomic-jupyter tells it where: under a
per-user folder (:func:`conversations_root`), one folder per notebook (its path, from what
the Jupyter server told the kernel, else the working folder: :func:`notebook_of`), one
folder per session name inside, and the files the agent writes there. A kernel that runs
the agent on a file holds an operating-system lock on it (:class:`ConversationStore.lock`),
so a second kernel of the same notebook is told, and continues in a copy
(:meth:`ConversationStore.fork`) instead of writing the same file at once.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from atomic_jupyter.protocol.session_file import SavedSession, forked_header, read_session
from atomic_jupyter.transport.agent_install.homes import user_data_folder
from atomic_jupyter.transport.file_locks import acquire_lock, lock_holder, release_lock

__all__ = [
    "CONVERSATIONS_ENV",
    "Conversation",
    "ConversationLock",
    "ConversationStore",
    "conversations_root",
    "notebook_of",
]

#: The environment variable that chooses the folder of saved conversations.
CONVERSATIONS_ENV = "ATOMIC_JUPYTER_CONVERSATIONS"
#: What the Jupyter server sets in a kernel's environment: the notebook's path.
NOTEBOOK_ENV = "JPY_SESSION_NAME"
#: The name of the file in a notebook's folder that says which notebook it is.
NOTEBOOK_FILE = "notebook.txt"
#: The name of the file in a session's folder that keeps the session's name as given.
SESSION_FILE = "session.txt"


def conversations_root(
    configured: str | None = None, environ: Mapping[str, str] | None = None
) -> Path:
    """The folder of every notebook's saved conversations: ``configured``
    (``AtomicAgent.conversations_dir``), else ``$ATOMIC_JUPYTER_CONVERSATIONS``, else the
    per-user data folder (``~/.local/share/atomic-jupyter/conversations`` on Linux)."""
    environ = os.environ if environ is None else environ
    chosen = configured or environ.get(CONVERSATIONS_ENV)
    if chosen:
        return Path(chosen).expanduser()
    return user_data_folder(environ) / "conversations"


def notebook_of(environ: Mapping[str, str] | None = None, cwd: str | None = None) -> str:
    """Which notebook this kernel runs: the path the Jupyter server gave it
    (``$JPY_SESSION_NAME``), else the working folder (nbclient, nbval, a console)."""
    environ = os.environ if environ is None else environ
    named = environ.get(NOTEBOOK_ENV, "").strip()
    return named or os.path.abspath(cwd or os.getcwd())


def _safe(text: str, limit: int = 40) -> str:
    """``text`` as a file name: letters, digits, ``.``, ``_`` and ``-``."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")[:limit]


def _private_folder(folder: Path) -> None:
    """Make ``folder`` and any missing parent, each readable by this user only."""
    missing = []
    while not folder.exists():
        missing.append(folder)
        if folder.parent == folder:
            break
        folder = folder.parent
    for each in reversed(missing):
        each.mkdir(mode=0o700, exist_ok=True)
        each.chmod(0o700)


def _session_name(folder: Path) -> str:
    """The session name a session's folder was made for (its folder's name when unsaid)."""
    try:
        return (folder / SESSION_FILE).read_text(encoding="utf-8").strip() or folder.name
    except OSError:
        return folder.name


@dataclass(frozen=True)
class Conversation:
    """One saved conversation: its file, the session name it was saved under, what it holds."""

    path: Path
    session: str
    saved: SavedSession

    @property
    def id(self) -> str:
        """The conversation's id (its header's), or the file's name when it has none."""
        return self.saved.id or self.path.stem


class ConversationLock:
    """The lock a kernel holds on a conversation while its agent writes it."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    def release(self) -> None:
        """Let others continue the conversation (once; later calls do nothing). The lock
        file of a conversation that was never written goes too."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            release_lock(fd)
        finally:
            if not self.path.exists():
                with contextlib.suppress(OSError):
                    self.path.with_suffix(".lock").unlink(missing_ok=True)

    @property
    def held(self) -> bool:
        """Whether this lock is still held."""
        return self._fd is not None


class ConversationStore:
    """The saved conversations of one notebook.

    Parameters
    ----------
    root:
        The folder of every notebook's conversations (:func:`conversations_root`).
    notebook:
        Which notebook (:func:`notebook_of`).
    """

    def __init__(self, root: Path, notebook: str) -> None:
        self.root = root
        self.notebook = notebook
        digest = hashlib.sha256(notebook.encode("utf-8", "surrogateescape")).hexdigest()[:12]
        #: This notebook's folder.
        self.folder = root / f"{_safe(Path(notebook.rstrip('/')).stem) or 'notebook'}-{digest}"

    def session_folder(self, name: str) -> Path:
        """The folder of the conversations saved under the session name ``name``."""
        return self.folder / (_safe(name, 60) or "session")

    def new_path(self, name: str) -> Path:
        """Where a new conversation of session ``name`` goes (the folders are made, private
        to the user; the agent writes the file at its first message)."""
        folder = self.session_folder(name)
        _private_folder(folder)
        for note, text in (
            (self.folder / NOTEBOOK_FILE, self.notebook),
            (folder / SESSION_FILE, name),
        ):
            if not note.exists():
                note.write_text(text + "\n", encoding="utf-8")
                note.chmod(0o600)
        stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H-%M-%S-%fZ")
        return folder / f"{stamp}_{uuid.uuid4()}.jsonl"

    def conversations(self, name: str | None = None) -> list[Conversation]:
        """This notebook's saved conversations (of session ``name``, else of every session),
        the most recently written first. A file that cannot be read is listed with its
        problem."""
        if name is not None:
            folders = [self.session_folder(name)]
        else:
            try:
                folders = sorted(p for p in self.folder.iterdir() if p.is_dir())
            except OSError:
                folders = []
        found: list[tuple[float, Conversation]] = []
        for folder in folders:
            session = _session_name(folder)
            try:
                files = [p for p in folder.iterdir() if p.suffix == ".jsonl" and p.is_file()]
            except OSError:
                continue
            for path in files:
                try:
                    modified = path.stat().st_mtime
                    saved = read_session(path.read_text(encoding="utf-8", errors="replace"))
                except Exception as exc:  # one damaged file must not hide the others
                    modified = 0.0
                    reason = getattr(exc, "strerror", None) or type(exc).__name__
                    saved = SavedSession(
                        "", "", "", 0, "", "", "", "", problem=f"it cannot be read: {reason}"
                    )
                found.append((modified, Conversation(path, session, saved)))
        found.sort(key=lambda item: item[0], reverse=True)
        return [conversation for _modified, conversation in found]

    def count(self, name: str) -> int:
        """How many conversations session ``name`` saved (their files are not read)."""
        try:
            return sum(1 for p in self.session_folder(name).glob("*.jsonl") if p.is_file())
        except OSError:
            return 0

    def latest(self, name: str) -> Conversation | None:
        """The most recent conversation of session ``name`` that can be continued."""
        return next((c for c in self.conversations(name) if c.saved.problem is None), None)

    def find(self, key: str, name: str | None = None) -> Conversation:
        """The conversation whose id starts with ``key``, or whose file is ``key`` (a path or a
        file name).

        Raises
        ------
        KeyError
            When none, or more than one, matches.
        """
        every = self.conversations(name)
        by_path = [c for c in every if key in (str(c.path), c.path.name)]
        if by_path:
            return by_path[0]
        matches = [c for c in every if key and c.id.startswith(key)]
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise KeyError(f"this notebook has no saved conversation {key!r}")
        raise KeyError(f"{key!r} matches {len(matches)} conversations; give more of the id")

    def lock(self, path: Path) -> ConversationLock | None:
        """Hold ``path`` for this kernel, or None when another kernel (or session) holds it."""
        _private_folder(path.parent)
        fd = acquire_lock(path.with_suffix(".lock"))
        return None if fd is None else ConversationLock(path, fd)

    def holder(self, path: Path) -> str:
        """Where ``path`` is held: ``in another kernel (process N)``, ``in another session of
        this kernel``, or ``in another kernel`` when the lock file does not say."""
        holder = lock_holder(path.with_suffix(".lock"))
        if holder == f" (process {os.getpid()})":
            return "in another session of this kernel"
        return f"in another kernel{holder}"

    def fork(self, conversation: Conversation, name: str) -> Path:
        """A copy of ``conversation`` that goes on in a new file of session ``name``, with a
        new id and ``parentSession`` naming the original; a last line cut short is left out.
        The original is not changed."""
        text = conversation.path.read_text(encoding="utf-8", errors="replace")
        if not text.endswith("\n"):  # a whole last line gets its newline, a cut one goes
            head, _, last = text.rpartition("\n")
            try:
                json.loads(last)
                text += "\n"
            except ValueError:
                text = head + "\n" if head else ""
        stamp = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        header = forked_header(text, str(uuid.uuid4()), stamp, str(conversation.path))
        rest = text.split("\n", 1)[1] if "\n" in text else ""
        path = self.new_path(name)
        with open(path, "x", encoding="utf-8") as out:
            out.write(header + "\n" + rest)
        os.chmod(path, 0o600)
        return path


def describe_time(timestamp: str) -> str:
    """An ISO 8601 timestamp as ``2026-12-02 14:05`` in local time (the text as is when it
    is not one)."""
    try:
        moment = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return timestamp
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(moment.timestamp()))
