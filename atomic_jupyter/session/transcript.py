"""What one prompt's run showed, as data: text, thinking, tool calls, notes, dialogs. No widgets.

A :class:`Transcript` takes the agent's events (:meth:`Transcript.apply`) on the reader
thread and keeps an ordered list of blocks. Each block has a revision number that grows when
it changes, so a view re-renders only the blocks that changed since it last looked.
Streaming ``message_update`` events carry the delta (the current agent line sends nothing
else; the decoder drops the 0.73 line's copies of the whole partial message); the transcript
adds the pieces up per content index and joins them only when a view asks, so a flood of
deltas costs almost nothing here.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from atomic_jupyter.protocol.messages import AgentEvent

if TYPE_CHECKING:
    from atomic_jupyter.session.dialogs import Dialog

__all__ = [
    "AssistantBlock",
    "Block",
    "DialogBlock",
    "EntryBlock",
    "NoteBlock",
    "ToolBlock",
    "Transcript",
    "UserBlock",
    "COMPACTION_REASONS",
    "Usage",
    "compaction_text",
    "content_text",
    "custom_entry",
]


def _images(content: Any) -> tuple[tuple[str, str], ...]:
    """The image content blocks of a result: ``(mimeType, data)`` pairs."""
    if not isinstance(content, list):
        return ()
    return tuple(
        (str(b.get("mimeType", "")), b["data"])
        for b in content
        if isinstance(b, dict) and b.get("type") == "image" and isinstance(b.get("data"), str)
    )


def content_text(content: Any, kind: str = "text") -> str:
    """The text of a message's content: a string, or the ``kind`` blocks of a list joined."""
    if isinstance(content, str):
        return content if kind == "text" else ""
    if not isinstance(content, list):
        return ""
    key = "thinking" if kind == "thinking" else "text"
    parts = [
        str(part.get(key, ""))
        for part in content
        if isinstance(part, dict) and part.get("type") == kind
    ]
    return "\n\n".join(p for p in parts if p)


@dataclass
class Block:
    """Base of every transcript block; ``rev`` grows whenever the block changes."""

    rev: int = field(default=0, init=False)

    def touch(self) -> None:
        """Mark the block changed."""
        self.rev += 1


def _joined(pieces: list[str]) -> str:
    """The pieces joined; the list keeps the joined text in their place, so that the next
    join copies one string and the pieces added since. Call it holding the lock under which
    pieces are added (the transcript's): the list is rewritten here."""
    count = len(pieces)
    if count <= 1:
        return pieces[0] if count else ""
    text = "".join(pieces[:count])
    pieces[:count] = [text]
    return text


@dataclass
class AssistantBlock(Block):
    """One assistant message, streaming (``final`` False) or complete.

    While it streams, the text and thinking are the deltas added up per content index; once
    ``message_end`` came, they are the final message's, exactly as the agent sent it.
    """

    message: dict[str, Any] = field(default_factory=dict)
    final: bool = False
    deltas: dict[int, tuple[str, list[str]]] = field(default_factory=dict)
    #: The transcript's lock: pieces are added under it (reader thread) and joined under it
    #: (any thread that reads the text).
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False, compare=False)

    def add_delta(self, kind: str, index: int, delta: str) -> None:
        """Add a streamed piece of text or thinking at ``index``."""
        entry = self.deltas.get(index)
        if entry is None:
            entry = self.deltas[index] = (kind, [])
        entry[1].append(delta)

    def _read(self, kind: str) -> str:
        with self.lock:
            if self.deltas and not self.final:
                streams = sorted(self.deltas.items())
                parts = [_joined(pieces) for _, (k, pieces) in streams if k == kind]
                return "\n\n".join(p for p in parts if p)
            message = self.message
        return content_text(message.get("content"), kind)

    @property
    def text(self) -> str:
        """The message's text parts, joined."""
        return self._read("text")

    @property
    def thinking(self) -> str:
        """The message's thinking parts, joined."""
        return self._read("thinking")

    @property
    def stopped(self) -> bool:
        """Whether the message was cut short because the run was stopped (``stopReason``
        aborted: the Stop button, ``session.abort()`` or ``%atomic_agent abort``)."""
        return self.message.get("stopReason") == "aborted"

    @property
    def error(self) -> str | None:
        """Why the message ended badly (``stopReason`` error or aborted), else None."""
        reason = self.message.get("stopReason")
        if reason in ("error", "aborted"):
            return str(self.message.get("errorMessage") or reason)
        return None


@dataclass
class ToolBlock(Block):
    """One tool call: its arguments, live output, and result.

    ``duration_ms`` is the agent's own measure of the call (current agent line); ``children``
    are the calls this tool made itself (events with its id as ``parentToolCallId``), shown
    inside its card; a change to a child also marks its parent changed.
    """

    call_id: str = ""
    name: str = ""
    args: Any = None
    output: str = ""
    result: str | None = None
    is_error: bool = False
    done: bool = False
    duration_ms: float | None = None
    parent: ToolBlock | None = field(default=None, repr=False)
    children: list[ToolBlock] = field(default_factory=list, repr=False)
    #: The result's ``details`` as the agent sent them (an edit's diff, truncation, ...).
    details: Any = None
    #: The result's images: ``(mimeType, base64 data)`` of each image content block.
    images: tuple[tuple[str, str], ...] = ()
    #: Whether the session gave the call details to show while it ran (``show_details``).
    previewed: bool = False
    #: Whether the session said what the running call does (``show_progress``).
    narrated: bool = False
    #: Dialogs raised while this call ran (a ``tool_call`` hook asking before it runs): shown
    #: in its card, with what the tool is about to do.
    dialogs: list[Dialog] = field(default_factory=list, repr=False)

    def touch(self) -> None:
        """Mark the block, and the tool calls around it, changed."""
        block: ToolBlock | None = self
        while block is not None:
            block.rev += 1
            block = block.parent


@dataclass
class NoteBlock(Block):
    """A short line: a queue change, compaction, retry, or an error."""

    text: str = ""
    level: str = "info"
    kind: str = "note"


@dataclass
class UserBlock(Block):
    """A user message delivered during the run (a steering or follow-up message)."""

    text: str = ""


@dataclass
class DialogBlock(Block):
    """A dialog raised during the run, where it happened."""

    dialog: Dialog | None = None


@dataclass
class EntryBlock(Block):
    """An extension's custom session entry (``pi.appendEntry``), appended during the run."""

    custom_type: str = ""
    data: Any = None


def custom_entry(event: AgentEvent) -> tuple[str, Any] | None:
    """``(customType, data)`` of an ``entry_appended`` event that carries an extension's
    custom entry; None for any other entry (the agent's own, such as cache-warming usage)."""
    entry = event.get("entry") if event.type == "entry_appended" else None
    if not isinstance(entry, dict) or entry.get("type") != "custom":
        return None
    return str(entry.get("customType") or "custom"), entry.get("data")


@dataclass(frozen=True)
class Usage:
    """Tokens and cost summed over a run's assistant messages, and the models that sent them.

    A model that reports no usage leaves every count at zero: :attr:`reported` is then False,
    and a view says nothing of tokens rather than "0 tokens"."""

    turns: int = 0
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0.0
    models: tuple[str, ...] = ()

    @property
    def reported(self) -> bool:
        """Whether the model reported any usage (a count or a cost above zero)."""
        return bool(self.input or self.output or self.cache_read or self.cache_write or self.cost)

    def __add__(self, other: Usage) -> Usage:
        models = self.models + tuple(m for m in other.models if m not in self.models)
        return Usage(
            self.turns + other.turns,
            self.input + other.input,
            self.output + other.output,
            self.cache_read + other.cache_read,
            self.cache_write + other.cache_write,
            self.cost + other.cost,
            models,
        )

    @classmethod
    def of(cls, messages: Any) -> Usage:
        """Sum the ``usage`` of every assistant message in ``messages``."""
        turns = inp = out = cr = cw = 0
        cost = 0.0
        models: list[str] = []
        for message in messages if isinstance(messages, list) else []:
            if not isinstance(message, dict) or message.get("role") != "assistant":
                continue
            turns += 1
            model = message.get("model")
            if isinstance(model, str) and model and model not in models:
                models.append(model)
            usage = message.get("usage")
            usage = usage if isinstance(usage, dict) else {}
            inp += _int(usage.get("input"))
            out += _int(usage.get("output"))
            cr += _int(usage.get("cacheRead"))
            cw += _int(usage.get("cacheWrite"))
            total = (
                (usage.get("cost") or {}).get("total")
                if isinstance(usage.get("cost"), dict)
                else None
            )
            cost += float(total) if isinstance(total, (int, float)) else 0.0
        return cls(turns, inp, out, cr, cw, cost, tuple(models))


#: Why the agent compacts, in words (the ``reason`` of ``compaction_start``).
COMPACTION_REASONS = {
    "manual": "asked for",
    "threshold": "the context window is nearly full",
    "overflow": "the conversation overflowed the model's context window",
}


def compaction_text(result: dict[str, Any]) -> str:
    """A compaction's result in words: the tokens before, and about how many after when the
    agent says (the current line estimates them; the 0.73 line does not)."""
    before, after = result.get("tokensBefore"), result.get("estimatedTokensAfter")
    text = "compacted the conversation"
    if isinstance(before, int) and not isinstance(before, bool):
        text += f": {before:,} tokens before"
        if isinstance(after, int) and not isinstance(after, bool):
            text += f", about {after:,} after"
    return text


def _int(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


class Transcript:
    """The blocks of one run, in the order they happened.

    Attributes
    ----------
    blocks:
        The blocks, oldest first (read under :attr:`lock`, or use :meth:`snapshot`).
    usage:
        Totals of this transcript's assistant messages, once the run is over.
    elapsed:
        Seconds from the prompt to the end of the run, once it is over.
    ended:
        Whether ``agent_end`` came.
    """

    def __init__(self, prompt: str) -> None:
        self.prompt = prompt
        self.lock = threading.RLock()
        self.blocks: list[Block] = []
        self.created = time.monotonic()
        self.usage: Usage | None = None
        #: The thinking level the run's model thought at (None: unknown, or a model that
        #: does not think); set once, when the run is first seen.
        self.thinking: str | None = None
        self.settings_noted = False
        self.elapsed: float | None = None
        self.ended = False
        self.started = False
        self.rev = 0
        self._assistant: AssistantBlock | None = None
        self._tools: dict[str, ToolBlock] = {}
        self._users_seen = 0
        self._finals: list[dict[str, Any]] = []

    def snapshot(self) -> list[Block]:
        """A copy of the block list."""
        with self.lock:
            return list(self.blocks)

    def _add(self, block: Block) -> None:
        block.touch()
        self.blocks.append(block)

    def has_tool(self, call_id: str) -> bool:
        """Whether the tool call ``call_id`` is in this transcript."""
        with self.lock:
            return call_id in self._tools

    def show_progress(self, call_id: str, text: str) -> bool:
        """Say what the running tool call ``call_id`` is doing (its output while it runs,
        ``"running in the kernel… 3 s"``); whether the call is in this transcript."""

        def narrate(block: ToolBlock) -> None:
            block.output = text
            block.narrated = True

        return self._while_running(call_id, narrate)

    def show_details(self, call_id: str, details: dict[str, Any]) -> bool:
        """Give the running tool call ``call_id`` the details its card shows until its result
        comes (a notebook change waiting for a decision); whether the call is here."""

        def preview(block: ToolBlock) -> None:
            block.details = details
            block.previewed = True

        return self._while_running(call_id, preview)

    def _while_running(self, call_id: str, change: Callable[[ToolBlock], None]) -> bool:
        """Apply ``change`` to the tool call ``call_id`` if it still runs (a finished call keeps
        its result); whether the call is in this transcript."""
        with self.lock:
            block = self._tools.get(call_id)
            if block is None:
                return False
            if not block.done:
                change(block)
                block.touch()
                self.rev += 1
            return True

    def note(self, text: str, level: str = "info", kind: str = "note") -> None:
        """Add a short line."""
        with self.lock:
            self._add(NoteBlock(text=text, level=level, kind=kind))
            self.rev += 1

    def add_dialog(self, dialog: Dialog) -> None:
        """Add a dialog at the current position: inside the card of the tool call that is
        running (its ``tool_call`` hooks run after its start), else (no call, or several side
        by side) as a block of its own."""
        with self.lock:
            running = [b for b in self._tools.values() if not b.done]
            if len(running) == 1:  # with calls running side by side, it is not clear whose
                tool = running[0]
                tool.dialogs.append(dialog)
                tool.touch()
            else:
                self._add(DialogBlock(dialog=dialog))
            self.rev += 1

    def dialogs(self) -> list[Dialog]:
        """Every dialog of the run (in tool cards too)."""
        with self.lock:
            found = [b.dialog for b in self.blocks if isinstance(b, DialogBlock)]
            found += [d for tool in self._tools.values() for d in tool.dialogs]
        return [d for d in found if d is not None]

    def pending_dialogs(self) -> list[Dialog]:
        """The run's dialogs that are still pending (in tool cards too)."""
        return [d for d in self.dialogs() if d.pending]

    def text(self) -> str:
        """All assistant text of the run, final messages as the agent sent them."""
        with self.lock:
            return "\n\n".join(
                b.text for b in self.blocks if isinstance(b, AssistantBlock) and b.text
            )

    def apply(self, event: AgentEvent) -> bool:
        """Take one agent event; return whether the transcript changed."""
        handler = getattr(self, "_on_" + event.type, None)
        if handler is None:
            return False
        with self.lock:
            changed = bool(handler(event.fields))
            if changed:
                self.rev += 1
            return changed

    # ------------------------------------------------------------------ event handlers

    def _on_agent_start(self, _e: dict[str, Any]) -> bool:
        self.started = True
        return False

    def usage_so_far(self) -> Usage:
        """Totals of the assistant messages this run has finished so far (after each turn,
        while it works; the same as :attr:`usage` once it is over)."""
        with self.lock:
            return self.usage if self.usage is not None else Usage.of(self._finals)

    def close(self) -> None:
        """The run is over: total up this transcript's own messages (call once, at the end)."""
        with self.lock:
            self.usage = Usage.of(self._finals)
            self.elapsed = time.monotonic() - self.created
            self.rev += 1

    def _on_agent_end(self, e: dict[str, Any]) -> bool:
        # Totals come from this transcript's own messages (close()): an agent run can span
        # several prompt cells when prompts are queued.
        self.ended = True
        if self._assistant is not None:
            self._assistant.final = True
            self._assistant.touch()
        return True

    def _on_message_start(self, e: dict[str, Any]) -> bool:
        message = e.get("message")
        if not isinstance(message, dict):
            return False
        role = message.get("role")
        if role == "assistant":
            self._assistant = AssistantBlock(message=message, lock=self.lock)
            self._add(self._assistant)
            return True
        if role == "user":
            self._users_seen += 1
            if self._users_seen == 1:
                return False  # the prompt itself, already shown in the header
            self._add(UserBlock(text=content_text(message.get("content"))))
            return True
        return False

    def _on_message_update(self, e: dict[str, Any]) -> bool:
        block = self._assistant
        if block is None:
            return False
        message = e.get("message")
        if isinstance(message, dict) and message.get("role") == "assistant":
            block.message = message  # a full update (a decoder that kept the partial message)
            block.deltas.clear()
            block.touch()
            return True
        event = e.get("assistantMessageEvent")
        if not isinstance(event, dict):
            return False
        kind = event.get("type")
        delta = event.get("delta")
        if kind in ("text_delta", "thinking_delta") and isinstance(delta, str):
            index = event.get("contentIndex")
            block.add_delta(kind[: -len("_delta")], index if isinstance(index, int) else 0, delta)
            block.touch()
            return True
        return False

    def _on_message_end(self, e: dict[str, Any]) -> bool:
        message = e.get("message")
        block = self._assistant
        if block is None or not isinstance(message, dict) or message.get("role") != "assistant":
            return False
        block.message = message
        block.final = True
        block.deltas.clear()  # the final message holds it all
        block.touch()
        self._assistant = None
        self._finals.append(message)
        return True

    def _tool(self, e: dict[str, Any]) -> ToolBlock:
        call_id = str(e.get("toolCallId", ""))
        block = self._tools.get(call_id)
        if block is None:
            block = ToolBlock(call_id=call_id, name=str(e.get("toolName", "")), args=e.get("args"))
            self._tools[call_id] = block
            parent = self._tools.get(str(e.get("parentToolCallId") or ""))
            if parent is not None and parent is not block:
                block.parent = parent
                parent.children.append(block)
            else:
                self._add(block)
        return block

    def _on_tool_execution_start(self, e: dict[str, Any]) -> bool:
        block = self._tool(e)
        block.args = e.get("args", block.args)
        block.touch()
        return True

    def _on_tool_execution_update(self, e: dict[str, Any]) -> bool:
        block = self._tool(e)
        partial = e.get("partialResult")
        # What the session itself showed of the call (the kernel's own words, a notebook
        # change's diff) stays: the extension's update ("waiting for the kernel…") can reach
        # the reader thread after the kernel answered its request, and says less.
        if not block.narrated:
            block.output = content_text(partial.get("content")) if isinstance(partial, dict) else ""
        details = partial.get("details") if isinstance(partial, dict) else None
        if details is not None and (details or not block.previewed):
            block.details = details
        block.touch()
        return True

    def _on_tool_execution_end(self, e: dict[str, Any]) -> bool:
        block = self._tool(e)
        result = e.get("result")
        block.result = (
            content_text(result.get("content")) if isinstance(result, dict) else str(result or "")
        )
        if isinstance(result, dict):
            # Details the session showed while the call ran (a notebook change's diff) stay
            # when the result brings none of its own (a failed call's are empty).
            if result.get("details") or not block.previewed:
                block.details = result.get("details")
            block.images = _images(result.get("content"))
        block.is_error = e.get("isError") is True
        duration = e.get("durationMs")
        if isinstance(duration, (int, float)) and not isinstance(duration, bool):
            block.duration_ms = float(duration)
        block.done = True
        block.touch()
        return True

    def _on_queue_update(self, e: dict[str, Any]) -> bool:
        steering = e.get("steering") or []
        follow = e.get("followUp") or []
        text = f"queued: {len(steering)} steering, {len(follow)} follow-up"
        last = self.blocks[-1] if self.blocks else None
        if isinstance(last, NoteBlock) and last.kind == "queue":
            last.text = text
            last.touch()
        else:
            self._add(NoteBlock(text=text, kind="queue"))
        return True

    def _on_compaction_start(self, e: dict[str, Any]) -> bool:
        why = COMPACTION_REASONS.get(str(e.get("reason", "manual")), str(e.get("reason")))
        self._add(NoteBlock(text=f"compacting the conversation ({why})…", kind="compaction"))
        return True

    def _on_compaction_end(self, e: dict[str, Any]) -> bool:
        overflow = e.get("reason") == "overflow"
        if e.get("aborted"):
            text, level = "compaction aborted", "warning"
        elif e.get("errorMessage"):
            text, level = f"compaction failed: {e.get('errorMessage')}", "error"
            if overflow:
                text += (
                    ". The conversation no longer fits the model's context window: start a "
                    "new one (%atomic_agent new), or choose a model with a larger window."
                )
        else:
            result = e.get("result")
            text, level = compaction_text(result if isinstance(result, dict) else {}), "info"
            if overflow and e.get("willRetry"):
                text += "; the agent tries again"
        self._add(NoteBlock(text=text, level=level, kind="compaction"))
        return True

    def _retry_note(self, what: str, e: dict[str, Any]) -> bool:
        delay = (e.get("delayMs") or 0) / 1000
        text = (
            f"{what} (attempt {e.get('attempt')} of {e.get('maxAttempts')}) in {delay:g} s: "
            f"{e.get('errorMessage', '')}"
        )
        self._add(NoteBlock(text=text, level="warning", kind="retry"))
        return True

    def _on_auto_retry_start(self, e: dict[str, Any]) -> bool:
        return self._retry_note("retrying", e)

    def _on_auto_retry_end(self, e: dict[str, Any]) -> bool:
        if e.get("success"):
            text, level = f"retry succeeded (attempt {e.get('attempt')})", "info"
        else:
            text, level = f"retries failed: {e.get('finalError', '')}", "error"
        self._add(NoteBlock(text=text, level=level, kind="retry"))
        return True

    def _on_summarization_retry_scheduled(self, e: dict[str, Any]) -> bool:
        return self._retry_note("summarising again", e)  # the current line retries summaries

    def _on_entry_appended(self, e: dict[str, Any]) -> bool:
        entry = custom_entry(AgentEvent("entry_appended", e))
        if entry is None:
            return False
        self._add(EntryBlock(custom_type=entry[0], data=entry[1]))
        return True

    def _on_extension_error(self, e: dict[str, Any]) -> bool:
        where = os.path.basename(str(e.get("extensionPath") or "")) or "an extension"
        text = f"extension error in {where} ({e.get('event', '?')}): {e.get('error', '')}"
        self._add(NoteBlock(text=text, level="error", kind="extension_error"))
        return True
