"""The agent's commands as a session's public methods (:class:`SessionCommands`, a base of
:class:`~atomic_jupyter.session.session.AgentSession`): each is the method of the part that
does the work, with that part's docstring. Commands that wait for their answer are sent by
:class:`~atomic_jupyter.session.commands.CommandChannel`; those an extension may pause on a
dialog are sent as runs by :class:`~atomic_jupyter.session.prompts.Prompts`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from atomic_jupyter.protocol.messages import Response
from atomic_jupyter.session.commands import CommandChannel
from atomic_jupyter.session.prompts import Prompts
from atomic_jupyter.session.runs import CommandRun

__all__ = ["SessionCommands", "documented_as"]

F = TypeVar("F", bound=Callable[..., Any])


def documented_as(method: Callable[..., Any]) -> Callable[[F], F]:
    """Give the facade's method the docstring of its part's ``method`` (for ``help()``, ``?``
    and the documentation): one text, where the work is done."""

    def document(facade_method: F) -> F:
        facade_method.__doc__ = method.__doc__
        return facade_method

    return document


class SessionCommands:
    """The agent's commands, as methods.

    Parameters
    ----------
    commands:
        Sends the commands that wait for their answer.
    prompts:
        Sends the commands an extension may pause on a dialog, as runs.
    """

    def __init__(self, commands: CommandChannel, prompts: Prompts) -> None:
        self._commands = commands
        self._prompts = prompts

    @documented_as(CommandChannel.request)
    def request(self, /, command: Any, timeout: float | None = None, **fields: Any) -> Response:
        return self._commands.request(command, timeout, **fields)

    @documented_as(CommandChannel.steer)
    def steer(self, text: str, *, images: Any = None, timeout: float | None = None) -> Any:
        return self._commands.steer(text, images=images, timeout=timeout)

    @documented_as(CommandChannel.follow_up)
    def follow_up(self, text: str, *, images: Any = None, timeout: float | None = None) -> Any:
        return self._commands.follow_up(text, images=images, timeout=timeout)

    @documented_as(CommandChannel.clear_queue)
    def clear_queue(self, timeout: float | None = None) -> Any:
        return self._commands.clear_queue(timeout)

    @documented_as(CommandChannel.get_state)
    def get_state(self, timeout: float | None = None) -> Any:
        return self._commands.get_state(timeout)

    @documented_as(CommandChannel.get_messages)
    def get_messages(self, timeout: float | None = None) -> Any:
        return self._commands.get_messages(timeout)

    @documented_as(CommandChannel.get_session_stats)
    def get_session_stats(self, timeout: float | None = None) -> Any:
        return self._commands.get_session_stats(timeout)

    @documented_as(CommandChannel.set_session_name)
    def set_session_name(self, name: str, timeout: float | None = None) -> Any:
        return self._commands.set_session_name(name, timeout)

    @documented_as(CommandChannel.export_html)
    def export_html(self, output_path: str | None = None, timeout: float | None = None) -> Any:
        return self._commands.export_html(output_path, timeout)

    @documented_as(CommandChannel.get_entries)
    def get_entries(self, since: str | None = None, timeout: float | None = None) -> Any:
        return self._commands.get_entries(since, timeout)

    @documented_as(CommandChannel.get_tree)
    def get_tree(self, timeout: float | None = None) -> Any:
        return self._commands.get_tree(timeout)

    @documented_as(CommandChannel.get_commands)
    def get_commands(self, timeout: float | None = None) -> Any:
        return self._commands.get_commands(timeout)

    @documented_as(CommandChannel.set_model)
    def set_model(self, provider: str, model_id: str, timeout: float | None = None) -> Any:
        return self._commands.set_model(provider, model_id, timeout)

    @documented_as(CommandChannel.cycle_model)
    def cycle_model(self, timeout: float | None = None) -> Any:
        return self._commands.cycle_model(timeout)

    @documented_as(CommandChannel.get_available_models)
    def get_available_models(self, timeout: float | None = None) -> Any:
        return self._commands.get_available_models(timeout)

    @documented_as(CommandChannel.set_thinking_level)
    def set_thinking_level(self, level: str, timeout: float | None = None) -> Any:
        return self._commands.set_thinking_level(level, timeout)

    @documented_as(CommandChannel.thinking_levels)
    def thinking_levels(self, timeout: float | None = None) -> list[str]:
        return self._commands.thinking_levels(timeout)

    @documented_as(CommandChannel.cycle_thinking_level)
    def cycle_thinking_level(self, timeout: float | None = None) -> Any:
        return self._commands.cycle_thinking_level(timeout)

    # ------------------------------------------------------------------ sent as runs

    @documented_as(Prompts.command)
    def command(
        self,
        /,
        command: Any,
        *,
        display: bool = True,
        shown: bool | None = None,
        label: str | None = None,
        **fields: Any,
    ) -> CommandRun:
        return self._prompts.command(command, display=display, shown=shown, label=label, **fields)

    @documented_as(Prompts.abort)
    def abort(self, timeout: float | None = None) -> Any:
        return self._prompts.abort(timeout)

    @documented_as(Prompts.new_session)
    def new_session(
        self, parent_session: str | None = None, *, display: bool = True, shown: bool | None = None
    ) -> CommandRun:
        return self._prompts.new_session(parent_session, display=display, shown=shown)

    @documented_as(Prompts.switch_session)
    def switch_session(
        self, session_path: str, *, display: bool = True, shown: bool | None = None
    ) -> CommandRun:
        return self._prompts.switch_session(session_path, display=display, shown=shown)

    @documented_as(Prompts.fork)
    def fork(self, entry_id: str, *, display: bool = True, shown: bool | None = None) -> CommandRun:
        return self._prompts.fork(entry_id, display=display, shown=shown)

    @documented_as(Prompts.clone)
    def clone(self, *, display: bool = True, shown: bool | None = None) -> CommandRun:
        return self._prompts.clone(display=display, shown=shown)

    @documented_as(Prompts.compact)
    def compact(
        self,
        custom_instructions: str | None = None,
        *,
        display: bool = True,
        shown: bool | None = None,
    ) -> CommandRun:
        return self._prompts.compact(custom_instructions, display=display, shown=shown)

    @documented_as(Prompts.bash)
    def bash(
        self,
        command: str,
        *,
        on_output: Callable[[str], None] | None = None,
        display: bool = True,
        shown: bool | None = None,
    ) -> CommandRun:
        return self._prompts.bash(command, on_output=on_output, display=display, shown=shown)
