"""Saved conversations through real kernels of one notebook, the real agent (both lines) and
the scripted model: a new kernel continues the conversation (the model gets the earlier
messages, the panel shows the earlier turns), ``conversations`` (or its older name,
``sessions``) lists them with working Resume buttons, ``--no-save`` leaves nothing, and two kernels of the notebook never write one file.

Each kernel is a new process with the same environment, which is what a kernel restart is:
``$JPY_SESSION_NAME`` names the notebook, as the Jupyter server sets it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from atomic_jupyter.protocol.session_file import read_session
from tests.harness.kernel_client import BrowserLikeKernel
from tests.harness.kernel_widgets import (
    WIDGET_VIEW,
    PagePanel,
    displayed,
    elements,
    is_record_copy,
    outputs_of,
    panels,
    record_copy,
)
from tests.harness.plugin import agent_kernel_env
from tests.harness.support import PINNED_AGENT, agent_example
from tests.harness.widget_text import visible_text

pytestmark = [pytest.mark.kernel, pytest.mark.agent]

FIRST = "please say hello to the notebook"
SECOND = "do something dangerous with bash"
THIRD = "and now, what did we talk about?"
#: A secret in the kernel's environment that a prompt quotes: never shown again.
SECRET = "sk-notebook-secret-271828"


@pytest.fixture
def notebook(tmp_path: Path, scripted_model) -> Iterator[dict[str, str]]:
    """The environment of a kernel of one notebook, saving into its own folder."""
    _server, home, _args = scripted_model
    env = agent_kernel_env([str(PINNED_AGENT)], home)  # no --no-session: conversations are kept
    env["JPY_SESSION_NAME"] = str(tmp_path / "analysis.ipynb")
    env["ATOMIC_JUPYTER_CONVERSATIONS"] = str(tmp_path / "conversations")
    env["NOTEBOOK_API_KEY"] = SECRET
    return env


def start_line(scripted_model, options: str = "") -> str:
    _server, _home, args = scripted_model
    return f"%atomic_agent start {options} -- {' '.join(args)}".replace("  ", " ")


@contextmanager
def open_kernel(tmp_path: Path, env: dict[str, str], name: str) -> Iterator[BrowserLikeKernel]:
    """A kernel of the notebook (a restart is a new one), checked by the widget thread guard
    when it closes."""
    cwd = tmp_path / name
    cwd.mkdir(exist_ok=True)
    with BrowserLikeKernel(cwd, env=env, thread_guard=True) as kernel:
        kernel.execute("%load_ext atomic_jupyter\nimport atomic_jupyter as aj")
        yield kernel


def saved_files(env: dict[str, str]) -> list[Path]:
    return sorted(Path(env["ATOMIC_JUPYTER_CONVERSATIONS"]).rglob("*.jsonl"))


def user_texts(request) -> list[str]:
    from atomic_jupyter.addons.model_server.request import content_text

    return [content_text(m.get("content")) for m in request.messages if m.get("role") == "user"]


def ask(kernel: BrowserLikeKernel, prompt: str) -> None:
    """Send ``prompt`` from a cell and wait for its run to end."""
    kernel.execute(f"%%atomic_agent --wait\n{prompt}", timeout=60)


def two_runs(kernel: BrowserLikeKernel, scripted_model) -> None:
    kernel.execute(start_line(scripted_model))
    kernel.execute("%atomic_agent thinking low")
    kernel.execute("%atomic_agent name budget analysis")
    ask(kernel, f"{FIRST} (key {SECRET})")
    ask(kernel, f"{SECOND}")


def test_a_new_kernel_continues_the_conversation_and_shows_the_earlier_turns(
    tmp_path: Path, notebook: dict[str, str], scripted_model
) -> None:
    server, _home, _args = scripted_model
    with open_kernel(tmp_path, notebook, "first") as first:
        two_runs(first, scripted_model)
    (saved,) = saved_files(notebook)
    assert read_session(saved.read_text()).messages >= 4

    with open_kernel(tmp_path, notebook, "second") as second:
        started = second.execute(start_line(scripted_model, "--resume"))
        (panel_id,) = started.widget_ids
        panel = PagePanel(second, panel_id)
        second.wait_for(
            lambda: elements(panel.html, "atomic-earlier-view"), what="the earlier turns"
        )
        (shown,) = elements(panel.html, "atomic-earlier-view")
        said = visible_text(shown)
        assert "continued: " in said and " messages since " in said
        assert '<details class="atomic-earlier">' in shown  # folded
        assert "Earlier in this conversation (2 turns)" in said
        assert FIRST in said and SECOND in said
        assert "echo dangerous-but-fine" in said  # the tool call's card
        assert "<script" not in shown
        assert SECRET not in shown and "[redacted]" in said
        # The same model, thinking level and name.
        state = json.loads(
            second.execute("import json; print(json.dumps(aj.session().get_state()))").stdout
        )
        assert state["thinkingLevel"] == "low"
        assert state.get("sessionName") == "budget analysis"
        listing = second.execute("%atomic_agent conversations")
        (view,) = outputs_of(second, "conversations")
        rows = " ".join(view.texts("atomic-conversation"))
        assert "named 'budget analysis'" in rows and "[redacted]" in rows and SECRET not in rows
        assert all(SECRET not in d.get("text/plain", "") for d in listing.displays)
        # The record kept with the notebook holds them too.
        record = "".join(d.get("text/plain", "") for d in started.displays)
        assert "Earlier in this conversation (2 turns)" in record and FIRST in record

        ask(second, f"{THIRD}")
        asked = user_texts(server.requests[-1])
        assert asked[-1].endswith(THIRD)
        assert any(FIRST in t for t in asked) and any(SECOND in t for t in asked)
        (still,) = saved_files(notebook)  # the same file goes on
        assert still == saved
        assert THIRD in saved.read_text()


def test_restart_continues_the_same_conversation(
    tmp_path: Path, notebook: dict[str, str], scripted_model
) -> None:
    server, _home, _args = scripted_model
    with open_kernel(tmp_path, notebook, "restart") as kernel:
        kernel.execute(start_line(scripted_model))
        ask(kernel, f"{FIRST}")
        kernel.execute("%atomic_agent restart")
        ask(kernel, f"{THIRD}")
        assert any(FIRST in t for t in user_texts(server.requests[-1]))
        assert len(saved_files(notebook)) == 1


def test_conversations_lists_them_and_resume_continues_the_one_clicked(
    tmp_path: Path, notebook: dict[str, str], scripted_model
) -> None:
    with open_kernel(tmp_path, notebook, "listing") as kernel:
        kernel.execute(start_line(scripted_model))
        ask(kernel, f"{FIRST}")
        kernel.execute(start_line(scripted_model))  # a second, new conversation
        ask(kernel, f"{THIRD}")
        older, newer = sorted(saved_files(notebook), key=lambda p: p.stat().st_mtime)
        listing = kernel.execute("%atomic_agent conversations")
        (view_id,) = listing.widget_ids
        (view,) = outputs_of(kernel, "conversations")
        assert view.comm_id == view_id
        rows = view.texts("atomic-conversation")
        assert len(rows) == 2
        assert repr(THIRD) in rows[0] and repr(FIRST) in rows[1]  # newest first
        assert all("2 messages" in row and "session 'default'" in row for row in rows)

        def labels() -> list[str]:
            return [button.text for button in view.buttons("atomic-resume")]

        assert labels() == ["Resume", "Resume"]
        view.press("atomic-resume", 1)  # the older one
        kernel.wait_for(lambda: labels() == ["Resume", "Resumed"], timeout=60, what="the resume")
        assert view.text("atomic-conversations-said").startswith("Session 'default' ")
        # The record copy beside it says so too (a notebook saved now keeps it).
        copy = record_copy(listing.outputs)
        kernel.wait_for(
            lambda: "Session &#x27;default&#x27; " in displayed(kernel, copy)["text/html"],
            what="the record copy to say what the Resume did",
        )
        resumed = kernel.execute("print(aj.session().addon('conversations').path)").stdout.strip()
        assert resumed == str(older)
        ask(kernel, f"{SECOND}")
        assert SECOND in older.read_text() and SECOND not in newer.read_text()


def test_resume_in_a_new_kernel_shows_the_sessions_panel_in_the_listings_place(
    tmp_path: Path, notebook: dict[str, str], scripted_model
) -> None:
    """A click has no cell to display in: the panel of the session a Resume starts takes the
    listing's place (its live view and its record copy), and the listing is closed."""
    with open_kernel(tmp_path, notebook, "before") as kernel:
        kernel.execute(start_line(scripted_model))
        ask(kernel, f"{FIRST}")
    (saved,) = saved_files(notebook)
    with open_kernel(tmp_path, notebook, "after") as kernel:
        listing = kernel.execute("%atomic_agent conversations")
        (view,) = outputs_of(kernel, "conversations")
        shown, copy = listing.outputs
        assert displayed(kernel, shown)[WIDGET_VIEW]["model_id"] == view.comm_id
        view.press("atomic-resume")
        (panel,) = kernel.wait_for(lambda: panels(kernel), timeout=60, what="the session's panel")
        kernel.wait_for(lambda: view.comm_id not in kernel.models, what="the listing to close")
        # Where the listing was: the panel, and the panel's record copy.
        assert displayed(kernel, shown)[WIDGET_VIEW]["model_id"] == panel.comm_id
        kernel.wait_for(
            lambda: "agent session &#x27;default&#x27;" in displayed(kernel, copy)["text/html"],
            what="the panel's record copy in the listing's place",
        )
        assert is_record_copy({"data": displayed(kernel, copy)})
        kernel.wait_for(
            lambda: "continued" in " ".join(panel.texts("atomic-earlier-view")),
            what="the panel to say what it continued",
        )
        resumed = kernel.execute("print(aj.session().addon('conversations').path)").stdout
        assert resumed.strip() == str(saved)


def test_no_save_leaves_no_file(tmp_path: Path, notebook: dict[str, str], scripted_model) -> None:
    with open_kernel(tmp_path, notebook, "nosave") as kernel:
        kernel.execute(start_line(scripted_model, "--no-save"))
        ask(kernel, f"{FIRST}")
        kernel.execute("%atomic_agent stop")
    folder = Path(notebook["ATOMIC_JUPYTER_CONVERSATIONS"])
    assert not folder.exists() or [p for p in folder.rglob("*") if p.is_file()] == []


def test_two_kernels_of_one_notebook_never_write_one_file(
    tmp_path: Path, notebook: dict[str, str], scripted_model
) -> None:
    with open_kernel(tmp_path, notebook, "one") as first:
        first.execute(start_line(scripted_model))
        ask(first, f"{FIRST}")
        (original,) = saved_files(notebook)
        with open_kernel(tmp_path, notebook, "two") as second:
            started = second.execute(start_line(scripted_model, "--resume"))
            told = " ".join(visible_text(d.get("text/plain", "")) for d in started.displays)
            assert "open in another kernel" in told and "in a copy" in told
            ask(second, f"{SECOND}")
            ask(first, f"{THIRD}")
            files = saved_files(notebook)
            assert len(files) == 2
            (copy,) = [p for p in files if p != original]
            for path in files:
                lines = path.read_text().splitlines()
                headers = [line for line in lines if json.loads(line).get("type") == "session"]
                assert len(headers) == 1  # one conversation per file
                assert read_session(path.read_text()).problem is None
            assert THIRD in original.read_text() and SECOND not in original.read_text()
            assert SECOND in copy.read_text() and THIRD not in copy.read_text()
            assert FIRST in copy.read_text()  # the copy holds the earlier turns


def test_a_conversation_that_cannot_be_read_is_reported_and_left_alone(
    tmp_path: Path, notebook: dict[str, str], scripted_model
) -> None:
    with open_kernel(tmp_path, notebook, "damaged") as kernel:
        kernel.execute(start_line(scripted_model))
        ask(kernel, f"{FIRST}")
        kernel.execute("%atomic_agent stop")
        (saved,) = saved_files(notebook)
        damaged = b"this is not a conversation\n\x00\x01"
        saved.write_bytes(damaged)
        failed = kernel.execute(start_line(scripted_model, f"--resume {saved.name}"), check=False)
        assert failed.ename == "AgentStartError"
        assert "cannot be continued" in failed.evalue and "left as it is" in failed.evalue
        assert saved.read_bytes() == damaged
        listing = kernel.execute("%atomic_agent sessions")
        (view,) = outputs_of(kernel, "conversations")
        assert view.comm_id == listing.widget_ids[0]
        assert "cannot be continued" in " ".join(view.texts("atomic-conversation"))
        assert view.buttons("atomic-resume") == []  # nothing to resume


GREETER = (
    "export default function (pi: ExtensionAPI) {\n"
    '  pi.registerCommand("greet", { description: "Greets", handler: async (_args, ctx) => {\n'
    '    ctx.ui.notify("hello from the prototype", "info");\n'
    "  } });\n"
    "}\n"
)


def test_prototypes_defined_in_cells_come_back_with_the_conversation(
    tmp_path: Path, notebook: dict[str, str], scripted_model
) -> None:
    from tests.agent.test_prototyping import HEADER

    with open_kernel(tmp_path, notebook, "prototypes-one") as first:
        first.execute(start_line(scripted_model))
        defined = first.execute(f"%%atomic_extension greeter\n{HEADER}{GREETER}")
        assert defined.ok
        ask(first, f"{FIRST}")
    with open_kernel(tmp_path, notebook, "prototypes-two") as second:
        started = second.execute(start_line(scripted_model, "--resume"))
        told = " ".join(d.get("text/plain", "") for d in started.displays)
        assert "Prototype extensions defined again: greeter." in told
        assert second.execute("%atomic_extension list").stdout.split() == ["greeter"]
        ask(second, "/greet")
        notes = second.execute("print([n['message'] for n in aj.session().notifications])").stdout
        assert "hello from the prototype" in notes


def test_restart_after_new_goes_on_in_the_new_conversation(
    tmp_path: Path, notebook: dict[str, str], scripted_model
) -> None:
    server, _home, _args = scripted_model
    with open_kernel(tmp_path, notebook, "new") as kernel:
        kernel.execute(start_line(scripted_model))
        ask(kernel, f"{FIRST}")
        kernel.execute("%atomic_agent new")
        ask(kernel, f"{SECOND}")
        kernel.execute("%atomic_agent restart")
        ask(kernel, f"{THIRD}")
        asked = user_texts(server.requests[-1])
        assert any(SECOND in t for t in asked) and not any(FIRST in t for t in asked)
        files = saved_files(notebook)
        assert len(files) == 2
        assert [p for p in files if THIRD in p.read_text()] == [
            p for p in files if SECOND in p.read_text()
        ]


def test_the_agent_s_own_todo_extension_finds_its_list_again_in_a_continued_conversation(
    tmp_path: Path, notebook: dict[str, str], scripted_model
) -> None:
    """``todo.ts`` (the agent's example) rebuilds its list from the conversation's tool
    results when a session starts: continued in a new kernel, the list is still there."""
    server, _home, _args = scripted_model
    todo = f"-e {agent_example('todo.ts')}"
    with open_kernel(tmp_path, notebook, "todo-one") as first:
        first.execute(start_line(scripted_model, todo))
        ask(first, 'kernel call todo {"action": "add", "text": "buy oat milk"}')
    with open_kernel(tmp_path, notebook, "todo-two") as second:
        started = second.execute(start_line(scripted_model, f"{todo} --resume"))
        told = " ".join(d.get("text/plain", "") for d in started.displays)
        assert "continued: " in told and "buy oat milk" in told  # the earlier tool card
        ask(second, 'kernel call todo {"action": "list"}')
        results = server.requests[-1].tool_results
        from atomic_jupyter.addons.model_server.request import content_text

        assert "buy oat milk" in content_text(results[-1].get("content"))
