"""Extension prototyping from cells, through the real agent: define, use, redefine, break, remove."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from typing import Any

import pytest

import atomic_jupyter as aj
from atomic_jupyter.addons.prototype import PrototypeError
from atomic_jupyter.session.session import AgentSession
from tests.harness.support import wait_until

pytestmark = pytest.mark.agent

HEADER = 'import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";\n'


def gate(version: str) -> str:
    return HEADER + textwrap.dedent(
        f"""\
        export default function (pi: ExtensionAPI) {{
          pi.on("session_start", async (_e, ctx) => {{ ctx.ui.setStatus("gate", "gate {version} ready"); }});
          pi.registerCommand("gate", {{
            description: "the gate, {version}",
            handler: async (_args, ctx) => {{
              const ok = await ctx.ui.confirm("Open the {version} gate?", "Prototype {version}");
              ctx.ui.notify(`gate {version}: ${{ok}}`, "info");
            }},
          }});
        }}
        """
    )


@pytest.fixture(scope="module")
def session(agent_command: list[str]) -> Iterator[AgentSession]:
    s = aj.start(command=agent_command, name="prototyping", display=False)
    yield s
    s.stop()


def run_command(session: AgentSession, command: str) -> aj.Dialog:
    session.prompt(command, display=False)
    return wait_until(
        lambda: session.pending_dialogs[0] if session.pending_dialogs else None,
        f"the dialog of {command}",
    )


def test_define_run_and_answer_a_prototype(session: AgentSession) -> None:
    result = session.define_extension("gate", gate("v1"))
    assert result.ok and result.version == 1 and result.commands == ["gate"]
    assert "gate" in [c["name"] for c in session.get_commands()["commands"]]
    wait_until(lambda: session.status.get("gate") == "gate v1 ready", "the status set on load")
    dialog = run_command(session, "/gate")
    assert dialog.title == "Open the v1 gate?"
    dialog.respond(True)
    wait_until(
        lambda: session.notifications and session.notifications[-1]["message"] == "gate v1: true",
        "the extension's report",
    )


def test_redefining_replaces_the_old_handler(session: AgentSession) -> None:
    pid = session.pid
    result = session.define_extension("gate", gate("v2"))
    assert result.ok and result.version == 2
    assert session.pid == pid  # reloaded, not restarted
    names = [c["name"] for c in session.get_commands()["commands"]]
    assert names.count("gate") == 1
    dialog = run_command(session, "/gate")
    assert dialog.title == "Open the v2 gate?"  # no stale v1 handler answers
    dialog.respond(False)
    wait_until(lambda: session.notifications[-1]["message"] == "gate v2: false", "the v2 report")
    assert session.extension_source("gate") == gate("v2")


@pytest.mark.parametrize(
    "name, source, kind, line, text",
    [
        (
            "syntax",
            HEADER + "export default function (pi: ExtensionAPI) {\n  const x: number = ;\n}\n",
            "syntax",
            3,
            "Expression expected",
        ),
        (
            "typed",
            HEADER
            + "export default function (pi: ExtensionAPI) {\n  pi.registerComand('x', {});\n}\n",
            "type",
            3,
            "registerComand",
        ),
        (
            "throws",
            HEADER
            + "export default function (pi: ExtensionAPI) {\n  const n = 1;\n  throw new Error('load boom ' + n);\n}\n",
            "load",
            4,
            "load boom 1",
        ),
    ],
)
def test_errors_name_the_file_and_line_and_the_agent_stays_usable(
    session: AgentSession, name: str, source: str, kind: str, line: int, text: str
) -> None:
    result = session.define_extension(name, source)
    assert not result.ok
    (problem,) = result.problems
    assert (problem.kind, problem.file, problem.line) == (kind, f"{name}.ts", line)
    assert text in problem.message
    assert str(problem).startswith(f"{name}.ts:{line}")
    assert name not in session.extensions()
    dialog = run_command(session, "/gate")  # the other extensions still work
    dialog.cancel()


def test_a_broken_redefinition_keeps_the_previous_version(session: AgentSession) -> None:
    result = session.define_extension(
        "gate",
        HEADER + "export default function (pi: ExtensionAPI) {\n  throw new Error('nope');\n}\n",
    )
    assert not result.ok and result.version == 3
    assert session.extension_source("gate") == gate("v2")
    dialog = run_command(session, "/gate")
    assert dialog.title == "Open the v2 gate?"
    dialog.cancel()


def test_a_handler_that_throws_is_reported_with_file_and_line(session: AgentSession) -> None:
    source = HEADER + textwrap.dedent(
        """\
        export default function (pi: ExtensionAPI) {
          pi.registerCommand("explode", {
            description: "throws",
            handler: async () => {
              throw new Error("handler boom");
            },
          });
        }
        """
    )
    seen: list[Any] = []
    assert session.define_extension("exploder", source).ok
    session.prototypes.on_problem("exploder", seen.append)
    session.prompt("/explode", display=False)
    problem = wait_until(lambda: seen[-1] if seen else None, "the handler's error")
    assert (problem.kind, problem.file, problem.line, problem.message) == (
        "handler",
        "exploder.ts",
        6,
        "handler boom",
    )
    assert session.alive
    assert session.get_state()["isStreaming"] is False


def test_list_show_remove(session: AgentSession) -> None:
    assert session.extensions() == ["gate", "exploder"]
    session.remove_extension("gate")
    assert session.extensions() == ["exploder"]
    assert "gate" not in [c["name"] for c in session.get_commands()["commands"]]
    with pytest.raises(PrototypeError, match="no prototype extension called 'gate'"):
        session.extension_source("gate")
    with pytest.raises(PrototypeError, match="extension name"):
        session.define_extension("bad name!", gate("x"))
