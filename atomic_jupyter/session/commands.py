"""The agent's RPC commands as Python methods: :class:`AgentCommands`, a part of a session.

Each method sends one command, waits for its response, and returns the response's ``data``
as a Python value (None when the agent sends none), or raises
:class:`~atomic_jupyter.errors.CommandError` carrying the agent's ``error`` text.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from atomic_jupyter.protocol.agent_line import THINKING_LEVELS, AgentLine
from atomic_jupyter.session.channel import as_command
from atomic_jupyter.session.prompt_images import image_contents

if TYPE_CHECKING:
    from atomic_jupyter.protocol.messages import AgentEvent, Response
    from atomic_jupyter.session.observers import Subscription
    from atomic_jupyter.session.runs import CommandRun

__all__ = [
    "AgentCommands",
    "CommandSender",
    "PAUSABLE_COMMANDS",
    "THINKING_LEVELS",
    "bash_result_text",
    "command_result_text",
    "disposition_text",
]
#: Commands an extension may intercept, and so pause on a dialog: they are sent without
#: blocking, as a :class:`~atomic_jupyter.session.runs.CommandRun`.
PAUSABLE_COMMANDS = frozenset({"new_session", "switch_session", "fork", "clone", "compact", "bash"})


def disposition_text(kind: str, data: Any) -> str:
    """What became of a ``steer``/``follow_up``/``prompt``, in words (the current agent line
    answers with ``{"disposition": "queued" | "handled"}``; the 0.73 line with nothing)."""
    what = {"steer": "Steering message", "follow_up": "Follow-up message"}.get(kind, "Prompt")
    disposition = data.get("disposition") if isinstance(data, dict) else None
    if disposition == "handled":
        return f"{what} handled by an extension (not queued)."
    if disposition == "queued" or disposition is None:
        when = {
            "steer": "after the current turn's tool calls",
            "follow_up": "when the agent has finished",
        }.get(kind, "")
        return f"{what} queued; the agent reads it {when}." if when else f"{what} queued."
    return f"{what}: {disposition}."


def bash_result_text(data: Any) -> str:
    """The result of ``bash`` as text: the output, then how it ended."""
    if not isinstance(data, dict):
        return str(data)
    lines = [str(data.get("output", "")).rstrip("\n")]
    if data.get("truncated"):
        lines.append(f"(output truncated; all of it is in {data.get('fullOutputPath', '?')})")
    if data.get("cancelled"):
        lines.append("(cancelled)")
    code = data.get("exitCode")
    if isinstance(code, int) and code != 0:
        lines.append(f"(exit code {code})")
    return "\n".join(lines)


_SWITCHES = {
    "new_session": "New session started.",
    "switch_session": "Switched to the session.",
    "fork": "Forked the session.",
    "clone": "Cloned the session.",
}


def command_result_text(kind: str, data: Any) -> str:
    """What a pausable command's answer says, in words ("" when there is nothing to say)."""
    if kind == "bash":
        return bash_result_text(data)
    if kind in ("steer", "follow_up"):
        return disposition_text(kind, data)
    if isinstance(data, dict) and data.get("cancelled"):
        return f"{kind} was cancelled by an extension."
    if kind in _SWITCHES:
        return _SWITCHES[kind]
    if kind == "compact" and isinstance(data, dict):
        before = data.get("tokensBefore")
        return "Compacted the conversation" + (
            f" ({before:,} tokens before)." if isinstance(before, int) else "."
        )
    return ""


class CommandSender(Protocol):
    """What :class:`AgentCommands` sends through (a session)."""

    @property
    def agent(self) -> AgentLine:
        """Which agent runs (what commands its line knows)."""
        ...

    def request(
        self, command: Mapping[str, Any] | str, timeout: float | None = None, **fields: Any
    ) -> Response:
        """Send a command and wait for its answer."""
        ...

    def command(
        self,
        command: Mapping[str, Any] | str,
        *,
        display: bool = True,
        shown: bool | None = None,
        label: str | None = None,
        **fields: Any,
    ) -> CommandRun:
        """Send a command that may pause on a dialog, as a run; return at once."""
        ...

    def on_event(self, callback: Callable[[AgentEvent], None]) -> Subscription:
        """Call ``callback`` with every agent event until the subscription is removed."""
        ...


class AgentCommands:
    """Typed wrappers of the agent's commands.

    Parameters
    ----------
    sender:
        Sends them: its ``request`` (waits for the answer), ``command`` (a pausable command,
        as a run), ``on_event``, and ``agent`` (the agent's line, which says which commands
        and thinking levels it knows).
    """

    def __init__(self, sender: CommandSender) -> None:
        self._sender = sender

    def _data(self, kind: str, timeout: float | None = None, **fields: Any) -> Any:
        self._sender.agent.require_command(kind)
        command = as_command(kind, fields, given=True)
        return self._sender.request(command, timeout=timeout).data

    # ------------------------------------------------------------------ during a run

    def steer(self, text: str, *, images: Any = None, timeout: float | None = None) -> Any:
        """Queue a message delivered after the current turn's tool calls (``steer``).

        Returns the agent's data: ``{"disposition": "queued" | "handled"}`` on the current
        line (``handled``: an extension consumed it), None on the 0.73 line."""
        return self._data("steer", timeout, message=text, images=image_contents(images))

    def follow_up(self, text: str, *, images: Any = None, timeout: float | None = None) -> Any:
        """Queue a message delivered when the agent has finished (``follow_up``); returns
        the agent's data as :meth:`steer` does."""
        return self._data("follow_up", timeout, message=text, images=image_contents(images))

    def clear_queue(self, timeout: float | None = None) -> Any:
        """Remove the queued steering and follow-up messages and return their texts:
        ``{"steering": [...], "followUp": [...]}`` (current agent line)."""
        return self._data("clear_queue", timeout)

    def abort(self, timeout: float | None = None) -> Any:
        """Abort the current run (``abort``)."""
        return self._data("abort", timeout)

    # ------------------------------------------------------------------ session

    def _pausable(self, kind: str, display: bool, shown: bool | None, **fields: Any) -> CommandRun:
        command = as_command(kind, fields, given=True)
        return self._sender.command(command, display=display, shown=shown)

    def new_session(
        self,
        parent_session: str | None = None,
        *,
        display: bool = True,
        shown: bool | None = None,
    ) -> CommandRun:
        """Start a fresh conversation; returns at once (an extension may ask first, in a
        dialog under the cell). ``.result()`` is ``{"cancelled": bool}``."""
        return self._pausable("new_session", display, shown, parentSession=parent_session)

    def switch_session(
        self, session_path: str, *, display: bool = True, shown: bool | None = None
    ) -> CommandRun:
        """Load another session file; returns at once, as :meth:`new_session` does."""
        return self._pausable("switch_session", display, shown, sessionPath=session_path)

    def fork(self, entry_id: str, *, display: bool = True, shown: bool | None = None) -> CommandRun:
        """Branch the conversation at an earlier user message (``get_fork_messages`` lists
        them); returns at once. ``.result()`` is ``{"text": ..., "cancelled": bool}``."""
        return self._pausable("fork", display, shown, entryId=entry_id)

    def clone(self, *, display: bool = True, shown: bool | None = None) -> CommandRun:
        """Copy the current branch into a new session; returns at once."""
        return self._pausable("clone", display, shown)

    def get_state(self, timeout: float | None = None) -> Any:
        """The agent's state: model, thinking level, streaming, session file and name, ..."""
        return self._data("get_state", timeout)

    def get_messages(self, timeout: float | None = None) -> Any:
        """The conversation: ``{"messages": [...]}``."""
        return self._data("get_messages", timeout)

    def get_session_stats(self, timeout: float | None = None) -> Any:
        """Token usage, cost and context usage of the conversation."""
        return self._data("get_session_stats", timeout)

    def set_session_name(self, name: str, timeout: float | None = None) -> Any:
        """Give the conversation a display name."""
        return self._data("set_session_name", timeout, name=name)

    def export_html(self, output_path: str | None = None, timeout: float | None = None) -> Any:
        """Export the conversation to an HTML file; ``{"path": ...}``."""
        return self._data("export_html", timeout, outputPath=output_path)

    def get_entries(self, since: str | None = None, timeout: float | None = None) -> Any:
        """Every session entry in append order (or those after the entry id ``since``):
        ``{"entries": [...], "leafId": ...}``; unlike :meth:`get_messages`, with compacted
        history and abandoned branches (current agent line)."""
        return self._data("get_entries", timeout, since=since)

    def get_tree(self, timeout: float | None = None) -> Any:
        """The session as a tree of entries: ``{"tree": [{"entry", "children"}...],
        "leafId": ...}`` (current agent line)."""
        return self._data("get_tree", timeout)

    def get_commands(self, timeout: float | None = None) -> Any:
        """Extension commands, prompt templates and skills: ``{"commands": [...]}``."""
        return self._data("get_commands", timeout)

    def compact(
        self,
        custom_instructions: str | None = None,
        *,
        display: bool = True,
        shown: bool | None = None,
    ) -> CommandRun:
        """Summarise the conversation to free context (a model call; an extension may ask
        first or do it itself); returns at once. ``.result()`` has the summary and
        ``tokensBefore``."""
        return self._pausable("compact", display, shown, customInstructions=custom_instructions)

    def bash(
        self,
        command: str,
        *,
        on_output: Callable[[str], None] | None = None,
        display: bool = True,
        shown: bool | None = None,
    ) -> CommandRun:
        """Run a shell command; its output joins the context of the next prompt. Returns at
        once (a ``user_bash`` handler of an extension may ask first).

        ``.result()`` is ``{"output", "exitCode", "cancelled", "truncated"[,
        "fullOutputPath"]}``. ``on_output(text)`` is called with each piece of output as it
        comes (the current agent line streams it as ``bash_execution_update``; the 0.73 line
        does not, so then the output comes only in the result). It runs on the reader
        thread: keep it short.
        """
        if on_output is None:
            return self._pausable("bash", display, shown, command=command)
        cid = f"aj-bash-{uuid.uuid4().hex[:12]}"

        def forward(event: AgentEvent) -> None:
            if event.type == "bash_execution_update" and event.get("id") == cid:
                delta = event.get("delta")
                if isinstance(delta, str) and delta:
                    on_output(delta)

        subscription = self._sender.on_event(forward)
        try:
            run = self._pausable("bash", display, shown, command=command, id=cid)
        except BaseException:
            subscription.remove()
            raise
        run.when_answered(lambda _run: subscription.remove())
        return run

    # ------------------------------------------------------------------ model and thinking

    def set_model(self, provider: str, model_id: str, timeout: float | None = None) -> Any:
        """Switch to a model; returns the model."""
        return self._data("set_model", timeout, provider=provider, modelId=model_id)

    def cycle_model(self, timeout: float | None = None) -> Any:
        """Switch to the next available model (None when there is only one)."""
        return self._data("cycle_model", timeout)

    def get_available_models(self, timeout: float | None = None) -> Any:
        """Every configured model: ``{"models": [...]}``."""
        return self._data("get_available_models", timeout)

    def set_thinking_level(self, level: str, timeout: float | None = None) -> Any:
        """Set the reasoning level: off, minimal, low, medium, high, xhigh, or max (current
        agent line); which of them the model offers is :meth:`thinking_levels`."""
        known = self._sender.agent.thinking_levels
        if level not in known:
            raise ValueError(
                f"the thinking level is one of {', '.join(known)}, not {level!r}"
                + (
                    ""
                    if level not in THINKING_LEVELS
                    else f" ({self._sender.agent.label} lacks it)"
                )
            )
        return self._data("set_thinking_level", timeout, level=level)

    def thinking_levels(self, timeout: float | None = None) -> list[str]:
        """The thinking levels the current model offers, as the agent says
        (``get_available_thinking_levels``); on an agent without that command, every level
        its line knows."""
        agent = self._sender.agent
        if not agent.knows_command("get_available_thinking_levels"):
            return list(agent.thinking_levels)
        data = self._data("get_available_thinking_levels", timeout)
        levels = data.get("levels") if isinstance(data, dict) else None
        return [str(level) for level in levels] if isinstance(levels, list) else []

    def cycle_thinking_level(self, timeout: float | None = None) -> Any:
        """Switch to the next thinking level (None when the model does not think)."""
        return self._data("cycle_thinking_level", timeout)
