"""Citing kernel values (``$`expr```): summaries of values, cells' sources and outputs, and
failed cells, resolved against a real IPython shell that runs real cells."""

from __future__ import annotations

import collections
import dataclasses
import re
import tracemalloc
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import pytest
from IPython.core.interactiveshell import InteractiveShell

from atomic_jupyter.errors import CitationError
from atomic_jupyter.notebook.kernel_values import (
    SUMMARY_LIMIT,
    FailedCell,
    cite,
    install_error_log,
    summarize,
)
from atomic_jupyter.session.citations import expand

CLOSING = re.compile(r"\n… \((.+) left out\)\Z")


def run(shell: InteractiveShell, *cells: str) -> int:
    """Run cells as the kernel does; the last one's execution count."""
    count = 0
    for source in cells:
        result = shell.run_cell(source, store_history=True)
        count = result.execution_count
    return count


def body_and_closing(summary: str) -> tuple[str, str | None]:
    match = CLOSING.search(summary)
    return (summary[: match.start()], match[1]) if match else (summary, None)


# --- names and expressions ---------------------------------------------------------------


def test_a_name_stands_for_its_type_and_value(shell: InteractiveShell) -> None:
    run(shell, "xs = [1, 2, 3]")
    assert cite("xs", shell) == "list of 3 items:\n[1, 2, 3]"
    assert cite(" xs ", shell) == cite("xs", shell)


def test_an_expression_is_evaluated_in_the_user_namespace(shell: InteractiveShell) -> None:
    run(shell, "import pandas as pd", "df = pd.DataFrame({'a': [1, 2, 6]})", "x = 'hello'")
    assert cite('float(df["a"].mean())', shell) == "float: 3.0"
    assert cite('df["a"].mean()', shell).startswith("numpy.float64: ")
    assert cite("x[:3]", shell) == "str, 3 characters:\nhel"
    assert cite("[c * 2 for c in x[:2]]", shell) == "list of 2 items:\n['hh', 'ee']"


def test_an_unknown_name_is_not_defined_in_the_kernel(shell: InteractiveShell) -> None:
    run(shell, "df = 1")
    with pytest.raises(CitationError) as info:
        cite("dff", shell)
    assert str(info.value) == "name 'dff' is not defined in the kernel"
    with pytest.raises(CitationError, match=r"^name 'nope' is not defined in the kernel$"):
        cite("df + nope", shell)


def test_a_failing_expression_gives_its_exception(shell: InteractiveShell) -> None:
    run(shell, "d = {'a': 1}", "def f():\n    return missing_inside")
    with pytest.raises(CitationError, match=r"^ZeroDivisionError: division by zero$"):
        cite("1 / 0", shell)
    with pytest.raises(CitationError, match=r"^KeyError: 'b'$"):
        cite("d['b']", shell)
    # a name missing inside a function the expression called is not the citation's fault
    with pytest.raises(CitationError, match=r"^NameError: name 'missing_inside' is not defined"):
        cite("f()", shell)


@pytest.mark.parametrize("expression", ["x = 1", "1 +", "import os", "await f()"])
def test_a_statement_or_syntax_error_is_not_an_expression(
    shell: InteractiveShell, expression: str
) -> None:
    with pytest.raises(CitationError, match=r"^not a Python expression \(SyntaxError: "):
        cite(expression, shell)
    assert "x" not in shell.user_ns  # nothing was executed


def test_citations_expand_through_the_kernel(shell: InteractiveShell) -> None:
    run(shell, "total = 42")
    expanded = expand("what is $`total`?", lambda e: cite(e, shell))
    assert "`total`:\nint: 42" in expanded.sent
    with pytest.raises(CitationError, match=r"\$`totl`: name 'totl' is not defined"):
        expand("and $`totl`?", lambda e: cite(e, shell))


def test_the_running_shell_is_used_by_default(
    shell: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(shell, "answer = 7")
    monkeypatch.setattr(InteractiveShell, "_instance", shell, raising=False)
    assert cite("answer") == "int: 7"
    monkeypatch.setattr(InteractiveShell, "_instance", None)
    with pytest.raises(CitationError, match="no IPython kernel is running"):
        cite("answer")


# --- In[n], Out[n] -------------------------------------------------------------------------


def test_in_and_out_give_a_cells_source_and_output(shell: InteractiveShell) -> None:
    first = run(shell, "a = 20")
    second = run(shell, "%time b = 1", "a + 1")
    assert cite(f"In[{first}]", shell) == "```python\na = 20\n```"
    assert cite(f"In[{second - 1}]", shell) == "```python\n%time b = 1\n```"  # as written
    assert cite(f"Out[{second}]", shell) == "int: 21"
    assert cite(f"Out [ {second} ]", shell) == "int: 21"


def test_a_missing_cell_or_output_is_a_citation_error(shell: InteractiveShell) -> None:
    count = run(shell, "a = 1")
    with pytest.raises(CitationError, match=rf"^cell \[{count}\] has no output$"):
        cite(f"Out[{count}]", shell)
    with pytest.raises(CitationError, match=r"^no cell \[99\] has run in this kernel$"):
        cite("In[99]", shell)
    with pytest.raises(CitationError, match=r"^no cell \[0\] has run"):
        cite("Out[0]", shell)


def test_a_long_cell_source_is_cut_at_the_limit(shell: InteractiveShell) -> None:
    count = run(shell, "\n".join(f"v{i} = {i}" for i in range(2000)))
    text = cite(f"In[{count}]", shell, limit=500)
    assert text.startswith("```python\nv0 = 0\n")
    assert len(text) < 600
    assert re.search(r"\n… \([\d,]+ more characters left out\)\Z", text)


# --- Err, Err[n] ---------------------------------------------------------------------------


def test_err_gives_the_last_failed_cell_with_its_traceback(shell: InteractiveShell) -> None:
    with pytest.raises(CitationError, match=r"^no cell has failed since atomic_jupyter"):
        cite("Err", shell)
    source = "def f(x):\n    return x / 0\nf(3)"
    count = run(shell, "ok = 1", source)
    text = cite("Err", shell)
    assert text.startswith(f"Cell [{count}] failed.\nIts source:\n```python\n{source}\n```\n")
    traceback = text.split("Its traceback:\n```\n")[1]
    assert traceback.startswith("Traceback (most recent call last):\n")
    assert "line 3, in <module>" in traceback and "line 2, in f" in traceback
    assert traceback.endswith("ZeroDivisionError: division by zero\n```")
    assert "\x1b" not in text  # the shell printed it in colour; the citation is plain
    assert "interactiveshell.py" not in text  # IPython's own frames are left out


def test_err_n_picks_an_older_failure_and_syntax_errors_count(shell: InteractiveShell) -> None:
    older = run(shell, "raise ValueError('first')")
    syntax = run(shell, "ok = 2", "x = (")
    assert install_error_log(shell).last() == install_error_log(shell).get(syntax)
    assert "SyntaxError" in cite("Err", shell)
    assert f"Cell [{syntax}] failed." in cite("Err", shell)
    text = cite(f"Err[{older}]", shell)
    assert text.startswith(f"Cell [{older}] failed.")
    assert "ValueError: first" in text
    with pytest.raises(CitationError, match=rf"^cell \[{syntax - 1}\] has not failed$"):
        cite(f"Err[{syntax - 1}]", shell)


def test_a_name_err_in_the_kernel_shadows_the_failed_cell(shell: InteractiveShell) -> None:
    run(shell, "1 / 0", "Err = 'mine'")
    assert cite("Err", shell) == "str, 4 characters:\nmine"
    assert cite("Err[0]", shell) == "str, 1 character:\nm"


def test_colour_codes_in_an_error_message_are_removed(shell: InteractiveShell) -> None:
    run(shell, r"raise RuntimeError('\x1b[31mred\x1b[0m alert')")
    text = cite("Err", shell)
    assert "RuntimeError: red alert\n```" in text
    assert "\x1b" not in text


def test_cells_run_without_history_are_not_recorded(shell: InteractiveShell) -> None:
    shell.run_cell("1 / 0", store_history=False)
    assert install_error_log(shell).last() is None


def test_the_error_log_is_installed_once_per_shell(shell: InteractiveShell) -> None:
    log = install_error_log(shell)
    assert install_error_log(shell) is log
    hooks = shell.events.callbacks["post_run_cell"]
    assert hooks.count(log.record) == 1
    log.uninstall()
    run(shell, "1 / 0")
    assert log.last() is None
    assert log.record not in shell.events.callbacks["post_run_cell"]
    assert install_error_log(shell) is not log  # a new one after uninstalling


def test_a_long_traceback_keeps_its_end_within_the_limit() -> None:
    frames = "".join(f'  File "x.py", line {i}, in f{i}\n    f{i + 1}()\n' for i in range(500))
    failed = FailedCell(12, "go()", f"Traceback (most recent call last):\n{frames}Boom: end\n")
    text = failed.text(limit=1000)
    assert len(text) <= 1000
    assert text.startswith("Cell [12] failed.\nIts source:\n```python\ngo()\n```\n")
    assert text.endswith("Boom: end\n```")
    assert re.search(r"… \([\d,]+ earlier characters left out\)", text)


def test_a_long_source_and_long_traceback_share_the_limit() -> None:
    failed = FailedCell(3, "s = 1\n" * 2000, "T\n" * 3000 + "KeyError: 'k'")
    text = failed.text(limit=2000)
    assert len(text) <= 2000
    assert "KeyError: 'k'" in text
    assert text.count("left out") == 2


def test_a_fence_inside_the_source_does_not_end_the_block() -> None:
    text = FailedCell(1, 'x = """\n```\n"""', "E").text()
    assert "````python\n" in text and text.endswith("````\nIts traceback:\n```\nE\n```")


# --- summarize -----------------------------------------------------------------------------


def test_a_pandas_frame_shows_shape_dtypes_and_first_rows() -> None:
    df = pd.DataFrame({"a": range(100), "b": [0.5] * 100, "label": ["x"] * 100})
    text = summarize(df)
    header = "pandas.DataFrame: 100 rows × 3 columns\ncolumns and dtypes:\n"
    assert text.startswith(header)
    assert f"  a      {df.dtypes['a']}\n  b      float64\n  label  {df.dtypes['label']}\n" in text
    assert f"first 5 rows:\n{df.head(5).to_string()}\n" in text
    assert body_and_closing(text)[1] == "95 more rows"


def test_a_wide_and_long_frame_stays_within_the_limit() -> None:
    df = pd.DataFrame(np.zeros((100_000, 300)), columns=[f"col{i}" for i in range(300)])
    text = summarize(df)
    body, closing = body_and_closing(text)
    assert len(body) <= SUMMARY_LIMIT
    assert closing is not None
    assert "250 more columns" in closing and "99,995 more rows" in closing
    assert "  col49  float64" in body and "col50  float64" not in body


def test_a_series_shows_length_dtype_name_and_first_values() -> None:
    series = pd.Series(range(10), name="n")
    text = summarize(series)
    assert text.startswith(f"pandas.Series 'n': 10 values, dtype {series.dtype}\nfirst 5 values:\n")
    assert series.head(5).to_string() in text
    assert body_and_closing(text)[1] == "5 more values"


def test_an_array_shows_shape_dtype_and_first_rows() -> None:
    small = np.arange(6)
    assert summarize(small) == f"numpy.ndarray: shape (6,), dtype {small.dtype}\n{small!r}"
    text = summarize(np.zeros((1_000_000, 3)))
    assert text.startswith("numpy.ndarray: shape (1000000, 3), dtype float64\nfirst 10 rows:\n")
    assert body_and_closing(text)[1] == "999,990 more rows"
    assert summarize(np.float64(2.5)) == f"numpy.float64: {np.float64(2.5)!r}"


class FrameLike:
    """A duck-typed data frame that must not be rendered in full."""

    shape = (1_000_000, 2)
    columns = ["x", "y"]
    dtypes = {"x": "int32", "y": "category"}

    def __init__(self) -> None:
        self.head_calls: list[int] = []

    def head(self, n: int) -> Any:
        self.head_calls.append(n)
        return self

    def to_string(self) -> str:  # no pandas keywords
        return "   x  y\n0  1  a"

    def __repr__(self) -> str:
        raise AssertionError("the whole frame was rendered")


def test_a_duck_typed_frame_is_summarized_through_head() -> None:
    frame = FrameLike()
    text = summarize(frame)
    assert frame.head_calls == [5]
    assert text == (
        "tests.unit.notebook.test_kernel_values.FrameLike: 1,000,000 rows × 2 columns\n"
        "columns and dtypes:\n  x  int32\n  y  category\n"
        "first 5 rows:\n   x  y\n0  1  a\n"
        "… (999,995 more rows left out)"
    )


HUGE = [
    pytest.param(lambda: list(range(10**7)), "9,999,900 more items", id="list"),
    pytest.param(lambda: "x" * 50_000_000, "more characters", id="str"),
    pytest.param(lambda: b"\x00" * 50_000_000, "more bytes", id="bytes"),
    pytest.param(lambda: dict.fromkeys(range(10**6), "v"), "999,900 more items", id="dict"),
    pytest.param(lambda: collections.Counter(range(10**6)), "999,900 more items", id="Counter"),
    pytest.param(lambda: set(range(10**6)), "999,900 more items", id="set"),
    pytest.param(lambda: [["y" * 10**6] * 1000] * 1000, "900 more items", id="nested"),
]


@pytest.mark.parametrize(("make", "left"), HUGE)
@pytest.mark.parametrize("limit", [SUMMARY_LIMIT, 300])
def test_a_huge_value_stays_within_the_limit(make: Any, left: str, limit: int) -> None:
    text = summarize(make(), limit)
    body, closing = body_and_closing(text)
    assert len(body) <= limit
    assert closing is not None and left in closing
    assert "\n" not in closing


def test_a_cut_string_says_how_many_characters_are_left_out() -> None:
    text = summarize("a" * 1000, limit=100)
    body, closing = body_and_closing(text)
    header = "str, 1,000 characters:\n"
    assert body == header + "a" * (100 - len(header))
    assert closing == f"{1000 - (100 - len(header)):,} more characters"


def test_functions_classes_and_modules_show_signature_and_first_paragraph() -> None:
    def scale(values: list[float], factor: float = 2.0) -> list[float]:
        """Multiply every value.

        More details that are left out.
        """
        return [v * factor for v in values]

    text = summarize(scale)
    assert text.startswith("function ")
    assert "scale(values: 'list[float]', factor: 'float' = 2.0) -> 'list[float]'" in text
    assert text.endswith("\nMultiply every value.")
    assert summarize(collections.OrderedDict).startswith("type OrderedDict(")
    assert summarize(re).startswith("module re (")
    assert "Support for regular expressions" in summarize(re)
    assert summarize(len).startswith("builtin_function_or_method len(obj, /)\n")


def test_a_repr_that_raises_does_not_raise() -> None:
    class Broken:
        def __repr__(self) -> str:
            raise ValueError("nope")

    assert summarize(Broken()).endswith(": <repr failed: ValueError: nope>")


def test_a_duck_type_whose_attributes_raise_falls_back_to_repr() -> None:
    class Odd:
        shape = (3,)

        @property
        def dtype(self) -> str:
            raise RuntimeError("no dtype")

        def __repr__(self) -> str:
            return "Odd()"

    assert summarize(Odd()).endswith(": Odd()")


def test_a_short_value_has_no_closing_line() -> None:
    assert summarize({"a": 1}) == "dict of 1 item:\n{'a': 1}"
    assert summarize(None) == "NoneType: None"
    assert summarize(b"ab") == "bytes, 2 bytes:\nb'ab'"


def test_a_summary_reads_as_plain_text_without_backquotes() -> None:
    """A kernel tool's card and a citation show the summary as written: its type name is plain
    text, not Markdown inline code."""
    area = 3.14159 * 2**2
    assert summarize(area) == f"float: {area!r}"
    assert summarize("twenty-two characters!").startswith("str, 22 characters:\n")
    df = pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]})
    assert summarize(df).startswith("pandas.DataFrame: 3 rows × 2 columns\n")
    assert summarize([2, 3, 5]) == "list of 3 items:\n[2, 3, 5]"
    assert summarize(re).startswith("module re (")
    for value in (area, "text", df, [1], re, len, None, b"x", np.arange(3), pd.Series([1])):
        assert "`" not in summarize(value).splitlines()[0], value


@dataclasses.dataclass
class Holder:
    """A dataclass whose generated repr renders its fields in full."""

    name: str
    rows: list[int]


class Pair(NamedTuple):
    left: list[int]
    right: str


@pytest.mark.parametrize(
    "make, starts",
    [
        (
            lambda big: Holder("h", big),
            "tests.unit.notebook.test_kernel_values.Holder: Holder(name='h', rows=[0, 1, 2",
        ),
        (
            lambda big: Pair(big, "x" * 10_000_000),
            "tests.unit.notebook.test_kernel_values.Pair: Pair(left=[0, 1, 2",
        ),
        (
            lambda big: collections.defaultdict(list, {"a": big}),
            "collections.defaultdict of 1 item",
        ),
        (lambda big: [Holder("deep", big)], "list of 1 item:\n[Holder(name='deep'"),
    ],
    ids=["dataclass", "named tuple", "container subclass", "nested"],
)
def test_a_summary_of_a_huge_value_is_bounded_in_memory(make: Any, starts: str) -> None:
    """A 10-million-item list inside a dataclass, a named tuple or a defaultdict: their own
    repr would build about 90 MB to show 4,000 characters; the summary builds next to none."""
    big = list(range(10_000_000))
    value = make(big)
    tracemalloc.start()
    try:
        text = summarize(value)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert text.startswith(starts), text[:200]
    assert len(text) <= SUMMARY_LIMIT + 200
    assert peak < 1_000_000, f"{peak:,} bytes to summarize"
