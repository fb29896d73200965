"""A light import: ``import atomic_jupyter`` and the command line load no widget library and no
IPython, and the first session made (or ``%load_ext``) wires the notebook's parts in.

Each import is checked in a fresh interpreter (this process has imported everything already).
Speed is measured by ``benchmarks/bench_import.py``, never asserted here.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import atomic_jupyter as aj
from atomic_jupyter.session import plugins
from tests.harness.support import ROOT, STANDIN_AGENT

#: What a notebook needs and ``import atomic_jupyter`` must not load.
NOTEBOOK_MODULES = ("ipywidgets", "IPython", "anywidget", "ipykernel", "atomic_jupyter.wiring")

#: Printed last by every child: what it found, as JSON.
REPORT = f"""
import json as _json, sys as _sys
_found = globals().get("found", {{}})
_found["loaded"] = [m for m in {NOTEBOOK_MODULES!r} if m in _sys.modules]
print(_json.dumps(_found))
"""


def child(code: str, cwd: Path = ROOT, timeout: float = 60) -> dict[str, Any]:
    """Run ``code`` in a fresh interpreter; what it put in ``found``, with ``loaded``: the
    notebook modules in its ``sys.modules`` at the end."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code) + REPORT],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "statement",
    [
        "import atomic_jupyter",
        "import atomic_jupyter.cli",
        "from atomic_jupyter import AgentSession, Dialog, PromptRun, WaitResult, __version__",
        "import atomic_jupyter.session.session",
        "import atomic_jupyter.notebook.doctor",
    ],
)
def test_an_import_loads_no_widget_library_nor_ipython(statement: str) -> None:
    assert child(statement)["loaded"] == []


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["install-agent", "--help"], ["doctor"]],
    ids=["help", "install-agent-help", "doctor"],
)
def test_the_command_line_runs_without_a_widget_library_nor_ipython(argv: list[str]) -> None:
    found = child(
        f"""
        import runpy, sys
        sys.argv = ["atomic-jupyter", *{argv!r}]
        try:
            runpy.run_module("atomic_jupyter", run_name="__main__", alter_sys=True)
        except SystemExit as exc:
            found = {{"status": exc.code}}
        """
    )
    assert found == {"status": 0, "loaded": []}


def test_a_session_made_after_the_light_import_is_wired(tmp_path: Path) -> None:
    """Made directly (``AgentSession(...)``, as the tests do), it gets the addons, the
    presentation, the citations and the built-in tools; and it starts and answers."""
    found = child(
        f"""
        import sys
        import atomic_jupyter as aj
        from atomic_jupyter.session import citations, kernel_tools
        from atomic_jupyter.transport.launch import LaunchSpec

        watched = ("ipywidgets", "atomic_jupyter.wiring")
        found = {{"before": [m for m in watched if m in sys.modules]}}
        command = [sys.executable, {str(STANDIN_AGENT)!r}]
        session = aj.AgentSession("light", LaunchSpec(command=command, cwd={str(tmp_path)!r}))
        factory = aj.AgentSession.presentation_factory
        names = ("kernel-tools", "conversations")
        found["addons"] = [name for name in names if session.addon(name)]
        found["presentation"] = getattr(factory, "__name__", None)
        found["citations"] = citations.citation_resolver() is not None
        found["builtins"] = sorted(tool.name for tool in kernel_tools._builtins)
        session.start(timeout=30)
        found["state"] = session.state
        found["answered"] = session.request({{"type": "get_state"}}).success
        session.stop()
        """,
        cwd=tmp_path,
    )
    assert found["before"] == []
    assert found["addons"] == ["kernel-tools", "conversations"]
    assert found["presentation"] == "NotebookPresentation"
    assert found["citations"] is True
    assert found["builtins"] == [
        "notebook_cells",
        "notebook_edit",
        "notebook_read",
        "notebook_run",
        "notebook_variables",
        "python",
    ]
    assert found["state"] == "idle" and found["answered"] is True
    assert "atomic_jupyter.wiring" in found["loaded"]


def test_start_and_session_work_after_the_light_import(tmp_path: Path) -> None:
    found = child(
        f"""
        import sys
        import atomic_jupyter as aj

        made = aj.start(
            command=[sys.executable, {str(STANDIN_AGENT)!r}],
            name="light-start",
            cwd={str(tmp_path)!r},
            display=False,
            save=False,
        )
        found = {{"same": aj.session("light-start") is made, "state": made.state}}
        found["kernel_tools"] = made.addon("kernel-tools") is not None
        made.stop()
        """,
        cwd=tmp_path,
    )
    assert found["same"] and found["state"] == "idle" and found["kernel_tools"]


def test_load_ext_wires_before_any_session() -> None:
    found = child(
        """
        import sys
        from IPython.core.interactiveshell import InteractiveShell

        shell = InteractiveShell.instance()
        found = {"before": "atomic_jupyter.wiring" in sys.modules}
        shell.run_line_magic("load_ext", "atomic_jupyter")
        found["magics"] = sorted(
            name for name in shell.magics_manager.magics["line"] if name.startswith("atomic")
        )
        """
    )
    assert found["before"] is False
    assert found["magics"] == ["atomic_agent", "atomic_extension"]
    assert "atomic_jupyter.wiring" in found["loaded"]


def test_session_is_the_function_even_when_the_session_layer_came_first() -> None:
    """``atomic_jupyter.session`` is also a subpackage: the public name stays the function."""
    found = child(
        """
        from atomic_jupyter.session.session import AgentSession
        import atomic_jupyter as aj
        found = {"module": aj.session.__module__, "class": aj.AgentSession is AgentSession}
        """
    )
    assert found["module"] == "atomic_jupyter.notebook.api" and found["class"] is True


def test_the_public_names() -> None:
    from atomic_jupyter.notebook import api
    from atomic_jupyter.notebook.config import AtomicAgent
    from atomic_jupyter.session.session import AgentSession

    assert aj.start is api.start and aj.session is api.session
    assert aj.AgentSession is AgentSession and aj.AtomicAgent is AtomicAgent
    assert isinstance(aj.__version__, str) and aj.__version__
    assert set(aj.__all__) <= set(dir(aj))
    namespace: dict[str, Any] = {}
    exec("from atomic_jupyter import *", namespace)  # noqa: S102
    assert set(aj.__all__) <= set(namespace)
    assert namespace["session"] is api.session
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = aj.no_such_name  # type: ignore[attr-defined]


def test_wire_runs_each_hook_once_and_retries_one_that_failed(monkeypatch) -> None:
    monkeypatch.setattr(plugins, "_wiring", [])
    calls: list[str] = []
    fails = [True]

    def flaky() -> None:
        calls.append("flaky")
        if fails.pop(0) if fails else False:
            raise ImportError("not yet")

    plugins.use_wiring(flaky)
    plugins.use_wiring(flaky)  # once only
    plugins.use_wiring(lambda: calls.append("second"))
    with pytest.raises(ImportError):
        plugins.wire()
    assert calls == ["flaky"]
    plugins.wire()
    plugins.wire()
    assert calls == ["flaky", "flaky", "second"]


def test_a_hook_that_makes_a_session_does_not_wire_again(monkeypatch) -> None:
    monkeypatch.setattr(plugins, "_wiring", [])
    calls: list[str] = []

    def reentrant() -> None:
        calls.append("hook")
        plugins.wire()  # what a session made by the wiring would call

    plugins.use_wiring(reentrant)
    plugins.wire()
    assert calls == ["hook"]
