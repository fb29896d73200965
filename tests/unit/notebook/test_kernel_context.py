"""The notebook context tools' logic: the kernel's variables a line each, and the cells run last
(source, output's summary, error), read from a real IPython shell that runs real cells."""

from __future__ import annotations

import json
import random
import re

from IPython.core.interactiveshell import InteractiveShell

from atomic_jupyter.notebook.kernel_context import (
    CELLS_TOOL,
    VARIABLES_TOOL,
    notebook_cells,
    notebook_variables,
)
from atomic_jupyter.notebook.kernel_values import SUMMARY_LIMIT


def run(shell: InteractiveShell, *cells: str) -> None:
    """Run cells as the kernel does, with history."""
    for source in cells:
        shell.run_cell(source, store_history=True)


def listed_names(listing: str) -> list[str]:
    """The names of a variables listing's lines (not its first line, nor a closing note)."""
    return [line.split(":")[0] for line in listing.splitlines()[1:] if not line.startswith("…")]


# --- notebook_variables ------------------------------------------------------------------


def test_variables_are_listed_with_their_type_length_or_shape_and_value(
    shell: InteractiveShell,
) -> None:
    run(
        shell,
        "import numpy as np, pandas as pd",
        "xs = [1, 2, 3]",
        "d = {'b': 1, 'a': 'two'}",
        "df = pd.DataFrame({'a': [1, 2, 6], 'b': [0.5, 1.5, 2.5]})",
        "arr = np.arange(100)",
        "n = 42",
        "s = 'hello\\nworld'",
    )
    assert notebook_variables(shell) == (
        "6 variables in the notebook kernel, in the order defined:\n"
        "xs: list, len 3 — [1, 2, 3]\n"
        "d: dict, len 2 — {'a': 'two', 'b': 1}\n"
        "df: pandas.DataFrame, shape (3, 2) — columns: a (int64), b (float64)\n"
        "arr: numpy.ndarray, shape (100,), dtype int64 — [0, 1, 2, 3, 4, …]\n"
        "n: int — 42\n"
        "s: str, len 11 — 'hello\\nworld'"
    )


def test_a_series_and_a_two_dimensional_array_show_shape_dtype_and_first_values(
    shell: InteractiveShell,
) -> None:
    run(
        shell,
        "import numpy as np, pandas as pd",
        "sales = pd.Series([3, 1, 4, 1, 5, 9, 2], name='sales')",
        "grid = np.zeros((2, 3))",
    )
    assert notebook_variables(shell).splitlines()[1:] == [
        "sales: pandas.Series, shape (7,), dtype int64 — [3, 1, 4, 1, 5, …]",
        "grid: numpy.ndarray, shape (2, 3), dtype float64 — array([[0., 0., 0.], [0., 0., 0.]])",
    ]


def test_modules_functions_classes_and_underscore_and_ipython_names_are_left_out(
    shell: InteractiveShell,
) -> None:
    run(
        shell,
        "import os",
        "from math import sqrt",
        "def f():\n    return 1",
        "class C:\n    def __repr__(self):\n        return 'C()'",
        "_private = 1",
        "1 + 1",
        "g = lambda: 2",
        "kept = C()",
    )
    assert {"In", "Out", "_", "_i", "_6", "_oh", "exit", "get_ipython"} <= set(shell.user_ns)
    assert notebook_variables(shell) == (
        "1 variable in the notebook kernel, in the order defined:\nkept: C — C()"
    )


def test_names_hidden_by_ipython_are_left_out_unless_reassigned(shell: InteractiveShell) -> None:
    shell.push({"hidden": 1, "helper": 2}, interactive=False)
    run(shell, "helper = 3")
    assert listed_names(notebook_variables(shell)) == ["helper"]


def test_objects_of_atomic_jupyter_classes_are_left_out(shell: InteractiveShell) -> None:
    run(
        shell,
        "import atomic_jupyter as aj",
        "from atomic_jupyter.errors import CitationError",
        "from atomic_jupyter.notebook.kernel_values import FailedCell",
        "err = CitationError('no')",
        "cell = FailedCell(1, 'x', 'NameError')",
        "mine = [err]",
    )
    assert listed_names(notebook_variables(shell)) == ["mine"]


def test_no_variables_is_said_in_a_sentence(shell: InteractiveShell) -> None:
    run(shell, "import os", "1 + 1")
    assert notebook_variables(shell) == (
        "No variables are defined in the notebook kernel (modules, functions, classes and "
        "IPython's own names are not listed)."
    )


class _CountedList(list):  # type: ignore[type-arg]
    """A list that counts the items read from it (its repr is never asked for)."""

    read = 0

    def __iter__(self):  # type: ignore[no-untyped-def]
        for item in super().__iter__():
            type(self).read += 1
            yield item

    def __repr__(self) -> str:
        raise AssertionError("the whole list's repr was asked for")


def test_huge_values_are_listed_quickly_and_bounded(shell: InteractiveShell) -> None:
    """Quickly: the work is bounded (a few of the list's items read, never its whole repr),
    not timed (a loaded machine would fail a timer; BENCHMARKS.md measures speed)."""
    keys = list(range(1_000_000))
    random.Random(1).shuffle(keys)
    big = _CountedList(range(10_000_000))
    _CountedList.read = 0
    shell.push({"big": big, "lookup": dict.fromkeys(keys), "members": set(keys)})
    shell.push({"text": "x" * 10_000_000})
    listing = notebook_variables(shell)
    assert _CountedList.read <= 100, _CountedList.read
    lines = listing.splitlines()
    assert [line.split(" — ")[0] for line in lines[1:]] == [
        f"big: {__name__}._CountedList, len 10,000,000",
        "lookup: dict, len 1,000,000",
        "members: set, len 1,000,000",
        "text: str, len 10,000,000",
    ]
    assert lines[1].startswith(f"big: {__name__}._CountedList, len 10,000,000 — [0, 1, 2, 3, 4,")
    shown_keys = {int(k) for k in re.findall(r"(\d+): None", lines[2])}
    assert len(shown_keys) > 5 and shown_keys <= set(keys[:21])  # the first, not the smallest
    assert all(len(line) <= 160 for line in lines)


def test_a_value_whose_repr_len_and_properties_raise_shows_repr_failed(
    shell: InteractiveShell,
) -> None:
    run(
        shell,
        "class Weird:\n"
        "    def __repr__(self):\n        raise ValueError('boom')\n"
        "    def __len__(self):\n        raise RuntimeError('no len')\n"
        "    @property\n    def shape(self):\n        raise RuntimeError('no shape')\n",
        "w = Weird()",
        "class BadList(list):\n    def __len__(self):\n        raise RuntimeError('no len')\n",
        "bl = BadList([1])",
    )
    assert notebook_variables(shell).splitlines()[1:] == [
        "w: Weird — <repr failed: ValueError: boom>",
        "bl: BadList — <repr failed: RuntimeError: no len>",
    ]


def test_the_listing_stays_within_its_limit_naming_those_left_out(
    shell: InteractiveShell,
) -> None:
    shell.push({f"v{i:03}": "x" * 200 for i in range(300)})
    listing = notebook_variables(shell)
    lines = listing.splitlines()
    assert len(listing) <= SUMMARY_LIMIT
    assert lines[0] == "300 variables in the notebook kernel, in the order defined:"
    shown = listed_names(listing)
    assert shown == [f"v{i:03}" for i in range(len(shown))]
    assert lines[-1].startswith(f"… {300 - len(shown)} more not listed: v{len(shown):03}, ")
    assert all(len(line) <= 160 for line in lines)
    assert len(notebook_variables(shell, limit=500)) <= 500


def test_at_most_a_hundred_variables_are_listed(shell: InteractiveShell) -> None:
    shell.push({f"v{i:03}": i for i in range(130)})
    listing = notebook_variables(shell, limit=100_000)
    assert listed_names(listing) == [f"v{i:03}" for i in range(100)]
    assert listing.splitlines()[-1].startswith("… 30 more not listed: v100, v101, v102, ")


# --- notebook_cells ----------------------------------------------------------------------


def test_cells_show_their_sources_newest_last_and_outputs(shell: InteractiveShell) -> None:
    run(shell, "x = 2", "x * 21", "print('hi')\nx")
    assert notebook_cells(shell) == (
        "In [1]:\nx = 2\n\nIn [2]:\nx * 21\nOut[2]: int: 42\n\nIn [3]:\nprint('hi')\nx\n"
        "Out[3]: int: 2"
    )


def test_an_output_summary_is_bounded_plain_text(shell: InteractiveShell) -> None:
    run(shell, "import pandas as pd", "pd.DataFrame({'a': range(1000)})", "list(range(10**6))")
    cells = notebook_cells(shell)
    assert "Out[2]: pandas.DataFrame: 1,000 rows × 1 columns\ncolumns and dtypes:" in cells
    assert "Out[3]: list of 1,000,000 items:\n[0, 1, 2," in cells
    assert "`" not in cells
    assert len(cells.split("In [3]:")[1]) < 800


def test_a_failed_cell_shows_its_error_last_line(shell: InteractiveShell) -> None:
    run(shell, "def f(n):\n    return n / 0", "f(1)", "y = (")
    assert notebook_cells(shell).split("\n\n")[1:] == [
        "In [2]:\nf(1)\nError[2]: ZeroDivisionError: division by zero",
        "In [3]:\ny = (\nError[3]: SyntaxError: incomplete input",
    ]


def test_last_chooses_how_many_cells_and_earlier_ones_are_counted(
    shell: InteractiveShell,
) -> None:
    run(shell, *(f"a{i} = {i}" for i in range(1, 61)))
    assert notebook_cells(shell, last=2) == (
        "58 earlier cells not shown.\n\nIn [59]:\na59 = 59\n\nIn [60]:\na60 = 60"
    )
    assert notebook_cells(shell, last=0).startswith("59 earlier cells not shown.\n\nIn [60]:")
    assert notebook_cells(shell, last=500).startswith("10 earlier cells not shown.\n\nIn [11]:")
    assert notebook_cells(shell).startswith("50 earlier cells not shown.\n\nIn [51]:")


def test_the_limit_drops_the_oldest_cells_first_and_says_so(shell: InteractiveShell) -> None:
    run(shell, *(f"s{i} = '{'x' * 1000}'" for i in range(1, 6)))
    cells = notebook_cells(shell, limit=2500)
    assert len(cells) <= 2500
    assert cells.startswith("3 earlier cells not shown.\n\nIn [4]:\ns4 = 'xxx")
    assert "In [5]:\ns5 = 'xxx" in cells
    assert "In [3]:" not in cells


def test_a_long_source_is_cut_saying_how_much_was_left_out(shell: InteractiveShell) -> None:
    run(shell, "t = 1  # " + "y" * 3000)
    cells = notebook_cells(shell)
    assert cells.startswith("In [1]:\nt = 1  # yyy")
    assert cells.endswith("\n… (1,509 more characters of the source left out)")
    assert len(cells) < 1600


def test_no_cell_run_is_said_in_a_sentence(shell: InteractiveShell) -> None:
    assert notebook_cells(shell) == "No cell has run in the notebook kernel yet."


def test_tool_specs_name_the_tools_and_bound_last() -> None:
    assert VARIABLES_TOOL["name"] == "notebook_variables"
    assert VARIABLES_TOOL["parameters"]["properties"] == {}
    assert CELLS_TOOL["name"] == "notebook_cells"
    last = CELLS_TOOL["parameters"]["properties"]["last"]
    assert (last["type"], last["minimum"], last["maximum"]) == ("integer", 1, 50)
    assert json.loads(json.dumps([VARIABLES_TOOL, CELLS_TOOL])) == [VARIABLES_TOOL, CELLS_TOOL]
