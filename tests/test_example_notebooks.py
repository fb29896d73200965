"""The example notebooks name what they need: every module a notebook imports is the standard
library's, atomic-jupyter's (or what it depends on), or a package its opening Markdown cell
names in a ``pip install atomic-jupyter ...`` line. ``tests/test_install_anywhere.py`` runs that
line in a fresh environment and the notebook on it."""

from __future__ import annotations

import re
import sys
from importlib import metadata
from pathlib import Path

import nbformat
import pytest

from tests.harness.support import ROOT, install_line

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
IMPORT = re.compile(r"^\s*(?:import|from)\s+([A-Za-z_][A-Za-z0-9_]*)", re.M)


def imported(path: Path) -> set[str]:
    """The top-level modules a notebook's Python cells import (not its cell magics' code)."""
    nb = nbformat.read(path, as_version=4)
    cells = [c.source for c in nb.cells if c.cell_type == "code" and not c.source.startswith("%%")]
    return {name for source in cells for name in IMPORT.findall(source)}


def provided_by_the_package() -> set[str]:
    """The modules a plain ``pip install atomic-jupyter`` brings: its own and its dependencies'
    (read from the installed distributions' top-level names)."""
    modules = {"atomic_jupyter", "IPython"}
    for requirement in metadata.requires("atomic-jupyter") or []:
        if "extra ==" in requirement:
            continue
        name = re.split(r"[ <>=!~;\[]", requirement, maxsplit=1)[0]
        distribution = metadata.distribution(name)
        top = distribution.read_text("top_level.txt") or ""
        modules |= {line.strip() for line in top.splitlines() if line.strip()}
        modules |= {
            str(f).split("/")[0].removesuffix(".py")
            for f in distribution.files or []
            if str(f).endswith(".py") and "/" in str(f) and ".dist-info" not in str(f)
        }
    return modules


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_a_notebook_names_every_package_it_needs_beyond_the_package(path: Path) -> None:
    named = {name.replace("-", "_").lower() for name in install_line(path)}
    missing = {
        module
        for module in imported(path)
        if module not in sys.stdlib_module_names
        and module not in provided_by_the_package()
        and module.lower() not in named
    }
    assert missing == set(), (
        f"{path.name} imports {sorted(missing)}: name them in its opening Markdown as "
        "`pip install atomic-jupyter ...`"
    )


def test_the_data_analysis_notebook_names_pandas_and_matplotlib() -> None:
    assert install_line(ROOT / "notebooks" / "data_analysis.ipynb") == [
        "atomic-jupyter",
        "pandas",
        "matplotlib",
    ]
