"""Citing the kernel's values in a prompt: ``$`name``` (a dollar, then a backquoted name or
expression) stands for a readable summary of that value, sent with the prompt.

Why this form: it is what ai-jup and Solveit use, and it collides with nothing people already
write in prompts. A bare ``$HOME`` or ``$x^2$`` has no backquote after the dollar; braces
(``{a: 1}``) are not involved; and a backquoted word without a dollar (```df```) stays the
inline code it is. A backslash before the dollar (``\\$`x```) keeps it as written.

No I/O: what a citation stands for comes from a resolver (the notebook's, which reads the
kernel's namespace). A prompt without citations is sent exactly as written.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from atomic_jupyter.errors import CitationError

__all__ = [
    "CITED_HEADING",
    "Citation",
    "Expanded",
    "citation_resolver",
    "expand",
    "find_citations",
    "use_citation_resolver",
]

#: ``$`expression```, not preceded by a backslash; the expression is on one line.
CITATION = re.compile(r"(?<!\\)\$`([^`\n]+)`")
#: The line that starts the cited values in the prompt the agent gets.
CITED_HEADING = "Values cited from the notebook's kernel:"


_resolver: list[Callable[[str], str]] = []


def use_citation_resolver(resolve: Callable[[str], str] | None) -> None:
    """Resolve citations with ``resolve`` from now on (the notebook layer registers the
    kernel's; None: none)."""
    _resolver[:] = [resolve] if resolve is not None else []


def citation_resolver() -> Callable[[str], str] | None:
    """The registered resolver, if any."""
    return _resolver[0] if _resolver else None


@dataclass(frozen=True)
class Citation:
    """One ``$`expression``` in a prompt, at ``start:end``."""

    expression: str
    start: int
    end: int


@dataclass(frozen=True)
class Expanded:
    """A prompt as written and as sent.

    Attributes
    ----------
    written:
        The text as the person wrote it.
    sent:
        What the agent gets: each citation becomes the backquoted expression, and the values
        follow under :data:`CITED_HEADING`, each once. Equal to ``written`` without citations.
    citations:
        The citations, in order.
    """

    written: str
    sent: str
    citations: tuple[Citation, ...]


def find_citations(text: str) -> list[Citation]:
    """Every citation in ``text``, in order."""
    return [
        Citation(match.group(1).strip(), match.start(), match.end())
        for match in CITATION.finditer(text)
        if match.group(1).strip()
    ]


def expand(text: str, resolve: Callable[[str], str] | None) -> Expanded:
    """``text`` with its citations resolved.

    Parameters
    ----------
    resolve:
        Gives an expression's summary, or raises :class:`CitationError` (None: there is no
        kernel to cite from, which is an error when the prompt cites something).

    Raises
    ------
    CitationError
        When a citation cannot be resolved; its message names the citation.
    """
    citations = find_citations(text)
    if not citations:
        return Expanded(text, text, ())
    if resolve is None:
        raise CitationError(
            f"$`{citations[0].expression}` cites a value, and this session has no kernel to "
            "take it from; nothing was sent."
        )
    values: dict[str, str] = {}
    for citation in citations:
        if citation.expression in values:
            continue
        try:
            values[citation.expression] = resolve(citation.expression)
        except CitationError as exc:
            raise CitationError(f"$`{citation.expression}`: {exc}; nothing was sent.") from None
    pieces, at = [], 0
    for citation in citations:
        pieces += [text[at : citation.start], f"`{citation.expression}`"]
        at = citation.end
    pieces.append(text[at:])
    cited = "\n\n".join(f"`{name}`:\n{value}" for name, value in values.items())
    sent = "".join(pieces).rstrip() + f"\n\n---\n{CITED_HEADING}\n\n{cited}\n"
    return Expanded(text, sent, tuple(citations))
