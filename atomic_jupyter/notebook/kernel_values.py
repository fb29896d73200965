"""What a citation (``$`expression```, :mod:`atomic_jupyter.session.citations`) stands for
in an IPython kernel: :func:`cite` summarizes a name's or expression's value (:func:`summarize`),
gives cell ``n``'s source (``In[n]``) or output (``Out[n]``), or the last failed cell (``Err``,
``Err[n]``) as recorded by the :class:`ErrorLog` that :func:`install_error_log` hooks in.

:func:`summarize` never renders a huge value in full (reprlib, slices, ``head()``), and
duck-types data frames, series and arrays (pandas, polars, numpy) without importing them.
Containers, their subclasses, named tuples and dataclass instances are shown by a bounded repr
(at most :data:`MAX_ITEMS` items and 300 characters of a string at each of 4 levels), so their
size does not matter; any other object's own ``repr`` is called once and its result cut.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import reprlib
import sys
import traceback
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from itertools import islice
from types import ModuleType, TracebackType
from typing import TYPE_CHECKING, Any

from atomic_jupyter.errors import CitationError
from atomic_jupyter.ui.ansi import strip_ansi

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

__all__ = ["SUMMARY_LIMIT", "ErrorLog", "FailedCell", "cite", "install_error_log", "summarize"]

#: The most characters a summary has, besides its closing line saying what was left out.
SUMMARY_LIMIT = 4000
#: Rows shown of a data frame or series, rows (1-d: items) of an array, columns listed.
HEAD_ROWS, ARRAY_ROWS, ARRAY_ITEMS, MAX_COLUMNS = 5, 10, 20, 50
#: Items shown of a list, dict, set or tuple (at each level).
MAX_ITEMS = 100
#: Failed cells an :class:`ErrorLog` keeps, and the most characters it stores of one's texts.
KEEP_FAILED, STORED_CHARS = 100, 20 * SUMMARY_LIMIT
_CELL_REF = re.compile(r"(In|Out|Err)(?:\s*\[\s*(\d+)\s*\])?")
_NO_FAILURE = "no cell has failed since atomic_jupyter was loaded"


def _type_name(value: object) -> str:
    """``int``, ``pandas.DataFrame`` (not ``pandas.core.frame``), ``Foo`` for ``__main__.Foo``."""
    cls = type(value)
    module = getattr(cls, "__module__", None) or ""
    if module in ("builtins", "__main__"):
        return cls.__qualname__
    top = sys.modules.get(module.partition(".")[0])
    if isinstance(top, ModuleType) and vars(top).get(cls.__name__) is cls:
        return f"{top.__name__}.{cls.__name__}"
    return f"{module}.{cls.__qualname__}"


def _cut(text: str, limit: int) -> tuple[str, int]:
    """``text`` within ``limit`` characters (at a line's end when one is near), and how many
    characters were left out."""
    if len(text) <= limit:
        return text, 0
    kept = text[:limit]
    newline = kept.rfind("\n")
    if newline > limit * 4 // 5:
        kept = kept[:newline]
    return kept, len(text) - len(kept)


def _finish(text: str, limit: int, left_out: list[str], hidden: int = 0) -> str:
    """``text`` cut to ``limit``, with one closing line saying what was left out (``hidden``:
    characters of the value already left out of ``text``)."""
    text, cut = _cut(text, limit)
    if cut + hidden:
        left_out.insert(0, f"{cut + hidden:,} more characters")
    return text + (f"\n… ({', '.join(left_out)} left out)" if left_out else "")


def _count(count: int, unit: str) -> str:
    return f"{count:,} {unit}" + "s" * (count != 1)


def _safe_repr(value: object) -> str:
    try:
        return repr(value)
    except Exception as exc:
        return f"<repr failed: {type(exc).__name__}: {exc}>"


def _table(value: Any) -> str:
    """A frame's or series' rows as a table (pandas' ``to_string``, else ``str``)."""
    try:
        return str(value.to_string(max_cols=20, max_colwidth=60))
    except TypeError:  # a duck-typed to_string without pandas' keywords
        return str(value.to_string())
    except AttributeError:  # polars: str() is its own bounded table
        return str(value)


def _field_names(value: object) -> list[str] | None:
    """The fields a dataclass instance or a named tuple shows in its ``repr`` (None: neither)."""
    if isinstance(value, tuple) and isinstance(getattr(type(value), "_fields", None), tuple):
        return [str(name) for name in type(value)._fields]  # type: ignore[attr-defined]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [field.name for field in dataclasses.fields(value) if field.repr]
    return None


class _BigRepr(reprlib.Repr):
    """:mod:`reprlib` with room to show more, which also bounds what a plain ``repr`` would
    render in full: subclasses of the builtin containers (``defaultdict``, ``Counter``), named
    tuples and dataclass instances (field by field, each bounded), at any depth."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel = 4
        self.maxtuple = self.maxlist = self.maxarray = self.maxset = MAX_ITEMS
        self.maxfrozenset = self.maxdeque = self.maxdict = MAX_ITEMS
        self.maxstring, self.maxother = 300, 500
        self.maxlong = 100

    def repr1(self, x: Any, level: int) -> str:
        names = _field_names(x)
        if names is not None:
            return self._fields(x, names, level)
        for base in (dict, list, tuple, set, frozenset):
            if isinstance(x, base) and type(x) is not base:
                return str(getattr(self, f"repr_{base.__name__}")(x, level))
        return super().repr1(x, level)

    def _fields(self, x: Any, names: list[str], level: int) -> str:
        title = type(x).__qualname__
        if level <= 0:
            return f"{title}(...)"
        shown = [f"{name}={self.repr1(getattr(x, name), level - 1)}" for name in names[:MAX_ITEMS]]
        return f"{title}({', '.join(shown)}{', ...' if len(names) > MAX_ITEMS else ''})"


_REPR = _BigRepr()


def _first_paragraph(value: object) -> str:
    doc = getattr(value, "__doc__", None)
    return inspect.cleandoc(doc).split("\n\n")[0] if isinstance(doc, str) else ""


def _frame(value: Any, name: str) -> tuple[str, list[str]]:
    rows, columns = (tuple(value.shape) + (0, 0))[:2]
    dtypes = value.dtypes
    pairs = dtypes.items() if hasattr(dtypes, "items") else zip(value.columns, dtypes, strict=False)
    listed = [(str(c), str(t)) for c, t in islice(pairs, MAX_COLUMNS)]
    width = max((len(c) for c, _ in listed), default=0)
    lines = [f"{name}: {rows:,} rows × {columns:,} columns", "columns and dtypes:"]
    lines += [f"  {c.ljust(width)}  {t}" for c, t in listed]
    lines += [f"first {min(rows, HEAD_ROWS)} rows:", _table(value.head(HEAD_ROWS))]
    left = [f"{columns - len(listed):,} more columns"] if columns > len(listed) else []
    left += [f"{rows - HEAD_ROWS:,} more rows"] if rows > HEAD_ROWS else []
    return "\n".join(lines), left


def _series(value: Any, name: str) -> tuple[str, list[str]]:
    length = (tuple(value.shape) + (0,))[0]
    title = getattr(value, "name", None)
    named = f" {title!r}" if title is not None else ""
    text = f"{name}{named}: {length:,} values, dtype {value.dtype}\n"
    text += f"first {min(length, HEAD_ROWS)} values:\n{_table(value.head(HEAD_ROWS))}"
    return text, [f"{length - HEAD_ROWS:,} more values"] if length > HEAD_ROWS else []


def _array(value: Any, name: str) -> tuple[str, list[str]]:
    shape = tuple(value.shape)
    if not shape:  # a numpy scalar, a 0-d array
        return f"{name}: {_safe_repr(value)}", []
    text = f"{name}: shape {shape}, dtype {value.dtype}\n"
    count = ARRAY_ITEMS if len(shape) == 1 else ARRAY_ROWS
    if shape[0] <= count:
        return text + _safe_repr(value), []
    unit = "items" if len(shape) == 1 else "rows"
    text += f"first {count} {unit}:\n{_safe_repr(value[:count])}"
    return text, [f"{shape[0] - count:,} more {unit}"]


def _describe(value: Any) -> tuple[str, list[str]]:
    """The summary of anything but a string or bytes before cutting, and what it leaves out
    besides characters."""
    name = _type_name(value)
    if isinstance(value, ModuleType):
        where = getattr(value, "__file__", None) or "built in"
        return f"{name} {value.__name__} ({where})\n{_first_paragraph(value)}".rstrip(), []
    if isinstance(value, type) or inspect.isroutine(value):
        try:
            signature = str(inspect.signature(value))
        except (TypeError, ValueError):
            signature = "(...)"
        title = getattr(value, "__qualname__", None) or getattr(value, "__name__", "?")
        return f"{name} {title}{signature}\n{_first_paragraph(value)}".rstrip(), []
    if all(hasattr(value, a) for a in ("shape", "dtypes", "head", "columns")):
        return _frame(value, name)
    if all(hasattr(value, a) for a in ("shape", "dtype", "head")):
        return _series(value, name)
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return _array(value, name)
    if _field_names(value) is not None:  # its repr would render every field in full
        return f"{name}: {_REPR.repr(value)}", []
    if isinstance(value, (dict, list, tuple, set, frozenset)):
        shown = _REPR.repr(value)
        left = [f"{len(value) - MAX_ITEMS:,} more items"] if len(value) > MAX_ITEMS else []
        return f"{name} of {_count(len(value), 'item')}:\n{shown}", left
    return f"{name}: {_safe_repr(value)}", []


def summarize(value: object, limit: int = SUMMARY_LIMIT) -> str:
    """A readable summary of a value, for a prompt.

    Parameters
    ----------
    value:
        Anything. Containers (subclasses too), named tuples, dataclass instances, strings,
        bytes, data frames, series and arrays are never rendered in full; other objects by
        their own ``repr``.
    limit:
        The most characters of the summary, which then gets one closing line saying what was
        left out (characters, rows, columns, items).

    Returns
    -------
    str
        Plain text (a tool's card and a prompt show it as it is), starting with the type name:
        ``float: 12.5``, ``str, 22 characters:`` and the text, ``list of 3 items:`` and the
        items, ``pandas.DataFrame: 3 rows × 2 columns`` and its columns and first rows,
        ``module re (...)``. Never raises: a failing ``repr`` shows as ``<repr failed: ...>``.
    """
    limit = max(limit, 1)
    name = _type_name(value)
    if isinstance(value, str):
        shown = value[:limit]
        text = f"{name}, {_count(len(value), 'character')}:\n{shown}"
        return _finish(text, limit, [], hidden=len(value) - len(shown))
    if isinstance(value, (bytes, bytearray)):
        header, count = f"{name}, {_count(len(value), 'byte')}:\n", limit
        while len(shown := header + repr(bytes(value[:count]))) > limit and count:
            count = min(count - 1, count * limit // len(shown))
        left = [f"{len(value) - count:,} more bytes"] if count < len(value) else []
        return _finish(shown, limit, left)
    try:
        text, left_out = _describe(value)
    except Exception:  # a duck type that is not one after all, a property that raises
        text, left_out = f"{name}: {_safe_repr(value)}", []
    return _finish(text, limit, left_out)


def _fenced(text: str, language: str = "") -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}{language}\n{text}\n{fence}"


@dataclass(frozen=True)
class FailedCell:
    """A cell that raised: its execution count, its source and its traceback (plain text,
    without the frames of IPython's own machinery)."""

    count: int
    source: str
    traceback: str

    def text(self, limit: int = SUMMARY_LIMIT) -> str:
        """The cell's number, source and traceback, in about ``limit`` characters.

        When cut, the source keeps its start and the traceback its end (the error); the
        traceback gets at least half the room.
        """
        room = max(limit - 100, 200)  # what the headings and fences leave
        source, trace = self.source.rstrip("\n"), self.traceback.rstrip("\n")
        keep = max(room - len(source), room // 2)
        if len(trace) > keep:
            keep -= 50  # the line saying what was cut
            trace = f"… ({len(trace) - keep:,} earlier characters left out)\n{trace[-keep:]}"
        source, cut = _cut(source, max(room - len(trace), 0))
        if cut:
            source += f"\n… ({cut:,} more characters left out)"
        return (
            f"Cell [{self.count}] failed.\nIts source:\n{_fenced(source, 'python')}\n"
            f"Its traceback:\n{_fenced(trace)}"
        )


def _traceback_text(error: BaseException) -> str:
    """``error``'s traceback as plain text, without the leading frames of IPython itself."""
    tb: TracebackType | None = error.__traceback__
    while tb is not None and str(tb.tb_frame.f_globals.get("__name__", "")).startswith("IPython."):
        tb = tb.tb_next
    text = strip_ansi("".join(traceback.format_exception(type(error), error, tb)))
    return text[-STORED_CHARS:]


class ErrorLog:
    """The cells of one shell that failed since it was installed (the last
    :data:`KEEP_FAILED`), recorded by its ``post_run_cell`` hook, :meth:`record`."""

    def __init__(self, shell: InteractiveShell) -> None:
        self._shell = weakref.ref(shell)
        self._failed: OrderedDict[int, FailedCell] = OrderedDict()

    def record(self, result: Any) -> None:
        """Record the cell if it failed (a ``post_run_cell`` callback; never raises)."""
        try:
            error, count = result.error_before_exec or result.error_in_exec, result.execution_count
            if error is None or count is None or not result.info.store_history:
                return  # succeeded, or not the user's cell (run without history)
            raw = result.info.raw_cell or ""
            self._failed[count] = FailedCell(count, raw[:STORED_CHARS], _traceback_text(error))
            self._failed.move_to_end(count)
            while len(self._failed) > KEEP_FAILED:
                self._failed.popitem(last=False)
        except Exception:  # a failing hook would print an error after every cell
            pass

    def last(self) -> FailedCell | None:
        """The cell that failed last, or None."""
        return next(reversed(self._failed.values()), None)

    def get(self, count: int) -> FailedCell | None:
        """Cell ``count`` if it failed (and is still kept), or None."""
        return self._failed.get(count)

    def uninstall(self) -> None:
        """Stop recording (for ``unload_ipython_extension``); what was recorded stays."""
        shell = self._shell()
        if shell is not None:
            if self.record in shell.events.callbacks["post_run_cell"]:
                shell.events.unregister("post_run_cell", self.record)
            if _LOGS.get(shell) is self:
                del _LOGS[shell]


_LOGS: weakref.WeakKeyDictionary[Any, ErrorLog] = weakref.WeakKeyDictionary()


def install_error_log(shell: InteractiveShell) -> ErrorLog:
    """The shell's :class:`ErrorLog`, created and hooked in on the first call (idempotent)."""
    log = _LOGS.get(shell)
    if log is None:
        log = _LOGS[shell] = ErrorLog(shell)
        shell.events.register("post_run_cell", log.record)
    return log


def _cell_ref(kind: str, n: int | None, shell: InteractiveShell, limit: int) -> str:
    """``In[n]``, ``Out[n]``, ``Err[n]`` or (``n`` None) ``Err``."""
    if kind == "Err":
        log = install_error_log(shell)
        failed = log.last() if n is None else log.get(n)
        if failed is None:
            raise CitationError(_NO_FAILURE if log.last() is None else f"cell [{n}] has not failed")
        return failed.text(limit)
    history = shell.history_manager
    sources = list(history.input_hist_raw if history else shell.user_ns.get("In", []))
    if n is None or not 0 < n < len(sources):
        raise CitationError(f"no cell [{n}] has run in this kernel")
    if kind == "In":
        source, cut = _cut(sources[n].rstrip("\n"), limit)
        return _fenced(source, "python") + (f"\n… ({cut:,} more characters left out)" * bool(cut))
    outputs = shell.user_ns.get("Out", history.output_hist if history else {})
    if n not in outputs:
        raise CitationError(f"cell [{n}] has no output")
    return summarize(outputs[n], limit)


def cite(expression: str, shell: InteractiveShell | None = None, limit: int = SUMMARY_LIMIT) -> str:
    """What ``$`expression``` stands for in the kernel: a resolver for
    :func:`atomic_jupyter.session.citations.expand`.

    Parameters
    ----------
    expression:
        A name or Python expression, evaluated in the user's namespace (its value summarized by
        :func:`summarize`); ``In[n]`` (cell ``n``'s source), ``Out[n]`` (its output), ``Err``
        (the last failed cell, see :class:`ErrorLog`) or ``Err[n]`` (unless the user defined a
        name ``Err``).
    shell:
        The shell; by default the running one.
    limit:
        About the most characters of the result (see :func:`summarize`).

    Raises
    ------
    CitationError
        No kernel, an unknown name, an expression that fails or is not an expression, no such
        cell or output, or no failed cell; the message is the short reason.
    """
    if shell is None:
        from IPython import get_ipython

        shell = get_ipython()
        if shell is None:
            raise CitationError("no IPython kernel is running")
    expression = expression.strip()
    ref = _CELL_REF.fullmatch(expression)
    if ref and (ref[2] or ref[1] == "Err") and not (ref[1] == "Err" and "Err" in shell.user_ns):
        return _cell_ref(ref[1], int(ref[2]) if ref[2] else None, shell, limit)
    try:
        code = compile(expression, "<citation>", "eval", dont_inherit=True)
    except SyntaxError as exc:
        raise CitationError(f"not a Python expression (SyntaxError: {exc.msg})") from None
    try:
        value = eval(code, shell.user_global_ns, shell.user_ns)
    except NameError as exc:
        if exc.name in code.co_names:  # not a name missing in a function the expression called
            raise CitationError(f"name {exc.name!r} is not defined in the kernel") from None
        raise CitationError(f"NameError: {exc}") from None
    except Exception as exc:
        raise CitationError(f"{type(exc).__name__}: {exc}") from None
    return summarize(value, limit)
