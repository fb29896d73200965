"""The agent's own files about models and keys: where its folder is, its ``models.json``
read, and an API key kept in its credential store (``auth.json``, ``0600``) when a person
asks for it to outlive the kernel."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from atomic_jupyter.transport.private_files import private_folder, write_private

__all__ = ["agent_folder", "read_models_json", "store_api_key"]

#: The variables that name the agent's folder, the first set wins.
FOLDER_VARIABLES = ("PI_CODING_AGENT_DIR", "ATOMIC_CODING_AGENT_DIR")


def agent_folder(env: Mapping[str, str], environ: Mapping[str, str] | None = None) -> Path:
    """The agent's folder for a launch with the extra variables ``env``: as the agent finds
    it (its variable in ``env``, else in the kernel's environment, else ``~/.pi/agent``)."""
    environ = os.environ if environ is None else environ
    for source in (env, environ):
        for name in FOLDER_VARIABLES:
            if source.get(name):
                return Path(source[name]).expanduser()
    return Path.home() / ".pi" / "agent"


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def read_models_json(folder: Path) -> dict[str, Any]:
    """The agent's ``models.json`` in ``folder`` ({} when missing or unreadable)."""
    return _read_json(folder / "models.json")


def store_api_key(folder: Path, provider: str, key: str) -> Path:
    """Keep ``key`` for ``provider`` in the agent's credential store, ``folder/auth.json``
    (its other entries kept; the file ``0600``, the folder made ``0700`` if new); the path."""
    private_folder(folder)
    path = folder / "auth.json"
    store = _read_json(path)
    store[provider] = {"type": "api_key", "key": key}
    write_private(path, json.dumps(store, indent=2) + "\n")
    return path
