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


# --------------------------------------------------------------------------- a scripted model

#: What the scripted model says for a long answer: several thousand small deltas.
LONG_ANSWER = "".join(f"Line {i}: the quick brown fox jumps over the lazy dog.\n" for i in range(600))
MARKDOWN_PAYLOAD = (
    "# Title\n\nSome **bold** text and a list:\n\n- one\n- two\n\n"
    "<script>window.__pwned='script'</script>\n\n"
    '<img src=x onerror="window.__pwned=\'img\'">\n\n'
    "[click](javascript:window.__pwned='link')\n\n"
    "```python\nprint('highlighted')\n```\n"
)


def conversation_script(request):
    """The scripted model's turns, chosen by keywords in the last user message."""
    from atomic_jupyter.model_server import Fail, Text, Thinking, ToolCall, Turn, Usage

    prompt = request.last_user_text.lower()
    turn = request.turn_index
    if "long answer" in prompt:
        return Turn([Text(LONG_ANSWER, chunk=8)], usage=Usage(1200, 9000))
    if "think" in prompt:
        return Turn([Thinking("Let me think step by step."), Text("Thought it through.")], usage=Usage(50, 10))
    if "dangerous" in prompt:
        if turn == 0:
            return Turn([ToolCall("bash", {"command": "echo dangerous-but-fine"})], usage=Usage(80, 10))
        return Turn([Text("The command ran (or was blocked).")], usage=Usage(90, 8))
    if "long tool" in prompt:
        if turn == 0:
            return Turn([Text("Checking first."), ToolCall("bash", {"command": "seq 1 3"})], usage=Usage(100, 20))
        return Turn([Text(LONG_ANSWER, chunk=8)], usage=Usage(300, 9000))
    if "tool" in prompt:
        if turn == 0:
            return Turn([Text("Let me check."), ToolCall("bash", {"command": "echo hello-from-tool"})], usage=Usage(100, 20))
        return Turn([Text("The tool said hello.")], usage=Usage(150, 12))
    if "fail" in prompt:
        return Fail(400, "scripted failure for the test")
    if "payload" in prompt:
        return Turn([Text(MARKDOWN_PAYLOAD)], usage=Usage(30, 60))
    if "slow" in prompt:
        return Turn([Text("slow " * 400, chunk=5, delay=0.01)], usage=Usage(20, 400))
    return Turn([Text(f"You said: {request.last_user_text}")], usage=Usage(10, 5))


@pytest.fixture(scope="module")
def scripted_model(tmp_path_factory: pytest.TempPathFactory):
    """A scripted OpenAI-compatible model on 127.0.0.1, and an agent home that selects it.

    Yields ``(server, agent_home, agent_args)``.
    """
    from atomic_jupyter.model_server import ScriptedModelServer, agent_args, write_models_json

    home = tmp_path_factory.mktemp("scripted-agent-home")
    with ScriptedModelServer(conversation_script) as server:
        write_models_json(home, server)
        (home / "settings.json").write_text('{"retry": {"baseDelayMs": 20}}')
        yield server, home, agent_args(server)
