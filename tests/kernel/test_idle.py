"""What a shared server needs from a kernel, in a real kernel driven like JupyterLab with the
real agent on the demo model: ``%config AtomicAgent`` lists the settings; a busy agent keeps
the kernel counted as active (a message on IOPub that no page draws); an idle one sleeps, the
panel says so, and its Send starts it again on the same conversation; every file the session
writes is ``0600`` and every folder ``0700``.

The kernel gets ``JUPYTERHUB_ACTIVITY_INTERVAL=0.5`` as a JupyterHub server would give it, so
the activity messages come twice a second.
"""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from atomic_jupyter.notebook.kernel_activity import ACTIVITY_COMM
from tests.harness.kernel_client import BrowserLikeKernel
from tests.harness.kernel_widgets import dialog_in, element_text, page_of, panels
from tests.harness.plugin import agent_kernel_env
from tests.harness.support import PINNED_AGENT

pytestmark = [pytest.mark.kernel, pytest.mark.agent]


@pytest.fixture(scope="module")
def kernel(
    tmp_path_factory: pytest.TempPathFactory, kernel_agent_home: Path
) -> Iterator[BrowserLikeKernel]:
    cwd = tmp_path_factory.mktemp("notebook")
    saved = tmp_path_factory.mktemp("conversations")
    env = {
        **agent_kernel_env([str(PINNED_AGENT)], kernel_agent_home),  # conversations saved
        "ATOMIC_JUPYTER_CONVERSATIONS": str(saved),
        "JUPYTERHUB_ACTIVITY_INTERVAL": "0.5",
    }
    with BrowserLikeKernel(cwd, env=env, thread_guard=True) as k:
        k.execute("%load_ext atomic_jupyter")
        k.execute("%atomic_agent start --demo")
        yield k


def activity(kernel: BrowserLikeKernel) -> int:
    """How many activity messages the kernel sent so far."""
    return sum(
        1
        for m in kernel.messages
        if m["header"]["msg_type"] == "comm_msg" and m["content"].get("comm_id") == ACTIVITY_COMM
    )


def state_of(kernel: BrowserLikeKernel) -> str:
    (panel,) = panels(kernel)
    return element_text(panel.html, "atomic-state")


def test_config_lists_the_settings_with_their_current_values(kernel: BrowserLikeKernel) -> None:
    kernel.execute("%config AtomicAgent.idle_sleep_minutes = 45")
    listed = kernel.execute("%config AtomicAgent").stdout
    for name in ("idle_sleep_minutes", "kernel_code", "answer_policies", "provider", "model"):
        assert f"AtomicAgent.{name}" in listed, listed
    assert "Current: 45.0" in listed
    kernel.execute("%config AtomicAgent.idle_sleep_minutes = 30")


def test_a_bad_answer_policy_is_refused_with_what_is_wrong(kernel: BrowserLikeKernel) -> None:
    result = kernel.execute(
        "%config AtomicAgent.answer_policies = [{'method': 'select', 'titel': 'x', 'answer': 'y'}]",
        check=False,
    )
    said = result.stdout + result.stderr + result.plain_traceback
    assert "answer_policies[0] has unknown keys ['titel']" in said, said


def test_an_agent_waiting_on_a_dialog_keeps_the_kernel_active(kernel: BrowserLikeKernel) -> None:
    area = kernel.execute("%%atomic_agent\n/demo-confirm").widget_ids[0]
    dialog = dialog_in(kernel, area, "confirm")
    before = activity(kernel)
    kernel.wait_for(
        lambda: activity(kernel) >= before + 3, timeout=30, what="activity while a dialog waits"
    )
    dialog.confirm(True)
    kernel.wait_for(lambda: "working" not in state_of(kernel), timeout=30, what="the run's end")


def test_an_idle_agent_sleeps_and_the_panel_send_wakes_it_on_the_same_conversation(
    kernel: BrowserLikeKernel,
) -> None:
    kernel.execute("%%atomic_agent --wait\nhello there", timeout=60)
    pid = int(kernel.execute("import atomic_jupyter as aj\nprint(aj.session().pid)").stdout)
    kernel.execute("%config AtomicAgent.idle_sleep_minutes = 0.02")  # 1.2 s, read live
    kernel.wait_for(lambda: "asleep" in state_of(kernel), timeout=30, what="the agent asleep")
    asleep = activity(kernel)
    assert "the next prompt starts it again" in state_of(kernel)
    assert kernel.execute("print(aj.session().alive, aj.session().state)").stdout.split() == [
        "False",
        "asleep",
    ]
    kernel.execute("%config AtomicAgent.idle_sleep_minutes = 30")
    (panel,) = panels(kernel)
    assert not panel.editor["disabled"]  # a person can still type and send
    panel.send("hello again")
    kernel.wait_for(
        lambda: "was asleep" in page_of(kernel, panel.comm_id), timeout=60, what="the wake note"
    )
    kernel.execute("aj.session().wait(timeout=60)")
    said = kernel.execute(
        "import json\n"
        "s = aj.session()\n"
        "texts = [m['content'] if isinstance(m['content'], str) else m['content'][0]['text']\n"
        "         for m in s.get_messages()['messages'] if m.get('role') == 'user']\n"
        "print(json.dumps({'pid': s.pid, 'texts': texts}))"
    ).stdout
    woke = json.loads(said)
    assert woke["pid"] != pid
    assert woke["texts"] == ["hello there", "hello again"]  # one conversation, continued
    assert activity(kernel) - asleep <= 2  # asleep, it said nothing (the woken run may have)


def test_every_file_the_session_writes_is_private(kernel: BrowserLikeKernel) -> None:
    kernel.execute("%%atomic_extension hello\nexport default function (pi) {}", check=False)
    kernel.execute("import atomic_jupyter as aj\naj.session().expose(lambda: 1, name='one')")
    kernel.execute("%%atomic_agent --wait\nhello", timeout=60)
    listed = kernel.execute(
        "import json, os\n"
        "from pathlib import Path\n"
        "s = aj.session()\n"
        "roots = [s.addon('conversations').path.parent, s.addon('kernel-tools').folder,\n"
        "         s.addon('demo').backend.home, s.addon('prototypes')._folder]\n"
        "modes = {}\n"
        "for root in roots:\n"
        "    for folder, dirs, files in os.walk(root):\n"
        "        for name in dirs + files:\n"
        "            path = Path(folder, name)\n"
        "            if not path.is_symlink():\n"
        "                modes[str(path)] = path.stat().st_mode\n"
        "    modes[str(root)] = root.stat().st_mode\n"
        "print(json.dumps(modes))"
    ).stdout
    modes = json.loads(listed)
    assert any(p.endswith(".jsonl") for p in modes)  # the agent's own conversation file
    assert any(p.endswith("tools.json") for p in modes)  # the secret is read and removed
    assert any(p.endswith("models.json") for p in modes)  # the demo's agent home
    wrong = {
        path: oct(stat.S_IMODE(mode))
        for path, mode in modes.items()
        if stat.S_IMODE(mode) != (0o700 if stat.S_ISDIR(mode) else 0o600)
    }
    assert not wrong, wrong
