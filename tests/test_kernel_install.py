"""``%atomic_agent install`` and the offer made by ``start`` when no agent is installed, in a
real kernel driven like JupyterLab, with the user data folder in a temporary folder: real npm,
the real registry (npm's cache makes it quick), the real agent afterwards on the demo model."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from atomic_jupyter.transport.agent_install import find_installed, install_folder, pin_of
from atomic_jupyter.transport.agent_install.homes import AgentHome
from tests.harness.kernel_client import BrowserLikeKernel
from tests.harness.kernel_widgets import panels
from tests.harness.support import path_without_node
from tests.harness.widget_text import has_class

# It installs and starts the current line whatever the line under test.
pytestmark = [pytest.mark.kernel, pytest.mark.agent, pytest.mark.one_line, pytest.mark.timeout(400)]

PIN = pin_of("current")


@pytest.fixture
def user_kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> BrowserLikeKernel:
    """A kernel as a new user's: no agent named anywhere, no node on PATH, and the user data
    folder (where the agent is installed) in ``tmp_path/data``."""
    for name in ("ATOMIC_AGENT_COMMAND", "ATOMIC_JUPYTER_AGENT_HOME"):
        monkeypatch.delenv(name, raising=False)
    env = {"XDG_DATA_HOME": str(tmp_path / "data"), "PATH": path_without_node(tmp_path / "bin")}
    kernel = BrowserLikeKernel(tmp_path, env, thread_guard=True)
    kernel.start()
    kernel.execute("%load_ext atomic_jupyter")
    yield kernel
    kernel.execute("import atomic_jupyter.notebook.registry as r; r.stop_all()", check=False)
    kernel.close()


def record_text(result) -> str:
    """What the cell keeps once its widgets are replaced: its displays' last text."""
    updates = [o["data"] for o in result.outputs if o["output_type"] == "update_display_data"]
    return "\n".join(d.get("text/plain", "") for d in updates)


def bar_values(kernel: BrowserLikeKernel, bar_id: str) -> list[float]:
    """Every value the page was sent for the progress bar, in order."""
    values = []
    for message in kernel.iter_messages("comm_msg"):
        content = message["content"]
        state = content.get("data", {}).get("state", {})
        if content.get("comm_id") == bar_id and "value" in state:
            values.append(state["value"])
    return values


def test_install_shows_progress_then_where_and_a_second_run_does_nothing(user_kernel, tmp_path):
    kernel = user_kernel
    home = tmp_path / "data" / "atomic-jupyter" / "agents"
    result = kernel.execute("%atomic_agent install", timeout=300)
    (bar,) = kernel.widgets("FloatProgress", last_shown=True)
    values = bar_values(kernel, bar.comm_id)
    moving = [v for v in values if 0 < v < 1]
    assert len(set(moving)) >= 5, values  # it moved, step by step, while npm downloaded
    assert values == sorted(values) and values[-1] == 1.0
    assert bar["bar_style"] == "success"
    assert not bar.is_open  # the cell keeps its text, not the widget
    text = record_text(result)
    folder = install_folder(home, PIN)
    assert f"Installed {PIN.describe()}" in text and str(folder) in text
    assert find_installed(PIN, [AgentHome(home, "test")]).found is not None

    again = kernel.execute("%atomic_agent install")
    text = record_text(again)
    assert "is already installed; nothing to do" in text
    assert len(kernel.widgets("FloatProgress", last_shown=True)) == 2

    doctor = kernel.execute("%atomic_agent doctor").stdout
    assert "the pinned agent in the user data folder" in doctor and str(folder) in doctor

    kernel.execute("%atomic_agent start --demo")
    status = kernel.execute("%atomic_agent status --full").stdout
    assert str(folder) in status and "demo/offline-demo" in status
    answer = kernel.execute("%%atomic_agent --wait\nhello", timeout=120)
    assert answer.ok


def test_start_without_an_agent_says_what_to_run_and_its_button_installs_and_starts(
    user_kernel, tmp_path
):
    kernel = user_kernel
    failed = kernel.execute("%atomic_agent start --demo", check=False)
    assert not failed.ok
    message = failed.plain_traceback
    assert "AgentNotInstalledError" in message
    assert "%atomic_agent install" in message and "atomic-jupyter install-agent" in message
    offer = kernel.find("Button", description=f"Install {PIN.package} {PIN.version} and start")
    kernel.click(offer.comm_id)
    kernel.wait_for(
        lambda: (
            kernel.widget(offer.comm_id)["description"]
            in ("Installed and started", "Install failed")
        ),
        timeout=300,
        what="the install and start to finish",
    )
    assert kernel.widget(offer.comm_id)["description"] == "Installed and started"
    (box,) = kernel.widgets("VBox", _dom_classes=has_class("atomic-install-offer"))
    (output,) = kernel.widgets("Output", within=box.comm_id)
    shown = "".join(o.get("text", "") for o in output["outputs"])
    assert f"Installed {PIN.describe()}" in shown  # the progress made way for the result
    assert not kernel.widgets("FloatProgress")  # closed
    status = kernel.execute("%atomic_agent status --full").stdout
    home = tmp_path / "data" / "atomic-jupyter" / "agents"
    assert str(install_folder(home, PIN)) in status
    (panel,) = panels(kernel)  # the session started: its panel is shown
    assert panel.text("atomic-state") in ("idle", "working…")
    assert os.path.isdir(install_folder(home, PIN))
