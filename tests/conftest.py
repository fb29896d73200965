"""Shared fixtures: the pinned agent, a private agent config directory, test extensions."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
EXTENSIONS = TESTS / "extensions"
PINNED_AGENT = ROOT / "agent" / "node_modules" / ".bin" / "pi"

# tests/ holds helper modules (kernel_client.py, ...) imported by the tests.
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))


@pytest.fixture(scope="session")
def agent_command() -> list[str]:
    """The pinned agent, with no saved sessions."""
    if not PINNED_AGENT.exists():
        pytest.fail(f"the pinned agent is not installed at {PINNED_AGENT}; run `make test`, which installs it")
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
