"""Fixtures of the browser suite: one JupyterLab server and one Chromium for the whole run,
and a factory that writes a notebook, opens it in a fresh browser context and waits for its
kernel.

When a browser test fails or errors (in set-up and tear-down too), what the pages of its
module showed is kept under ``artifacts/browser-failures/``: a screenshot of each page, and a
text file with the text of every JupyterLab dialog open then, every dialog the page showed
before, the cells, page and console errors, the session in the kernel and the end of the
server's log. The dialogs and the paths are also added to the test's report.

Select the suite alone with ``pytest -m browser`` (or ``pytest tests/browser``).
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.harness.plugin import agent_kernel_env

from .browser_harness import (
    FAILURES,
    JP_DIALOG_LOG_SCRIPT,
    PAGE_MS,
    PWNED_INIT_SCRIPT,
    VIEWPORT,
    WAIT_MS,
    LabServer,
    NotebookPage,
    write_notebook,
)

#: The browser pages open now (those of the running test module), for the evidence of a
#: failure; a page is listed from before it loads, so a set-up error finds it too.
OPEN_PAGES: list[NotebookPage] = []
#: The running server (for its log and the kernels), once it started.
SERVERS: list[LabServer] = []


@pytest.fixture(scope="session")
def lab_server(
    tmp_path_factory: pytest.TempPathFactory, agent_command: list[str], private_agent_home: Path
) -> Iterator[LabServer]:
    """JupyterLab on 127.0.0.1 with a random port and token, in a scratch directory; its
    kernels run the pinned agent with the suite's private agent configuration."""
    server = LabServer(
        tmp_path_factory.mktemp("lab"),
        sys.executable,
        agent_kernel_env(agent_command, private_agent_home),
    )
    SERVERS.append(server)
    server.start()
    try:
        yield server
    finally:
        server.stop()
        SERVERS.remove(server)


OpenNotebook = Callable[[str, Sequence[tuple[str, str]]], NotebookPage]


def new_page(chromium: Any, filename: str, names: Sequence[str]) -> tuple[NotebookPage, Any]:
    """A page for ``filename`` in a browser context of its own, with ``window.__pwned``
    watched in every frame and JupyterLab's dialogs logged, listed for the evidence of a
    failure (:data:`OPEN_PAGES`); returns it and its context (close it, and
    ``OPEN_PAGES.remove`` the page, when done)."""
    context = chromium.new_context(viewport=VIEWPORT)
    context.add_init_script(PWNED_INIT_SCRIPT)
    context.add_init_script(JP_DIALOG_LOG_SCRIPT)
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    page.set_default_navigation_timeout(PAGE_MS)
    nb = NotebookPage(page, filename, list(names))
    OPEN_PAGES.append(nb)
    return nb, context


THEMES_PLUGIN = "@jupyterlab/apputils-extension:themes"


@contextlib.contextmanager
def reopened_without_kernel(
    lab_server: LabServer, chromium: Any, filename: str, names: Sequence[str]
) -> Iterator[NotebookPage]:
    """A saved notebook open in JupyterLab, the kernel JupyterLab started for it shut down
    (nothing left that knows any widget); the theme is put back afterwards."""
    theme = str(lab_server.lab_setting(THEMES_PLUGIN).get("raw") or "{}")
    nb, context = new_page(chromium, filename, names)
    try:
        nb.page.goto(lab_server.lab_url(filename))
        nb.wait_ready()
        lab_server.shutdown_kernel_of(filename)
        yield nb
    finally:
        OPEN_PAGES.remove(nb)
        context.close()
        if lab_server.lab_setting(THEMES_PLUGIN).get("raw") != theme:
            lab_server.put_lab_setting(THEMES_PLUGIN, theme)


@pytest.fixture(scope="module")
def notebook7(
    tmp_path_factory: pytest.TempPathFactory, agent_command: list[str], private_agent_home: Path
) -> Iterator[LabServer]:
    """A Notebook 7 server (``jupyter notebook``) for one test module, in a folder of its own;
    its kernels run the pinned agent of the line under test."""
    server = LabServer(
        tmp_path_factory.mktemp("nb7"),
        sys.executable,
        agent_kernel_env(agent_command, private_agent_home),
        app="notebook",
    )
    server.start()
    try:
        yield server
    finally:
        server.stop()


@contextlib.contextmanager
def opened_in_notebook7(
    server: LabServer, chromium: Any, filename: str, cells: Sequence[tuple[str, str]]
) -> Iterator[NotebookPage]:
    """``cells`` written to ``filename`` and open in Notebook 7 (``server``), its kernel ready;
    afterwards the tab is closed and the kernel shut down."""
    write_notebook(server.root / filename, [source for _, source in cells])
    notebook, context = new_page(chromium, filename, [name for name, _ in cells])
    try:
        notebook.page.goto(server.lab_url(filename))
        notebook.wait_ready()
        yield notebook
    finally:
        OPEN_PAGES.remove(notebook)
        context.close()
        server.shutdown_kernel_of(filename)


@pytest.fixture(scope="module")
def open_notebook(lab_server: LabServer, chromium: Any) -> Iterator[OpenNotebook]:
    """``open_notebook(filename, [(cell name, source), ...])``: write it, open it, wait for its kernel.

    Each notebook gets its own browser context, with ``window.__pwned`` watched in every frame
    and JupyterLab's dialogs logged. A file name is used once per run (two pages on one file
    would each save over the other). At the end of the test module its tab is closed and its
    kernel (with its agent) shut down.
    """
    contexts = []
    pages: list[NotebookPage] = []

    def open_(filename: str, cells: Sequence[tuple[str, str]]) -> NotebookPage:
        path = lab_server.root / filename
        assert not path.exists(), f"{filename} is opened twice in this run"
        write_notebook(path, [source for _, source in cells])
        nb, context = new_page(chromium, filename, [name for name, _ in cells])
        contexts.append(context)
        pages.append(nb)
        nb.page.goto(lab_server.lab_url(filename))
        nb.wait_ready()
        return nb

    yield open_
    for nb in pages:
        OPEN_PAGES.remove(nb)
        if nb.key_retries:
            print(f"\n{nb.filename}: Ctrl+Enter pressed again for {nb.key_retries}")
    for context in contexts:
        try:
            context.close()
        except Exception:  # the browser may be gone already
            pass
    for nb in pages:
        lab_server.shutdown_kernel_of(nb.filename)


# --------------------------------------------------------------------------- evidence of failures


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if report.failed and item.get_closest_marker("browser") is not None:
        try:
            summary = save_evidence(item.name, report.when, report.longreprtext)
        except Exception as exc:  # the evidence is a bonus; never hide the failure itself
            summary = f"could not keep the evidence: {exc!r}"
        report.sections.append(("browser evidence", summary))
    return report


#: Printed from the kernel when a test fails: the session's state, newest dialogs and runs
#: (public attributes only, read defensively: the evidence must not fail in its turn).
SESSION_REPORT = """
import atomic_jupyter as _aj
try:
    _s = _aj.session()
except Exception as _e:
    print("no session:", repr(_e))
else:
    print("state:", _s.state)
    for _d in list(_s.dialogs)[-4:]:
        print("dialog", _d.method, repr(_d.title), _d.state)
    for _r in list(_s.runs)[-3:]:
        print("run", repr(_r.message), "answered:", _r.answered, "finished:", _r.finished,
              "shown:", getattr(_r, "shown", "?"),
              "blocks:", [type(_b).__name__ for _b in _r.transcript.snapshot()])
"""


def save_evidence(test: str, when: str, error: str) -> str:
    """Keep a screenshot and the text of each open page; return a summary for the report."""
    FAILURES.mkdir(parents=True, exist_ok=True)
    stem = "".join(c if c.isalnum() or c in "-_" else "_" for c in f"{test}-{when}")[:150]
    lines: list[str] = []
    server = SERVERS[0] if SERVERS else None
    if not OPEN_PAGES:
        path = FAILURES / f"{stem}.txt"
        path.write_text(
            f"{test} ({when}): no page was open\n\n--- error\n{error}\n\n"
            + (f"--- server log (end)\n{server.log_tail()}\n" if server else ""),
            encoding="utf-8",
        )
        return f"no page was open; kept {path}"
    for index, nb in enumerate(OPEN_PAGES):
        name = f"{stem}-{index}" if len(OPEN_PAGES) > 1 else stem
        shot = FAILURES / f"{name}.png"
        reads: list[tuple[str, Callable[[], str]]] = [
            ("JupyterLab dialogs open now", lambda nb=nb: "\n---\n".join(nb.open_dialogs())),
            (
                "every JupyterLab dialog the page showed",
                lambda nb=nb: json.dumps(nb.dialog_log(), indent=1, ensure_ascii=False),
            ),
            ("screenshot", lambda nb=nb, shot=shot: _screenshot(nb, shot)),
            ("cells", lambda nb=nb: _cells(nb)),
            ("page errors", lambda nb=nb: "\n".join(nb.page_errors)),
            ("console errors", lambda nb=nb: "\n".join(nb.console_errors)),
            ("browser dialogs (alert, confirm)", lambda nb=nb: "\n".join(nb.js_dialogs)),
        ]
        if server is not None:
            reads.append(
                (
                    "the session in the kernel",
                    lambda nb=nb, server=server: server.run_in_kernel(
                        nb.filename, SESSION_REPORT, timeout=15
                    ),
                )
            )
            reads.append(("server log (end)", server.log_tail))
        texts = {title: _read(get) for title, get in reads}
        text_path = FAILURES / f"{name}.txt"
        text_path.write_text(
            f"{test} ({when}) on {nb.filename}\n\n--- error\n{error}\n\n"
            + "\n\n".join(f"--- {title}\n{text}" for title, text in texts.items())
            + "\n",
            encoding="utf-8",
        )
        lines.append(f"{nb.filename}: JupyterLab dialogs open: {texts[reads[0][0]]}")
        lines.append(f"kept {text_path} and {shot.name}")
    return "\n".join(lines)


def _read(get: Callable[[], str]) -> str:
    try:
        return get() or "(none)"
    except Exception as exc:  # a page or kernel that went away
        return f"(could not read: {exc!r})"


def _cells(nb: NotebookPage) -> str:
    texts = nb.notebook.locator(".jp-Cell").all_inner_texts()
    return "\n\n".join(f"--- cell {i}\n{text}" for i, text in enumerate(texts))


def _screenshot(nb: NotebookPage, path: Path) -> str:
    nb.page.screenshot(path=str(path), full_page=True, timeout=15_000)
    return str(path)
