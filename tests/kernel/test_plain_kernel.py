"""A plain kernel: an IPython kernel started by ``jupyter_client`` alone, as nbclient and
nbconvert start theirs, with no Jupyter server and so no notebook file it knows (no
``$JPY_SESSION_NAME``; ``$JPY_PARENT_PID`` is set, as jupyter_client sets it for every kernel).
``%atomic_agent doctor`` says there is no server and no notebook file, and a start's note
speaks of the working folder's saved conversations, never of "this notebook". A real kernel
driven like JupyterLab; the real agent on the demo model for the start.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness.kernel_client import BrowserLikeKernel
from tests.harness.plugin import agent_kernel_env
from tests.harness.support import PINNED_AGENT

pytestmark = [pytest.mark.kernel]


@pytest.fixture(scope="module")
def plain_kernel(
    tmp_path_factory: pytest.TempPathFactory, kernel_agent_home: Path
) -> Iterator[BrowserLikeKernel]:
    """A kernel whose environment names no notebook (whatever the tests' own environment has),
    whose sessions save their conversations (in a folder of its own)."""
    cwd = tmp_path_factory.mktemp("plain")
    env = agent_kernel_env([str(PINNED_AGENT)], kernel_agent_home)  # no --no-session
    env["ATOMIC_JUPYTER_CONVERSATIONS"] = str(tmp_path_factory.mktemp("conversations"))
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("JPY_SESSION_NAME", raising=False)
        kernel = BrowserLikeKernel(cwd, env=env)
        with kernel as started:
            patch.undo()  # the environment matters only as the kernel starts
            started.execute("%load_ext atomic_jupyter\nimport atomic_jupyter as aj")
            yield started


def row(report: str, label: str) -> str:
    """The value of the doctor's row ``label`` (its first line)."""
    (line,) = [line for line in report.splitlines() if line.strip().startswith(label + " ")]
    return line.strip().removeprefix(label).strip()


@pytest.mark.one_line  # no agent runs
def test_doctor_in_a_plain_kernel_says_no_server_and_no_notebook_file(
    plain_kernel: BrowserLikeKernel,
) -> None:
    said = plain_kernel.execute("import os\nprint(os.environ.get('JPY_PARENT_PID', ''))").stdout
    assert said.strip().isdigit()  # jupyter_client's mark on every kernel it starts
    report = plain_kernel.execute("%atomic_agent doctor").stdout
    server = row(report, "under a Jupyter server")
    assert server.startswith("no: no server named a notebook (JPY_SESSION_NAME is not set)"), report
    assert not server.startswith("yes")
    assert row(report, "this notebook").startswith("no notebook file known"), report
    assert row(report, "this folder") == str(plain_kernel.cwd)


@pytest.mark.agent
def test_a_start_in_a_plain_kernel_counts_the_folders_conversations_not_a_notebooks(
    plain_kernel: BrowserLikeKernel,
) -> None:
    plain_kernel.execute("%atomic_agent start --demo --name plain")
    plain_kernel.execute("%%atomic_agent --wait --name plain\nhello")  # a conversation is saved
    plain_kernel.execute("%atomic_agent stop --name plain")
    plain_kernel.execute("%atomic_agent start --demo --name plain")
    notes = plain_kernel.execute(
        "print(*aj.session('plain').addon('conversations').notes, sep='\\n')"
    ).stdout
    plain_kernel.execute("%atomic_agent stop --name plain")
    assert "This notebook" not in notes, notes
    assert notes.startswith(
        "No notebook file is known (no Jupyter server named one), so conversations are kept for "
        "the kernel's working folder, which has 1 saved conversation of session 'plain': "
    ), notes
