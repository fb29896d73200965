"""API keys never reach the page, the status output, error messages, logs or saved outputs.

Marker keys are given three ways (``--env``, the kernel's environment, ``env=`` in Python), and a
stand-in agent that is careless with them writes them to stderr, a notification and an error,
then exits. Everything the kernel sent to the frontend is then searched for them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.harness.kernel_client import BrowserLikeKernel
from tests.harness.kernel_widgets import dialog_in
from tests.harness.output_page import page_html, press
from tests.harness.plugin import agent_kernel_env
from tests.harness.support import EXTENSIONS, STANDIN_AGENT

pytestmark = pytest.mark.kernel

STANDIN = f"{sys.executable} {STANDIN_AGENT}"
ENV_KEY = "sk-marker-from-kernel-env-1234567"
FLAG_KEY = "tok-marker-from-env-flag-7654321"


@pytest.mark.one_line  # the stand-in agent
def test_secrets_never_reach_the_frontend(tmp_path: Path) -> None:
    env = {"MARKER_API_KEY": ENV_KEY}
    with BrowserLikeKernel(tmp_path, env=env) as kernel:
        kernel.execute("%load_ext atomic_jupyter")
        kernel.execute(f'%atomic_agent start --command "{STANDIN}" --env MARKER_TOKEN={FLAG_KEY}')
        status = kernel.execute("%atomic_agent status --full")
        kernel.execute("%%atomic_agent\n/scenario leak")
        kernel.wait_for(
            lambda: (
                kernel.execute(
                    "import atomic_jupyter.notebook.registry as r\nprint(r.get('default', running=False).state)"
                ).stdout.strip()
                == "exited"
            ),
            what="the careless agent to exit",
        )
        failed = kernel.execute("%%atomic_agent\nhello", check=False)
        more = kernel.execute(
            "import atomic_jupyter.notebook.registry as r\ns = r.get('default', running=False)\n"
            "print(s.stderr_tail); print(list(s.diagnostics)); print(s.notifications); print(repr(s.spec))"
        )
        # Everything the frontend received, but the cells' own source (what the user typed).
        everything = json.dumps(
            [m["content"] for m in kernel.messages if m["header"]["msg_type"] != "execute_input"],
            default=str,
        )
    assert failed.status == "error"
    assert "[redacted]" in more.stdout  # the stand-in did write them; they were caught
    for marker in (ENV_KEY, FLAG_KEY):
        assert marker not in status.stdout
        assert marker not in more.stdout
        assert marker not in (failed.evalue or "")
        assert marker not in everything


REAL_KEY = "sk-real-agent-marker-24681357"


@pytest.mark.agent
def test_secrets_echoed_by_a_real_extension_and_tool_never_reach_the_frontend(
    tmp_path: Path, agent_command, scripted_model
) -> None:
    """The real agent, an extension that puts a ``--env`` secret in its title, status,
    widget, notification and dialog, and a bash tool that prints it: the page and the
    session's state hold ``[redacted]`` instead, in every place."""
    _server, home, args = scripted_model
    env = agent_kernel_env(agent_command, home)
    extension = EXTENSIONS / "echo_secret.ts"
    with BrowserLikeKernel(tmp_path, env=env) as kernel:
        kernel.execute("%load_ext atomic_jupyter")
        kernel.execute(
            f"%atomic_agent start -e {extension} --env AJ_SECRET_TOKEN={REAL_KEY} -- {' '.join(args)}"
        )
        kernel.execute("%%atomic_agent --wait\nprint the secret")
        area = kernel.execute("%%atomic_agent\n/leak").widget_ids[0]
        dialog = dialog_in(kernel, area, "confirm")
        described = (dialog.description["title"], dialog.description["message"])
        assert described == ("confirm [redacted]?", "message [redacted]")
        dialog.confirm(True)  # Yes
        status = kernel.execute("%%atomic_agent --wait\n/leak-done-marker-unknown-command")
        state = kernel.execute(
            "import atomic_jupyter as aj\ns = aj.session()\n"
            "print(s.title); print(s.status); print(s.widgets); print(s.notifications)\n"
            "print([d.title for d in s.dialogs]); print([r.transcript.snapshot() for r in s.runs])\n"
            "print([e.to_dict() if hasattr(e, 'to_dict') else e for e in s.events])"
        )
        shown = kernel.execute("%atomic_agent status --full")
        everything = json.dumps(
            [m["content"] for m in kernel.messages if m["header"]["msg_type"] != "execute_input"],
            default=str,
        )
        kernel.execute("%atomic_agent stop")
    assert status.status == "ok"
    assert "title [redacted]" in state.stdout and "tool [redacted]" in state.stdout
    assert "confirm [redacted]?" in state.stdout
    assert REAL_KEY not in state.stdout
    assert REAL_KEY not in shown.stdout
    assert REAL_KEY not in everything


def _dialog_from_line(line: bytes):
    from atomic_jupyter.protocol.decode import MessageDecoder
    from atomic_jupyter.session.dialogs import Dialog
    from atomic_jupyter.transport.secrets import Redactor

    sent: list = []
    (request,) = MessageDecoder(scrubber=Redactor([UNIT_KEY])).feed(line + b"\n")
    dialog = Dialog(request, request.raw, sent.append)
    return dialog, sent


UNIT_KEY = "sk-unit-marker-11223344"


@pytest.mark.one_line  # a decoded line, no process
def test_a_dialog_shows_secrets_redacted_and_answers_with_the_options_as_sent() -> None:
    """Scrubbing what is shown must not change what is answered: the extension compares the
    answer with its own option (or saves the editor's text)."""
    from tests.harness.dialog_output import DialogOutput

    options = [f"use {UNIT_KEY}", "use [redacted]", "no"]
    line = json.dumps(
        {
            "type": "extension_ui_request",
            "id": "d1",
            "method": "select",
            "title": f"Key {UNIT_KEY}?",
            "options": options,
        }
    ).encode()
    dialog, sent = _dialog_from_line(line)
    view = DialogOutput(dialog, on_rule=None)
    described = view.content.dialogs["d1"]
    assert described["options"] == ["use [redacted]", "use [redacted]", "no"]
    assert described["title"] == "Key [redacted]?"
    assert UNIT_KEY not in json.dumps(view.content.dialogs) and UNIT_KEY not in page_html(
        view.widget
    )
    assert dialog.title == "Key [redacted]?" and UNIT_KEY not in json.dumps(dialog.request)
    # The first of two options that look the same.
    press(view.widget, {"type": "dialog", "id": "d1", "action": "choose", "index": 0})
    assert sent[0].to_dict()["value"] == f"use {UNIT_KEY}"
    assert UNIT_KEY not in dialog.outcome and dialog.answer == "use [redacted]"
    assert UNIT_KEY not in page_html(view.widget)

    prefill = f"API_KEY={UNIT_KEY}\nOTHER=1"
    line = json.dumps(
        {
            "type": "extension_ui_request",
            "id": "d2",
            "method": "editor",
            "title": "Edit .env",
            "prefill": prefill,
        }
    ).encode()
    dialog, sent = _dialog_from_line(line)
    view = DialogOutput(dialog, on_rule=None)
    shown = view.content.dialogs["d2"]["prefill"]
    assert shown == "API_KEY=[redacted]\nOTHER=1"
    assert UNIT_KEY not in page_html(view.widget)
    # Untouched (the text area holds what it was given): the text goes back as it came.
    press(view.widget, {"type": "dialog", "id": "d2", "action": "respond", "value": shown})
    assert sent[0].to_dict()["value"] == prefill
    assert UNIT_KEY not in page_html(view.widget)
