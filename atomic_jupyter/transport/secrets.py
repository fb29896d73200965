"""Keeping API keys out of what atomic-jupyter shows and keeps. No I/O.

The secrets of a session are the values it passes to the agent with ``--env``/``env=``, the
value of an ``--api-key`` option on the agent's command line, and the values of the kernel's
environment variables whose names look secret (``*_KEY``, ``*TOKEN*``, ``*SECRET*``,
``*PASSWORD*``, ``*CREDENTIALS*``), six characters or longer. They are replaced by
``[redacted]`` in everything the agent sends before anything else sees it (every string of a
line that holds one: events, transcripts, tool output, status, title, widget lines,
notifications, dialogs, answers to commands; see :meth:`Redactor.touches` and
:meth:`Redactor.scrub`), and in what the session writes itself (the stderr tail,
diagnostics, error messages). RELIABILITY.md states the rule.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["Redactor", "SECRET_NAME", "without_userinfo"]

#: Environment variable names whose values are treated as secrets.
SECRET_NAME = re.compile(
    r"(^|_)(API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)($|_)", re.IGNORECASE
)
#: Shorter values are not redacted (they would match ordinary words).
MIN_SECRET_LENGTH = 6
REDACTED = "[redacted]"
#: ``scheme://user:token@`` in a URL (a registry's may carry one): what comes before the host.
USERINFO = re.compile(r"(\b[a-z][a-z0-9+.-]*://)[^/@\s]+@", re.IGNORECASE)


def without_userinfo(text: str) -> str:
    """``text`` with the user name and token of every URL in it left out."""
    return USERINFO.sub(r"\1", text)


class Redactor:
    """Replaces known secret values in text."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        values = {s for s in secrets if isinstance(s, str) and len(s) >= MIN_SECRET_LENGTH}
        self._pattern = (
            re.compile("|".join(re.escape(v) for v in sorted(values, key=len, reverse=True)))
            if values
            else None
        )
        # How each secret can appear in a JSON line: as is, and with JSON's escapes
        # (quotes, backslashes, control characters; non-ASCII raw or as \u escapes).
        forms = {
            form.encode("utf-8")
            for v in values
            for form in (v, json.dumps(v, ensure_ascii=False)[1:-1], json.dumps(v)[1:-1])
        }
        self._line_pattern = (
            re.compile(b"|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True)))
            if forms
            else None
        )

    def __bool__(self) -> bool:
        return self._pattern is not None

    @classmethod
    def for_launch(
        cls,
        extra_env: Mapping[str, str],
        environ: Mapping[str, str],
        argv: Sequence[str] = (),
    ) -> Redactor:
        """Secrets of a launch: every ``extra_env`` value, an ``--api-key`` value in ``argv``,
        and secret-named ``environ`` values."""
        secrets = list(extra_env.values())
        secrets += [value for name, value in environ.items() if SECRET_NAME.search(name)]
        for i, arg in enumerate(argv):
            if arg == "--api-key" and i + 1 < len(argv):
                secrets.append(argv[i + 1])
            elif arg.startswith("--api-key="):
                secrets.append(arg.split("=", 1)[1])
        return cls(secrets)

    def touches(self, line: bytes | bytearray) -> bool:
        """Whether a line the agent wrote may hold a secret (then :meth:`scrub` its value)."""
        return self._line_pattern is not None and self._line_pattern.search(line) is not None

    def scrub(self, value: Any) -> Any:
        """``value`` (decoded JSON) with every secret replaced in every string in it."""
        if isinstance(value, str):
            return self(value)
        if isinstance(value, dict):
            return {self(k) if isinstance(k, str) else k: self.scrub(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.scrub(v) for v in value]
        return value

    def __call__(self, text: str) -> str:
        """``text`` with every secret value replaced."""
        if self._pattern is None or not text:
            return text
        return self._pattern.sub(REDACTED, text)
