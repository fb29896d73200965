"""The agent's own example extensions (``examples/extensions/`` in its npm package), through a
real kernel driven like JupyterLab, with the scripted model: the other end of the protocol,
written by the agent's authors, not by us.
"""

from __future__ import annotations

import html
import re

import pytest

from tests.harness.kernel_client import BrowserLikeKernel
from tests.harness.kernel_runs import wait_done
from tests.harness.kernel_widgets import (
    WIDGET_VIEW,
    PagePanel,
    answer_html,
    answers,
    dialog_in,
    displayed,
    elements,
    live_view,
    notes,
    outcome_of,
    panels,
    texts_of,
)
from tests.harness.plugin import scripted_start
from tests.harness.support import CURRENT_LINE, EXTENSIONS, agent_example

pytestmark = [pytest.mark.kernel, pytest.mark.agent, pytest.mark.scripted_kernel]

EXAMPLES = ["rpc-demo.ts", "timed-confirm.ts", "status-line.ts", "trigger-compact.ts"]


@pytest.fixture(scope="module")
def kernel_setup(scripted_model) -> list[str]:
    """One session with four of the agent's examples loaded, on the scripted model."""
    extensions = " ".join(f"-e {agent_example(name)}" for name in EXAMPLES)
    extensions += f" -e {EXTENSIONS / 'input_gate.ts'}"  # one of ours: an input hook that asks
    return [scripted_start(scripted_model, extensions)]


@pytest.fixture(scope="module")
def panel(kernel: BrowserLikeKernel) -> PagePanel:
    (found,) = panels(kernel)
    return found


def area_of(result) -> str:
    (area_id,) = result.widget_ids
    return area_id


def wait_note(kernel: BrowserLikeKernel, panel: PagePanel, wanted: str, timeout: float = 30):
    kernel.wait_for(
        lambda: any(wanted in n for n in notes(kernel, panel)),
        timeout=timeout,
        what=f"the notification {wanted!r}",
    )


def python(kernel: BrowserLikeKernel, code: str) -> str:
    return kernel.execute("import atomic_jupyter as aj\n" + code).stdout.strip()


# --------------------------------------------------------------------------- rpc-demo.ts


def test_rpc_demo_sets_title_widget_and_status_at_start(kernel, panel) -> None:
    kernel.wait_for(lambda: "pi RPC Demo" in panel.text("atomic-title"), what="the demo's title")
    kernel.wait_for(
        lambda: any(
            "--- RPC Extension UI Demo ---\nLoaded and ready." in t
            for t in panel.texts("atomic-widget-block")
        ),
        what="the demo's widget lines",
    )


def test_rpc_demo_guards_a_dangerous_tool_call_with_a_select(kernel, panel) -> None:
    area = area_of(kernel.execute("%%atomic_agent\nwipe the scratch folder"))
    dialog = dialog_in(kernel, area, "select")
    dialog.choose(dialog.description["options"].index("Block"))
    assert outcome_of(kernel, dialog).endswith("→ Block (clicked)")
    wait_note(kernel, panel, "Command blocked by user")
    wait_done(kernel, area)


def test_a_command_whose_extension_asks_first_does_not_block_the_kernel(kernel, panel) -> None:
    """``%atomic_agent new`` with rpc-demo.ts loaded: the agent asks "Clear session?" before
    it answers ``new_session``. The cell returns at once with the dialog under it; the click
    is delivered, and the command's result shows where the dialog was."""
    result = kernel.execute("%atomic_agent new", timeout=20)
    assert result.status == "ok"
    area = area_of(result)
    dialog = dialog_in(kernel, area, "confirm")
    assert kernel.execute("1 + 1").status == "ok"  # the kernel is free
    dialog.confirm(True)
    assert outcome_of(kernel, dialog).endswith("→ Yes (clicked)")
    kernel.wait_for(
        lambda: any("New session started." in t for t in texts_of(kernel, area, "atomic-note")),
        what="the command's result under the cell",
    )
    wait_done(kernel, area)
    kernel.wait_for(
        lambda: "(new session)" in panel.text("atomic-title"), what="the title of the new session"
    )


def test_a_command_cancelled_by_its_extension_says_so(kernel, panel) -> None:
    area = area_of(kernel.execute("%atomic_agent new", timeout=20))
    dialog = dialog_in(kernel, area, "confirm")
    dialog.confirm(False)
    wait_note(kernel, panel, "Clear cancelled")
    kernel.wait_for(
        lambda: any(
            "cancelled by an extension" in t for t in texts_of(kernel, area, "atomic-note")
        ),
        what="the cancelled result",
    )


def test_the_python_api_returns_a_handle_for_a_command_that_may_pause(kernel) -> None:
    out = python(
        kernel,
        "s = aj.session()\n"
        "policy = s.answer_with(True, method='confirm', title='Clear session')\n"
        "run = s.new_session(display=False)\n"
        "print(type(run).__name__, run.result(timeout=20))\n"
        "s.remove_policy(policy)",
    )
    assert out == "CommandRun {'cancelled': False}"


@pytest.mark.skipif(not CURRENT_LINE, reason="the 0.73 line runs no input hook for a steer")
def test_a_steer_whose_input_hook_asks_first_does_not_block_the_kernel(kernel, panel) -> None:
    """The agent answers ``steer`` only after the extensions' ``input`` hooks: one that asks
    a person must not hold the cell (and the dialog must not be taken for abandoned when
    the run it was raised in ends)."""
    running = area_of(kernel.execute("%%atomic_agent\nplease be slow"))
    # The hook asks only while the agent streams: steer once the slow answer has begun (in CI
    # a steer that overtook the run's start was queued without asking).
    kernel.wait_for(
        lambda: any("slow" in answer_html(kernel, a) for a in answers(kernel, running)),
        what="the slow answer to begin",
    )
    result = kernel.execute("%atomic_agent steer a gated remark", timeout=20)
    assert result.status == "ok"
    area = area_of(result)
    dialog = dialog_in(kernel, area, "confirm")
    wait_done(kernel, running, timeout=60)  # the run ends; the steer still waits
    assert python(kernel, "print(len(aj.session().pending_dialogs))") == "1"
    dialog.confirm(False)
    kernel.wait_for(
        lambda: any("handled by an extension" in t for t in texts_of(kernel, area, "atomic-note")),
        what="the steer's result under the cell",
    )


def test_rpc_demo_input_editor_and_prefill(kernel, panel) -> None:
    area = area_of(kernel.execute("%%atomic_agent\n/rpc-input"))
    dialog = dialog_in(kernel, area, "input")
    dialog.submit("forty-two")
    wait_note(kernel, panel, "You entered: forty-two")
    area = area_of(kernel.execute("%%atomic_agent\n/rpc-editor"))
    dialog = dialog_in(kernel, area, "editor")
    dialog.submit(dialog.description["prefill"])  # Submit, the prefilled text as it is
    assert dialog.description["prefill"].count("\n") == 2
    wait_note(kernel, panel, "Editor submitted (3 lines)")
    kernel.execute("%%atomic_agent --wait\n/rpc-prefill")
    assert python(kernel, "print(aj.session().editor_text)") == (
        "This text was set by the rpc-demo extension."
    )


# --------------------------------------------------------------------------- timed-confirm.ts


def panel_copy(kernel: BrowserLikeKernel) -> str:
    """The visible text of the panel's record copy as the browser has it now."""
    shown: dict[str, str] = {}
    for record in kernel.displays:
        display_id = str(record.transient.get("display_id", ""))
        if display_id.endswith("-record"):
            shown[display_id] = str(record.data.get("text/html", ""))
    panels = [value for value in shown.values() if "atomic-copy-record-panel" in value]
    assert len(panels) == 1, list(shown)
    body = panels[0].split("</style>", 1)[-1]
    return html.unescape(re.sub(r"<[^>]*>", "", body))


def test_timed_sent_with_shift_enter_is_kept_in_the_panels_record_until_it_times_out(
    kernel, panel
) -> None:
    """``/timed`` (a confirm with a 5 s timeout), typed into the panel's editor and sent with
    Shift+Enter: the panel's record copy, kept current with no call from here, shows its
    dialog waiting, then how it ended."""
    panel.type("/timed")
    panel.send("/timed")  # what Shift+Enter sends
    kernel.wait_for(
        lambda: (
            "Timed Confirmation" in panel_copy(kernel)
            and "waiting for an answer" in panel_copy(kernel)
        ),
        timeout=15,
        what="the panel's record copy to show the waiting dialog",
    )
    wait_note(kernel, panel, "Cancelled or timed out", timeout=20)
    kernel.wait_for(
        lambda: (
            "Timed Confirmation" in panel_copy(kernel)
            and "→ timed out: No (the agent's default)" in panel_copy(kernel)
        ),
        timeout=15,
        what="the panel's record copy to say how the dialog ended",
    )
    assert "waiting for an answer" not in panel_copy(kernel), panel_copy(kernel)


def test_a_dialog_its_extension_gave_up_on_is_closed_and_stops_no_wait(kernel, panel) -> None:
    """``/timed-signal`` aborts its confirm with an AbortSignal after 5 s; the agent settles
    it without a word. The dialog closes as no longer awaited, a later ``--wait`` cell runs
    through, and a late click sends nothing."""
    area = area_of(kernel.execute("%%atomic_agent\n/timed-signal"))
    dialog = dialog_in(kernel, area, "confirm")
    wait_note(kernel, panel, "Dialog timed out (auto-cancelled)", timeout=20)
    assert "no longer awaited" in outcome_of(kernel, dialog, timeout=10)
    assert python(kernel, "print(len(aj.session().pending_dialogs))") == "0"
    waited = kernel.execute("%%atomic_agent --wait\nhello after the timed dialog")
    assert "needs your answer" not in waited.stdout
    wait_done(kernel, area_of(waited))
    decided = python(
        kernel,
        "d = [d for d in aj.session().dialogs if d.title == 'Timed Confirmation'][-1]\n"
        "print(d.state, d.answer)",
    )
    assert decided == "closed None"


# --------------------------------------------------------------------------- status-line.ts


def test_themed_status_is_shown_styled_not_as_escape_codes(kernel, panel) -> None:
    area = area_of(kernel.execute("%%atomic_agent --wait\nhello from the status test"))
    wait_done(kernel, area)
    value = kernel.wait_for(
        lambda: next(
            (e for e in elements(panel.html, "atomic-status-entry") if "complete" in e), None
        ),
        what="the status-line example's status",
    )
    assert re.search(r"✓ Turn \d+ complete", html.unescape(re.sub(r"<[^>]*>", "", value)))
    assert "\x1b" not in value and "[38;" not in value and "[39m" not in value
    assert "color:" in value  # styled, as the agent's theme coloured it


# --------------------------------------------------------------------------- trigger-compact.ts


def test_a_compaction_started_by_a_command_ends_its_run(kernel, panel) -> None:
    kernel.execute("%%atomic_agent --wait\nhello before compaction")
    area = area_of(kernel.execute("%%atomic_agent\n/trigger-compact"))
    wait_note(kernel, panel, "Compaction completed", timeout=60)
    wait_done(kernel, area)
    out = kernel.execute("%atomic_agent wait --timeout 10")
    assert out.status == "ok" and "still working" not in out.stdout + out.stderr


# --------------------------------------------------------------------------- entry-renderer.ts


@pytest.mark.skipif(not CURRENT_LINE, reason="the 0.73 line has no entry_appended event")
def test_entry_renderers_custom_entry_is_a_card_in_its_run_and_its_record(kernel) -> None:
    """``/status-card`` appends a custom session entry (``pi.appendEntry``), which the
    terminal shows through the example's entry renderer: here, a card in the run."""
    example = agent_example("entry-renderer.ts")
    kernel.execute(f"%atomic_agent start --name entries -e {example}")
    cell = kernel.execute("%%atomic_agent --wait --name entries\n/status-card <b>deploy</b> done")
    area = live_view(cell.outputs)
    record = kernel.wait_for(
        lambda: (lambda d: d if WIDGET_VIEW not in d else None)(displayed(kernel, area)),
        what="the run's record",
    )
    assert "[entry status-card]" in record["text/plain"]
    assert "<b>deploy</b> done" in record["text/plain"]  # the data, as text
    assert "<b>deploy" not in record["text/html"] and "&lt;b&gt;deploy" in record["text/html"]
    kernel.execute("%atomic_agent stop --name entries")
