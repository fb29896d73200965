"""The Python API against the real pinned agent (pi) and the UI test extension.

Every test drives ``tests/extensions/ui_everything.ts`` through extension commands (no model
or API key needed) and asserts on what the extension itself received: it reports each answer
back with ``notify("got <method>: <JSON>")``.

Tests that leave the agent running and its dialogs settled share one module-wide session;
tests that crash, stop or restart an agent start their own. Nothing here sleeps hoping that
something happened: every wait polls an observable condition under a monotonic deadline.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import atomic_jupyter as aj
from atomic_jupyter import (
    AgentNotRunningError,
    AgentSession,
    AgentStartError,
    CommandError,
    DialogNotPendingError,
    SessionNotFoundError,
)
from atomic_jupyter.transport.launch import LaunchSpec
from atomic_jupyter.transport.process import AgentProcess
from tests.harness.support import (
    EXTENSIONS,
    cancel_pending,
    gone,
    group_alive,
    processes_where,
    stop_quietly,
    unique_name,
    wait_until,
)

pytestmark = pytest.mark.agent


STARTUP_CRASH_EXTENSION = str(EXTENSIONS / "agent_startup_crash.ts")
LOAD_THROWS_EXTENSION = str(EXTENSIONS / "agent_load_throws.ts")


# --------------------------------------------------------------------------- helpers


def js(value: Any) -> str:
    """``JSON.stringify(value)`` as the extension writes it (non-ASCII left as is)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class Command:
    """One extension command sent to a session, and what came of it."""

    def __init__(self, session: AgentSession, text: str) -> None:
        self.session = session
        self.text = text
        self.notes_before = len(session.notifications)
        self.dialogs_before = {d.id for d in session.dialogs}
        self.run = session.prompt(text, display=False)

    def notes(self) -> list[dict[str, str]]:
        """Notifications that arrived since the command was sent."""
        return self.session.notifications[self.notes_before :]

    def got(self) -> list[str]:
        """The extension's ``got ...`` reports since the command was sent."""
        return [n["message"] for n in self.notes() if n["message"].startswith("got ")]

    def wait_got(self, count: int = 1, timeout: float = 10) -> list[str]:
        what = f"{count} 'got' report(s) from {self.text!r}"
        wait_until(lambda: len(self.got()) >= count, what, timeout)
        return self.got()

    def new_dialogs(self) -> list[aj.Dialog]:
        return [d for d in self.session.dialogs if d.id not in self.dialogs_before]

    def wait_dialogs(self, count: int = 1, timeout: float = 10) -> list[aj.Dialog]:
        """Wait until ``count`` new dialogs are pending; return them, oldest first."""

        def pending() -> list[aj.Dialog] | None:
            found = [d for d in self.new_dialogs() if d.pending]
            return found if len(found) >= count else None

        return wait_until(pending, f"{count} pending dialog(s) from {self.text!r}", timeout)

    def wait_dialog(self, method: str, timeout: float = 10) -> aj.Dialog:
        (dialog,) = self.wait_dialogs(1, timeout)
        assert dialog.method == method, dialog.request
        return dialog

    def finish(self, timeout: float = 10) -> None:
        """Wait until the agent answered the command (its handler finished) successfully."""
        answered = self.run.wait_answered(timeout)
        assert answered, f"the agent did not answer {self.text!r} within {timeout} s"
        assert self.run.error is None, self.run.error
        assert self.run.response is not None and self.run.response.success


def spy_on_sends(session: AgentSession, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Record every JSON value the session writes to the agent's stdin from now on, but the
    run tracker's own state probes (``get_state``), which it may send at any time."""
    process = session.client.process
    assert process is not None
    sent: list[Any] = []
    original = process.send

    def send(line: bytes) -> Any:
        value = json.loads(line)
        if value.get("type") != "get_state":
            sent.append(value)
        return original(line)

    monkeypatch.setattr(process, "send", send)
    return sent


def pid_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def started(
    agent_command: list[str], ui_extension: str
) -> Iterator[tuple[AgentSession, dict[str, Any]]]:
    """The shared session, and a snapshot of what it looked like right after start()."""
    session = aj.start(
        command=agent_command,
        extensions=[ui_extension],
        name=unique_name("agent-shared"),
        display=False,
    )
    try:
        snapshot = {
            "title": session.title,
            "status": session.status,
            "alive": session.alive,
            "pid": session.pid,
            "returncode": session.returncode,
            "state": session.state,
        }
        yield session, snapshot
    finally:
        stop_quietly(session)


@pytest.fixture
def shared(started: tuple[AgentSession, dict[str, Any]]) -> Iterator[AgentSession]:
    """The shared session; each test must leave it running with no pending dialog."""
    session, _ = started
    assert session.alive, f"the shared agent is not running: {session.stderr_tail}"
    assert not session.pending_dialogs, session.pending_dialogs
    yield session
    cancel_pending(session)  # a failed test must not block the next one


@pytest.fixture
def own_session(
    agent_command: list[str], ui_extension: str
) -> Iterator[Callable[[str], AgentSession]]:
    """Start sessions of the test's own (stopped at the end)."""
    sessions: list[AgentSession] = []

    def start(prefix: str) -> AgentSession:
        session = AgentSession(
            unique_name(prefix), LaunchSpec(command=agent_command, extensions=(ui_extension,))
        )
        sessions.append(session)
        return session.start()

    yield start
    for session in sessions:
        stop_quietly(session)


# --------------------------------------------------------------------------- start


def test_start_runs_session_start_and_builds_argv(
    started: tuple[AgentSession, dict[str, Any]], ui_extension: str
) -> None:
    session, snapshot = started
    assert snapshot["title"] == "UI test extension"
    assert snapshot["status"] == {"ui-test": "ready"}
    assert snapshot["alive"] is True
    assert isinstance(snapshot["pid"], int) and snapshot["pid"] > 0
    assert snapshot["returncode"] is None
    assert snapshot["state"] == "idle"
    assert not pid_gone(session.pid)

    argv = session.argv
    i = argv.index("--mode")
    assert argv[i + 1] == "rpc"
    j = argv.index("-e")
    assert os.path.isabs(argv[j + 1])
    assert argv[j + 1] == os.path.abspath(ui_extension)
    assert aj.session(session.name) is session


# --------------------------------------------------------------------------- dialogs


def test_select_answered(shared: AgentSession) -> None:
    cmd = Command(shared, "/ui-select")
    dialog = cmd.wait_dialog("select")
    assert dialog.request == {
        "type": "extension_ui_request",
        "id": dialog.id,
        "method": "select",
        "title": "Pick one",
        "options": ["Alpha", "Beta", "Gamma"],
    }
    assert dialog.state == "pending" and dialog.answer is None and dialog.deadline is None
    assert dialog.title == "Pick one"
    assert dialog.typed.options == ("Alpha", "Beta", "Gamma")
    assert not cmd.run.answered, "the agent answered the command before its dialog was answered"

    dialog.respond("Beta")
    assert dialog.state == "answered"
    assert dialog.answer == "Beta"
    assert dialog.outcome == "Pick one → Beta (answered by code)"
    assert cmd.wait_got() == ['got select: "Beta"']
    cmd.finish()
    with pytest.raises(DialogNotPendingError):
        dialog.respond("Alpha")


def test_select_rejects_a_value_that_is_no_option(
    shared: AgentSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    cmd = Command(shared, "/ui-select")
    dialog = cmd.wait_dialog("select")
    sent = spy_on_sends(shared, monkeypatch)
    with pytest.raises(ValueError):
        dialog.respond("Delta")
    with pytest.raises(TypeError):
        dialog.respond(True)
    assert sent == [] and dialog.pending
    dialog.respond("Gamma")
    assert sent == [{"type": "extension_ui_response", "id": dialog.id, "value": "Gamma"}]
    assert cmd.wait_got() == ['got select: "Gamma"']
    cmd.finish()


def test_select_cancelled(shared: AgentSession) -> None:
    cmd = Command(shared, "/ui-select")
    dialog = cmd.wait_dialog("select")
    dialog.cancel()
    assert dialog.state == "cancelled"
    assert dialog.answer is None
    assert dialog.outcome == "Pick one → cancelled (answered by code)"
    assert cmd.wait_got() == ["got select: undefined"]
    cmd.finish()
    with pytest.raises(DialogNotPendingError):
        dialog.cancel()


@pytest.mark.parametrize("answer", [True, False])
def test_confirm_answered(shared: AgentSession, answer: bool) -> None:
    cmd = Command(shared, "/ui-confirm")
    dialog = cmd.wait_dialog("confirm")
    assert dialog.request == {
        "type": "extension_ui_request",
        "id": dialog.id,
        "method": "confirm",
        "title": "Proceed?",
        "message": "This is the message.\nIt has two lines.",
    }
    with pytest.raises(TypeError):
        dialog.respond("yes")
    dialog.respond(answer)
    assert dialog.state == "answered"
    assert dialog.answer is answer
    assert dialog.outcome == f"Proceed? → {'Yes' if answer else 'No'} (answered by code)"
    assert cmd.wait_got() == [f"got confirm: {js(answer)}"]
    cmd.finish()


def test_confirm_cancelled_gives_false(shared: AgentSession) -> None:
    cmd = Command(shared, "/ui-confirm")
    dialog = cmd.wait_dialog("confirm")
    dialog.cancel()
    assert dialog.state == "cancelled" and dialog.answer is None
    assert cmd.wait_got() == ["got confirm: false"]
    cmd.finish()


def test_input_typed_text(shared: AgentSession) -> None:
    cmd = Command(shared, "/ui-input")
    dialog = cmd.wait_dialog("input")
    assert dialog.request == {
        "type": "extension_ui_request",
        "id": dialog.id,
        "method": "input",
        "title": "Your name",
        "placeholder": "type a name…",
    }
    dialog.respond("Ada Lovelace")
    assert dialog.state == "answered" and dialog.answer == "Ada Lovelace"
    assert dialog.outcome == "Your name → Ada Lovelace (answered by code)"
    assert cmd.wait_got() == ['got input: "Ada Lovelace"']
    cmd.finish()


def test_input_empty_string_is_not_cancel(shared: AgentSession) -> None:
    cmd = Command(shared, "/ui-input")
    dialog = cmd.wait_dialog("input")
    dialog.respond("")
    assert dialog.state == "answered" and dialog.answer == ""
    assert cmd.wait_got() == ['got input: ""']
    cmd.finish()


def test_editor_multiline_unicode_exact(shared: AgentSession) -> None:
    text = 'Zeile 1\nÜber 🚀\u2028x\r\n\ttab "quoted" \\ back\u2029end\u0085'
    cmd = Command(shared, "/ui-editor")
    dialog = cmd.wait_dialog("editor")
    assert dialog.request == {
        "type": "extension_ui_request",
        "id": dialog.id,
        "method": "editor",
        "title": "Edit the text",
        "prefill": "Line 1\nLine 2",
    }
    dialog.respond(text)
    assert dialog.state == "answered" and dialog.answer == text
    (got,) = cmd.wait_got()
    assert got == f"got editor: {js(text)}"
    assert json.loads(got.removeprefix("got editor: ")) == text
    cmd.finish()


def test_select_many_options(shared: AgentSession) -> None:
    cmd = Command(shared, "/ui-select-many")
    dialog = cmd.wait_dialog("select")
    options = [f"Option {i}" for i in range(1, 13)]
    assert dialog.request["options"] == options
    assert list(dialog.typed.options) == options
    assert dialog.title == "Pick from many"
    dialog.respond("Option 12")
    assert cmd.wait_got() == ['got select: "Option 12"']
    cmd.finish()


# --------------------------------------------------------------------------- timeouts


@pytest.mark.parametrize(
    ("text", "method", "late", "default"),
    [
        ("/ui-select 800", "select", "Alpha", "undefined"),
        ("/ui-confirm 800", "confirm", True, "false"),
    ],
)
def test_dialog_timeout_expires_on_both_sides(
    shared: AgentSession,
    monkeypatch: pytest.MonkeyPatch,
    text: str,
    method: str,
    late: Any,
    default: str,
) -> None:
    cmd = Command(shared, text)
    dialog = cmd.wait_dialog(method)
    assert dialog.request["timeout"] == 800
    assert dialog.typed.timeout == 800
    assert dialog.deadline is not None
    # The client expires it a little before the agent does (EXPIRY_MARGIN_S).
    assert 0 <= dialog.seconds_left() <= 0.6 + 1e-6

    wait_until(lambda: dialog.state == "expired", f"the {method} dialog to expire on the client", 5)
    assert dialog.answer is None
    assert "timed out" in dialog.outcome
    assert cmd.wait_got(timeout=5) == [f"got {method}: {default}"]
    cmd.finish()

    sent = spy_on_sends(shared, monkeypatch)
    with pytest.raises(DialogNotPendingError, match="expired"):
        dialog.respond(late)
    with pytest.raises(DialogNotPendingError):
        dialog.cancel()
    assert sent == [], "a late answer was written to the agent"
    assert dialog.state == "expired" and dialog.answer is None
    # A full round trip: whatever the agent would have reported about a late answer came before.
    shared.request("get_state")
    assert cmd.got() == [f"got {method}: {default}"]


# --------------------------------------------------------------------------- concurrency


def test_two_dialogs_at_once_answered_in_reverse(shared: AgentSession) -> None:
    cmd = Command(shared, "/ui-two")
    first, second = cmd.wait_dialogs(2)
    assert (first.method, first.title) == ("select", "First of two")
    assert (second.method, second.title) == ("input", "Second of two")
    assert first.id != second.id
    assert {d.id for d in shared.pending_dialogs} == {first.id, second.id}

    second.respond("hello")
    assert second.state == "answered" and first.state == "pending"
    first.respond("Two")
    assert first.state == "answered"
    assert cmd.wait_got() == ['got two: ["Two","hello"]']
    cmd.finish()
    assert shared.pending_dialogs == []


# --------------------------------------------------------------------------- content kept verbatim


def test_unicode_line_separators_preserved(shared: AgentSession) -> None:
    diagnostics_before = shared.diagnostic_count
    cmd = Command(shared, "/ui-unicode")
    dialog = cmd.wait_dialog("select")
    assert dialog.typed.title == "Ünïcödé 🚀 title\u2028sep"
    assert dialog.typed.options == ("日本語", "emoji 🎉", "line\u2029sep")
    assert dialog.request["title"] == "Ünïcödé 🚀 title\u2028sep"
    assert shared.status["unicode"] == "naïve 日本語 🚀 a\u2028b\u2029c"
    # U+2028/U+2029 inside JSON strings did not split a line into broken halves.
    assert shared.diagnostic_count == diagnostics_before, list(shared.diagnostics)

    dialog.respond("line\u2029sep")
    assert cmd.wait_got() == ['got select: "line\u2029sep"']
    cmd.finish()


def html(where: str) -> str:
    """What ``x(where)`` builds in ui_everything.ts."""
    return (
        f"<img src=x onerror=\"window.__pwned='{where}'\">"
        f"<script>window.__pwned='{where}'</script><b>{where}</b>"
    )


def test_html_like_strings_kept_verbatim(shared: AgentSession) -> None:
    cmd = Command(shared, "/ui-html")
    select = cmd.wait_dialog("select")
    # Every fire-and-forget request was written before the first dialog.
    assert shared.title == html("title")
    assert shared.status["html"] == html("status")
    assert shared.widgets["html"] == {
        "lines": [html("widget-line-1"), html("widget-line-2")],
        "placement": "aboveEditor",
    }
    assert cmd.notes()[0] == {"message": html("notify"), "type": "warning"}
    assert shared.editor_text == html("editor")

    assert select.title == html("select-title")
    assert select.request["options"] == [html("option-1"), html("option-2")]
    select.respond(html("option-2"))
    assert cmd.wait_got(1) == [f"got select: {js(html('option-2'))}"]

    confirm = cmd.wait_dialog("confirm")
    assert confirm.request["title"] == html("confirm-title")
    assert confirm.request["message"] == html("confirm-message")
    confirm.respond(True)
    assert cmd.wait_got(2)[1] == "got confirm: true"

    entry = cmd.wait_dialog("input")
    assert entry.request["title"] == html("input-title")
    assert entry.request["placeholder"] == html("placeholder")
    entry.respond(html("typed"))
    assert cmd.wait_got(3)[2] == f"got input: {js(html('typed'))}"

    editor = cmd.wait_dialog("editor")
    assert editor.request["title"] == html("editor-title")
    assert editor.request["prefill"] == html("prefill")
    editor.respond(html("edited"))
    assert cmd.wait_got(4)[3] == f"got editor: {js(html('edited'))}"
    cmd.finish()
    assert [d.state for d in (select, confirm, entry, editor)] == ["answered"] * 4


def test_fire_and_forget_methods(shared: AgentSession) -> None:
    cmd = Command(shared, "/ui-fire")
    cmd.finish()
    # The command's answer comes after everything its handler wrote.
    assert shared.title == "Fired title"
    status = shared.status
    assert status["one"] == "status one"
    assert "two" not in status
    widgets = shared.widgets
    assert widgets["top"] == {"lines": ["top line 1", "top line 2"], "placement": "aboveEditor"}
    assert widgets["bottom"] == {"lines": ["bottom line"], "placement": "belowEditor"}
    assert "gone" not in widgets
    assert cmd.notes() == [
        {"message": "an info note", "type": "info"},
        {"message": "a warning note", "type": "warning"},
        {"message": "an error note", "type": "error"},
        {"message": "a default note", "type": "info"},
    ]
    assert shared.editor_text == "prefilled by the extension"
    assert [d for d in cmd.new_dialogs()] == []


# --------------------------------------------------------------------------- robustness


def test_garbage_lines_become_diagnostics(shared: AgentSession) -> None:
    before = shared.diagnostic_count
    cmd = Command(shared, "/ui-garbage")
    dialog = cmd.wait_dialog("confirm")
    # The three garbage lines came before the dialog request on the same stream.
    assert shared.diagnostic_count == before + 3
    new = list(shared.diagnostics)[-3:]
    assert "this is not json" in new[0]
    assert '{"broken":' in new[1]
    assert "[1, 2, 3]" in new[2]
    assert dialog.title == "After garbage"
    dialog.respond(True)
    assert cmd.wait_got() == ["got confirm: true"]
    cmd.finish()
    assert shared.alive


def test_flood_of_status_updates(shared: AgentSession) -> None:
    cmd = Command(shared, "/ui-flood 5000")
    wait_until(
        lambda: any(n["message"] == "flood done: 5000" for n in cmd.notes()),
        "the 'flood done: 5000' notification",
        20,
    )
    assert shared.status["flood"] == "update 5000 of 5000"
    cmd.finish()
    assert shared.alive


# --------------------------------------------------------------------------- request()


def test_request_get_commands_lists_extension_commands(
    shared: AgentSession, ui_extension: str
) -> None:
    response = shared.request("get_commands")
    assert response.success is True
    assert response.command == "get_commands"
    commands = {c["name"]: c for c in response.data["commands"]}
    expected = {
        "ui-select",
        "ui-select-many",
        "ui-confirm",
        "ui-input",
        "ui-editor",
        "ui-two",
        "ui-unicode",
        "ui-html",
        "ui-fire",
        "ui-flood",
        "ui-garbage",
        "ui-crash",
    }
    assert expected <= set(commands)
    assert commands["ui-flood"]["source"] == "extension"
    description = "N status updates as fast as possible (default 2000)"
    assert commands["ui-flood"]["description"] == description
    # pi 0.73.1 puts the path under "sourceInfo" (docs/rpc.md shows a top-level "path").
    assert commands["ui-select"]["sourceInfo"]["path"] == os.path.abspath(ui_extension)


def test_request_keyword_form_and_state(shared: AgentSession) -> None:
    response = shared.request("get_state")
    assert response.command == "get_state"
    assert response.data["isStreaming"] is False
    assert shared.request({"type": "get_state"}).data["sessionId"] == response.data["sessionId"]


def test_request_refused_raises_command_error(shared: AgentSession) -> None:
    with pytest.raises(CommandError) as info:
        shared.request({"type": "set_model", "provider": "nope", "modelId": "nope"})
    assert info.value.command == "set_model"
    assert info.value.error == "Model not found: nope/nope"
    assert "Model not found: nope/nope" in str(info.value)
    assert shared.alive


@pytest.mark.one_line  # refused before anything is sent
def test_request_rejects_a_command_without_type(shared: AgentSession) -> None:
    with pytest.raises(TypeError):
        shared.request({"provider": "x"})


def test_unknown_command_type_raises_command_error(shared: AgentSession) -> None:
    started_at = time.monotonic()
    with pytest.raises(CommandError) as info:
        shared.request({"type": "no_such_command_xyz"}, timeout=2)
    assert info.value.error == "Unknown command: no_such_command_xyz"
    assert time.monotonic() - started_at < 1.5


def test_unknown_command_type_answer_is_recorded(shared: AgentSession) -> None:
    """What pi 0.73.1 really answers to an unknown command: an error with no id."""
    with pytest.raises(aj.AtomicAgentError) as info:
        shared.request({"type": "no_such_command_abc"}, timeout=1)

    # Today the id-less answer is only seen as a diagnostic; once the bug above is fixed it
    # is the CommandError itself. Either way the agent's text must reach the user. (The
    # diagnostic is written by the reader thread: it may come after the request timed out.)
    def seen() -> list[str]:
        return [str(info.value), *shared.diagnostics]

    wait_until(
        lambda: any("Unknown command: no_such_command_abc" in text for text in seen()),
        "the agent's answer to the unknown command",
        10,
    )
    assert any("Unknown command: no_such_command_abc" in text for text in seen()), seen()
    assert shared.alive


# --------------------------------------------------------------------------- crash, restart


def test_crash_mid_dialog_then_restart(own_session: Callable[[str], AgentSession]) -> None:
    session = own_session("agent-crash")
    old_pid = session.pid
    cmd = Command(session, "/ui-crash")
    dialog = cmd.wait_dialog("select")
    assert dialog.title == "Doomed dialog"

    wait_until(lambda: session.state == "exited", "the agent to exit after /ui-crash", 5)
    assert session.returncode == 3
    assert session.alive is False
    # The stderr reader is a thread of its own (the exit watcher waits for it half a second).
    wait_until(lambda: "exiting on purpose" in session.stderr_tail, "the agent's stderr", 5)
    # The dialog is closed and the command failed on the exit watcher's thread, after the
    # state says "exited".
    wait_until(lambda: dialog.state == "closed", "the dialog to close", 5)
    wait_until(lambda: cmd.run.answered, "the command to fail", 5)
    assert "exited with code 3" in dialog.outcome
    with pytest.raises(DialogNotPendingError):
        dialog.respond("Answered")
    assert cmd.run.answered
    assert cmd.run.error is not None and "exited with code 3" in cmd.run.error
    with pytest.raises(AgentNotRunningError) as info:
        session.request("get_state")
    message = str(info.value)
    assert "exited with code 3" in message
    assert "restart" in message
    with pytest.raises(AgentNotRunningError):
        session.prompt("/ui-select", display=False)

    crashed = session.client.process
    session.restart()
    assert session.alive and session.state == "idle"
    assert session.pid != old_pid
    # The crashed process is the old one, ended with its own code, and not reused.
    assert crashed is not None and (crashed.pid, crashed.returncode) == (old_pid, 3)
    assert gone(old_pid)
    assert session.returncode is None
    assert session.title == "UI test extension"
    assert dialog.state == "closed"
    cmd = Command(session, "/ui-select")
    fresh = cmd.wait_dialog("select")
    fresh.respond("Alpha")
    assert cmd.wait_got() == ['got select: "Alpha"']
    cmd.finish()


# --------------------------------------------------------------------------- start-up failures


class StartFailure:
    """An agent that cannot start, and what the error must tell the user."""

    def __init__(
        self,
        spec: Callable[[list[str]], LaunchSpec],
        message: list[str],
        returncode: int | None,
        timeout: float = 10,
    ) -> None:
        self.spec = spec
        self.message = message
        self.returncode = returncode
        self.timeout = timeout


MISSING_EXECUTABLE = StartFailure(
    lambda agent: LaunchSpec(command=["/nonexistent/agent-xyz"]),
    ["/nonexistent/agent-xyz", "not found"],
    returncode=None,
)
SHELL_EXITS_7 = StartFailure(
    lambda agent: LaunchSpec(command=["bash", "-c", "echo marker-xyz >&2; exit 7"]),
    # the agent's stderr and its command line are shown
    ["exited during start-up with code 7", "marker-xyz", "bash -c"],
    returncode=7,
)
START_FAILURES = [
    # No agent starts in these two (a missing file, a shell): one line is enough.
    pytest.param(
        MISSING_EXECUTABLE,
        id="missing-executable-is-named-as-not-found",
        marks=pytest.mark.one_line,
    ),
    pytest.param(
        SHELL_EXITS_7,
        id="agent-exiting-at-start-shows-code-stderr-and-command",
        marks=pytest.mark.one_line,
    ),
    pytest.param(
        # pi exits with the extension's own code when its factory calls process.exit(7).
        StartFailure(
            lambda agent: LaunchSpec(command=agent, extensions=(STARTUP_CRASH_EXTENSION,)),
            ["exited during start-up with code 7", "marker-7f3a", STARTUP_CRASH_EXTENSION],
            returncode=7,
            timeout=30,
        ),
        id="pi-extension-factory-exit-shows-its-code-and-command",
    ),
    pytest.param(
        # pi 0.73.1 in RPC mode does not go on without a broken extension: it exits with 1.
        StartFailure(
            lambda agent: LaunchSpec(command=agent, extensions=(LOAD_THROWS_EXTENSION,)),
            ["exited during start-up with code 1", "Failed to load extension", "marker-c41d"],
            returncode=1,
            timeout=30,
        ),
        id="pi-extension-throwing-at-load-stops-the-agent",
    ),
]


@pytest.mark.parametrize("failure", START_FAILURES)
def test_start_failure_raises_agent_start_error_and_leaves_the_session_exited(
    failure: StartFailure, agent_command: list[str]
) -> None:
    session = AgentSession(unique_name("agent-start-fails"), failure.spec(agent_command))
    try:
        with pytest.raises(AgentStartError) as info:
            session.start(timeout=failure.timeout)
        message = str(info.value)
        for part in failure.message:
            assert part in message
        assert session.returncode == failure.returncode
        assert session.alive is False
        assert session.state == "exited"  # not left "starting"
    finally:
        stop_quietly(session)


@pytest.mark.parametrize(
    "failure",
    [
        pytest.param(MISSING_EXECUTABLE, id="missing-executable"),
        pytest.param(SHELL_EXITS_7, id="agent-exiting-at-start"),
    ],
)
@pytest.mark.one_line  # a missing file and a shell: no agent starts
def test_aj_start_failure_raises_agent_start_error_and_registers_nothing(
    failure: StartFailure,
) -> None:
    name = unique_name("agent-start-fails")
    with pytest.raises(AgentStartError) as info:
        aj.start(command=failure.spec([]).command, name=name, display=False)
    for part in failure.message:
        assert part in str(info.value)
    with pytest.raises(SessionNotFoundError):
        aj.session(name)


def open_pipes() -> set[str]:
    """The pipes this process holds open, as fd -> target links."""
    found = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("pipe:"):
            found.add(f"{fd}->{target}")
    return found


@pytest.mark.one_line  # a shell posing as the agent
def test_stopped_agent_leaves_no_open_pipes() -> None:
    before = open_pipes()
    process = None
    try:
        process = AgentProcess(["bash", "-c", "read line"], on_data=lambda data: None)
        process.start()
        assert len(open_pipes() - before) == 3
        process.stop()
        assert process.wait_exit(5)
        for thread in process._threads:
            thread.join(2)
        assert open_pipes() - before == set()
    finally:
        if process is not None:
            process.stop()


# --------------------------------------------------------------------------- stop, registry


def test_stop_ends_the_process_group_and_registry_forgets_it(
    agent_command: list[str], ui_extension: str
) -> None:
    name = unique_name("agent-stop")
    session = aj.start(command=agent_command, extensions=[ui_extension], name=name, display=False)
    try:
        assert aj.session(name) is session
        pid = session.pid
        assert pid is not None
        assert pid in processes_where("pgrp", pid)  # the agent leads its own process group
        children = processes_where("ppid", pid)

        code = session.stop()
        assert session.state == "stopped"
        assert session.alive is False
        assert code == session.returncode
        assert code is not None
        wait_until(lambda: pid_gone(pid), f"the agent (pid {pid}) to be gone", 5)
        wait_until(lambda: not group_alive(pid), f"the agent's process group {pid} to be empty", 5)
        wait_until(
            lambda: all(pid_gone(child) for child in children),
            f"the agent's children {children} to be gone",
            5,
        )
        assert processes_where("pgrp", pid) == []

        with pytest.raises(SessionNotFoundError) as info:
            aj.session(name)
        assert "stopped" in str(info.value)
        assert "restart" in str(info.value)
        with pytest.raises(AgentNotRunningError, match="restart"):
            session.request("get_state")
        assert session.stop() == code  # stopping twice is harmless
    finally:
        stop_quietly(session)
