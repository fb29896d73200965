"""The agent's values as a card reads them: any JSON shape in, never an exception out."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from atomic_jupyter.ui.ansi import strip_ansi
from atomic_jupyter.ui.tool_cards.limits import MAX_CHARS, SUMMARY_MAX


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` if it is a dict, else an empty one."""
    return value if isinstance(value, dict) else {}


def as_str(value: Any) -> str | None:
    """``value`` if it is a string, else ``None``."""
    return value if isinstance(value, str) else None


def as_int(value: Any) -> int | None:
    """``value`` as an int if it is a whole number (not a bool, not huge), else ``None``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not value.is_integer():
        return None
    return int(value) if abs(value) < 1e15 else None


def text_of(value: Any) -> str:
    """``value`` as text: a string as it is, ``None`` as ``""``, anything else shown (capped)."""
    if isinstance(value, str):
        return value
    return "" if value is None else str(value)[:MAX_CHARS]


def one_line(text: str, limit: int = SUMMARY_MAX) -> str:
    """Plain, single-line text for a summary: no control sequences, at most ``limit`` long."""
    line = " ".join(strip_ansi(text[: limit * 4]).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def plural(count: int, word: str, plural_word: str | None = None) -> str:
    """``"1 line"``, ``"3 lines"``: a count and its noun."""
    return f"{count} {word if count == 1 else plural_word or word + 's'}"


def compact_json(value: Any, limit: int = 20_000) -> str:
    """``value`` as compact JSON (or its ``repr``), at most ``limit`` characters and a note."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str, separators=(",", ":"))
    except Exception:  # too deep, or not JSON at all
        try:
            text = repr(value)
        except Exception:
            text = "(a value that cannot be shown)"
    if len(text) > limit:
        text = text[:limit] + f"… ({len(text) - limit} more characters)"
    return text


def is_str(value: Any) -> bool:
    """Whether ``value`` is a string."""
    return isinstance(value, str)


def is_int(value: Any) -> bool:
    """Whether ``value`` is a whole number (see :func:`as_int`)."""
    return as_int(value) is not None


def is_bool(value: Any) -> bool:
    """Whether ``value`` is a bool."""
    return isinstance(value, bool)


#: What a view shows of the arguments: each key's check of its value's type.
Known = Mapping[str, Callable[[Any], bool]]


def args_rest(args: Any, known: Known) -> bool:
    """Whether ``args`` has anything a view does not show (keys beyond ``known``, bad types)."""
    if not isinstance(args, dict):
        return args is not None
    return any(key not in known or not known[key](value) for key, value in args.items())
