"""``%atomic_agent install`` and the offer made by ``start`` when no agent is installed, in a
real kernel driven like JupyterLab, with the user data folder in a temporary folder: real npm,
the real registry (npm's cache makes it quick), the real agent afterwards on the demo model."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from atomic_jupyter.transport.agent_install import find_installed, install_folder, pin_of
from atomic_jupyter.transport.agent_install.homes import AgentHome
from tests.harness.kernel_client import BrowserLikeKernel
from tests.harness.kernel_widgets import WIDGET_VIEW, displayed, live_view, outputs_of, panels
from tests.harness.no_node import path_without_node

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


def bar_values(kernel: BrowserLikeKernel, output_id: str) -> list[float]:
    """Every value the page was sent for the progress bar of an output, in order."""
    values = []
    for message in kernel.iter_messages("comm_msg"):
        content = message["content"]
        if content.get("comm_id") != output_id:
            continue
        sent = content.get("data", {}).get("content", {})  # a custom message: a patch
        for html in (sent.get("blocks") or {}).values():
            values += [
                float(v)
                for v in re.findall(r'class="atomic-install-bar"[^>]*value="([^"]+)"', html)
            ]
    return values


def test_install_shows_progress_then_where_and_a_second_run_does_nothing(user_kernel, tmp_path):
    kernel = user_kernel
    home = tmp_path / "data" / "atomic-jupyter" / "agents"
    result = kernel.execute("%atomic_agent install", timeout=300)
    (output,) = result.widget_ids
    values = bar_values(kernel, output)
    moving = [v for v in values if 0 < v < 1]
    assert len(set(moving)) >= 5, values  # it moved, step by step, while npm downloaded
    assert values == sorted(values) and values[-1] == 1.0
    assert output not in kernel.models  # the cell keeps its text, not the widget
    text = record_text(result)
    folder = install_folder(home, PIN)
    assert f"Installed {PIN.describe()}" in text and str(folder) in text
    assert find_installed(PIN, [AgentHome(home, "test")]).found is not None

    again = kernel.execute("%atomic_agent install")
    text = record_text(again)
    assert "is already installed; nothing to do" in text
    assert len(again.widget_ids) == 1 and not outputs_of(kernel, "install")

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
    (offer,) = outputs_of(kernel, "install-offer")
    label = f"Install {PIN.package} {PIN.version} and start"
    assert [b.text for b in offer.buttons("atomic-install-offer-button")] == [label]
    offer.press("atomic-install-offer-button")
    # The install shows its progress below the button, then the session's panel takes the
    # offer's place (a click has no cell of its own to display in).
    (panel,) = kernel.wait_for(lambda: panels(kernel), timeout=300, what="the install and start")
    values = bar_values(kernel, offer.comm_id)
    assert len({v for v in values if 0 < v < 1}) >= 5 and values[-1] == 1.0, values
    kernel.wait_for(lambda: offer.comm_id not in kernel.models, what="the offer to close")
    shown = live_view(failed.outputs)
    assert displayed(kernel, shown)[WIDGET_VIEW]["model_id"] == panel.comm_id
    status = kernel.execute("%atomic_agent status --full").stdout
    home = tmp_path / "data" / "atomic-jupyter" / "agents"
    assert str(install_folder(home, PIN)) in status
    assert panel.text("atomic-state") in ("idle", "working…")
    assert os.path.isdir(install_folder(home, PIN))
