"""A scripted model server that reports usage, and an agent home with priced models of it:
what the tests of a run's cost and the panel's standing share (tests/kernel/test_usage.py,
tests/browser/test_browser_usage.py)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from atomic_jupyter.addons.model_server import ScriptedModelServer, Text, ToolCall, Turn, Usage
from atomic_jupyter.addons.model_server import model_entry as provider_entry
from atomic_jupyter.addons.model_server.agent_setup import PRICED
from atomic_jupyter.transport.private_files import write_private

from .support import SMALL_SESSION_SETTINGS

#: The context windows of the model that thinks (``scripted``) and the one that does not.
WINDOW = 200_000
LITE_WINDOW = 100_000
#: The usage the two-turn prompt's turns report: (input, output).
TWO_TURNS = [(60_000, 40), (60_100, 30)]


def cost(tokens_in: int, tokens_out: int) -> float:
    """What the agent charges for these tokens at :data:`PRICED` (dollars per million)."""
    return (tokens_in * PRICED["input"] + tokens_out * PRICED["output"]) / 1e6


def priced_model(model_id: str, window: int, reasoning: bool) -> dict[str, Any]:
    """A ``models.json`` model entry priced at :data:`PRICED`."""
    return {
        "id": model_id,
        "name": model_id.title(),
        "reasoning": reasoning,
        "input": ["text"],
        "contextWindow": window,
        "maxTokens": 8192,
        "cost": dict(PRICED),
    }


def two_turns(request: Any) -> Turn | None:
    """For a prompt saying "two turns": a turn that waits 2 s in a bash call, then the answer,
    with the usage of :data:`TWO_TURNS`; None for any other prompt."""
    if "two turns" not in request.last_user_text.lower():
        return None
    if request.turn_index == 0:
        call = ToolCall("bash", {"command": "sleep 2; echo waited"})
        return Turn([Text("Let me wait."), call], usage=Usage(*TWO_TURNS[0]))
    return Turn([Text("Done waiting.")], usage=Usage(*TWO_TURNS[1]))


@contextmanager
def priced_agent_home(
    home: Path,
    script: Callable[[Any], Turn],
    more_providers: Callable[[ScriptedModelServer], Mapping[str, Any]] = lambda _server: {},
) -> Iterator[ScriptedModelServer]:
    """A running server playing ``script``, and ``home`` made an agent home with its provider
    ``scripted``: the models ``scripted`` (thinks, :data:`WINDOW`) and ``scripted-lite``
    (does not, :data:`LITE_WINDOW`), both priced, with ``more_providers(server)`` beside."""
    with ScriptedModelServer(script) as server:
        scripted = provider_entry(server)
        scripted["models"] = [
            priced_model("scripted", WINDOW, True),
            priced_model("scripted-lite", LITE_WINDOW, False),
        ]
        providers = {"scripted": scripted, **more_providers(server)}
        write_private(home / "models.json", json.dumps({"providers": providers}))
        (home / "settings.json").write_text(SMALL_SESSION_SETTINGS)
        yield server
