"""Which key a run wanted: the provider an agent found no API key for (or whose key the
provider refused), and the environment variable that provider reads.

Pure: the agent's texts and a ``models.json`` already read come in, words come out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["PROVIDER_VARIABLES", "KeyWanted", "key_refused", "missing_key_provider", "key_variable"]

#: The environment variable each of the agent's built-in providers reads its key from (the
#: agent's own table, ``env-api-keys`` in its ``pi-ai`` package, for the common providers).
PROVIDER_VARIABLES = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai": "OPENAI_API_KEY",
    "azure": "AZURE_OPENAI_API_KEY",
    "google": "GEMINI_API_KEY",
    "google-vertex": "GOOGLE_CLOUD_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "groq": "GROQ_API_KEY",
    "cerebras": "CEREBRAS_API_KEY",
    "xai": "XAI_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "vercel-ai-gateway": "AI_GATEWAY_API_KEY",
    "zai": "ZAI_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "minimax": "MINIMAX_API_KEY",
    "moonshotai": "MOONSHOT_API_KEY",
    "huggingface": "HF_TOKEN",
    "fireworks": "FIREWORKS_API_KEY",
    "together": "TOGETHER_API_KEY",
    "nvidia": "NVIDIA_API_KEY",
    "opencode": "OPENCODE_API_KEY",
    "kimi-coding": "KIMI_API_KEY",
}

_NO_KEY = re.compile(r"No API key found for \"?([A-Za-z0-9_.:-]+?)\"?(?:\.|\s|$)")
_REFUSED = re.compile(r"^\s*(401|403)\b")
_VARIABLE = re.compile(r"^\$?\{?([A-Z_][A-Z0-9_]*)\}?$")


@dataclass(frozen=True)
class KeyWanted:
    """A provider that needs a key: its name, the variable it reads (None when unknown), and
    why (the key is missing, or the provider refused it)."""

    provider: str
    variable: str | None
    refused: bool = False

    def advice(self) -> str:
        """What to do, in words (no key in them)."""
        where = (
            f"set {self.variable} in the kernel's environment, or type the key"
            if self.variable
            else "type the key"
        )
        what = (
            f"The provider {self.provider} refused the API key it was given"
            if self.refused
            else f"No API key for the provider {self.provider}"
        )
        return (
            f"{what}: {where} in the panel's key field (it goes to the agent only, and is kept "
            "past this kernel only if you tick that box)."
        )


def missing_key_provider(text: str) -> str | None:
    """The provider an agent's error says it found no API key for (None: not that error)."""
    match = _NO_KEY.search(text or "")
    if match is None or match.group(1) in ("the",):  # "for the selected model"
        return None
    return match.group(1)


def key_refused(error_message: str) -> bool:
    """Whether a failed model call's error is the provider refusing the key (HTTP 401/403)."""
    return bool(_REFUSED.match(error_message or ""))


def key_variable(provider: str, models_json: Mapping[str, Any] | None = None) -> str | None:
    """The environment variable ``provider`` reads its key from: a built-in provider's, else
    the one its ``models.json`` entry names in ``apiKey`` (``$NAME``, ``${NAME}``, or a bare
    ``NAME`` as the older agent line reads it); None when neither says."""
    providers = (models_json or {}).get("providers")
    entry = providers.get(provider) if isinstance(providers, Mapping) else None
    api_key = entry.get("apiKey") if isinstance(entry, Mapping) else None
    if isinstance(api_key, str):
        match = _VARIABLE.match(api_key.strip())
        if match is not None:
            return match.group(1)
    return PROVIDER_VARIABLES.get(provider)
