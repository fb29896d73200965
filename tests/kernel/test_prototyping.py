"""``%%atomic_extension`` in a real kernel, driven like a browser, with the real agent."""

from __future__ import annotations

import pytest

from atomic_jupyter.notebook.presentation import REMOVED_VIEW
from tests.agent.test_prototyping import HEADER, gate
from tests.harness.kernel_client import BrowserLikeKernel
from tests.harness.kernel_widgets import (
    PageOutput,
    dialog_in,
    live_view,
    outcome_of,
    outputs_within,
)
from tests.harness.support import wait_until

pytestmark = [pytest.mark.kernel, pytest.mark.agent]


@pytest.fixture(scope="module")
def kernel_setup() -> list[str]:
    """The module's ``kernel`` (tests/harness/plugin.py) has the default session running."""
    return ["%atomic_agent start"]


def define(kernel: BrowserLikeKernel, name: str, source: str) -> PageOutput:
    result = kernel.execute(f"%%atomic_extension {name}\n{source}")
    (view_id,) = result.widget_ids
    assert "atomic-prototype" in kernel.models[view_id]["root_class"].split()
    view = PageOutput(kernel, view_id)
    kernel.wait_for(lambda: view.html, what="the prototype's output to be drawn")
    return view


def header(view: PageOutput) -> str:
    return view.text("atomic-prototype-header")


def errors(view: PageOutput) -> list[str]:
    return view.texts("atomic-prototype-error")


def click_command_and_answer(
    kernel: BrowserLikeKernel, view: PageOutput, command: str, answer: str
) -> str:
    view.press("atomic-prototype-command", command)
    dialog = dialog_in(kernel, view.comm_id, "confirm")  # the command's dialog under the cell
    title = dialog.description["title"]
    assert title.startswith("Open the")
    dialog.confirm(answer == "Yes")
    assert outcome_of(kernel, dialog) == f"→ {answer} (clicked)"
    return title


def test_define_then_click_its_command_and_answer(kernel: BrowserLikeKernel) -> None:
    view = define(kernel, "gate", gate("v1"))
    assert header(view) == "extension gate v1 loaded: /gate"
    assert click_command_and_answer(kernel, view, "/gate", "Yes") == "Open the v1 gate?"

    def last_notification() -> str:  # the agent notifies after it has read the answer
        code = "import atomic_jupyter as aj\nn = aj.session().notifications\nprint(n[-1]['message'] if n else '')"
        return kernel.execute(code).stdout.strip()

    assert wait_until(last_notification, "the extension's notification") == "gate v1: true"
    # The command's run is drawn inside the prototype's output (which is live until the
    # session stops), even once it is over: nothing else shows it.
    assert outputs_within(kernel, view.comm_id) == [view.comm_id]  # no output of its own
    kernel.wait_for(
        lambda: view.texts("atomic-run-state") == ["done"], what="the command's run to end"
    )
    assert view.texts("atomic-run-prompt") == ["> /gate"]
    assert view.comm_id in kernel.models


def test_redefine_shows_the_new_behaviour(kernel: BrowserLikeKernel) -> None:
    view = define(kernel, "gate", gate("v2"))
    assert header(view) == "extension gate v2 loaded: /gate"
    assert click_command_and_answer(kernel, view, "/gate", "No") == "Open the v2 gate?"


def test_a_syntax_error_is_shown_in_the_cell_with_file_and_line(kernel: BrowserLikeKernel) -> None:
    view = define(
        kernel,
        "broken",
        HEADER + "export default function (pi: ExtensionAPI) {\n  const x: number = ;\n}\n",
    )
    assert header(view) == "extension broken not loaded"
    (line,) = errors(view)
    assert line.startswith("broken.ts:3:") and "syntax error" in line


def test_a_handler_error_appears_later_in_the_cell_that_owns_it(kernel: BrowserLikeKernel) -> None:
    source = (
        HEADER
        + 'export default function (pi: ExtensionAPI) {\n  pi.registerCommand("explode", { description: "x", handler: async () => {\n    throw new Error("handler boom");\n  } });\n}\n'
    )
    view = define(kernel, "exploder", source)
    view.press("atomic-prototype-command", "/explode")
    kernel.wait_for(lambda: errors(view), what="the handler's error in the cell")
    (line,) = errors(view)
    assert line.startswith("exploder.ts:4:") and line.endswith(": handler error: handler boom")
    alive = kernel.execute("import atomic_jupyter as aj\nprint(aj.session().alive)")
    assert alive.stdout.strip() == "True"


def test_list_show_remove_from_the_line_magic(kernel: BrowserLikeKernel) -> None:
    assert kernel.execute("%atomic_extension list").stdout.split() == ["gate", "exploder"]
    assert "Open the v2 gate?" in kernel.execute("%atomic_extension show gate").stdout
    kernel.execute("%atomic_extension remove gate")
    assert kernel.execute("%atomic_extension list").stdout.split() == ["exploder"]


def test_a_prototypes_output_becomes_its_record_when_the_session_stops(
    kernel: BrowserLikeKernel,
) -> None:
    from tests.harness.kernel_widgets import WIDGET_VIEW, displayed, record_copy

    result = kernel.execute(f"%%atomic_extension recorded\n{gate('v9')}")
    output = live_view(result.outputs)
    copy = record_copy(result.outputs)  # live while the session runs, its record beside it
    assert copy["data"]["text/plain"].startswith("extension recorded v1 loaded: /gate")
    view = PageOutput(kernel, output["data"][WIDGET_VIEW]["model_id"])
    click_command_and_answer(kernel, view, "/gate", "Yes")
    kernel.wait_for(lambda: view.texts("atomic-run-state") == ["done"], what="the run's end")
    kernel.execute("%atomic_agent stop")
    try:
        assert displayed(kernel, copy) == REMOVED_VIEW
        final = displayed(kernel, output)
        assert WIDGET_VIEW not in final
        said = final["text/plain"].split("\n")
        assert said[:2] == ["extension recorded v1 loaded: /gate", "commands: /gate"]
        # The run of the command clicked, as the live output showed it.
        assert "> /gate" in said, said
        assert "[confirm dialog] Open the v9 gate?" in said, said
        assert "  → Yes (clicked)" in said, said
        assert "extension recorded v1 loaded" in final["text/html"]
        assert "atomic-record-run" in final["text/html"]
    finally:
        kernel.execute("%atomic_agent start")
