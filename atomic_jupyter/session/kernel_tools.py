"""Python functions of the kernel as the agent's tools (``session.expose(fn)``).

The channel back to the kernel is the agent's own stdio, not a socket: a tool of atomic-
jupyter's kernel-tools extension (``addons/kernel_tools``) asks for an ``editor`` dialog whose
title is ``atomic-kernel-call <secret>``, with the call as JSON in its prefill, and the session
answers it itself, with the result as JSON. Nothing but the agent the session started can
write to that stdio, no port is opened, and the channel ends with the process. The secret is
made for each launch and handed to the extension in a private file it deletes once read, so
an extension loaded later cannot make calls by replaying a title; a call whose title has the
prefix but not the secret is refused. Only exposed functions run: any other name is an error
given to the model.

A call runs on the kernel's main thread, never on the reader thread, through the
presentation's main-thread queue: at once when the kernel is idle, from the wait loop while a
cell blocks in ``--wait`` or ``session.wait()``, and after the running cell when another cell
computes (the tool's card says "waiting for the kernel…" meanwhile).
"""

from __future__ import annotations

import json
import reprlib
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from atomic_jupyter.errors import AtomicAgentError
from atomic_jupyter.protocol.messages import DialogRequest, EditorRequest, UIResponse
from atomic_jupyter.session.tool_schema import ToolSpec, coerce_arguments, tool_spec

__all__ = [
    "CALL_PREFIX",
    "ExposedTool",
    "KernelTools",
    "ToolChannel",
    "kernel_tools_for",
    "use_value_summary",
]

#: The title of a kernel call starts with this, then the launch's secret.
CALL_PREFIX = "atomic-kernel-call "
#: The longest error text given back to the model.
ERROR_LIMIT = 4000

_summary: list[Callable[[object], str]] = []


def use_value_summary(summarize: Callable[[object], str] | None) -> None:
    """Give results to the model as ``summarize(value)`` (the notebook registers its bounded
    summaries; without one, a shortened ``repr``)."""
    _summary[:] = [summarize] if summarize is not None else []


def _summarize(value: object) -> str:
    if _summary:
        return _summary[0](value)
    if isinstance(value, str):
        return value if len(value) <= ERROR_LIMIT else value[:ERROR_LIMIT] + " …"
    shorter = reprlib.Repr()
    shorter.maxstring = shorter.maxother = ERROR_LIMIT
    return shorter.repr(value)


class ToolChannel(Protocol):
    """What the kernel-tools addon gives the session: the launch's secret, and a way to tell
    the agent which tools there are."""

    @property
    def secret(self) -> str | None:
        """The current launch's secret (None before a launch)."""

    def publish(self, specs: list[dict[str, Any]]) -> None:
        """Make exactly these tools the agent's (now if it runs, else at its next start)."""


@dataclass(frozen=True)
class ExposedTool:
    """A function the agent may call.

    Attributes
    ----------
    function:
        The Python function.
    spec:
        Its name, description and JSON schema.
    approval:
        Whether each call waits for the person's yes (a confirm dialog in the tool's card).
    """

    function: Callable[..., Any]
    spec: ToolSpec
    approval: bool

    def to_json(self) -> dict[str, Any]:
        """What the extension registers."""
        return {**self.spec.to_json(), "approval": self.approval}


class KernelTools:
    """The functions exposed to the agent, and their calls (a part of the session).

    Parameters
    ----------
    channel:
        Gives the kernel-tools addon (None when the addon is not there).
    answer:
        Sends an answer to the agent.
    run_on_main:
        Runs work on the kernel's main thread (None: there is no kernel, calls are refused).
    wake:
        Wakes a blocking wait so that it runs queued work.
    diagnose:
        Says why a call was refused.
    """

    def __init__(
        self,
        *,
        channel: Callable[[], ToolChannel | None],
        answer: Callable[[UIResponse], Any],
        run_on_main: Callable[[], Callable[[Callable[[], None]], None] | None],
        wake: Callable[[], None],
        diagnose: Callable[[str], None],
    ) -> None:
        self._channel = channel
        self._answer = answer
        self._run_on_main = run_on_main
        self._wake = wake
        self._diagnose = diagnose
        self._lock = threading.Lock()
        self._tools: dict[str, ExposedTool] = {}

    # ------------------------------------------------------------------ exposing

    @property
    def exposed(self) -> dict[str, ExposedTool]:
        """The exposed tools, by name."""
        with self._lock:
            return dict(self._tools)

    def expose(
        self,
        function: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        side_effects: bool = False,
        approval: bool | None = None,
    ) -> ToolSpec:
        """Make ``function`` a tool of the agent, now and after every restart.

        Parameters
        ----------
        function:
            A function with a type hint on every parameter (they make the tool's JSON
            schema); its docstring's first paragraph describes the tool.
        name, description:
            Instead of the function's own.
        side_effects:
            Whether the function changes anything (files, the kernel's state, the world).
            Such a function asks the person before each call; a pure one does not.
        approval:
            Ask (True) or not (False) whatever ``side_effects`` says.

        Raises
        ------
        TypeError
            When a parameter has no type hint or one a JSON schema cannot say.
        ValueError
            When the name is not a tool name.
        """
        spec = tool_spec(function, name=name, description=description)
        tool = ExposedTool(function, spec, side_effects if approval is None else approval)
        with self._lock:
            self._tools[spec.name] = tool
        self._publish()
        return spec

    def unexpose(self, name: str) -> None:
        """Take the tool ``name`` away from the agent.

        Raises
        ------
        KeyError
            When no tool of that name is exposed.
        """
        with self._lock:
            if name not in self._tools:
                raise KeyError(f"no kernel tool {name!r} is exposed")
            del self._tools[name]
        self._publish()

    def _publish(self) -> None:
        channel = self._channel()
        if channel is None:
            raise AtomicAgentError("kernel tools need atomic-jupyter's kernel-tools addon")
        channel.publish([tool.to_json() for tool in self.exposed.values()])

    # ------------------------------------------------------------------ calls

    def claims(self, request: DialogRequest) -> bool:
        """Whether ``request`` is a kernel call (then it is handled here, on the reader
        thread: the call is queued for the main thread; a forged one is refused)."""
        if not isinstance(request, EditorRequest) or not request.title.startswith(CALL_PREFIX):
            return False
        channel = self._channel()
        secret = channel.secret if channel is not None else None
        if not secret or request.title != CALL_PREFIX + secret:
            self._diagnose("refused a kernel call that does not carry this session's secret")
            self._reply(request.id, error="refused: the call does not carry the session's secret")
            return True
        try:
            call = json.loads(request.prefill or "")
            name, arguments = call["tool"], call.get("args") or {}
            if not isinstance(name, str) or not isinstance(arguments, dict):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            self._reply(request.id, error="refused: the call is not {tool, args} as JSON")
            return True
        tool = self.exposed.get(name)
        if tool is None:
            self._reply(request.id, error=f"{name!r} is not a function the notebook exposed")
            return True
        schedule = self._run_on_main()
        if schedule is None:
            self._reply(request.id, error="there is no notebook kernel to run it in")
            return True
        schedule(lambda: self._run(request.id, tool, arguments))
        self._wake()
        return True

    def _run(self, request_id: str, tool: ExposedTool, arguments: dict[str, Any]) -> None:
        """On the main thread: call the function and answer with its result or its error."""
        try:
            kwargs = coerce_arguments(tool.spec, tool.function, arguments)
        except (ValueError, TypeError) as exc:
            self._reply(request_id, error=f"bad arguments for {tool.spec.name}: {exc}")
            return
        try:
            result = tool.function(**kwargs)
        except BaseException as exc:  # the tool's error, for the model; the kernel goes on
            frames = exc.__traceback__.tb_next if exc.__traceback__ is not None else None
            lines = traceback.format_exception(type(exc), exc, frames)  # not this frame
            text = "".join(lines)
            self._reply(request_id, error=text[-ERROR_LIMIT:])
            if not isinstance(exc, Exception):
                raise  # an interrupt of the kernel: answered, then let through
            return
        try:
            summary = _summarize(result)
        except Exception as exc:
            summary = f"<the result could not be summarised: {type(exc).__name__}: {exc}>"
        self._reply(request_id, text=summary)

    def _reply(self, request_id: str, *, text: str | None = None, error: str | None = None) -> None:
        body = {"ok": True, "text": text} if error is None else {"ok": False, "error": error}
        try:
            self._answer(UIResponse.value_of(request_id, json.dumps(body)))
        except AtomicAgentError as exc:  # the agent is gone: nothing to answer
            self._diagnose(f"could not give a kernel call its answer: {exc}")


def kernel_tools_for(session: Any) -> KernelTools:
    """The kernel tools of ``session`` (an :class:`~atomic_jupyter.session.session.
    AgentSession`), wired to its addon, its channel, its presentation and its wait."""

    def run_on_main() -> Callable[[Callable[[], None]], None] | None:
        presentation = session._presentation  # never made here: this runs on the reader thread
        return presentation.run_on_main if presentation is not None else None

    return KernelTools(
        channel=lambda: session.addon("kernel-tools"),
        answer=lambda response: session._channel.answer(response),
        run_on_main=run_on_main,
        wake=session._wake.ping,
        diagnose=session.extension_ui.diagnose,
    )
