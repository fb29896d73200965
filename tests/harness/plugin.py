"""The shared fixtures, loaded as a pytest plugin (``pytest_plugins`` in ``tests/conftest.py``).

The pinned agent, a private agent config directory, the test extensions, the scripted model, and
``kernel``: one notebook-like kernel per module with ``atomic_jupyter`` loaded. A module adapts
``kernel`` by overriding ``kernel_agent_home`` (which agent configuration it uses) or
``kernel_setup`` (the cells it runs first); a module marked ``scripted_kernel`` (in its
``pytestmark``) has its kernel's sessions use the scripted model, and starts one with
``scripted_start``.
"""

from __future__ import annotations

import asyncio
import atexit
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .kernel_client import BrowserLikeKernel
from .support import (
    AGENT_LINE,
    EXTENSIONS,
    PINNED_AGENT,
    conversation_script,
    pinned_package,
    scripted_agent_home,
    thread_switch_interval,
)
from .thread_guard import install as install_thread_guard
from .thread_guard import report as thread_guard_report
from .thread_guard import take as thread_guard_take

#: The marker of a module whose ``kernel`` talks to the scripted model (``kernel_agent_home``).
SCRIPTED_KERNEL = "scripted_kernel"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{SCRIPTED_KERNEL}: the module's kernel (tests/harness/plugin.py) runs its sessions with "
        "the scripted model's agent home",
    )


def agent_kernel_env(agent_command: list[str], agent_home: Path) -> dict[str, str]:
    """A kernel environment in which ``%atomic_agent start`` runs ``agent_command`` with its
    configuration in ``agent_home``."""
    return {
        "ATOMIC_AGENT_COMMAND": " ".join(agent_command),
        "PI_CODING_AGENT_DIR": str(agent_home),
    }


@pytest.fixture(scope="session")
def agent_command() -> list[str]:
    """The pinned agent, with no saved sessions."""
    if not PINNED_AGENT.exists():
        pytest.fail(
            f"the pinned agent is not installed at {PINNED_AGENT}; run `make test`, which installs it"
        )
    return [str(PINNED_AGENT), "--no-session"]


@pytest.fixture(scope="session", autouse=True)
def private_agent_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Keep the agent away from the user's own configuration (``~/.pi``)."""
    home = tmp_path_factory.mktemp("agent-home")
    old = os.environ.get("PI_CODING_AGENT_DIR")
    os.environ["PI_CODING_AGENT_DIR"] = str(home)
    yield home
    if old is None:
        os.environ.pop("PI_CODING_AGENT_DIR", None)
    else:
        os.environ["PI_CODING_AGENT_DIR"] = old


@pytest.fixture(scope="session")
def ui_extension() -> str:
    """The test extension that exposes every UI method as a command."""
    return str(EXTENSIONS / "ui_everything.ts")


@pytest.fixture(scope="module")
def scripted_model(tmp_path_factory: pytest.TempPathFactory):
    """A scripted OpenAI-compatible model on 127.0.0.1, and an agent home that selects it.

    Yields ``(server, agent_home, agent_args)``.
    """
    from atomic_jupyter.addons.model_server import agent_args

    home = tmp_path_factory.mktemp("scripted-agent-home")
    with scripted_agent_home(home, conversation_script) as server:
        yield server, home, agent_args(server)


@pytest.fixture
def shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A fresh in-process IPython shell (not IPython's singleton) with an error log and its
    history in memory, for tests of the notebook layer that need no kernel process."""
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    from atomic_jupyter.notebook.kernel_values import install_error_log

    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    config = Config()
    config.HistoryManager.enabled = False
    made = InteractiveShell(config=config)
    install_error_log(made)
    yield made
    install_error_log(made).uninstall()
    atexit.unregister(made.atexit_operations)
    made.atexit_operations()


def scripted_start(scripted_model: Any, options: str = "") -> str:
    """The cell that starts a session on the scripted model (``scripted_model``'s arguments),
    with the ``%atomic_agent start`` ``options`` before them."""
    _server, _home, args = scripted_model
    return f"%atomic_agent start {options + ' ' if options else ''}-- {' '.join(args)}"


def last_tool_answer(scripted_model: Any) -> str:
    """The text of the tool result the scripted model was given last ("" if none)."""
    from atomic_jupyter.addons.model_server.request import content_text

    server, _home, _args = scripted_model
    results = server.requests[-1].tool_results
    return content_text(results[-1].get("content")) if results else ""


@pytest.fixture
def fast_thread_switching() -> Iterator[None]:
    """Let the interpreter switch threads every microsecond during the test."""
    with thread_switch_interval(1e-6):
        yield


@pytest.fixture(scope="module")
def kernel_agent_home(request: pytest.FixtureRequest, private_agent_home: Path) -> Path:
    """The agent configuration the ``kernel`` fixture's sessions use: the scripted model's in
    a module marked ``scripted_kernel``, else the private one (or override per module)."""
    if request.node.get_closest_marker(SCRIPTED_KERNEL) is not None:
        _server, home, _args = request.getfixturevalue("scripted_model")
        return home
    return private_agent_home


@pytest.fixture(scope="module")
def kernel_setup() -> list[str]:
    """Cells the ``kernel`` fixture runs after ``%load_ext atomic_jupyter`` (override per
    module)."""
    return []


@pytest.fixture(scope="module")
def kernel(
    tmp_path_factory: pytest.TempPathFactory,
    agent_command: list[str],
    kernel_agent_home: Path,
    kernel_setup: list[str],
) -> Iterator[BrowserLikeKernel]:
    """One kernel for the module, driven like JupyterLab, in a scratch notebook directory, with
    ``atomic_jupyter`` loaded and the pinned agent as the default command, and the widget
    thread guard installed in it (checked when the module is done)."""
    cwd = tmp_path_factory.mktemp("notebook")
    env = agent_kernel_env(agent_command, kernel_agent_home)
    with BrowserLikeKernel(cwd, env=env, thread_guard=True) as k:
        k.execute("%load_ext atomic_jupyter")
        for cell in kernel_setup:
            k.execute(cell)
        yield k


# --------------------------------------------------------------------------- what ran where


def _pinned_agent_name() -> str:
    try:
        package = pinned_package()
    except (OSError, ValueError):
        return "not installed"
    return f"{package.get('name')} {package.get('version')}"


PINNED_AGENT_NAME = _pinned_agent_name()

#: The modules that take longest (builds with pip and npm, the Binder replay, the docs site, the
#: hub, real npm installs), longest chains first: run first, so that the two xdist workers
#: (``--dist loadscope --no-loadscope-reorder`` hands out modules in collection order; without
#: ``--no-loadscope-reorder`` it hands out the modules with most tests first, and these came
#: last) share them from the start and the run never ends waiting on one of them. The wheel
#: (built by the first module that asks, ``tests/harness/checkout_dists.py``) is what the hub
#: and the install-anywhere modules install, so its module comes first.
SLOW_MODULES = (
    "package/test_packaging.py",
    "hub/test_hub.py",  # the guide's shared environment (pip, npm) and three hubs
    "package/test_install_anywhere.py",
    # make test builds its replay beside its set-up (tests/harness/binder_replay.py): by now
    # it is there, or nearly.
    "package/test_binder.py",
    "agent/test_agent_install_faults.py",
    "package/test_docs_site.py",
    "agent/test_agent_lines.py",
    "kernel/test_saved_conversations.py",
    "kernel/test_widget_lifecycle.py",
    "browser/test_browser_hub.py",
)


#: The markers of the costly classes (``pyproject.toml``); a test with none of them is ``unit``.
COSTLY = ("agent", "kernel", "browser", "binder", "build")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark ``unit`` every test of no costly class (before ``-m`` selects: ``pytest -m unit``,
    ``make test-fast``, runs the cheap ones alone), and put the tests of :data:`SLOW_MODULES`
    first, each module's tests in their order."""
    for item in items:
        if not any(item.get_closest_marker(name) for name in COSTLY):
            item.add_marker(pytest.mark.unit)
    items.sort(key=lambda item: _slow_rank(item.nodeid.split("::")[0]))


def _slow_rank(path: str) -> int:
    """Where a module's tests go: the slow modules in the order listed, then the rest."""
    for rank, slow in enumerate(SLOW_MODULES):
        if path.endswith(slow):
            return rank
    return len(SLOW_MODULES)


#: Outcomes of the tests that ran the real agent, and seconds spent per top folder.
_REAL_AGENT: Counter[str] = Counter()
_SECONDS: Counter[str] = Counter()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Say in the report whether the test carries the ``agent`` marker (the report's keywords
    also hold folder names, and ``tests/agent/`` is one), also across xdist workers."""
    report = yield
    if item.get_closest_marker("agent") is not None:
        report.user_properties.append(("real_agent", True))
    return report


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Count each real-agent test once (by its call, or by a setup that did not pass), and add
    up the time spent in ``tests/`` and in ``notebooks/``."""
    _SECONDS[report.nodeid.split("/", 1)[0]] += report.duration
    if ("real_agent", True) not in [tuple(p) for p in report.user_properties]:
        return
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        _REAL_AGENT[report.outcome] += 1


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Say how many tests ran the real agent on the line under test (so a change cannot
    quietly drop one line's coverage), and the time the test folders and the notebooks took."""
    if _REAL_AGENT:
        counts = ", ".join(f"{n} {outcome}" for outcome, n in sorted(_REAL_AGENT.items()))
        terminalreporter.write_line(
            f"real-agent tests on the {AGENT_LINE} line ({PINNED_AGENT_NAME}): {counts}"
        )
    if _SECONDS:
        spent = ", ".join(
            f"{folder}/ {seconds:.0f} s" for folder, seconds in sorted(_SECONDS.items())
        )
        terminalreporter.write_line(f"time in tests and notebooks: {spent}")


# --------------------------------------------------------------------------- the thread guard

#: Strict dispatchers: in this process and in the kernels the tests start (they inherit it),
#: running widget work off the kernel's thread raises instead of being logged.
os.environ.setdefault("ATOMIC_JUPYTER_STRICT_THREADS", "1")


@pytest.fixture(autouse=True)
def widget_thread_guard() -> Iterator[None]:
    """Fail a test during which a widget was built, changed or closed off the main thread, or
    a strict dispatcher refused to run widget work there (see ``tests/harness/thread_guard.py``;
    ``BrowserLikeKernel(thread_guard=True)`` does the same inside a real kernel)."""
    install_thread_guard()
    earlier = thread_guard_take()
    if earlier:  # threads left running by an earlier test did it after that test's end
        pytest.fail("between tests: " + thread_guard_report(earlier), pytrace=False)
    yield
    found = thread_guard_take()
    if found:
        pytest.fail(thread_guard_report(found), pytrace=False)


@pytest.fixture(scope="session")
def chromium() -> Iterator[object]:
    """Debian's Chromium, headless, driven by Playwright: one per worker, for every test that
    opens a page (Playwright's sync API cannot be started twice in one thread)."""
    from tests.browser.browser_harness import CHROMIUM, CHROMIUM_ARGS, WAIT_MS

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


@pytest.fixture(autouse=True)
def no_foreign_running_loop(request: pytest.FixtureRequest) -> Iterator[None]:
    """Hide the event loop Playwright's sync API leaves marked as running on the main thread
    (from the first browser test to the end of the session) from every other test: a test
    that runs a loop of its own could not, and a dispatcher would take it for a kernel's."""
    loop = asyncio._get_running_loop()
    if loop is None or request.node.get_closest_marker("browser") is not None:
        yield
        return
    asyncio._set_running_loop(None)
    try:
        yield
    finally:
        asyncio._set_running_loop(loop)
