"""A prompt run fed by hand, as the agent's events and dialogs would feed it: for tests of the
transcript, the run's output and its record that need no agent."""

from __future__ import annotations

from typing import Any

from atomic_jupyter.protocol.messages import AgentEvent, parse_message
from atomic_jupyter.session.dialogs import Dialog
from atomic_jupyter.session.runs import PromptRun


def apply(run: PromptRun, kind: str, **fields: Any) -> None:
    """Apply the agent's event ``kind`` with ``fields`` to the run's transcript."""
    run.transcript.apply(AgentEvent(kind, fields))


def confirm_dialog(rid: str, title: str, message: str = "") -> tuple[Dialog, list[Any]]:
    """A confirm dialog ``rid`` titled ``title`` (with ``message`` if given), and the list
    its answers are sent to."""
    raw = {"type": "extension_ui_request", "id": rid, "method": "confirm", "title": title}
    if message:
        raw["message"] = message
    sent: list[Any] = []
    return Dialog(parse_message(raw), raw, sent.append), sent  # type: ignore[arg-type]
