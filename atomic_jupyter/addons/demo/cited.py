"""What the offline demo model reads of a prompt that cites kernel values, and its answer.

The notebook sends ``$`name``` as the backquoted name, and the values under
:data:`~atomic_jupyter.session.citations.CITED_HEADING`, each a summary that starts with its
type (``list of 6 items:`` and the items, ``float: 12.5``, ``pandas.DataFrame: 3 rows × 2
columns``, ``Cell [7] failed.`` for ``Err``). :func:`cited_values` finds them again;
:func:`cited_answer` names them, describes each in words with a one-line preview of its value,
and says what the demo can tell from a summary (it computes nothing); for
``%atomic_agent fix`` it names the failed cell and its exception. Pure text, no I/O.
"""

from __future__ import annotations

import re

from atomic_jupyter.session.citations import CITED_HEADING

__all__ = [
    "CITED_TAIL",
    "FIX_ADVICE",
    "MAX_CITED",
    "cited_answer",
    "cited_values",
    "first_line",
    "inline",
]


#: How many cited values the answer names and describes; the rest are counted.
MAX_CITED = 6

#: The sentence after each cited value, by its type's name (the summary's first word, lower
#: case, without a module: ``pandas.DataFrame`` -> ``dataframe``).
_HINTS: tuple[tuple[frozenset[str], str], ...] = (
    (
        frozenset({"dataframe", "series"}),
        "I see its shape and the preview in the summary, not the live object, so I computed "
        "nothing from it; ask for code (`.describe()`, say) that runs in your kernel.",
    ),
    (
        frozenset({"ndarray", "array", "tensor"}),
        "I see its shape and type in the summary, not the live array, so I computed nothing "
        "from it.",
    ),
    (
        frozenset({"list", "tuple", "set", "frozenset", "deque", "range"}),
        "I see the items shown in the summary, not the live object, so I computed nothing from "
        "them (no sum, no mean).",
    ),
    (
        frozenset({"dict", "mapping", "ordereddict", "defaultdict", "counter"}),
        "I see the keys shown in the summary, not the live object, so I looked up nothing "
        "beyond them.",
    ),
    (
        frozenset({"str", "bytes", "text"}),
        "I see the text shown in the summary, not the live string, and I did not analyse it.",
    ),
    (
        frozenset({"int", "float", "complex", "bool", "decimal", "fraction", "none", "nonetype"}),
        "That is the value as the summary shows it; I used it in no computation.",
    ),
)
_HINT = "I see its summary, not the live object, so I did not analyse it."
_FAILED_HINT = (
    "That is a failed cell with its traceback; ask me to explain the last error "
    "(`%atomic_agent fix`) to hear about it."
)

CITED_TAIL = (
    "I am the offline demo model: I answer from these summaries only, with scripted "
    "sentences. A real model gets the same summaries and answers your question from them."
)

FIX_ADVICE = (
    "To fix it, look at the line of the cell that the traceback points to, correct the value "
    "or the call that raised the error, and run the cell again."
)

#: The line that starts a cited value, as :func:`~atomic_jupyter.session.citations.expand`
#: writes it: the backquoted expression and a colon, alone on the line.
_CITED_NAME = re.compile(r"`([^`\n]+)`:")
#: The first line of a failed cell's summary (``%atomic_agent fix`` cites ``Err``).
_FAILED = re.compile(r"Cell \[([^\]\n]*)\] failed\.")
#: A summary's first line: its type, a size ("of 6 items", ", 12 characters"), a colon, the rest.
_TYPE_LINE = re.compile(r"([A-Za-z][\w.]*)((?: of|,) [\d,]+ [a-z]+)?(:)?\s*(.*)")
_LEFT_OUT = re.compile(r"… \(.* left out\)")  # the summary's closing line
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_FIX_PROMPT = "explain the last error"


def cited_values(prompt: str) -> tuple[str, list[tuple[str, str]]]:
    """The question and the cited ``(expression, summary)`` pairs of a prompt with citations.

    A value starts at a line ```expression`:`` after a blank line (or the heading) whose
    expression the question shows as ```expression``; so a summary holding such a line for
    something that was not cited stays part of its summary. Each expression counts once.
    """
    at = prompt.find(CITED_HEADING)
    if at < 0:
        return prompt, []
    question = prompt[:at].rstrip().removesuffix("---").rstrip()
    values: list[tuple[str, list[str]]] = []
    previous = ""
    for line in prompt[at + len(CITED_HEADING) :].splitlines():
        match = _CITED_NAME.fullmatch(line.rstrip())
        name = match.group(1) if match else ""
        if (
            name
            and not previous.strip()
            and f"`{name}`" in question
            and all(name != seen for seen, _ in values)
        ):
            values.append((name, []))
        elif values:
            values[-1][1].append(line)
        previous = line
    return question, [(name, "\n".join(lines).strip("\n")) for name, lines in values]


def cited_answer(prompt: str) -> str:
    """The demo model's Markdown answer to a prompt that cites kernel values."""
    question, values = cited_values(prompt)
    if _FIX_PROMPT in question.lower():
        failed = next((summary for _, summary in values if _FAILED.match(summary.strip())), None)
        if failed is not None:
            return _fix_answer(failed)
    if not values:
        return "Your prompt has a section of cited values, but I could read no value in it."
    shown = values[:MAX_CITED]
    names = [inline(name, 40) for name, _ in shown]
    if len(values) > MAX_CITED:
        names.append(f"{len(values) - MAX_CITED} more")
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    count = f"{len(values)} value{'' if len(values) == 1 else 's'}"
    lines = [f"I got {count} from your kernel: {listed}.", ""]
    for name, summary in shown:
        said = _described(summary)
        lines.append(f"- {inline(name, 40)}: {said}. {_hint(first_line(summary))}")
    lines += ["", CITED_TAIL]
    return "\n".join(lines) + "\n"


def _fix_answer(summary: str) -> str:
    number = _FAILED.match(summary.strip())
    n = number.group(1).strip() if number else ""
    cell = f"The cell [{n}]" if n.isdigit() else "The last cell"
    error = _exception_line(summary)
    if not error:
        return f"{cell} failed, and I found no error at the end of its traceback. {FIX_ADVICE}\n"
    return f"{cell} failed with {inline(error, 200)}. {FIX_ADVICE}\n"


def _exception_line(summary: str) -> str:
    """The last non-empty line of a failed cell's traceback: the exception and its message.

    Skips the summary's first line, the cell's source (its ```python block) and fence lines.
    """
    inside, fence = False, ""  # in a fenced block, and its info string ("python", "text", "")
    last = ""
    for raw in summary.splitlines()[1:]:
        line = _ANSI.sub("", raw).strip()
        if line.startswith("```"):
            if inside:
                inside = False
            else:
                inside, fence = True, line[3:].strip().lower()
            continue
        if line and not (inside and fence == "python"):
            last = line
    return last


def _described(summary: str) -> str:
    """A cited value in words from its summary: its type and size, and a one-line preview of its
    value when the summary has one (``a list of 6 items: `[2, 3, 5, 7, 11, 13]```)."""
    lines = [line.strip() for line in summary.splitlines() if line.strip()]
    if not lines:
        return "an empty summary"
    failed = _FAILED.match(lines[0])
    if failed:
        number = failed.group(1).strip()
        return f"cell [{number}], which failed" if number.isdigit() else "a cell that failed"
    match = _TYPE_LINE.fullmatch(lines[0])
    if match is None:
        return inline(lines[0], 80)
    kind, size, colon, rest = match.groups()
    if kind == "NoneType":
        return "`None`"
    if colon and not rest:  # the value follows on the next lines
        rest = " ".join(line for line in lines[1:] if not _LEFT_OUT.fullmatch(line))
    said = f"{'an' if kind[0] in 'aeiouAEIOU' else 'a'} {kind}{size or ''}{colon or ''}"
    return f"{said} {inline(rest, 80)}" if rest else said.rstrip(":")


def first_line(summary: str) -> str:
    """The first non-empty line of ``summary``, stripped."""
    return next((line.strip() for line in summary.splitlines() if line.strip()), "")


def _hint(first: str) -> str:
    if _FAILED.match(first):
        return _FAILED_HINT
    head = re.split(r"[\s:(\[<,]", first, maxsplit=1)[0].rsplit(".", 1)[-1].lower()
    return next((hint for kinds, hint in _HINTS if head in kinds), _HINT)


def inline(text: str, limit: int) -> str:
    """``text`` as inline code on one line, its backquotes made quotes, cut at ``limit``."""
    text = " ".join(text.replace("`", "'").split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return f"`{text}`"
