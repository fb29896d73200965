"""The documentation site: Sphinx with MyST Markdown, the notebooks executed by MyST-NB.

Built by ``make docs`` into ``docs/_build/html`` with warnings as errors (``-W``): a broken
internal link, a missing anchor or a notebook cell that fails stops the build.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))


def _copy_notebooks(source: Path, target: Path) -> None:
    """The notebooks (and their data) copied into the site's sources, each file replaced
    whole (written beside, then renamed), so two builds at once never read half a file; a
    file no longer in ``source`` goes."""
    target.mkdir(exist_ok=True)
    wanted = {p.name for p in source.iterdir() if p.is_file() and p.name != "conftest.py"}
    for name in wanted:
        partial = target / f".{name}.{os.getpid()}.partial"
        shutil.copy2(source / name, partial)
        os.replace(partial, target / name)
    for stale in target.iterdir():
        if stale.is_file() and stale.name not in wanted and not stale.name.startswith("."):
            stale.unlink(missing_ok=True)


# The notebooks are pages of the site, run as it builds. They live in ../notebooks (where
# JupyterLab, Binder and nbval find them); a copy is kept current here (ignored by git), so
# links between pages and notebooks are plain relative paths.
_copy_notebooks(HERE.parent / "notebooks", HERE / "notebooks")

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

# The notebooks' saved conversations go to a folder of this build's own (the kernels inherit
# it), so a page never mentions the conversations of an earlier build or of the person.
os.environ["ATOMIC_JUPYTER_CONVERSATIONS"] = tempfile.mkdtemp(prefix="atomic-docs-conversations-")

# Options and code keep their two hyphens and straight quotes (--wait, not an en dash).
smartquotes = False

# MyST: headings up to level 3 get anchors, so [text](page.md#a-heading) is checked.
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence", "deflist"]

# The notebooks run on the offline demo model each time the site is built: each page shows
# the saved record of a real run. A cell that fails fails the build.
nb_execution_mode = "force"
nb_execution_timeout = 300
nb_execution_raise_on_error = True
nb_execution_show_tb = True


def _quiet_kernel_spec() -> str:
    """A kernel spec of this build's own (the notebooks' ``python3`` runs as it): this Python's
    ipykernel, logging errors only, so a build says nothing unless something is wrong (a
    kernel started by nbclient warns on every start that it runs over TCP without encryption,
    which on 127.0.0.1 is expected). Its folder goes first on ``JUPYTER_PATH``."""
    folder = Path(tempfile.mkdtemp(prefix="atomic-docs-kernels-"))
    spec = folder / "kernels" / "atomic-docs"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    argv.append("--IPKernelApp.log_level=ERROR")
    kernel = {"argv": argv, "display_name": "Python 3 (docs)", "language": "python"}
    (spec / "kernel.json").write_text(json.dumps(kernel), encoding="utf-8")
    os.environ["JUPYTER_PATH"] = os.pathsep.join(
        [str(folder), *filter(None, [os.environ.get("JUPYTER_PATH")])]
    )
    return "atomic-docs"


nb_kernel_rgx_aliases = {"python3": _quiet_kernel_spec()}
# nbclient's own progress ("Executing notebook with kernel") is not news either.
logging.getLogger("traitlets").setLevel(logging.WARNING)
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
    keeps it elsewhere, this does nothing and tests/package/test_docs_site.py says so.)
    """
    env = app.env  # type: ignore[attr-defined]
    pages = getattr(env, "nb_metadata", {})
    pages.get(env.docname, {}).get("js_files", {}).pop("ipywidgets_state", None)


def _name_the_notebook(app: object, docname: str, source: list[str]) -> None:
    """Give the kernel about to run a notebook its path, as Jupyter's server does
    (``$JPY_SESSION_NAME``), so its saved conversations are its own, not the folder's."""
    if docname.startswith("notebooks/"):
        path = app.env.doc2path(docname)  # type: ignore[attr-defined]
        os.environ["JPY_SESSION_NAME"] = str(path)


def setup(app: object) -> None:
    """Sphinx's hook for this project's own handlers."""
    app.connect("source-read", _name_the_notebook)  # type: ignore[attr-defined]
    app.connect("doctree-read", _drop_widget_state)  # type: ignore[attr-defined]
