"""The documentation site: Sphinx with MyST Markdown, the notebooks executed by MyST-NB.

Built by ``make docs`` into ``docs/_build/html`` with warnings as errors (``-W``): a broken
internal link, a missing anchor or a notebook cell that fails stops the build.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

# The notebooks are pages of the site, run as it builds. They live in ../notebooks (where
# JupyterLab, Binder and nbval find them); a fresh copy is made here for each build (ignored by
# git), so links between pages and notebooks are plain relative paths.
shutil.rmtree(HERE / "notebooks", ignore_errors=True)
shutil.copytree(
    HERE.parent / "notebooks",
    HERE / "notebooks",
    ignore=shutil.ignore_patterns("conftest.py", "__pycache__", ".ipynb_checkpoints"),
)

from atomic_jupyter import __version__  # noqa: E402

project = "atomic-jupyter"
author = "atomic-jupyter developers"
copyright = "2026, atomic-jupyter developers"
release = __version__
version = __version__

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    # The package's docstrings are NumPy style (Parameters, Returns, Raises).
    "sphinx.ext.napoleon",
    "atomic_reference",
]

exclude_patterns = [
    "_build",
    "**/.ipynb_checkpoints",
]

# MyST: headings up to level 3 get anchors, so [text](page.md#a-heading) is checked.
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence", "deflist"]

# The notebooks run on the offline demo model each time the site is built: each page shows
# the saved record of a real run. A cell that fails fails the build.
nb_execution_mode = "force"
nb_execution_timeout = 300
nb_execution_raise_on_error = True
nb_execution_show_tb = True
# The record is the output to show; a live widget view left in a saved output is not.
nb_mime_priority_overrides = [
    ("html", "application/vnd.jupyter.widget-view+json", None),
]

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
napoleon_google_docstring = False
autodoc_default_options = {"members": True, "undoc-members": False}

html_theme = "furo"
html_title = f"atomic-jupyter {version}"
html_static_path = ["_static"]
napoleon_use_ivar = True

# Every output of ours ends as its record (HTML and text), so no page needs the widget
# manager's JavaScript (nor a CDN to load it from).
nb_ipywidgets_js: dict[str, dict[str, str]] = {}


def _drop_widget_state(app: object, doctree: object) -> None:
    """Leave the saved widget state out of a notebook's page.

    nbclient keeps the state of every widget model it saw, closed or not, and MyST-NB would
    embed it in the page for a widget manager to render. Every output of ours has become its
    record by the end of the run, so nothing on the page needs it: without it a notebook's page
    is about half as heavy. (MyST-NB keeps the state in its per-page data; if a later version
    keeps it elsewhere, this does nothing and tests/test_docs_site.py says so.)
    """
    env = app.env  # type: ignore[attr-defined]
    pages = getattr(env, "nb_metadata", {})
    pages.get(env.docname, {}).get("js_files", {}).pop("ipywidgets_state", None)


def setup(app: object) -> None:
    """Sphinx's hook for this project's own handlers."""
    app.connect("doctree-read", _drop_widget_state)  # type: ignore[attr-defined]
