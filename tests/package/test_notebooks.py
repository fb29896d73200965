"""The notebooks: the quickstart run as a reader's "Run All" would, the checks the test
command runs on every notebook, and what the example notebooks need.

- **The quickstart**, executed headless with nbclient: nbval (in the test command) runs every
  notebook; these tests look inside the result: the saved widget state must show a streamed
  answer, a tool card, an answered dialog and status lines, and no cell may have error output.
  And the saved notebook is the record: every agent output carries a static, sanitised
  ``text/html`` (finished runs carry nothing else), which ``nbconvert`` turns into HTML and
  Markdown that hold the conversation and no widget repr.
- **The notebook checks** of the test command fail on errors a reader would see. nbval alone
  fails a cell only on an ``error`` output, but IPython prints a ``UsageError`` (a magic used
  before ``%load_ext``) on stderr. notebooks/conftest.py closes that gap; these tests run pytest
  with nbval, as the test command does, with that conftest loaded as a plugin
  (``-p notebooks.conftest``), on small notebooks in a temporary folder.
- **The example notebooks name what they need**: every module a notebook imports is the
  standard library's, atomic-jupyter's (or what it depends on), or a package its opening
  Markdown cell names in a ``pip install atomic-jupyter ...`` line.
  ``tests/package/test_install_anywhere.py`` runs that line in a fresh environment and the
  notebook on it.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from atomic_jupyter.notebook.presentation import REMOVED_VIEW
from tests.harness.support import ROOT, install_line

# --------------------------------------------------------------------------- the quickstart

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def visible(value: str) -> str:
    return html.unescape(re.sub(r"<[^>]*>", "", value))


@pytest.fixture(scope="module")
def saved(executed: nbformat.NotebookNode, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The executed quickstart, saved as a reader saves it."""
    path = tmp_path_factory.mktemp("saved") / "quickstart.ipynb"
    nbformat.write(executed, path)
    return path


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> nbformat.NotebookNode:
    work = tmp_path_factory.mktemp("quickstart")
    shutil.copy(ROOT / "notebooks" / "quickstart.ipynb", work)
    nb = nbformat.read(work / "quickstart.ipynb", as_version=4)
    NotebookClient(
        nb,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(work)}},
        store_widget_state=True,
    ).execute()
    return nb


def models_of(nb: nbformat.NotebookNode) -> dict[str, dict]:
    state = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    return {model_id: entry["state"] for model_id, entry in state.items()}


def with_class(models: dict[str, dict], name: str) -> list[dict]:
    return [m for m in models.values() if name in (m.get("_dom_classes") or [])]


@pytest.mark.kernel
@pytest.mark.agent
def test_quickstart_runs_without_error_output(executed: nbformat.NotebookNode) -> None:
    for cell in executed.cells:
        for output in cell.get("outputs", []):
            assert output["output_type"] != "error", output
            assert not (output["output_type"] == "stream" and output["name"] == "stderr"), output[
                "text"
            ]


@pytest.mark.kernel
@pytest.mark.agent
def test_quickstart_shows_streamed_text_a_tool_card_an_answered_dialog_and_status(
    executed: nbformat.NotebookNode,
) -> None:
    """What the reader sees, in the saved records (the widgets are closed once their outputs
    are final, and the quickstart ends by stopping the session)."""
    records = "\n".join(
        visible(output["data"]["text/html"])
        for cell in executed.cells
        for output in cell.get("outputs", [])
        if "atomic-record" in output.get("data", {}).get("text/html", "")
    )
    assert "Hello from the offline demo model" in records
    assert "tool bash · $ ls -la · done" in records
    assert "→ Block (" in records and "→ Yes (" in records
    assert "model turns in this conversation:" in records  # the panel's status line
    assert "1 model turn" in records  # a run's footer
    assert "tokens" not in records  # the demo model reports no usage: no figures
    assert "atomic-widget-block" in "".join(
        output.get("data", {}).get("text/html", "")
        for cell in executed.cells
        for output in cell.get("outputs", [])
    )  # widget lines above and below the editor


@pytest.mark.kernel
@pytest.mark.agent
@pytest.mark.one_line  # our record of a saved file; its content is checked on both lines
def test_the_quickstarts_records_weigh_at_most_three_times_the_text_they_show(
    executed: nbformat.NotebookNode,
) -> None:
    from tests.harness.widget_text import shown_text

    records = [
        output["data"]["text/html"]
        for cell in executed.cells
        for output in cell.get("outputs", [])
        if "atomic-record" in output.get("data", {}).get("text/html", "")
    ]
    saved, shown = sum(map(len, records)), sum(len(shown_text(r)) for r in records)
    assert len(records) >= 5 and saved <= 3 * shown, (saved, shown)


@pytest.mark.kernel
@pytest.mark.agent
def test_quickstart_run_like_jupyterlab_leaves_almost_no_widget_state_to_save(
    tmp_path: Path,
) -> None:
    """The quickstart's cells run one by one in a kernel driven as JupyterLab drives it: at
    the end (the session stopped) no widget of the product is left open, so what "Save Widget
    State Automatically" would save is small. (nbclient 0.11 ignores ``comm_close`` and saves
    every widget ever opened, closed or not: see the README.)"""
    from tests.harness.kernel_client import BrowserLikeKernel

    nb = nbformat.read(ROOT / "notebooks" / "quickstart.ipynb", as_version=4)
    with BrowserLikeKernel(tmp_path) as kernel:
        for cell in nb.cells:
            if cell.cell_type == "code":
                kernel.execute(cell.source, timeout=120)
        state = {cid: kernel.models[cid] for cid in kernel.models}
    ours = [
        m
        for m in state.values()
        if any(c.startswith("atomic-") for c in m.get("_dom_classes") or [])
    ]
    assert ours == [], ours[:3]
    size = len(json.dumps(state))
    assert size < 10_000, f"{size:,} bytes of widget state"


@pytest.mark.kernel
@pytest.mark.agent
def test_quickstart_executed_by_nbclient_saves_under_10_kb_of_widget_state(
    executed: nbformat.NotebookNode,
) -> None:
    """nbclient saves the last state of every model it ever saw, closed or not: each output
    of ours is one model (the panel, each run), emptied before it is closed, and the page
    side of every output travels in one holder, emptied with the last output."""
    saved = nb_widget_state(executed)
    size = len(json.dumps(saved))
    models = models_of(executed)
    sizes = sorted(
        ((m.get("_model_name", "?"), len(json.dumps(m))) for m in models.values()),
        key=lambda named: -named[1],
    )
    assert models, "no widget state was saved: nothing to measure"
    assert size < 10_000, f"{size:,} bytes of widget state; models by size: {sizes}"


def nb_widget_state(nb: nbformat.NotebookNode) -> dict:
    """The widget state nbclient saved in the notebook's metadata."""
    return nb.metadata.widgets[WIDGET_STATE]


# --------------------------------------------------------------------------- the record

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

#: Each prompt cell of the quickstart, and what its record must say.
RECORDED = {
    "hello! who are you?": ["> hello! who are you?", "Hello from the offline demo model"],
    "what is in $`primes`?": [
        "> what is in $`primes`?",
        "Sent to the agent, with 1 cited value: primes",
        "I got 1 value from your kernel:",
    ],
    "list the files here": ["> list the files here", "tool bash · $ ls -la"],
    "clean up the scratch files": [
        "> clean up the scratch files",
        "tool bash",
        "→ Block (answered by code)",
    ],
    "/demo-confirm": ["> /demo-confirm", "→ Yes (answered by code)"],
}


def agent_outputs(nb: nbformat.NotebookNode) -> list[tuple[str, dict]]:
    """(cell source, output) of every output the product made (its records are marked)."""
    return [
        (cell.source, output)
        for cell in nb.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if output["output_type"] == "display_data"
        and 'class="atomic-record' in output["data"].get("text/html", "")
    ]


@pytest.mark.kernel
@pytest.mark.agent
def test_every_agent_output_is_saved_with_its_record(saved: Path) -> None:
    nb = nbformat.read(saved, as_version=4)
    outputs = agent_outputs(nb)
    sources = [source for source, _ in outputs]
    for prompt, expected in RECORDED.items():
        found = [
            o
            for source, o in outputs
            if prompt in source and "atomic-record-run" in o["data"]["text/html"]
        ]
        assert len(found) == 1, (prompt, sources)
        data = found[0]["data"]
        # A finished run is its record alone: nothing in it needs the kernel.
        assert WIDGET_VIEW not in data, prompt
        # Self-contained: no script, nothing loaded from anywhere.
        assert not re.search(r"<script|<img|<link|<iframe|url\(", data["text/html"], re.I)
        shown = visible(data["text/html"])
        for text in expected:
            assert text in shown, (text, shown)
            assert text in data["text/plain"], (text, data["text/plain"])
    # The --wait that stopped for the guard's dialog said so; once the dialog was settled the
    # notice says nothing more: the run's record holds the outcome, once in the whole cell.
    (cell,) = [c for c in nb.cells if "clean up the scratch files" in c.source]
    said = [o.get("data", {}).get("text/plain", "") for o in cell.outputs]
    assert sum(text.count("→ Block (answered by code)") for text in said) == 1, said
    # The panel too (the session was stopped at the end).
    panels = [o for _, o in outputs if "atomic-record-panel" in o["data"]["text/html"]]
    assert panels and all(WIDGET_VIEW not in o["data"] for o in panels)
    assert "agent session 'default' · stopped" in panels[0]["data"]["text/plain"]
    # No widget repr, no stale "needs your answer", no local paths in what was saved.
    text = saved.read_text(encoding="utf-8")
    assert "VBox(children" not in text and "HTML(value" not in text
    assert "atomic-record-copy" not in text  # every copy removed: one record per output
    # No empty output: each shows something, or is the removed view of a closed widget (which
    # JupyterLab hides), never an empty bundle.
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data")
            if data is not None and data != REMOVED_VIEW:
                assert any(str(value).strip() for value in data.values()), (cell.source, output)
    nbformat.validate(nb)
    assert "needs your answer" not in text
    assert str(ROOT) not in text


def nbconvert(path: Path, to: str) -> str:
    """``jupyter nbconvert --to TO`` of ``path``: the text it wrote."""
    out = path.with_suffix(".html" if to == "html" else ".md")
    done = subprocess.run(
        [sys.executable, "-m", "nbconvert", "--to", to, str(path), "--output", out.name],
        check=True,
        capture_output=True,
        text=True,
    )
    # Every output can be shown (an empty one makes nbconvert warn of "dict_keys([])").
    assert "is not able to be represented" not in done.stderr, done.stderr
    return out.read_text(encoding="utf-8")


@pytest.mark.kernel
@pytest.mark.agent
@pytest.mark.parametrize("to", ["html", "markdown"])
@pytest.mark.one_line  # our record of a saved file; its content is checked on both lines
def test_nbconvert_shows_the_conversation_and_no_widget_repr(saved: Path, to: str) -> None:
    converted = nbconvert(saved, to)
    shown = visible(converted)
    for expected in RECORDED.values():
        for text in expected:
            assert text in shown, (to, text)
    assert "VBox(children" not in converted and "HTML(value" not in converted
    # No output is a widget view, which needs the widget scripts (from the network).
    assert '<script type="application/vnd.jupyter.widget-view+json">' not in converted
    if to == "html":
        assert "atomic-record" in converted


#: What GitHub's notebook view keeps of an output's HTML (its sanitiser's allow-list, roughly:
#: structure and text; no style, no class, no script).
GITHUB_TAGS = {
    "div", "span", "p", "pre", "code", "details", "summary", "a", "ul", "ol", "li", "table",
    "thead", "tbody", "tr", "th", "td", "strong", "em", "del", "blockquote", "br", "hr",
    "h1", "h2", "h3", "h4", "h5", "h6", "img",
}  # fmt: skip


@pytest.mark.kernel
@pytest.mark.agent
@pytest.mark.one_line  # our record of a saved file; its content is checked on both lines
def test_a_github_style_sanitiser_keeps_the_conversation_readable(saved: Path) -> None:
    import nh3

    nb = nbformat.read(saved, as_version=4)
    cleaner = nh3.Cleaner(tags=GITHUB_TAGS, attributes={"a": {"href"}}, link_rel=None)
    outputs = agent_outputs(nb)
    for prompt, expected in RECORDED.items():
        (record,) = [
            o["data"]["text/html"]
            for source, o in outputs
            if prompt in source and "atomic-record-run" in o["data"]["text/html"]
        ]
        shown = visible(cleaner.clean(record))
        for text in expected:
            assert text in shown, (prompt, text)


# --------------------------------------------------------------------------- saved mid-run

#: A notebook saved while a run waits for its dialog (as JupyterLab's autosave may), then
#: closed: the kernel and the agent end with the run still going.
MID_RUN = [
    "%load_ext atomic_jupyter\n%atomic_agent start --demo",
    "%%atomic_agent --wait\nhello! who are you?",
    "%%atomic_agent\n/demo-confirm",
    "import atomic_jupyter as aj\n"
    "from atomic_jupyter.notebook.presentation import presentation_of\n"
    "session = aj.session()\n"
    "session.wait(timeout=60)  # stops at the dialog\n"
    "presentation_of(session).refresh_records()  # what the throttled refresh does meanwhile",
]


@pytest.fixture(scope="module")
def saved_mid_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("mid-run")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in MID_RUN])
    NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(work)}}
    ).execute()
    nb.metadata.pop("widgets", None)  # saved as JupyterLab saves by default
    path = work / "mid-run.ipynb"
    nbformat.write(nb, path)
    return path


@pytest.mark.kernel
@pytest.mark.agent
def test_a_notebook_saved_while_a_run_waits_holds_the_record_so_far(saved_mid_run: Path) -> None:
    from atomic_jupyter.notebook.presentation import LIVE_PLAIN

    nb = nbformat.read(saved_mid_run, as_version=4)
    nbformat.validate(nb)
    hello, waiting = nb.cells[1].outputs, nb.cells[2].outputs
    # The finished run: its record alone, and its copy a removed view.
    assert [o["data"] for o in hello if "text/html" not in o["data"]] == [REMOVED_VIEW]
    (final,) = [o for o in hello if "text/html" in o["data"]]
    assert "Hello from the offline demo model" in visible(final["data"]["text/html"])
    assert WIDGET_VIEW not in final["data"]
    # The run still waiting: its live view (which says where its record is) and the copy of
    # its record as it was when saved, with the dialog waiting.
    (live,) = [o for o in waiting if WIDGET_VIEW in o["data"]]
    assert live["data"]["text/plain"] == LIVE_PLAIN and "text/html" not in live["data"]
    (copy,) = [o for o in waiting if "atomic-record-copy" in o["data"].get("text/html", "")]
    shown = visible(copy["data"]["text/html"])
    for text in ("> /demo-confirm", "Do you like this demo?", "waiting for an answer"):
        assert text in shown and text in copy["data"]["text/plain"], (text, shown)
    # A sanitiser that drops styles (GitHub's, an untrusted notebook's) drops the style's rules
    # with it: the copy reads as the record.
    import nh3

    cleaner = nh3.Cleaner(tags=GITHUB_TAGS, attributes={"a": {"href"}}, link_rel=None)
    cleaned = visible(cleaner.clean(copy["data"]["text/html"]))
    assert cleaned.startswith("> /demo-confirm") and "waiting for an answer" in cleaned
    # The copy's parts are not the live view's (a page finds the live view's classes once).
    assert 'class="atomic-dialog' not in copy["data"]["text/html"]
    assert 'class="atomic-copy-dialog' in copy["data"]["text/html"]
    # The panel, live too, with its copy.
    (panel,) = [
        o for o in nb.cells[0].outputs if "atomic-record-copy" in o["data"].get("text/html", "")
    ]
    assert "agent session 'default' · stopped (last seen: idle)" in panel["data"]["text/plain"]


@pytest.mark.kernel
@pytest.mark.agent
@pytest.mark.parametrize("to", ["html", "markdown"])
@pytest.mark.one_line  # our record of a saved file; its content is checked on both lines
def test_nbconvert_of_a_notebook_saved_mid_run_shows_each_record_once(
    saved_mid_run: Path, to: str
) -> None:
    converted = nbconvert(saved_mid_run, to)
    shown = visible(converted)
    assert shown.count("> /demo-confirm") == 1, shown
    assert shown.count("waiting for an answer") == 1
    assert shown.count("> hello! who are you?") == 1
    assert "VBox(children" not in converted
    # The panel, read with its agent gone: what it knew last, never a live state.
    assert "stopped (last seen: idle)" in shown
    assert not re.search(r"\bidle\b(?!\))", shown), shown  # "idle" only as what was seen last


# --------------------------------------------------------------------------- the notebook checks


def run_nbval(folder: Path, *sources: str) -> tuple[int, str, dict[int, str]]:
    """Run nbval on a notebook of these code cells: the exit code, the report, and each
    cell's outcome by number."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    path = folder / "check.ipynb"
    nbformat.write(nb, path)
    env = {key: value for key, value in os.environ.items() if key != "PYTEST_ADDOPTS"}
    done = subprocess.run(
        [
            sys.executable, "-m", "pytest", "--nbval-lax", "-p", "no:cacheprovider",
            "-p", "notebooks.conftest", "-c", str(ROOT / "pyproject.toml"),
            "--rootdir", str(ROOT), "-v", str(path),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=100,
    )  # fmt: skip
    report = done.stdout + done.stderr
    outcomes = {
        int(number): outcome
        for number, outcome in re.findall(r"::Cell (\d+) (PASSED|FAILED|ERROR)", report)
    }
    return done.returncode, report, outcomes


@pytest.mark.kernel
@pytest.mark.one_line  # nbval on small notebooks: no agent
def test_a_cell_magic_used_before_load_ext_fails_with_the_usage_error(tmp_path: Path) -> None:
    code, report, outcomes = run_nbval(tmp_path, "%%atomic_agent\nhello")
    assert code == 1, report
    assert outcomes == {0: "FAILED"}, report
    assert "UsageError" in report, report
    assert "Cell magic `%%atomic_agent` not found" in report, report


@pytest.mark.kernel
@pytest.mark.one_line  # nbval on small notebooks: no agent
def test_errors_printed_on_stderr_fail_their_cells(tmp_path: Path) -> None:
    code, report, outcomes = run_nbval(
        tmp_path,
        "%nonexistent_magic",
        "import traceback\n\ntry:\n    1 / 0\nexcept ZeroDivisionError:\n    traceback.print_exc()",
        'import sys\n\nprint("ERROR: the model could not be reached", file=sys.stderr)',
        'print("after the errors, a cell that is fine")',
    )
    assert code == 1, report
    assert outcomes == {0: "FAILED", 1: "FAILED", 2: "FAILED", 3: "PASSED"}, report
    assert "Line magic function `%nonexistent_magic` not found" in report, report
    assert "Traceback (most recent call last):" in report, report
    assert "ERROR: the model could not be reached" in report, report


@pytest.mark.kernel
@pytest.mark.one_line  # nbval on small notebooks: no agent
def test_a_good_notebook_passes_with_notices_and_warnings_on_stderr(tmp_path: Path) -> None:
    code, report, outcomes = run_nbval(
        tmp_path,
        "%load_ext atomic_jupyter",
        'assert "atomic_agent" in get_ipython().magics_manager.magics["cell"]',
        # The notice atomic_jupyter/session/waiting.py writes on stderr, by design.
        'import sys\n\nprint("The agent exited with code 1 before the run ended.", file=sys.stderr)',
        'import warnings\n\nwarnings.warn("a warning is not an error")',
    )
    assert code == 0, report
    assert outcomes == dict.fromkeys(range(4), "PASSED"), report


# --------------------------------------------------------------------------- what the examples need


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
