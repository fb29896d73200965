"""A session's commands to its agent, sent by one part (:class:`CommandChannel`): written
only while the agent runs, answered in time, failing with the session's own errors (which
name the session and how to restart it); the agent's commands as typed methods, its queue
of steering and follow-up messages included; and the answers to dialogs.

:func:`as_command` is the one place a command is made from its type or a dict, and fields.
The commands an extension may pause on a dialog are sent as runs, by
:class:`~atomic_jupyter.session.prompts.Prompts`, through this part.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from atomic_jupyter.errors import AgentNotRunningError, CommandError, CommandTimeoutError
from atomic_jupyter.protocol.agent_line import THINKING_LEVELS, AgentLine
from atomic_jupyter.protocol.messages import Response, UIResponse
from atomic_jupyter.session.launch_env import how_it_ended
from atomic_jupyter.session.lifecycle import Lifecycle
from atomic_jupyter.session.prompt_images import image_contents
from atomic_jupyter.session.run_tracker import RunTracker
from atomic_jupyter.session.settings import Settings
from atomic_jupyter.session.transcript import compaction_text
from atomic_jupyter.transport.client import AgentClient, PendingCommand
from atomic_jupyter.transport.process import Delivery

__all__ = [
    "PAUSABLE_COMMANDS",
    "QUEUED_MESSAGES",
    "THINKING_LEVELS",
    "CommandChannel",
    "as_command",
    "bash_result_text",
    "command_result_text",
    "disposition_text",
]


def as_command(
    command: Mapping[str, Any] | str, fields: Mapping[str, Any], *, given: bool = False
) -> dict[str, Any]:
    """A command as a new dict: ``command`` (a dict, or just its type) with ``fields`` added.

    ``given``: leave out the fields whose value is None (optional arguments not given).
    """
    extra = {k: v for k, v in fields.items() if v is not None} if given else fields
    base = {"type": command} if isinstance(command, str) else command
    return {**base, **extra}


#: The commands whose message waits in the agent's queue and joins a run instead of starting one.
QUEUED_MESSAGES = frozenset({"steer", "follow_up"})
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
        said = compaction_text(data)
        return f"{said[0].upper()}{said[1:]}."
    return ""


class CommandChannel:
    """Sends a session's commands through its client, and the answers to its dialogs; the
    agent's commands as typed methods (each returns the response's ``data``, None when the
    agent sends none, or raises :class:`~atomic_jupyter.errors.CommandError` carrying the
    agent's ``error``).

    Parameters
    ----------
    client:
        The client of the session's agent.
    lifecycle:
        The session's state (a command goes out only while the agent runs or starts) and
        which agent runs (what commands its line knows).
    name:
        The session's name (its errors say how to restart it).
    settings:
        Read for ``request_timeout`` at each request.
    redact:
        Takes secrets out of the agent's error texts.
    tracker:
        Told of each command as it goes out (the message of a ``steer`` or ``follow_up`` is
        queued by the agent, and is not a prompt of its own).
    """

    def __init__(
        self,
        client: AgentClient,
        lifecycle: Lifecycle,
        *,
        name: str,
        settings: Settings,
        redact: Callable[[str], str],
        tracker: RunTracker,
    ) -> None:
        self._client = client
        self._lifecycle = lifecycle
        self._name = name
        self._settings = settings
        self._redact = redact
        self._tracker = tracker
        #: Called before every command goes out (any thread): the idle watch counts it as
        #: activity, and starts an agent put to sleep again.
        self.before_command: Callable[[], None] | None = None
        #: Called with each command's type and future as it goes out (:meth:`send`,
        #: :meth:`write`): what may change the model or the conversation is followed up.
        self.after_send: Callable[[str, PendingCommand], None] | None = None

    @property
    def agent(self) -> AgentLine:
        """Which agent runs (what commands and thinking levels its line knows)."""
        return self._lifecycle.agent

    @property
    def alive(self) -> bool:
        """Whether the agent process is running (and its launch not over)."""
        process = self._client.process
        return process is not None and process.alive and not self._lifecycle.ended

    def accepting(self) -> bool:
        """Whether the agent can take a command or an answer: it runs, or is starting."""
        return self.alive or self._lifecycle.state == "starting"

    def not_running_error(self) -> AgentNotRunningError:
        """The session's error for an agent that is not running (how it ended, and how to
        restart it)."""
        what = how_it_ended(self._lifecycle.state, self._lifecycle.exit_code)
        flag = "" if self._name == "default" else " --name " + self._name
        return AgentNotRunningError(
            f"the agent of session {self._name!r} {what}; restart it with "
            f"`%atomic_agent restart{flag}` or session.restart()"
        )

    def check_running(self) -> None:
        """Raise :meth:`not_running_error` unless the agent runs or is starting (an agent
        put to sleep is started again first)."""
        if self.before_command is not None:
            self.before_command()
        if self._client.process is None or not self.accepting():
            raise self.not_running_error()

    def prepare(self, command: Mapping[str, Any]) -> PendingCommand:
        """Give a command its id and future without writing it (see :meth:`write`)."""
        self.check_running()
        self._note(command)
        return self._client.prepare(command)

    def write(self, pending: PendingCommand) -> None:
        """Write a prepared command; an agent that is not running is the session's error."""
        try:
            self._client.write(pending)
        except AgentNotRunningError:
            raise self.not_running_error() from None
        if self.after_send is not None:
            self.after_send(pending.command, pending)

    def _note(self, command: Mapping[str, Any]) -> None:
        """A command goes out: the message of a ``steer`` or ``follow_up`` waits in the agent's
        queue and joins the current run; it is not a prompt of its own."""
        message = command.get("message")
        if command.get("type") in QUEUED_MESSAGES and isinstance(message, str):
            self._tracker.injected(message)

    def send(self, command: Mapping[str, Any]) -> PendingCommand:
        """Write a command and return the future of its answer."""
        pending = self.prepare(command)
        self.write(pending)
        return pending

    def request(
        self, /, command: Mapping[str, Any] | str, timeout: float | None = None, **fields: Any
    ) -> Response:
        """Send a command and wait for the agent's response.

        Parameters
        ----------
        command:
            The command as a dict (``{"type": "get_state"}``), or just its type with the
            other fields as keyword arguments (``request("set_session_name", name="x")``).
        timeout:
            Seconds to wait (``AtomicAgent.request_timeout`` when None).

        Returns
        -------
        Response
            The response; its ``data`` holds the result.

        Raises
        ------
        CommandError
            When the agent answers ``success: false`` (carries the agent's ``error``).
        CommandTimeoutError
            When no answer comes in time.
        AgentNotRunningError
            When the agent is not running, or exits before answering.
        """
        command = as_command(command, fields)
        timeout = self._settings.request_timeout if timeout is None else timeout
        pending = self.send(command)
        try:
            response: Response = pending.result(timeout)
        except FutureTimeout:
            self._client.abandon(pending)
            raise CommandTimeoutError(
                f"the agent did not answer {pending.command!r} within {timeout:g} s "
                "(a dialog waiting for an answer can hold it up)"
            ) from None
        except AgentNotRunningError:
            raise self.not_running_error() from None
        if not response.success:
            raise CommandError(pending.command, self._redact(response.error or "no reason given"))
        return response

    def answer(self, response: UIResponse) -> Delivery:
        """Write a dialog's answer; raise :meth:`not_running_error` when the agent is gone."""
        process = self._client.process
        # exited() looks at the process itself: the exit watcher may not have run yet.
        if process is None or not self.alive or process.exited():
            raise self.not_running_error()
        return self._client.send_answer(response)

    def _data(self, kind: str, timeout: float | None = None, **fields: Any) -> Any:
        """Send the command ``kind`` (its fields that are None left out) and wait; its data."""
        self.agent.require_command(kind)
        return self.request(as_command(kind, fields, given=True), timeout=timeout).data

    # ------------------------------------------------------------------ typed commands

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
        known = self.agent.thinking_levels
        if level not in known:
            raise ValueError(
                f"the thinking level is one of {', '.join(known)}, not {level!r}"
                + ("" if level not in THINKING_LEVELS else f" ({self.agent.label} lacks it)")
            )
        return self._data("set_thinking_level", timeout, level=level)

    def thinking_levels(self, timeout: float | None = None) -> list[str]:
        """The thinking levels the current model offers, as the agent says
        (``get_available_thinking_levels``); on an agent without that command, every level
        its line knows."""
        agent = self.agent
        if not agent.knows_command("get_available_thinking_levels"):
            return list(agent.thinking_levels)
        data = self._data("get_available_thinking_levels", timeout)
        levels = data.get("levels") if isinstance(data, dict) else None
        return [str(level) for level in levels] if isinstance(levels, list) else []

    def cycle_thinking_level(self, timeout: float | None = None) -> Any:
        """Switch to the next thinking level (None when the model does not think)."""
        return self._data("cycle_thinking_level", timeout)
