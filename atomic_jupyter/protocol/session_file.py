"""The agent's saved conversations, read from their text: no I/O.

The agent keeps each conversation in a JSON-lines file: a header line
(``{"type": "session", "version": 3, "id": ..., "timestamp": ..., "cwd": ...}``), then one
entry per line (``message`` entries hold the user's, the assistant's and the tools'
messages; ``model_change``, ``thinking_level_change`` and ``session_info`` record the
model, the thinking level and the conversation's name). :func:`read_session` tells what a
listing needs and whether the file can be continued safely; :func:`forked_header` makes the
header of a copy that continues it in another file (what the agent's own fork writes).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = ["COUNTED_ROLES", "SavedSession", "forked_header", "read_session"]

#: Roles whose messages a listing counts (the current line also saves a ``system`` message).
COUNTED_ROLES = ("user", "assistant", "toolResult")
#: The longest first prompt a listing keeps (longer than it shows: a secret is redacted in
#: the whole text before it is cut).
PROMPT_CHARS = 1000


@dataclass(frozen=True)
class SavedSession:
    """What a saved conversation holds, for a listing.

    Attributes
    ----------
    id:
        The conversation's id (the header's), ``""`` when the file has no valid header.
    started:
        The header's timestamp (ISO 8601, as written), or ``""``.
    updated:
        The timestamp of the last entry, or ``started``.
    messages:
        How many user, assistant and tool-result messages it holds.
    first_prompt:
        The first thing the user asked (at most :data:`PROMPT_CHARS` characters), or ``""``.
    model:
        ``provider/model`` of the last model change, or ``""``.
    name:
        The conversation's name (its last ``session_info``), or ``""``.
    thinking:
        The last thinking level set, or ``""``.
    problem:
        Why the file cannot be continued (it would be damaged), or ``None``.
    torn:
        Whether the last line is cut short (a write that did not finish): the agent's 0.73
        line would glue the next entry onto it, so it is continued in a copy.
    """

    id: str
    started: str
    updated: str
    messages: int
    first_prompt: str
    model: str
    name: str
    thinking: str
    problem: str | None = None
    torn: bool = False


def _header(line: str) -> dict[str, Any] | None:
    try:
        header = json.loads(line)
    except ValueError:
        return None
    if not isinstance(header, dict) or header.get("type") != "session":
        return None
    if not isinstance(header.get("id"), str) or not header["id"]:
        return None
    return header


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(part.get("text") or "")
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


def read_session(text: str) -> SavedSession:
    """What the saved conversation ``text`` (a whole file) holds, and whether it can be
    continued.

    A file is continued only when its first line is a valid header: an empty file, a file
    of something else, or a header the agent did not write is reported (``problem``) and left
    alone (the agent's 0.73 line would overwrite it). Damaged entries after the header are
    skipped, as the agent skips them.
    """
    lines = text.split("\n")
    torn = bool(text) and not text.endswith("\n")
    header = _header(lines[0]) if lines and lines[0].strip() else None
    if header is None:
        problem = "it is empty" if not text.strip() else "its first line is not a session header"
        return SavedSession("", "", "", 0, "", "", "", "", problem=problem, torn=torn)
    started = str(header.get("timestamp") or "")
    updated, messages, first_prompt, model, name, thinking = started, 0, "", "", "", ""
    for line in lines[1:]:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict):
            continue
        if isinstance(entry.get("timestamp"), str):
            updated = entry["timestamp"]
        kind = entry.get("type")
        if kind == "message" and isinstance(entry.get("message"), dict):
            message = entry["message"]
            if message.get("role") in COUNTED_ROLES:
                messages += 1
            if message.get("role") == "user" and not first_prompt:
                first_prompt = _text_of(message.get("content")).strip()[:PROMPT_CHARS]
        elif kind == "model_change":
            model = f"{entry.get('provider', '')}/{entry.get('modelId', '')}".strip("/")
        elif kind == "thinking_level_change":
            thinking = str(entry.get("thinkingLevel") or "")
        elif kind == "session_info":
            name = str(entry.get("name") or "")
    return SavedSession(
        str(header["id"]),
        started,
        updated,
        messages,
        first_prompt,
        model,
        name,
        thinking,
        torn=torn,
    )


def forked_header(text: str, new_id: str, timestamp: str, parent: str) -> str:
    """The header line of a copy of the conversation ``text`` that goes on in another file:
    the original's header with a new id and time, and ``parentSession`` naming the file it
    came from (as the agent's own fork writes it).

    Raises
    ------
    ValueError
        When ``text`` does not start with a valid header.
    """
    header = _header(text.split("\n", 1)[0])
    if header is None:
        raise ValueError("the conversation has no valid header")
    return json.dumps({**header, "id": new_id, "timestamp": timestamp, "parentSession": parent})
