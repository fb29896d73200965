"""Shared fixtures: the pinned agent, a private agent config directory, test extensions."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
# tests/ holds helper modules (support.py, kernel_client.py, ...) imported by the tests.
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from support import EXTENSIONS, PINNED_AGENT, conversation_script  # noqa: E402


@pytest.fixture(scope="session")
def agent_command() -> list[str]:
    """The pinned agent, with no saved sessions."""
    if not PINNED_AGENT.exists():
        pytest.fail(
            f"the pinned agent is not installed at {PINNED_AGENT}; run `make test`, which installs it"
        )
    return [str(PINNED_AGENT), "--no-session"]


@pytest.fixture(scope="session", autouse=True)
def private_agent_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Keep the agent away from the user's own configuration (``~/.pi``)."""
    home = tmp_path_factory.mktemp("agent-home")
    old = os.environ.get("PI_CODING_AGENT_DIR")
    os.environ["PI_CODING_AGENT_DIR"] = str(home)
    yield home
    if old is None:
        os.environ.pop("PI_CODING_AGENT_DIR", None)
    else:
        os.environ["PI_CODING_AGENT_DIR"] = old


@pytest.fixture(scope="session")
def ui_extension() -> str:
    """The test extension that exposes every UI method as a command."""
    return str(EXTENSIONS / "ui_everything.ts")


@pytest.fixture(scope="module")
def scripted_model(tmp_path_factory: pytest.TempPathFactory):
    """A scripted OpenAI-compatible model on 127.0.0.1, and an agent home that selects it.

    Yields ``(server, agent_home, agent_args)``.
    """
    from atomic_jupyter.addons.model_server import (
        ScriptedModelServer,
        agent_args,
        write_models_json,
    )

    home = tmp_path_factory.mktemp("scripted-agent-home")
    with ScriptedModelServer(conversation_script) as server:
        write_models_json(home, server)
        (home / "settings.json").write_text('{"retry": {"baseDelayMs": 20}}')
        yield server, home, agent_args(server)
