"""The agent's RPC commands as Python methods (a mixin of AgentSession).

Each method sends one command, waits for its response, and returns the response's ``data``
as a Python value (None when the agent sends none), or raises
:class:`~atomic_jupyter.errors.CommandError` carrying the agent's ``error`` text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from atomic_jupyter.session.images import image_contents

if TYPE_CHECKING:
    from atomic_jupyter.protocol.messages import Response

__all__ = ["AgentCommands", "THINKING_LEVELS"]

THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")
#: Commands that may run a model call or a long shell command get at least this long.
SLOW_COMMAND_TIMEOUT = 300.0


class AgentCommands:
    """Typed wrappers of the agent's commands, on top of ``request``."""

    def request(self, command: Any, timeout: float | None = None, **fields: Any) -> Response:
        raise NotImplementedError  # provided by AgentSession

    def _data(self, kind: str, timeout: float | None = None, **fields: Any) -> Any:
        command = {"type": kind, **{k: v for k, v in fields.items() if v is not None}}
        return self.request(command, timeout=timeout).data

    # ------------------------------------------------------------------ during a run

    def steer(self, text: str, *, images: Any = None, timeout: float | None = None) -> Any:
        """Queue a message delivered after the current turn's tool calls (``steer``)."""
        return self._data("steer", timeout, message=text, images=image_contents(images))

    def follow_up(self, text: str, *, images: Any = None, timeout: float | None = None) -> Any:
        """Queue a message delivered when the agent has finished (``follow_up``)."""
        return self._data("follow_up", timeout, message=text, images=image_contents(images))

    def abort(self, timeout: float | None = None) -> Any:
        """Abort the current run (``abort``)."""
        return self._data("abort", timeout)

    # ------------------------------------------------------------------ session

    def new_session(self, parent_session: str | None = None, timeout: float | None = None) -> Any:
        """Start a fresh conversation; ``{"cancelled": bool}`` (an extension may cancel)."""
        return self._data("new_session", timeout, parentSession=parent_session)

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

    def get_commands(self, timeout: float | None = None) -> Any:
        """Extension commands, prompt templates and skills: ``{"commands": [...]}``."""
        return self._data("get_commands", timeout)

    def compact(
        self, custom_instructions: str | None = None, timeout: float | None = SLOW_COMMAND_TIMEOUT
    ) -> Any:
        """Summarise the conversation to free context (runs a model call)."""
        return self._data("compact", timeout, customInstructions=custom_instructions)

    def bash(self, command: str, timeout: float | None = SLOW_COMMAND_TIMEOUT) -> Any:
        """Run a shell command; its output joins the context of the next prompt."""
        return self._data("bash", timeout, command=command)

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
        """Set the reasoning level: off, minimal, low, medium, high or xhigh."""
        if level not in THINKING_LEVELS:
            raise ValueError(
                f"the thinking level is one of {', '.join(THINKING_LEVELS)}, not {level!r}"
            )
        return self._data("set_thinking_level", timeout, level=level)

    def cycle_thinking_level(self, timeout: float | None = None) -> Any:
        """Switch to the next thinking level (None when the model does not think)."""
        return self._data("cycle_thinking_level", timeout)
