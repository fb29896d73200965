"""Where a session stands: the model and thinking level, the tokens and cost of the
conversation so far, and how full the model's context window is.

The agent is asked (``get_state``, ``get_session_stats``, the model's thinking levels, the
available models) when the agent has started, after each run (a compaction of the agent's
own ends before the run it follows does) and after each command that may change the model,
the thinking level or the conversation (``compact`` among them). Questions go out one round at a
time: a trigger that comes while a round is out asks for one more round when it is over, so
however many runs end, a view is told at most once per round. The answers are taken on the
reader thread and never wait there.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, replace
from typing import Any

from atomic_jupyter.errors import AtomicAgentError
from atomic_jupyter.protocol.agent_line import AgentLine
from atomic_jupyter.protocol.messages import Response
from atomic_jupyter.session.observers import Listeners

__all__ = ["CHANGES_STANDING", "CONTEXT_WARNING", "ModelChoice", "Standing", "StandingWatch"]

#: Commands after whose answer the standing is asked again.
CHANGES_STANDING = frozenset(
    {
        "set_model",
        "cycle_model",
        "set_thinking_level",
        "cycle_thinking_level",
        "compact",
        "new_session",
        "switch_session",
        "fork",
        "clone",
    }
)
#: The context window's fill past which a view warns (a fraction).
CONTEXT_WARNING = 0.8

Send = Callable[[Mapping[str, Any]], "Future[Response]"]


@dataclass(frozen=True)
class ModelChoice:
    """One model the agent offers: its provider, id and name, whether it thinks, and its
    context window (None when the agent does not say)."""

    provider: str
    id: str
    name: str = ""
    reasoning: bool = False
    context_window: int | None = None

    @property
    def key(self) -> str:
        """``provider/id``: how a view names the choice."""
        return f"{self.provider}/{self.id}"

    @classmethod
    def of(cls, model: Any) -> ModelChoice | None:
        """The choice of one of the agent's Model objects (None when it is not one)."""
        if not isinstance(model, Mapping):
            return None
        provider, model_id = model.get("provider"), model.get("id")
        if not isinstance(provider, str) or not isinstance(model_id, str):
            return None
        window = model.get("contextWindow")
        return cls(
            provider,
            model_id,
            str(model.get("name") or ""),
            model.get("reasoning") is True,
            window if isinstance(window, int) and window > 0 else None,
        )


@dataclass(frozen=True)
class Standing:
    """What the agent last said of the session (every field None or empty until it has).

    Attributes
    ----------
    model:
        The current model.
    thinking:
        The current thinking level.
    levels:
        The thinking levels the current model offers.
    models:
        The models the agent offers (those it has a key for), as it listed them.
    models_listed:
        Whether the agent has listed them (an empty list then means: none has a key).
    tokens:
        The conversation's tokens so far: ``input``, ``output``, ``cacheRead``,
        ``cacheWrite`` (None when the agent reports none).
    cost:
        The conversation's cost so far in dollars (None when the agent reports none).
    context_tokens, context_window:
        How much of the model's context window the conversation fills (None when unknown,
        e.g. right after a compaction).
    """

    model: ModelChoice | None = None
    thinking: str | None = None
    levels: tuple[str, ...] = ()
    models: tuple[ModelChoice, ...] = ()
    models_listed: bool = False
    tokens: Mapping[str, int] | None = None
    cost: float | None = None
    context_tokens: int | None = None
    context_window: int | None = None

    @property
    def context_fraction(self) -> float | None:
        """The context window's fill, 0 to 1 (None when unknown)."""
        if self.context_tokens is None or not self.context_window:
            return None
        return max(0.0, self.context_tokens / self.context_window)

    @property
    def reported_tokens(self) -> bool:
        """Whether the agent reported any token of the conversation (a model that reports no
        usage leaves them all at zero)."""
        return bool(self.tokens and any(self.tokens.values()))


def _count(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def read_stats(standing: Standing, data: Any) -> Standing:
    """``standing`` with the tokens, cost and context fill of ``get_session_stats``'s data."""
    if not isinstance(data, Mapping):
        return standing
    raw = data.get("tokens")
    tokens = None
    if isinstance(raw, Mapping):
        keys = ("input", "output", "cacheRead", "cacheWrite")
        tokens = {key: _count(raw.get(key)) or 0 for key in keys}
    cost = data.get("cost")
    cost = float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None
    context = data.get("contextUsage")
    context = context if isinstance(context, Mapping) else {}
    window = _count(context.get("contextWindow"))
    return replace(
        standing,
        tokens=tokens,
        cost=cost,
        context_tokens=_count(context.get("tokens")),
        context_window=window or (standing.model.context_window if standing.model else None),
    )


class StandingWatch:
    """Asks the agent where the session stands and tells :attr:`changed` when it has.

    Parameters
    ----------
    send:
        Sends a command to the agent without waiting (the client's ``request``; a
        sleeping agent is not woken by a question of ours).
    agent:
        Which agent runs (whether its line knows a command).
    """

    def __init__(self, send: Send, agent: Callable[[], AgentLine]) -> None:
        self._send = send
        self._agent = agent
        self._lock = threading.Lock()
        self._asking = False
        self._again = False
        self._models_wanted = True
        self._state = "new"
        #: What the agent last said.
        self.current = Standing()
        #: Listeners called (no arguments, on the reader thread) after each round.
        self.changed: Listeners[Callable[[], None]] = Listeners()

    def refresh(self, models: bool = False) -> None:
        """Ask again (``models``: the list of available models too); a round already out
        is followed by one more."""
        with self._lock:
            self._models_wanted = self._models_wanted or models
            if self._asking:
                self._again = True
                return
            self._asking = True
        self._round()

    def after(self, kind: str, answer: Future[Response]) -> None:
        """A command of type ``kind`` went out: ask again once it is answered, if it may have
        changed where the session stands."""
        if kind in CHANGES_STANDING:
            answer.add_done_callback(lambda _f: self.refresh())

    def follow_state(self, state: str) -> None:
        """The session's state is now ``state``: an agent starting is a new agent (what the
        last one said is forgotten); one that has started is asked, models too."""
        before, self._state = self._state, state
        if state == "starting" and before != "starting":
            self.forget()
        elif before == "starting" and state in ("idle", "working"):
            self.refresh(models=True)

    def follow_run(self, run: Any, how: str) -> None:
        """A run changed (``how``, see :class:`~atomic_jupyter.session.run_tracker.RunTracker`):
        a run first seen records the thinking level it runs at (its model's, if it thinks);
        one that is over changed the conversation's tokens."""
        transcript = run.transcript
        if not transcript.settings_noted:
            transcript.settings_noted = True
            current = self.current
            if current.model is not None and current.model.reasoning:
                transcript.thinking = current.thinking
        if how == "final":
            self.refresh()

    def forget(self) -> None:
        """The agent is gone or replaced: what it said no longer holds (the models are asked
        again on the next round)."""
        with self._lock:
            self._models_wanted = True
            self.current = Standing()
        self.changed.emit()

    # ------------------------------------------------------------------ one round

    def _round(self) -> None:
        with self._lock:
            models = self._models_wanted
            self._models_wanted = False
        steps: list[tuple[str, Callable[[Standing, Any], Standing]]] = [
            ("get_state", _read_state),
            ("get_session_stats", read_stats),
        ]
        if self._agent().knows_command("get_available_thinking_levels"):
            steps.append(("get_available_thinking_levels", _read_levels))
        if models:
            steps.append(("get_available_models", _read_models))
        self._step(steps, self.current, models)

    def _step(
        self,
        steps: list[tuple[str, Callable[[Standing, Any], Standing]]],
        standing: Standing,
        models: bool,
    ) -> None:
        if not steps:
            self._done(standing)
            return
        (kind, read), rest = steps[0], steps[1:]
        try:
            answer = self._send({"type": kind})
        except AtomicAgentError:
            self._done(None, models)
            return

        def take(future: Future[Response]) -> None:
            response = None if future.exception() is not None else future.result()
            if response is None:  # the agent is gone: this round is over
                self._done(None, models)
                return
            data = response.data if response.success else None
            self._step(rest, read(standing, data) if response.success else standing, models)

        answer.add_done_callback(take)

    def _done(self, standing: Standing | None, models_lost: bool = False) -> None:
        with self._lock:
            if standing is not None:
                agent = self._agent()
                if not agent.knows_command("get_available_thinking_levels"):
                    standing = replace(standing, levels=_every_level(standing, agent))
                self.current = standing
            else:
                self._models_wanted = self._models_wanted or models_lost
            again, self._again = self._again, False
            self._asking = again
        if standing is not None:
            self.changed.emit()
        if again:
            self._round()


def _read_state(standing: Standing, data: Any) -> Standing:
    if not isinstance(data, Mapping):
        return standing
    level = data.get("thinkingLevel")
    return replace(
        standing,
        model=ModelChoice.of(data.get("model")),
        thinking=level if isinstance(level, str) else None,
    )


def _read_levels(standing: Standing, data: Any) -> Standing:
    levels = data.get("levels") if isinstance(data, Mapping) else None
    if not isinstance(levels, list):
        return standing
    return replace(standing, levels=tuple(str(level) for level in levels))


def _read_models(standing: Standing, data: Any) -> Standing:
    listed = data.get("models") if isinstance(data, Mapping) else None
    if not isinstance(listed, list):
        return standing
    choices = (ModelChoice.of(model) for model in listed)
    return replace(standing, models=tuple(c for c in choices if c is not None), models_listed=True)


def _every_level(standing: Standing, agent: AgentLine) -> tuple[str, ...]:
    """The levels of a line that cannot say which the model offers: ``off`` for a model that
    does not think, else every level the line knows."""
    if standing.model is None or not standing.model.reasoning:
        return ("off",)
    return tuple(agent.thinking_levels)
