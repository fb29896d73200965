"""The modules an extension may import from the agent, as the running agent resolves them.

The agent's extension loader maps its own packages (``pi-coding-agent``, ``pi-agent-core``,
``pi-tui``, ``pi-ai`` and some ``pi-ai`` subpaths) to the copies it runs with, under every
package scope it answers to: the current line under ``@earendil-works`` and ``@mariozechner``,
the 0.73 line under ``@mariozechner`` only. On the current line ``pi-ai`` itself means an
"extension view" of it (its compat entry with TypeBox's ``Type``), which the agent ships. The
agent does not export that table, so it is rebuilt here from the installed packages: the type
check maps each name to its types, the test load to its code.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ApiModule", "api_modules"]

#: ``(package, subpath)`` pairs the loaders alias ("." is the package itself).
API_ENTRIES = (
    ("pi-coding-agent", "."),
    ("pi-agent-core", "."),
    ("pi-tui", "."),
    ("pi-ai", "."),
    ("pi-ai", "compat"),
    ("pi-ai", "models"),
    ("pi-ai", "oauth"),
    ("pi-ai", "providers/all"),
)
#: What the current line gives extensions for ``pi-ai`` (absent on the 0.73 line).
PI_AI_VIEW = Path("dist/core/extensions/pi-ai-extension-view")


@dataclass(frozen=True)
class ApiModule:
    """Where one importable name leads: its JavaScript (``code``) and its ``types``."""

    code: str
    types: str | None


def _manifest(folder: Path) -> dict[str, Any]:
    try:
        data = json.loads((folder / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _entry(folder: Path, subpath: str) -> ApiModule | None:
    """A package's entry for ``subpath`` from its ``exports`` (or ``main``/``types``)."""
    manifest = _manifest(folder)
    exports = manifest.get("exports")
    key = "." if subpath == "." else f"./{subpath}"
    code: Any
    types: Any
    if isinstance(exports, dict) and key in exports:
        target = exports[key]
        if isinstance(target, str):
            code, types = target, None
        elif isinstance(target, dict):
            code, types = target.get("import") or target.get("default"), target.get("types")
        else:
            return None
    elif subpath == ".":
        code, types = manifest.get("main") or "index.js", manifest.get("types")
    else:
        return None
    if not isinstance(code, str) or not (folder / code).is_file():
        return None
    return ApiModule(
        str((folder / code).resolve()),
        str((folder / types).resolve()) if isinstance(types, str) else None,
    )


def _installed(agent: Path, scope: str, package: str) -> Path | None:
    if package == "pi-coding-agent":
        return agent
    for parent in (agent, *agent.parents):
        candidate = parent / "node_modules" / scope / package
        if (candidate / "package.json").is_file():
            return candidate
    return None


def api_modules(agent: Path, agent_name: str, names: Iterable[str]) -> dict[str, ApiModule]:
    """Every importable name of the agent's API, for the agent package at ``agent`` (named
    ``agent_name``) answering to the coding-agent package ``names``."""
    own = agent_name.split("/")[0]
    scopes = [name.split("/")[0] for name in names]
    view = agent / PI_AI_VIEW
    found: dict[str, ApiModule] = {}
    for package, subpath in API_ENTRIES:
        folder = _installed(agent, own, package)
        if folder is None:
            continue
        if (package, subpath) == ("pi-ai", ".") and view.with_suffix(".js").is_file():
            types = view.with_suffix(".d.ts")
            module: ApiModule | None = ApiModule(
                str(view.with_suffix(".js")), str(types) if types.is_file() else None
            )
        else:
            module = _entry(folder, subpath)
        if module is None:
            continue
        suffix = "" if subpath == "." else f"/{subpath}"
        for scope in scopes:
            found[f"{scope}/{package}{suffix}"] = module
    return found
