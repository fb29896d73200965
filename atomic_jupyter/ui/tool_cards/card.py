"""What a card is made from (:class:`ToolCall`) and what it is (:class:`ToolCard`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from atomic_jupyter.ui.tool_cards.values import text_of

__all__ = ["ToolCall", "ToolCard", "final_text"]


@dataclass(frozen=True)
class ToolCall:
    """What a card needs to know of one tool call (built by the view from a ``ToolBlock``).

    Parameters
    ----------
    name:
        The tool's name (``read``, ``bash``, an extension's tool...).
    args:
        The arguments as the agent sent them: any JSON value (the model's raw arguments).
    output:
        The output streamed so far (the text of the last ``partialResult``).
    result:
        The final text content, ``None`` while the tool runs.
    details:
        ``result["details"]`` as sent (any value, usually a dict or ``None``).
    images:
        ``(mimeType, base64 data)`` of the result's image content blocks.
    is_error:
        Whether the call failed.
    done:
        Whether the call ended.
    """

    name: str
    args: Any
    output: str
    result: str | None
    details: Any = None
    images: tuple[tuple[str, str], ...] = ()
    is_error: bool = False
    done: bool = False


@dataclass(frozen=True)
class ToolCard:
    """A rendered tool call, in the sections a card shows in this order: what the call is about
    to do (:attr:`command_html`), then (placed by the view) the dialogs that decide it, then
    what came of it (:attr:`body_html`).

    Parameters
    ----------
    summary:
        Plain text for the card's header after ``tool NAME · ``, e.g. ``src/app.py  +3 −1``,
        ``$ ls -la``, ``print · 12 matches in 3 files`` (one line, no markup; show it as text).
    command_html:
        What the tool is about to do, as known before it runs: the command line (``bash``),
        the diff or the texts replaced (``edit``), the path and the content being written
        (``write``), the path and lines asked for (``read``), the pattern and where
        (``grep``, ``find``, ``ls``), the arguments (any other tool). HTML safe for
        ``innerHTML``; ``""`` when a kind has nothing to show before it runs.
    body_html:
        What came of the call, in this order: its output (streamed so far, or final), then
        its result (an exit code or status line, an error text, a notice of what was left
        out, the tool's closing message). HTML safe for ``innerHTML``; ``""`` if there is
        nothing to show (yet).
    args_html:
        The arguments in full, for a toggle: HTML safe for ``innerHTML``; ``""`` when the
        other sections show them all.
    state:
        How the call ended when that is a decision rather than "done" or "error" (a change
        ``rejected``, cells whose run was ``declined``): the header says it in place of the
        state, and the card is drawn as decided, not failed. ``""``: the call's own state.
    """

    summary: str
    command_html: str = ""
    body_html: str = ""
    args_html: str = ""
    state: str = ""


def final_text(call: ToolCall) -> str:
    """The result's text once the call ended, ``""`` before."""
    return text_of(call.result) if call.done else ""
