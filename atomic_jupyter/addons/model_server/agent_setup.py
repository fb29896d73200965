"""Pointing the agent at a server: its ``models.json`` entry and command-line arguments."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from atomic_jupyter.addons.model_server.server import ScriptedModelServer
from atomic_jupyter.transport.private_files import write_private

__all__ = ["DUMMY_API_KEY", "FREE", "PRICED", "agent_args", "model_entry", "write_models_json"]

#: The API key written into ``models.json``; the server accepts any key, and the agent only
#: needs one to be configured. (The agent would read it as an environment variable's name
#: first, so it is a name no one sets.)
DUMMY_API_KEY = "scripted-model-server-no-key-needed"

#: What the scripted model costs per million tokens (a price, so footers show a cost).
PRICED = {"input": 1.0, "output": 2.0, "cacheRead": 0.1, "cacheWrite": 1.25}
#: A free model (the offline demo's).
FREE = {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0}


def model_entry(server: ScriptedModelServer, free: bool = False) -> dict[str, Any]:
    """The provider entry of ``models.json`` for ``server`` (priced, unless ``free``)."""
    return {
        "baseUrl": server.base_url,
        "api": "openai-completions",
        "apiKey": DUMMY_API_KEY,
        "models": [
            {
                "id": server.model_id,
                "name": f"Scripted ({server.model_id})",
                "reasoning": True,
                "input": ["text", "image"],
                "contextWindow": 128000,
                "maxTokens": 8192,
                "cost": dict(FREE if free else PRICED),
            }
        ],
    }


def write_models_json(
    agent_dir: str | Path, server: ScriptedModelServer, free: bool = False
) -> Path:
    """Register ``server`` in ``<agent_dir>/models.json`` as provider ``server.provider``.

    Other providers already in the file are kept. Run the agent with
    ``PI_CODING_AGENT_DIR=agent_dir`` and :func:`agent_args` to use it.

    Returns
    -------
    Path
        The file written.
    """
    path = Path(agent_dir) / "models.json"
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    config: dict[str, Any] = {}
    if path.exists():
        try:
            config = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            config = {}
        if not isinstance(config, dict):
            config = {}
    providers = config.get("providers")
    if not isinstance(providers, dict):
        providers = config["providers"] = {}
    providers[server.provider] = model_entry(server, free)
    write_private(path, json.dumps(config, indent=2) + "\n")
    return path


def agent_args(server: ScriptedModelServer) -> list[str]:
    """``["--provider", server.provider, "--model", server.model_id]``."""
    return ["--provider", server.provider, "--model", server.model_id]
