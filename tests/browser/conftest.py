"""Fixtures of the browser suite: one JupyterLab server and one Chromium for the whole run,
and a factory that writes a notebook, opens it in a fresh browser context and waits for its
kernel.

Select the suite alone with ``pytest -m browser`` (or ``pytest tests/browser``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from browser_harness import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    PAGE_MS,
    PINNED_AGENT,
    PWNED_INIT_SCRIPT,
    VIEWPORT,
    WAIT_MS,
    LabServer,
    NotebookPage,
    write_notebook,
)


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """JupyterLab on 127.0.0.1 with a random port and token, in a scratch directory."""
    if not PINNED_AGENT.exists():
        pytest.fail(
            f"the pinned agent is not installed at {PINNED_AGENT}; run `make test`, which installs it"
        )
    server = LabServer(tmp_path_factory.mktemp("lab"), sys.executable)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def chromium() -> Iterator[object]:
    """Debian's Chromium, headless, driven by Playwright."""
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} is missing; `make test` installs it (apt-get install chromium)")
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=WAIT_MS)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


OpenNotebook = Callable[[str, Sequence[tuple[str, str]]], NotebookPage]


@pytest.fixture(scope="module")
def open_notebook(lab_server: LabServer, chromium: object) -> Iterator[OpenNotebook]:
    """``open_notebook(filename, [(cell name, source), ...])``: write it, open it, wait for its kernel.

    Each notebook gets its own browser context, with ``window.__pwned`` watched in every frame.
    At the end of the test module its tab is closed and its kernel (with its agent) shut down.
    """
    contexts = []
    pages: list[NotebookPage] = []

    def open_(filename: str, cells: Sequence[tuple[str, str]]) -> NotebookPage:
        write_notebook(lab_server.root / filename, [source for _, source in cells])
        context = chromium.new_context(viewport=VIEWPORT)  # type: ignore[attr-defined]
        contexts.append(context)
        context.add_init_script(PWNED_INIT_SCRIPT)
        page = context.new_page()
        page.set_default_timeout(WAIT_MS)
        page.set_default_navigation_timeout(PAGE_MS)
        nb = NotebookPage(page, filename, [name for name, _ in cells])
        page.goto(lab_server.lab_url(filename))
        nb.wait_ready()
        pages.append(nb)
        return nb

    yield open_
    for nb in pages:
        if nb.key_retries:
            print(f"\n{nb.page.url.split('?')[0]}: Ctrl+Enter pressed again for {nb.key_retries}")
    for context in contexts:
        try:
            context.close()
        except Exception:  # the browser may be gone already
            pass
    for nb in pages:
        lab_server.shutdown_kernel_of(nb.filename)


# --------------------------------------------------------------------------- evidence of failures


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> object:
    report = yield
    if report.when == "call":
        item.stash[_FAILED] = report.failed
    return report


_FAILED = pytest.StashKey[bool]()


@pytest.fixture(autouse=True)
def _evidence_on_failure(request: pytest.FixtureRequest) -> Iterator[None]:
    """When a test fails, keep what the page showed: a full screenshot and every cell's text."""
    yield
    if not request.node.stash.get(_FAILED, False):
        return
    nb = request.node.funcargs.get("nb")
    if not isinstance(nb, NotebookPage):
        return
    lab = request.getfixturevalue("lab_server")
    from browser_harness import SCREENSHOTS

    where = SCREENSHOTS / "failures"
    where.mkdir(parents=True, exist_ok=True)
    name = "".join(c if c.isalnum() or c in "-_" else "_" for c in request.node.name)
    try:
        nb.page.screenshot(path=str(where / f"{name}.png"), full_page=True)
        cells = nb.notebook.locator(".jp-Cell").all_inner_texts()
        (where / f"{name}.txt").write_text(
            "\n\n".join(f"--- cell {i}\n{text}" for i, text in enumerate(cells))
            + f"\n\n--- page errors\n{nb.page_errors}\n--- console errors\n{nb.console_errors}"
            + f"\n\n--- the session in the kernel\n{lab.run_in_kernel(nb.filename, SESSION_REPORT)}",
            encoding="utf-8",
        )
    except Exception as exc:  # the evidence is a bonus; never hide the failure itself
        print(f"could not keep the page of {request.node.name}: {exc}")


#: Printed from the kernel when a test fails: the session's newest dialogs and runs.
SESSION_REPORT = """
import atomic_jupyter as _aj
_s = _aj.session()
print("state:", _s.state)
for _d in _s.dialogs[-4:]:
    print("dialog", _d.method, repr(_d.title), _d.state, "host:", getattr(getattr(_d, "host", None), "message", None))
_v = getattr(_s, "_view", None)
for _r in _s._tracker.runs[-3:]:
    _tv = _v.run_views.get(id(_r)) if _v is not None else None
    print("run", repr(_r.message), "answered:", _r.answered, "shown:", _r.shown,
          "blocks:", [type(_b).__name__ for _b in _r.transcript.snapshot()],
          "view children:", len(_tv.blocks.children) if _tv else None, "renders:", _tv.renders if _tv else None)
print("panel dialogs:", len(_v.dialogs.children) if _v is not None else None)
"""
