"""The turns of a continued conversation, as runs: what ``get_messages`` returns, shown like a
live transcript.

Each user message starts a :class:`~atomic_jupyter.session.runs.PromptRun`; the assistant's
messages, its tool calls and their results become that run's blocks, through the same
:class:`~atomic_jupyter.session.transcript.Transcript` the live events feed, so the views
and the record show them as they show any run. The runs are over (finished, answered).
"""

from __future__ import annotations

from typing import Any

from atomic_jupyter.protocol.messages import AgentEvent
from atomic_jupyter.session.runs import PromptRun
from atomic_jupyter.session.transcript import content_text

__all__ = ["earlier_runs"]


def _apply(run: PromptRun, kind: str, **fields: Any) -> None:
    run.transcript.apply(AgentEvent(kind, fields))


def _close(run: PromptRun, times: list[float]) -> None:
    _apply(run, "agent_end", messages=[])
    run.transcript.close()
    # How long the turn took, from its messages' times (milliseconds), not from now.
    run.transcript.elapsed = (max(times) - min(times)) / 1000 if len(times) > 1 else None
    run._settle(None, None)
    run._finish()
    run._final_shown()


def earlier_runs(messages: Any) -> list[PromptRun]:
    """The runs of a conversation's ``messages`` (the agent's messages, oldest first; any
    other value gives none). Messages before the first user message (a system message) and
    messages of unknown roles are left out."""
    runs: list[PromptRun] = []
    run: PromptRun | None = None
    calls: dict[str, tuple[str, Any]] = {}
    times: list[float] = []
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role == "user":
            if run is not None:
                _close(run, times)
            times = []
            run = PromptRun(f"earlier-{len(runs) + 1}", content_text(message.get("content")))
            run.shown = True
            runs.append(run)
            _apply(run, "agent_start")
            _apply(run, "message_start", message=message)
        elif run is None:
            continue
        stamp = message.get("timestamp")
        if isinstance(stamp, (int, float)) and not isinstance(stamp, bool):
            times.append(float(stamp))
        if role == "assistant":
            _apply(run, "message_start", message=message)
            _apply(run, "message_end", message=message)
            content = message.get("content")
            for part in content if isinstance(content, list) else []:
                if isinstance(part, dict) and part.get("type") == "toolCall":
                    call_id = str(part.get("id", ""))
                    calls[call_id] = (str(part.get("name", "")), part.get("arguments"))
                    _apply(
                        run,
                        "tool_execution_start",
                        toolCallId=call_id,
                        toolName=calls[call_id][0],
                        args=calls[call_id][1],
                    )
        elif role == "toolResult":
            call_id = str(message.get("toolCallId", ""))
            name, args = calls.get(call_id, (str(message.get("toolName", "")), None))
            _apply(
                run,
                "tool_execution_end",
                toolCallId=call_id,
                toolName=name,
                args=args,
                result={"content": message.get("content"), "details": message.get("details")},
                isError=message.get("isError") is True,
            )
    if run is not None:
        _close(run, times)
    return runs
