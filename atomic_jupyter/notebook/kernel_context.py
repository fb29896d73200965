"""What the notebook's kernel holds, for two read-only tools the agent can call (described to
the model by :data:`VARIABLES_TOOL` and :data:`CELLS_TOOL`): :func:`notebook_variables`, the
variables a line each, and :func:`notebook_cells`, the cells run last. Pure functions over an
IPython shell that return bounded plain text: no huge value is rendered in full, no strange
object makes them raise, and data frames, series and arrays are duck-typed."""

from __future__ import annotations

import inspect
import re
import reprlib
from itertools import islice
from types import ModuleType
from typing import TYPE_CHECKING, Any

from atomic_jupyter.notebook.kernel_values import (
    SUMMARY_LIMIT,
    _count,
    _cut,
    _type_name,
    install_error_log,
    summarize,
)

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from atomic_jupyter.notebook.kernel_values import ErrorLog

__all__ = ["CELLS_TOOL", "VARIABLES_TOOL", "notebook_cells", "notebook_variables"]

#: The most variables listed, and the most characters of one variable's line.
MAX_VARIABLES, LINE_LIMIT = 100, 160
#: The most cells shown, the most characters of a cell's source and of its output's summary.
MAX_CELLS, SOURCE_LIMIT, OUTPUT_LIMIT = 50, 1500, 600
#: Items of a series or array shown, columns of a data frame named.
PREVIEW_ITEMS, MAX_COLUMNS = 5, 40
#: IPython's own names that do not start with ``_``.
_IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython"})

VARIABLES_TOOL: dict[str, Any] = {
    "name": "notebook_variables",
    "description": (
        "List the variables defined in the person's Jupyter notebook kernel: each one's name, "
        "type, shape or length and a one-line preview of its value (modules, functions, "
        "classes and IPython's own names are left out). Use it to find the data the person "
        "means (a data frame they loaded, a list they built) before writing code that uses "
        "the notebook's data. Read-only: it runs no code in the kernel."
    ),
    "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
}
CELLS_TOOL: dict[str, Any] = {
    "name": "notebook_cells",
    "description": (
        "Show the cells the person ran last in their Jupyter notebook kernel, oldest first: "
        "each cell's source (In [n]), a short summary of its output (Out[n]) and, if it "
        "failed, its error (Error[n]). Use it to see what the person has been doing, how a "
        "name was defined, or what just failed. Read-only: it runs no code in the kernel."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "last": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_CELLS,
                "description": "How many of the most recent cells to show (default 10).",
            }
        },
        "additionalProperties": False,
    },
}


def _failed(exc: BaseException) -> str:
    try:
        return f"<repr failed: {type(exc).__name__}: {exc}>"
    except Exception:  # its own str() fails
        return f"<repr failed: {type(exc).__name__}>"


class _OneLine(reprlib.Repr):
    """:mod:`reprlib` sized for one line, quick on a huge dict or set, bounding big subclasses
    of the builtin containers too, and showing a failing ``repr`` as ``<repr failed: ...>``."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel = 2
        self.maxtuple = self.maxlist = self.maxarray = self.maxset = 20
        self.maxfrozenset = self.maxdeque = self.maxdict = 20
        self.maxstring, self.maxother = 120, 150

    def repr1(self, x: Any, level: int) -> str:
        for base in (dict, list, tuple, set, frozenset):
            if isinstance(x, base) and type(x) is not base and len(x) > 1000:
                return str(getattr(self, f"repr_{base.__name__}")(x, level))
        return super().repr1(x, level)

    # reprlib sorts a dict or set before taking its first items: slice it first
    def repr_dict(self, x: Any, level: int) -> str:
        return super().repr_dict(dict(islice(x.items(), self.maxdict + 1)), level)

    def repr_set(self, x: Any, level: int) -> str:
        return super().repr_set(set(islice(x, self.maxset + 1)), level)

    def repr_frozenset(self, x: Any, level: int) -> str:
        return super().repr_frozenset(frozenset(islice(x, self.maxset + 1)), level)

    def repr_instance(self, x: Any, level: int) -> str:
        try:
            text = repr(x)
        except Exception as exc:
            return _failed(exc)
        return text if len(text) <= self.maxother else text[: self.maxother - 3] + "..."


_LINE = _OneLine()


def _clip(text: str, limit: int = LINE_LIMIT) -> str:
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def _flat(text: str) -> str:
    """``text`` (its start) on one line."""
    return re.sub(r"\s*\n\s*", " ", text[: LINE_LIMIT * 4]).strip()


def _one_line(value: object) -> str:
    try:
        return _flat(_LINE.repr(value))
    except Exception as exc:  # a failing __len__ of a container subclass, a huge int
        return _failed(exc)


def _is_frame(value: object) -> bool:
    return all(hasattr(value, a) for a in ("shape", "dtypes", "columns"))


def _facts(value: Any) -> list[str]:
    """Its shape and dtype, or its length."""
    if _is_frame(value):
        return [f"shape {tuple(value.shape)}"]
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        shape = tuple(value.shape)  # () for a numpy scalar
        return [f"shape {shape}"] * bool(shape) + [f"dtype {value.dtype}"]
    return [f"len {len(value):,}"] if hasattr(type(value), "__len__") else []


def _summary(value: Any) -> str:
    """A data frame's columns, a series' or array's first items, else the bounded repr."""
    if _is_frame(value):
        dtypes = value.dtypes
        pairs = (
            dtypes.items() if hasattr(dtypes, "items") else zip(value.columns, dtypes, strict=False)
        )
        return "columns: " + ", ".join(f"{c} ({t})" for c, t in islice(pairs, MAX_COLUMNS))
    shape = tuple(value.shape) if hasattr(value, "shape") and hasattr(value, "dtype") else ()
    if not shape:
        return _one_line(value)
    head = value.head(PREVIEW_ITEMS) if hasattr(value, "head") else value[:PREVIEW_ITEMS]
    items = getattr(head, "tolist", None) or getattr(head, "to_list", None)
    if len(shape) > 1 or not callable(items):  # numpy's own repr is bounded
        return _flat(repr(head))
    shown = _LINE.repr(list(items()))
    return f"{shown[:-1]}, …]" if shape[0] > PREVIEW_ITEMS and shown != "[]" else shown


def _variable_line(name: str, value: object) -> str:
    """``name: type, shape/len — summary``, in at most :data:`LINE_LIMIT` characters."""
    try:
        head = [f"{name}: {_type_name(value)}"]
    except Exception:
        head = [f"{name}: {type(value).__qualname__}"]
    try:
        head += _facts(value)
    except Exception:  # a property that raises, a failing __len__: leave the facts out
        pass
    try:
        summary = _summary(value)
    except Exception:  # a duck type that is not one after all
        summary = _one_line(value)
    return _clip(f"{', '.join(head)} — {summary}")


def _listed(name: str, value: object, hidden: Any) -> bool:
    """Whether a user namespace entry is the person's variable."""
    if name.startswith("_") or name in _IPYTHON_NAMES:
        return False
    try:
        if name in hidden and hidden[name] is value:
            return False  # as %who: hidden unless the person reassigned it
        if isinstance(value, (ModuleType, type)) or inspect.isroutine(value):
            return False
        return not str(type(value).__module__).startswith("atomic_jupyter")
    except Exception:
        return True


def notebook_variables(shell: InteractiveShell, limit: int = SUMMARY_LIMIT) -> str:
    """The variables of the notebook's kernel, a line each, in the order first defined.

    Parameters
    ----------
    shell:
        The IPython shell whose ``user_ns`` is listed. Left out: modules, functions, classes,
        names starting with ``_``, IPython's own (``In``, ``Out``, ``exit``, ``quit``,
        ``get_ipython``, and as ``%who`` does, names in ``user_ns_hidden`` still holding their
        hidden value) and objects of atomic_jupyter's classes.
    limit:
        The most characters of the result.

    Returns
    -------
    str
        A line counting them, then ``name: type, shape (...), dtype ... — preview`` or
        ``name: type, len N — preview`` (at most :data:`MAX_VARIABLES` lines of at most
        :data:`LINE_LIMIT` characters), then a line naming any left out; or a sentence saying
        there are none. A failing ``repr`` shows as ``<repr failed: ...>``.
    """
    hidden = getattr(shell, "user_ns_hidden", {})
    found = [(n, v) for n, v in list(shell.user_ns.items()) if _listed(n, v, hidden)]
    if not found:
        return (
            "No variables are defined in the notebook kernel (modules, functions, classes "
            "and IPython's own names are not listed)."
        )
    header = f"{_count(len(found), 'variable')} in the notebook kernel, in the order defined:"
    lines = [_variable_line(n, v) for n, v in found[:MAX_VARIABLES]]
    while True:
        rest = [n for n, _ in found[len(lines) :]]
        note = [_clip(f"… {len(rest):,} more not listed: {', '.join(rest[:50])}")] if rest else []
        text = "\n".join([header, *lines, *note])
        if len(text) <= limit or not lines:
            return _clip(text, limit)
        lines.pop()


def _cell_text(n: int, source: str, outputs: Any, errors: ErrorLog) -> str:
    """Cell ``n``: ``In [n]:`` and its source, then ``Out[n]:`` and ``Error[n]:`` if any."""
    source, cut = _cut(source.rstrip("\n"), SOURCE_LIMIT)
    lines = [f"In [{n}]:", source]
    lines += [f"… ({cut:,} more characters of the source left out)"] if cut else []
    try:
        if n in outputs:
            summary = summarize(outputs[n], OUTPUT_LIMIT)
            lines.append(f"Out[{n}]: {summary}")
    except Exception:  # an Out the person replaced by something else
        pass
    failed = errors.get(n)
    if failed is not None:
        last = next((t for t in reversed(failed.traceback.splitlines()) if t.strip()), "")
        lines.append(_clip(f"Error[{n}]: {last.strip()}"))
    return "\n".join(lines)


def notebook_cells(shell: InteractiveShell, last: int = 10, limit: int = SUMMARY_LIMIT) -> str:
    """The cells the notebook's kernel ran last, oldest first.

    Parameters
    ----------
    shell:
        The IPython shell whose history is read: sources from
        ``history_manager.input_hist_raw`` (else ``user_ns["In"]``), outputs from
        ``history_manager.output_hist`` (else ``user_ns["Out"]``), errors from the
        :class:`~atomic_jupyter.notebook.kernel_values.ErrorLog`.
    last:
        How many of the most recent cells to show, clamped to 1 to :data:`MAX_CELLS`.
    limit:
        The most characters of the result; the oldest cells are dropped first to fit.

    Returns
    -------
    str
        For each cell, ``In [n]:`` and its source (at most :data:`SOURCE_LIMIT` characters),
        ``Out[n]: `` and its output's summary if it has one, ``Error[n]: `` and its error's
        last line if it failed; cells apart by a blank line. A first line says how many
        earlier cells are not shown; a sentence says when no cell has run.
    """
    last = max(1, min(int(last), MAX_CELLS))
    history = shell.history_manager
    sources = list(history.input_hist_raw if history else shell.user_ns.get("In", []))
    outputs = history.output_hist if history else shell.user_ns.get("Out", {})
    if len(sources) < 2:  # entry 0 is always empty
        return "No cell has run in the notebook kernel yet."
    first = max(1, len(sources) - last)
    errors = install_error_log(shell)
    cells = [_cell_text(n, sources[n], outputs, errors) for n in range(first, len(sources))]
    while True:
        earlier = len(sources) - 1 - len(cells)
        note = [f"{_count(earlier, 'earlier cell')} not shown."] if earlier else []
        text = "\n\n".join([*note, *cells])
        if len(text) <= limit or len(cells) == 1:
            return _clip(text, limit)
        cells.pop(0)
