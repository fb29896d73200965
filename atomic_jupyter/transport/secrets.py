"""Keeping API keys out of what atomic-jupyter shows. No I/O.

The values a session passes to the agent with ``--env``/``env=``, and the values of the
kernel's environment variables whose names look secret (``*_KEY``, ``*TOKEN*``, ``*SECRET*``,
``*PASSWORD*``), are replaced by ``[redacted]`` in what the session shows as text of its own
making: the agent's stderr tail, diagnostics, error messages and notifications.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

__all__ = ["Redactor", "SECRET_NAME"]

#: Environment variable names whose values are treated as secrets.
SECRET_NAME = re.compile(
    r"(^|_)(API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)($|_)", re.IGNORECASE
)
#: Shorter values are not redacted (they would match ordinary words).
MIN_SECRET_LENGTH = 6
REDACTED = "[redacted]"


class Redactor:
    """Replaces known secret values in text."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        values = {s for s in secrets if isinstance(s, str) and len(s) >= MIN_SECRET_LENGTH}
        self._pattern = (
            re.compile("|".join(re.escape(v) for v in sorted(values, key=len, reverse=True)))
            if values
            else None
        )

    @classmethod
    def for_launch(cls, extra_env: Mapping[str, str], environ: Mapping[str, str]) -> Redactor:
        """Secrets of a launch: every ``extra_env`` value, and secret-named ``environ`` values."""
        secrets = list(extra_env.values())
        secrets += [value for name, value in environ.items() if SECRET_NAME.search(name)]
        return cls(secrets)

    def __call__(self, text: str) -> str:
        """``text`` with every secret value replaced."""
        if self._pattern is None or not text:
            return text
        return self._pattern.sub(REDACTED, text)
