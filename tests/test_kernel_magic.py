"""The magic in a real kernel, driven like a browser, against the real pinned agent.

Each test runs ``%atomic_agent`` cells in a kernel started through ``jupyter_client`` and
answers dialogs by sending the messages the page sends (a click on a dialog's control: a
custom message to the run's output; a value update to the panel's widgets).
What the extension received comes back as a ``notify`` ("got <method>: <JSON>"), which the
tests read from the panel's notification widgets, as a person would.
"""

from __future__ import annotations

import html
import re

import pytest

from tests.harness.kernel_client import BrowserLikeKernel, WidgetRef
from tests.harness.kernel_widgets import (
    WIDGET_VIEW,
    PageDialog,
    dialog_in,
    displayed,
    notes,
    outcome_of,
    page_of,
)
from tests.harness.output_page import controls_html
from tests.harness.plugin import agent_kernel_env
from tests.harness.support import alive, gone
from tests.harness.widget_text import has_class, shows, text

pytestmark = [pytest.mark.kernel, pytest.mark.agent]


@pytest.fixture(scope="module")
def panel(kernel: BrowserLikeKernel, ui_extension: str) -> WidgetRef:
    """The panel of a session started with the UI test extension."""
    result = kernel.execute(f"%atomic_agent start -e {ui_extension}")
    (panel_id,) = result.widget_ids
    ref = kernel.widget(panel_id)
    assert "atomic-panel" in ref.state["_dom_classes"]
    return ref


def prompt(kernel: BrowserLikeKernel, text: str) -> str:
    """Run a ``%%atomic_agent`` cell; return the id of the area it displayed."""
    result = kernel.execute(f"%%atomic_agent\n{text}")
    (area_id,) = result.widget_ids
    return area_id


def wait_note(kernel: BrowserLikeKernel, panel: WidgetRef, text: str, timeout: float = 15) -> None:
    """Wait until the newest notification contains ``text``."""
    kernel.wait_for(
        lambda: (lambda n: bool(n) and text in n[-1])(notes(kernel, panel)),
        timeout=timeout,
        what=f"notification {text!r}",
    )


def controls_of(kernel: BrowserLikeKernel, dialog: PageDialog) -> str:
    """The controls the page draws for a waiting dialog (its title, buttons, fields)."""
    return controls_html(kernel.tracker.pages[dialog.output].content.dialogs[dialog.id])


# --------------------------------------------------------------------------- start and panel


def test_start_shows_panel_with_title_and_status_from_the_extension(kernel, panel) -> None:
    kernel.wait_for(
        lambda: kernel.widgets("HTML", within=panel.comm_id, value=shows("UI test extension")),
        what="the title",
    )
    status = kernel.find(
        "HTML",
        within=panel.comm_id,
        _dom_classes=has_class("atomic-status-entry"),
        tooltip="ui-test",
    )
    assert text(status) == "ready"
    state = kernel.find("HTML", within=panel.comm_id, _dom_classes=has_class("atomic-state"))
    assert text(state) == "idle"


@pytest.mark.one_line  # no agent
def test_magic_help_is_generated_from_its_arguments(kernel) -> None:
    result = kernel.execute("%atomic_agent?")
    pages = [
        p["data"]["text/plain"]
        for p in result.reply.get("payload", [])
        if p.get("source") == "page"
    ]
    assert pages and "--command" in pages[0] and "--env" in pages[0] and "start" in pages[0]


# --------------------------------------------------------------------------- dialogs


def test_select_click_sends_the_option_and_collapses(kernel, panel) -> None:
    area = prompt(kernel, "/ui-select")
    dialog = dialog_in(kernel, area, "select")
    assert dialog.description["options"] == ["Alpha", "Beta", "Gamma"]
    dialog.choose(1)
    wait_note(kernel, panel, 'got select: "Beta"')
    assert outcome_of(kernel, dialog) == "Pick one → Beta (clicked)"


def test_select_with_many_options_uses_a_dropdown(kernel, panel) -> None:
    dialog = dialog_in(kernel, prompt(kernel, "/ui-select-many"), "select")
    controls = controls_of(kernel, dialog)
    assert '<select class="atomic-dialog-choice">' in controls
    assert controls.count("<option>") == 12 and 'class="atomic-option"' not in controls
    dialog.choose(5)  # Option 6 picked in the list, then Submit
    wait_note(kernel, panel, 'got select: "Option 6"')


@pytest.mark.parametrize("answer, sent", [("Yes", "true"), ("No", "false")])
def test_confirm_yes_and_no(kernel, panel, answer: str, sent: str) -> None:
    dialog = dialog_in(kernel, prompt(kernel, "/ui-confirm"), "confirm")
    controls = controls_of(kernel, dialog)
    assert 'class="atomic-yes">Yes<' in controls and 'class="atomic-no">No<' in controls
    assert dialog.description["message"] == "This is the message.\nIt has two lines."
    dialog.confirm(answer == "Yes")
    wait_note(kernel, panel, f"[info] got confirm: {sent}")
    assert outcome_of(kernel, dialog) == f"Proceed? → {answer} (clicked)"


@pytest.mark.parametrize(
    "method, field, shown, typed, got",
    [
        pytest.param(
            "input",
            "input",
            ("placeholder", "type a name…"),
            "Ada Lövelace",
            '"Ada Lövelace"',
            id="input-shows-its-placeholder-and-sends-the-typed-text",
        ),
        pytest.param(
            "editor",
            "textarea",
            ("prefill", "Line 1\nLine 2"),
            "Zeile 1\nÜber 🚀\nend",
            '"Zeile 1\\nÜber 🚀\\nend"',
            id="editor-is-prefilled-and-sends-multiline-unicode-exactly",
        ),
    ],
)
def test_text_dialog_typed_then_submitted(
    kernel, panel, method: str, field: str, shown: tuple[str, str], typed: str, got: str
) -> None:
    dialog = dialog_in(kernel, prompt(kernel, f"/ui-{method}"), method)
    controls = controls_of(kernel, dialog)
    assert f"<{field} " in controls
    assert 'class="atomic-submit">Submit<' in controls
    key, expected = shown
    assert dialog.description[key] == expected
    if method == "editor":  # the text area shows the prefilled text
        assert f">{html.escape(expected)}</textarea>" in controls
    dialog.submit(typed)
    wait_note(kernel, panel, f"got {method}: {got}")


@pytest.mark.parametrize(
    "command, method, default",
    [
        pytest.param("/ui-select", "select", "undefined", id="select-cancel-gives-undefined"),
        pytest.param("/ui-confirm", "confirm", "false", id="confirm-cancel-gives-false"),
        pytest.param("/ui-input", "input", "undefined", id="input-cancel-gives-undefined"),
        pytest.param("/ui-editor", "editor", "undefined", id="editor-cancel-gives-undefined"),
    ],
)
def test_cancel_each_kind(kernel, panel, command: str, method: str, default: str) -> None:
    dialog = dialog_in(kernel, prompt(kernel, command), method)
    assert 'class="atomic-cancel">Cancel<' in controls_of(kernel, dialog)
    dialog.cancel()
    wait_note(kernel, panel, f"[info] got {method}: {default}")
    assert outcome_of(kernel, dialog).endswith("→ cancelled (clicked)")


def test_double_click_sends_one_answer(kernel, panel) -> None:
    count_answered = (
        "import atomic_jupyter as aj\n"
        "print(sum(1 for d in aj.session().dialogs if d.state == 'answered' and d.answer is True and d.title == 'Proceed?'))"
    )
    before = int(kernel.execute(count_answered).stdout)
    dialog = dialog_in(kernel, prompt(kernel, "/ui-confirm"), "confirm")
    dialog.confirm(True)
    dialog.confirm(False)  # races the collapse, as a fast double click does
    last = dialog.confirm(True)
    kernel.wait_idle(last)
    assert outcome_of(kernel, dialog) == "Proceed? → Yes (clicked)"
    # The late clicks were not errors: the first answer stands, and nothing says otherwise.
    assert "atomic-dialog-error" not in page_of(kernel, dialog.output)
    wait_note(kernel, panel, "got confirm: true")
    # One more command proves the agent has processed everything we sent before it.
    dialog2 = dialog_in(kernel, prompt(kernel, "/ui-select"), "select")
    dialog2.choose(dialog2.description["options"].index("Gamma"))
    wait_note(kernel, panel, 'got select: "Gamma"')
    assert notes(kernel, panel)[-2:] == ["[info] got confirm: true", '[info] got select: "Gamma"']
    assert int(kernel.execute(count_answered).stdout) == before + 1


def test_two_dialogs_at_once_each_answer_their_own(kernel, panel) -> None:
    area = prompt(kernel, "/ui-two")
    select = dialog_in(kernel, area, "select")
    inp = dialog_in(kernel, area, "input")
    assert select.output == inp.output and select.id != inp.id  # one output, two dialogs
    inp.submit("second first")
    assert outcome_of(kernel, inp) == "Second of two → second first (clicked)"
    # The other dialog still waits, its controls drawn.
    assert select.id in kernel.tracker.pages[select.output].content.dialogs
    assert 'class="atomic-option">Two<' in page_of(kernel, select.output)
    select.choose(select.description["options"].index("Two"))
    wait_note(kernel, panel, 'got two: ["Two","second first"]')


def test_timed_dialog_counts_down_then_expires(kernel, panel) -> None:
    dialog = dialog_in(kernel, prompt(kernel, "/ui-confirm 2500"), "confirm")
    # The page counts down from the seconds left when the dialog was described.
    assert 0 < dialog.description["seconds_left"] <= 2.5
    assert re.search(r'class="atomic-countdown">expires in [1-3] s<', controls_of(kernel, dialog))
    assert "timed out" in outcome_of(kernel, dialog)
    wait_note(kernel, panel, "got confirm: false")
    # It counted down by itself: the kernel described the dialog once, then only removed it.
    described = [
        content["dialogs"][dialog.id]
        for comm_id, content, _ in kernel.tracker.custom_messages
        if comm_id == dialog.output
        and content["type"] == "patch"
        and dialog.id in content.get("dialogs", {})
    ]
    assert described[0] == dialog.description and described[1:] == [None]


def test_unicode_survives_both_ways(kernel, panel) -> None:
    dialog = dialog_in(kernel, prompt(kernel, "/ui-unicode"), "select")
    assert dialog.description["title"] == "Ünïcödé 🚀 title\u2028sep"
    assert dialog.description["options"] == ["日本語", "emoji 🎉", "line\u2029sep"]
    assert 'class="atomic-option">line\u2029sep<' in controls_of(kernel, dialog)
    dialog.choose(2)
    wait_note(kernel, panel, 'got select: "line\u2029sep"')
    status = kernel.find(
        "HTML",
        within=panel.comm_id,
        _dom_classes=has_class("atomic-status-entry"),
        tooltip="unicode",
    )
    assert text(status) == "naïve 日本語 🚀 a\u2028b\u2029c"


def test_html_from_the_agent_is_only_ever_text(kernel, panel) -> None:
    area = prompt(kernel, "/ui-html")
    dialog = dialog_in(kernel, area, "select")
    # A dialog's description carries the raw strings, which the page draws as text
    # (textContent); the page's own drawing of them is escaped.
    assert dialog.description["title"].startswith("<img src=x onerror=")
    assert dialog.description["options"][0].startswith("<img src=x onerror=")
    assert "&lt;img src=x onerror=" in controls_of(kernel, dialog)
    dialog.choose(0)
    described = {"select": dialog.description}
    for method in ("confirm", "input", "editor"):
        d = dialog_in(kernel, area, method)
        described[method] = d.description
        if method == "confirm":
            d.confirm(True)
        else:
            d.submit("typed")
    wait_note(kernel, panel, "got editor:")
    assert described["confirm"]["message"].startswith("<img src=x onerror=")
    assert described["input"]["placeholder"].startswith("<img src=x onerror=")
    assert described["editor"]["prefill"].startswith("<img src=x onerror=")
    # No HTML widget anywhere holds the payload unescaped.
    html_values = [w.state.get("value", "") for w in kernel.widgets("HTML")]
    assert any("&lt;script&gt;" in v for v in html_values)
    assert not any("<script" in v or "<img" in v or "<b>" in v for v in html_values)
    # Nor any HTML our outputs were sent (blocks, answers' chunks and tails: the page
    # inserts these as HTML), though the settled dialogs' cards show the payloads as text.
    sent = [
        html
        for comm_id, content, _ in kernel.tracker.custom_messages
        if comm_id in kernel.tracker.pages
        for part in ("blocks", "tails")
        for html in content.get(part, {}).values()
    ] + [
        html
        for comm_id, content, _ in kernel.tracker.custom_messages
        if comm_id in kernel.tracker.pages
        for chunks in content.get("chunks", {}).values()
        for html in chunks
    ]
    assert any("&lt;b&gt;select-title&lt;/b&gt;" in h for h in sent)
    assert not any("<script" in h or "<img" in h or "<b>" in h for h in sent)
    # The outputs' static records (text/html) hold the payloads as escaped text too.
    for record in kernel.displays:
        assert "text/markdown" not in record.data
        html = record.data.get("text/html", "")
        assert not any(bad in html for bad in ("<script", "<img", "<b>")), html


def test_fire_and_forget_methods_update_the_panel_and_send_prefills_the_editor(
    kernel, panel
) -> None:
    prompt(kernel, "/ui-fire")
    kernel.wait_for(
        lambda: kernel.widgets("HTML", within=panel.comm_id, value=shows("Fired title")),
        what="the new title",
    )
    editor = kernel.find("Any", within=panel.comm_id, _dom_classes=has_class("atomic-editor"))
    kernel.wait_for(
        lambda: editor.state["value"] == "prefilled by the extension", what="set_editor_text"
    )
    above = kernel.find(
        "VBox", within=panel.comm_id, _dom_classes=has_class("atomic-widgets-above")
    )
    below = kernel.find(
        "VBox", within=panel.comm_id, _dom_classes=has_class("atomic-widgets-below")
    )
    kernel.wait_for(
        lambda: kernel.widgets("HTML", within=below.comm_id), what="the widget below the editor"
    )
    above_text = [
        html.unescape(w.state["value"]) for w in kernel.widgets("HTML", within=above.comm_id)
    ]
    assert any("top line 1\ntop line 2" in t for t in above_text)
    assert not any("to be cleared" in t for t in above_text)
    assert [
        w.state["tooltip"]
        for w in kernel.widgets(
            "HTML", within=panel.comm_id, _dom_classes=has_class("atomic-status-entry")
        )
    ].count("two") == 0
    wait_note(kernel, panel, "[info] a default note")
    assert notes(kernel, panel)[-4:] == [
        "[info] an info note",
        "[warning] a warning note",
        "[error] an error note",
        "[info] a default note",
    ]
    # Type a command into the editor and press Send: its dialog appears in the panel.
    kernel.set_value(editor.comm_id, value="/ui-select")
    kernel.click(kernel.find("Button", within=panel.comm_id, description="Send").comm_id)
    dialog = dialog_in(kernel, panel.comm_id, "select")
    kernel.wait_for(lambda: editor.state["value"] == "", what="the editor to clear after Send")
    dialog.choose(dialog.description["options"].index("Alpha"))
    wait_note(kernel, panel, 'got select: "Alpha"')


def test_shift_enter_in_the_panel_editor_sends_what_was_typed(kernel, panel) -> None:
    """The editor's front end sends ``{"type": "submit"}`` on Shift+Enter or Ctrl+Enter,
    after the typed value; the kernel sends that text as the Send button does."""
    editor = kernel.find("Any", within=panel.comm_id, _dom_classes=has_class("atomic-editor"))
    assert "Shift+Enter" in editor.state["placeholder"]
    area = kernel.find("VBox", within=panel.comm_id, _dom_classes=has_class("atomic-panel-dialogs"))
    before = len(area.children)
    kernel.set_value(editor.comm_id, value="/ui-confirm")
    kernel.send_custom(editor.comm_id, {"type": "other"})  # not a submit: nothing is sent
    kernel.send_custom(editor.comm_id, {"type": "submit"})
    dialog = dialog_in(kernel, panel.comm_id, "confirm")
    kernel.wait_for(lambda: editor.state["value"] == "", what="the editor to clear after sending")
    dialog.confirm(True)
    wait_note(kernel, panel, "got confirm: true")
    # One run was sent from the panel: the message that is not a submit sent nothing.
    assert len(area.children) == before + 1


def test_garbage_lines_are_counted_and_the_stream_goes_on(kernel, panel) -> None:
    dialog = dialog_in(kernel, prompt(kernel, "/ui-garbage"), "confirm")
    diag = kernel.find("HTML", within=panel.comm_id, _dom_classes=has_class("atomic-diagnostics"))
    kernel.wait_for(lambda: text(diag).startswith("3 message(s)"), what="three ignored lines")
    dialog.confirm(True)
    wait_note(kernel, panel, "got confirm: true")


def test_status_flood_keeps_the_kernel_responsive_and_is_coalesced(kernel, panel) -> None:
    n = 20000
    prompt(kernel, f"/ui-flood {n}")
    # A cell runs while the flood is being applied.
    assert kernel.execute("21 * 2").result == "42"
    wait_note(kernel, panel, f"flood done: {n}", timeout=60)
    flood = kernel.wait_for(
        lambda: next(
            iter(
                kernel.widgets(
                    "HTML", within=panel.comm_id, tooltip="flood", value=shows(f"update {n} of {n}")
                )
            ),
            None,
        ),
        what="the last status update",
    )
    updates = [
        m
        for m in kernel.iter_messages("comm_msg")
        if m["content"]["comm_id"] == flood.comm_id
        and "value" in m["content"]["data"].get("state", {})
    ]
    assert len(updates) < n / 10, f"{len(updates)} comm updates for {n} status changes"


@pytest.mark.one_line  # only whether the session is alive
def test_kernel_runs_cells_and_python_api_sees_the_same_state(kernel, panel) -> None:
    result = kernel.execute(
        "import atomic_jupyter as aj\ns = aj.session()\nprint(s.alive, s.title, len(s.pending_dialogs))"
    )
    assert result.stdout.split()[0] == "True"


# --------------------------------------------------------------------------- failures


@pytest.mark.one_line  # no agent starts
def test_missing_executable_is_a_clear_error_and_the_kernel_goes_on(kernel) -> None:
    result = kernel.execute(
        "%atomic_agent start --name ghost --command /nonexistent/agent-xyz", check=False
    )
    assert result.status == "error" and result.ename == "AgentStartError"
    assert "/nonexistent/agent-xyz" in result.evalue and "not found" in result.evalue
    assert kernel.execute("1 + 1").result == "2"


@pytest.mark.one_line  # a shell posing as the agent
def test_agent_dying_at_startup_shows_its_stderr(kernel) -> None:
    cmd = "bash -c 'echo marker-startup-death >&2; exit 7'"
    result = kernel.execute(f'%atomic_agent start --name dying --command "{cmd}"', check=False)
    assert result.ename == "AgentStartError"
    assert (
        "code 7" in result.evalue
        and "marker-startup-death" in result.evalue
        and "bash" in result.evalue
    )


def test_crash_mid_dialog_closes_the_dialog_and_says_to_restart(kernel, ui_extension) -> None:
    start = kernel.execute(f"%atomic_agent start --name crashy -e {ui_extension}")
    (panel_id,) = start.widget_ids
    cell = kernel.execute("%%atomic_agent --name crashy\n/ui-crash")
    dialog_in(kernel, cell.widget_ids[0], "select")
    # The run ends with the agent: its output becomes its record, which says the dialog was
    # closed (the live dialog is gone with the run's other widgets).
    (area,) = [o for o in cell.outputs if WIDGET_VIEW in o.get("data", {})]
    record = kernel.wait_for(
        lambda: (lambda d: d if WIDGET_VIEW not in d else None)(displayed(kernel, area)),
        what="the run's output to become its record",
    )
    assert "Doomed dialog" in record["text/plain"]
    assert "closed" in record["text/plain"].split("Doomed dialog", 1)[1]
    state = kernel.find("HTML", within=panel_id, _dom_classes=has_class("atomic-state"))
    kernel.wait_for(lambda: text(state) == "exited with code 3", what="the exit code")
    exit_info = kernel.find("HTML", within=panel_id, _dom_classes=has_class("atomic-exit"))
    assert "exiting on purpose" in text(exit_info)
    failed = kernel.execute("%%atomic_agent --name crashy\n/ui-select", check=False)
    assert failed.status == "error" and "restart" in failed.evalue
    kernel.execute("%atomic_agent restart --name crashy")
    kernel.wait_for(lambda: text(state) == "idle", what="the restarted agent")
    kernel.execute("%atomic_agent stop --name crashy")


def test_stop_and_kernel_shutdown_leave_no_agent_process(
    tmp_path, agent_command, private_agent_home, ui_extension
) -> None:
    env = agent_kernel_env(agent_command, private_agent_home)
    with BrowserLikeKernel(tmp_path, env=env) as k:
        k.execute("%load_ext atomic_jupyter")
        k.execute(f"%atomic_agent start --name a -e {ui_extension}")
        k.execute(f"%atomic_agent start --name b -e {ui_extension}")
        pids = [
            int(x)
            for x in k.execute(
                "import atomic_jupyter as aj\nprint(aj.session('a').pid, aj.session('b').pid)"
            ).stdout.split()
        ]
        k.execute("%atomic_agent stop --name a")
        assert not alive(pids[0])
        assert alive(pids[1])
    # The kernel shut down: its remaining agent went with it (within 10 s).
    assert gone(pids[1], timeout=10)
