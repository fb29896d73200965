"""Where a session stands, one layer at a time, with fakes for the agent: the questions a
:class:`StandingWatch` asks and how it coalesces them, the panel's standing line and context bar,
which key a failed run wanted, what a typed key may be, and the compaction notes. (The same
through the real agent and a real kernel: tests/kernel/test_usage.py.)"""

from __future__ import annotations

import json
import stat
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from atomic_jupyter.protocol.agent_line import AgentLine
from atomic_jupyter.protocol.messages import AgentEvent, Response
from atomic_jupyter.session.key_handoff import KeyHandoff
from atomic_jupyter.session.provider_keys import key_refused, key_variable, missing_key_provider
from atomic_jupyter.session.runs import PromptRun
from atomic_jupyter.session.standing import ModelChoice, Standing, StandingWatch
from atomic_jupyter.transport.launch import LaunchSpec
from atomic_jupyter.ui.panel_parts import standing_parts

MODEL = {"provider": "p", "id": "m", "name": "M", "reasoning": True, "contextWindow": 1000}
ANSWERS: dict[str, Any] = {
    "get_state": {"model": MODEL, "thinkingLevel": "high"},
    "get_session_stats": {
        "tokens": {"input": 700, "output": 50, "cacheRead": 0, "cacheWrite": 0},
        "cost": 0.5,
        "contextUsage": {"tokens": 850, "contextWindow": 1000, "percent": 85},
    },
    "get_available_thinking_levels": {"levels": ["off", "low", "high"]},
    "get_available_models": {"models": [MODEL, {**MODEL, "id": "m2", "reasoning": False}]},
}


class FakeAgent:
    """Takes the watch's questions; answers each when told (``answer_all``)."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.waiting: list[tuple[str, Future[Response]]] = []

    def send(self, command: Any) -> Future[Response]:
        future: Future[Response] = Future()
        self.asked.append(command["type"])
        self.waiting.append((command["type"], future))
        return future

    def answer_all(self) -> None:
        while self.waiting:
            kind, future = self.waiting.pop(0)
            future.set_result(Response(id="1", command=kind, success=True, data=ANSWERS[kind]))


def current_line() -> AgentLine:
    return AgentLine("@earendil-works/pi-coding-agent", "1.6.0")


def test_one_round_at_a_time_however_many_runs_end() -> None:
    agent = FakeAgent()
    watch = StandingWatch(agent.send, current_line)
    told: list[Standing] = []
    watch.changed.add(lambda: told.append(watch.current))
    watch.refresh(models=True)
    for _ in range(50):  # fifty runs end while the first question is out
        watch.refresh()
    assert agent.asked == ["get_state"]
    agent.answer_all()
    # The first round, then one more for all fifty.
    assert agent.asked == [
        "get_state",
        "get_session_stats",
        "get_available_thinking_levels",
        "get_available_models",
        "get_state",
        "get_session_stats",
        "get_available_thinking_levels",
    ]
    assert len(told) == 2
    standing = told[-1]
    assert standing.model == ModelChoice("p", "m", "M", True, 1000)
    assert (standing.thinking, standing.levels) == ("high", ("off", "low", "high"))
    assert [m.key for m in standing.models] == ["p/m", "p/m2"] and standing.models_listed
    assert standing.tokens == {"input": 700, "output": 50, "cacheRead": 0, "cacheWrite": 0}
    assert (standing.cost, standing.context_fraction) == (0.5, 0.85)


def test_a_lost_agent_ends_the_round_and_the_models_are_asked_again() -> None:
    agent = FakeAgent()
    watch = StandingWatch(agent.send, current_line)
    watch.refresh(models=True)
    _kind, future = agent.waiting.pop()
    future.set_exception(RuntimeError("the agent is gone"))
    assert watch.current == Standing()
    watch.refresh()
    agent.answer_all()
    assert "get_available_models" in agent.asked


def test_the_old_line_offers_every_level_to_a_model_that_thinks() -> None:
    agent = FakeAgent()
    watch = StandingWatch(agent.send, lambda: AgentLine("@mariozechner/pi-coding-agent", "0.73.1"))
    watch.refresh()
    agent.answer_all()
    assert "get_available_thinking_levels" not in agent.asked
    assert watch.current.levels == ("off", "minimal", "low", "medium", "high", "xhigh")


def test_the_standing_line_and_the_bar_say_what_was_reported_and_warn_past_80_percent() -> None:
    model = ModelChoice("p", "m", "M", True, 1000)
    tokens = {"input": 700, "output": 50, "cacheRead": 0, "cacheWrite": 0}
    html, plain = standing_parts(
        Standing(model, "high", tokens=tokens, cost=0.5, context_tokens=850, context_window=1000)
    )
    assert plain == (
        "model p/m · thinking high · this conversation: 700 in / 50 out tokens · $0.5000\n"
        "context 85% of 1,000 tokens · nearly full: compact it, or start a new conversation"
    )
    assert "atomic-context-full" in html and 'aria-valuenow="85"' in html
    _html, plain = standing_parts(Standing(model, "high", context_tokens=500, context_window=1000))
    assert plain == "model p/m · thinking high"  # no usage reported: no figures, no bar
    assert standing_parts(Standing()) == ("", "")
    evil = ModelChoice("<b>p</b>", "<img src=x onerror=alert(1)>", "", False, None)
    html, _plain = standing_parts(Standing(evil))
    assert "<img" not in html and "<b>" not in html


def test_which_provider_wanted_a_key_and_the_variable_it_reads() -> None:
    said = "No API key found for openai.\n\nUse /login to log into a provider via OAuth or API key."
    assert missing_key_provider(f"the agent refused the prompt: {said}") == "openai"
    assert missing_key_provider('No API key found for "keyed"') == "keyed"
    assert missing_key_provider("No API key found for the selected model.") is None
    assert missing_key_provider("something else") is None
    assert key_refused("401 Incorrect API key provided") and key_refused('403: {"error"}')
    assert not key_refused("500 server error, 401 of them")
    assert key_variable("anthropic") == "ANTHROPIC_API_KEY"
    models = {"providers": {"mine": {"apiKey": "$MY_KEY"}, "old": {"apiKey": "OLD_KEY"}}}
    assert key_variable("mine", models) == "MY_KEY"
    assert key_variable("old", models) == "OLD_KEY"
    assert key_variable("unknown", models) is None


def failed_run(error: str) -> PromptRun:
    run = PromptRun("r1", "hello")
    run.error = error
    return run


def test_a_typed_key_goes_to_the_environment_and_to_the_store_only_when_kept(
    tmp_path: Path,
) -> None:
    specs: list[LaunchSpec] = [LaunchSpec(env={"PI_CODING_AGENT_DIR": str(tmp_path)})]
    handoff = KeyHandoff(lambda: specs[-1], specs.append, lambda: None)
    assert handoff.use_key("sk-1") == "no provider is waiting for a key (name one: provider=...)"
    run = failed_run("the agent refused the prompt: No API key found for openai.")
    handoff.run_ending(run)
    assert handoff.wanted is not None and handoff.wanted.variable == "OPENAI_API_KEY"
    note = run.transcript.snapshot()[-1]
    assert "OPENAI_API_KEY" in getattr(note, "text", "")
    for bad in ("", "sk with spaces", "x" * 5000):
        assert "does not look like an API key" in str(handoff.use_key(bad))
    assert "command or a variable" in str(handoff.use_key("!cat-secret", keep=True))
    assert len(specs) == 1  # nothing was given
    assert handoff.use_key(" sk-good ") is None
    assert specs[-1].env["OPENAI_API_KEY"] == "sk-good" and handoff.wanted is None
    assert not (tmp_path / "auth.json").exists()

    handoff.run_ending(failed_run("No API key found for openai."))
    assert handoff.use_key("sk-kept", keep=True) is None
    store = tmp_path / "auth.json"
    assert json.loads(store.read_text()) == {"openai": {"type": "api_key", "key": "sk-kept"}}
    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    # From Python, for a provider named before any run wanted it.
    assert handoff.use_key("sk-ant", provider="anthropic") is None
    assert specs[-1].env["ANTHROPIC_API_KEY"] == "sk-ant"


def test_a_refused_key_is_wanted_again() -> None:
    handoff = KeyHandoff(LaunchSpec, lambda _spec: None, lambda: None)
    run = PromptRun("r1", "hello")
    message = {"role": "assistant", "provider": "openai", "errorMessage": "401 Incorrect key"}
    run.transcript.apply(AgentEvent("message_start", {"message": message}))
    run.transcript.apply(AgentEvent("message_end", {"message": message}))
    handoff.run_ending(run)
    assert handoff.wanted is not None and handoff.wanted.refused
    assert "refused the API key" in handoff.wanted.advice()


@pytest.mark.parametrize(
    ("event", "said"),
    [
        (
            {"reason": "manual", "result": {"tokensBefore": 1500, "estimatedTokensAfter": 300}},
            "compacted the conversation: 1,500 tokens before, about 300 after",
        ),
        (
            {"reason": "threshold", "result": {"tokensBefore": 9000}},
            "compacted the conversation: 9,000 tokens before",
        ),
        (
            {"reason": "overflow", "errorMessage": "too big"},
            "compaction failed: too big. The conversation no longer fits the model's context "
            "window: start a new one (%atomic_agent new), or choose a model with a larger window.",
        ),
    ],
)
def test_a_compaction_says_the_tokens_before_and_after_and_an_overflow_what_to_do(
    event: dict[str, Any], said: str
) -> None:
    run = PromptRun("r1", "hello")
    run.transcript.apply(AgentEvent("compaction_start", {"reason": event["reason"]}))
    run.transcript.apply(AgentEvent("compaction_end", event))
    texts = [getattr(b, "text", "") for b in run.transcript.snapshot()]
    assert texts[-1] == said
    assert texts[0].startswith("compacting the conversation (")
