"""The agent works in the kernel: its ``python`` tool runs code in the notebook's own kernel
(with approval), ``notebook_variables`` and ``notebook_cells`` read the notebook, and
``%atomic_agent cells`` leaves the code behind. A real kernel driven like JupyterLab, the real
agent (both lines) and the scripted model, which calls the tool a prompt names
(``kernel call python {"code": ...}``) and repeats what it answered."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.harness.kernel_widgets import dialog_in, elements, outputs_within, page_of
from tests.harness.plugin import last_tool_answer, scripted_start
from tests.harness.support import CURRENT_LINE, agent_example
from tests.harness.widget_text import visible_text

pytestmark = [pytest.mark.kernel, pytest.mark.agent, pytest.mark.scripted_kernel]

POLICY = '%atomic_agent policy --title "Python in the kernel" yes'


@pytest.fixture(scope="module")
def kernel_setup(scripted_model) -> list[str]:
    return [scripted_start(scripted_model), "import atomic_jupyter as aj"]


@pytest.fixture
def approved(kernel) -> Iterator[None]:
    """Calls of python approved by a policy (as Run All, nbval and papermill do)."""
    kernel.execute(POLICY)
    yield
    kernel.execute("%atomic_agent policy --clear")


def call(code: str) -> str:
    """The prompt that makes the scripted model run ``code`` with the python tool."""
    return "kernel call python " + json.dumps({"code": code})


def cards(kernel, within: str | None = None) -> list[str]:
    """The tool cards the page shows (as last shown) in the run output ``within``, or in any
    of our outputs, as HTML."""
    outputs = outputs_within(kernel, within) if within else list(kernel.tracker.pages)
    return [card for output in outputs for card in elements(page_of(kernel, output), "atomic-tool")]


def card_with(kernel, marker: str) -> str:
    """The (last shown) card of the call whose code holds ``marker``."""
    found = [card for card in cards(kernel) if marker in visible_text(card)]
    assert found, f"no tool card shows {marker!r}"
    return found[-1]


def test_code_runs_in_the_notebooks_namespace_and_the_model_gets_its_output_and_value(
    kernel, scripted_model, approved
):
    kernel.execute("base = 40")
    result = kernel.execute(
        "%%atomic_agent --wait\n"
        + call('made_by_agent = base + 2\nprint("hello from the agent")\nmade_by_agent + 1'),
        timeout=60,
    )
    answer = last_tool_answer(scripted_model)
    assert "hello from the agent" in answer and "43" in answer and "Agent[" in answer
    following = kernel.execute("print(made_by_agent)")
    assert following.stdout.strip() == "42"  # the next cell has it
    # No cell number of the person's was taken, and Out holds none of the agent's values.
    assert following.execution_count == result.execution_count + 1
    assert kernel.execute("print(43 in Out.values())").stdout.strip() == "False"
    # Nothing leaked into the prompt cell outside the card (stdout, a value).
    assert "hello from the agent" not in result.stdout
    shown = visible_text(card_with(kernel, "made_by_agent = base + 2"))
    assert "hello from the agent" in shown and "43" in shown


def test_a_figure_reaches_the_model_as_an_image_and_the_card_shows_it(
    kernel, scripted_model, approved
):
    result = kernel.execute(
        "%%atomic_agent --wait\n"
        + call('import matplotlib.pyplot as plt\nplt.plot([1, 4, 9])\nplt.title("squares")'),
        timeout=90,
    )
    server, _home, _args = scripted_model
    attached = [
        part
        for message in server.requests[-1].messages
        if message.get("role") == "user" and isinstance(message.get("content"), list)
        for part in message["content"]
        if isinstance(part, dict) and part.get("type") == "image_url"
    ]
    assert attached and "data:image/png;base64," in attached[0]["image_url"]["url"]
    assert "image 1 attached" in last_tool_answer(scripted_model)
    html = card_with(kernel, "plt.plot([1, 4, 9])")
    assert "<img" in html and "data:image/png;base64," in html
    # The figure was closed: it does not show up in the person's next cell.
    after = kernel.execute("import matplotlib.pyplot as plt\nprint(plt.get_fignums())")
    assert after.stdout.strip() == "[]"
    assert not any("image/png" in o.get("data", {}) for o in result.outputs + after.outputs)


def test_approval_is_asked_in_the_card_and_nothing_runs_before_a_click(kernel, scripted_model):
    result = kernel.execute("%%atomic_agent\n" + call("approved_marker = 1"))
    (area,) = result.widget_ids
    dialog = dialog_in(kernel, area, "confirm")  # the approval dialog
    (card,) = cards(kernel, area)
    assert f'data-dialog="{dialog.id}"' in card  # its controls are drawn in the card
    assert elements(page_of(kernel, area), "atomic-yes")
    code_at = visible_text(card).index("approved_marker = 1")  # the code, above the question
    assert code_at < visible_text(card).index(dialog.description["title"])
    # A prompt-injected call waits for the person: nothing ran yet.
    assert kernel.execute("print('approved_marker' in dir())").stdout.strip() == "False"
    dialog.confirm(True)
    kernel.execute("aj.session().wait(timeout=60)")
    assert kernel.execute("print(approved_marker)").stdout.strip() == "1"

    result = kernel.execute("%%atomic_agent\n" + call("refused_marker = 1"))
    (area,) = result.widget_ids
    dialog_in(kernel, area, "confirm").confirm(False)
    kernel.execute("aj.session().wait(timeout=60)")
    assert "declined" in last_tool_answer(scripted_model)
    assert kernel.execute("print('refused_marker' in dir())").stdout.strip() == "False"


def test_a_rule_made_in_the_dialog_answers_the_next_call(kernel, scripted_model):
    result = kernel.execute("%%atomic_agent\n" + call("ruled = 1"))
    (area,) = result.widget_ids
    dialog = dialog_in(kernel, area, "confirm")  # the approval dialog
    assert dialog.description["rule_label"]  # "answer this way from now on" is offered
    assert elements(page_of(kernel, area), "atomic-make-rule")
    dialog.confirm(True, rule=True)  # Yes, with the box checked
    kernel.execute("aj.session().wait(timeout=60)")
    # The next call is answered by the rule, with no click, under --wait.
    kernel.execute("%%atomic_agent --wait\n" + call("ruled += 1"), timeout=60)
    assert kernel.execute("print(ruled)").stdout.strip() == "2"
    kernel.execute("%atomic_agent policy --clear")


def test_the_variables_and_cells_tools_list_what_the_person_made(kernel, scripted_model):
    kernel.execute(
        "import pandas as pd\nsales = pd.DataFrame({'month': [1, 2, 3], 'revenue': [10, 20, 5]})"
    )
    kernel.execute("1 / 0", check=False)
    kernel.execute("%%atomic_agent --wait\nkernel call notebook_variables {}", timeout=60)
    listed = last_tool_answer(scripted_model)
    assert "sales" in listed and "DataFrame" in listed and "3" in listed
    assert "aj" not in listed.split()  # a module is left out
    kernel.execute('%%atomic_agent --wait\nkernel call notebook_cells {"last": 5}', timeout=60)
    cells = last_tool_answer(scripted_model)
    assert "sales = pd.DataFrame" in cells and "ZeroDivisionError" in cells


def test_kernel_code_off_offers_no_python_tool(kernel, scripted_model):
    server, _home, args = scripted_model
    kernel.execute(f"%atomic_agent start --name off --kernel-code off -- {' '.join(args)}")
    kernel.execute("%%atomic_agent --name off --wait\nhello", timeout=60)
    offered = server.requests[-1].tool_names
    assert "python" not in offered and "notebook_variables" in offered
    kernel.execute("%atomic_agent stop --name off")
    kernel.execute("%%atomic_agent --wait\nhello", timeout=60)
    assert "python" in server.requests[-1].tool_names  # the default session offers it


@pytest.mark.one_line  # the kernel side; the round trip runs on both lines above
def test_bad_code_gets_the_tools_error_and_the_kernel_goes_on(kernel, scripted_model, approved):
    kernel.execute("%%atomic_agent --wait\n" + call("syntax_marker = 1\ndef broken(:"), timeout=60)
    answer = last_tool_answer(scripted_model)
    assert "SyntaxError" in answer and "line 2" in answer
    assert kernel.execute("print('syntax_marker' in dir())").stdout.strip() == "False"
    kernel.execute("%%atomic_agent --wait\n" + call("input('your name?')"), timeout=60)
    assert "stdin is not available to the agent" in last_tool_answer(scripted_model)
    for code in ("import sys\nsys.exit(3)", "exit()", "import sys\nsys.stdout.close()"):
        kernel.execute("%%atomic_agent --wait\n" + call(code), timeout=60)
        said = last_tool_answer(scripted_model)
        assert "kernel keeps running" in said or "closed" in said
    after = kernel.execute("print('still here')")
    assert after.stdout.strip() == "still here"
    assert not [p for p in after.reply.get("payload", []) if p.get("source") == "ask_exit"]


@pytest.mark.one_line  # the kernel side's bounds
def test_huge_output_and_many_figures_are_bounded(kernel, scripted_model, approved):
    rss = "int(open('/proc/self/statm').read().split()[1]) * 4096 // 1_000_000"
    before = int(kernel.execute(f"import gc; gc.collect(); print({rss})").stdout)
    kernel.execute("%%atomic_agent --wait\n" + call("print('x' * 50_000_000)"), timeout=120)
    answer = last_tool_answer(scripted_model)
    assert len(answer) < 20_000 and "characters of output left out" in answer
    after = int(kernel.execute(f"gc.collect(); print({rss})").stdout)
    assert after - before < 10  # megabytes: the 50 MB of output were not kept
    kernel.execute(
        "%%atomic_agent --wait\n"
        + call(
            "import matplotlib.pyplot as plt\n"
            "for i in range(200):\n    plt.figure()\n    plt.plot([i, i + 1])\n"
        ),
        timeout=120,
    )
    answer = last_tool_answer(scripted_model)
    assert "more displays left out" in answer and "image 6 attached" in answer
    assert "image 7 attached" not in answer
    assert kernel.execute("print(plt.get_fignums())").stdout.strip() == "[]"


def test_a_long_call_counts_its_seconds_and_the_kernels_interrupt_ends_it(
    kernel, scripted_model, approved
):
    result = kernel.execute(
        "%%atomic_agent\n" + call("import time\nfor _ in range(600):\n    time.sleep(0.1)")
    )
    (area,) = result.widget_ids

    def counting():
        return any("running in the kernel… 1 s" in visible_text(c) for c in cards(kernel, area))

    kernel.wait_for(counting, timeout=60, what="the card counting the seconds")
    kernel.interrupt()
    kernel.execute("aj.session().wait(timeout=60)")
    assert "KeyboardInterrupt" in last_tool_answer(scripted_model)
    assert kernel.execute("print(1 + 1)").stdout.strip() == "2"


@pytest.mark.one_line  # the kernel's history
def test_agent_calls_are_cited_apart_from_the_persons_cells_and_err_follows_the_latest(
    kernel, scripted_model, approved
):
    kernel.execute("%%atomic_agent --wait\n" + call("undefined_name_here"), timeout=60)
    number = kernel.execute(
        "from atomic_jupyter.notebook.agent_code import history_of\n"
        "print(history_of(get_ipython()).calls()[-1].number)"
    ).stdout.strip()
    cited = kernel.execute(
        "from atomic_jupyter.notebook.agent_code import cite_with_agent\n"
        f"print(cite_with_agent('Agent[{number}]'))"
    ).stdout
    assert "undefined_name_here" in cited and "NameError" in cited
    assert f"Agent[{number}]" in kernel.execute("print(cite_with_agent('Err'))").stdout
    kernel.execute("person_fails = 1 / 0", check=False)
    err = kernel.execute("print(cite_with_agent('Err'))").stdout
    assert "person_fails" in err and "Agent[" not in err


@pytest.mark.one_line  # the kernel's history and its payload
def test_cells_puts_the_runs_code_into_a_new_cell_below(kernel, scripted_model, approved):
    kernel.execute("%%atomic_agent --wait\n" + call("left_behind = 'first run'"), timeout=60)
    kernel.execute("%%atomic_agent --wait\n" + call("left_behind += ', second run'"), timeout=60)
    result = kernel.execute("%atomic_agent cells")  # as JupyterLab sends it
    (payload,) = [p for p in result.reply["payload"] if p["source"] == "set_next_input"]
    assert payload["replace"] is False
    assert "is in a new cell below" in result.stdout and "left_behind" not in result.stdout
    assert "left_behind += ', second run'" in payload["text"]
    assert "'first run'" not in payload["text"]
    assert payload["text"].startswith("# Agent[")
    run = int(payload["text"].split("run ", 1)[1].split(",", 1)[0])
    # As nbconvert sends it (no stdin): it inserts no cell, so the code is printed.
    earlier = kernel.execute(f"%atomic_agent cells --run {run - 1}", allow_stdin=False)
    (payload,) = [p for p in earlier.reply["payload"] if p["source"] == "set_next_input"]
    assert "left_behind = 'first run'" in payload["text"]
    assert "new cell below" not in earlier.stdout and payload["text"] in earlier.stdout
    # Run again without the agent, the cells give the same value.
    kernel.execute("del left_behind")
    kernel.execute(payload["text"])
    kernel.execute(
        [p for p in result.reply["payload"] if p["source"] == "set_next_input"][0]["text"]
    )
    assert kernel.execute("print(left_behind)").stdout.strip() == "first run, second run"


def toggle_plan_mode(kernel, name: str, on: bool) -> None:
    """``/plan`` in session ``name``, then wait (30 s at most) for the plan-mode example's
    own status to say it is done: the command's handler may finish after its run is answered."""
    kernel.execute(f"%%atomic_agent --name {name} --wait\n/plan", timeout=60)
    wait = (
        f"import time\ns = aj.session({name!r})\nend = time.monotonic() + 30\n"
        f"while bool(s.status.get('plan-mode')) is not {on} and time.monotonic() < end:\n"
        "    time.sleep(0.05)\n"
        "print(bool(s.status.get('plan-mode')))"
    )
    assert kernel.execute(wait, timeout=60).stdout.strip() == str(on)


def test_plan_mode_turns_python_off_with_edit_and_write_and_back_on(kernel, scripted_model):
    """The agent's own plan-mode example makes the agent read-only (edit and write off; on
    the 0.73 line it keeps only its own list of tools). python, which can change files and the
    kernel, is off with them, the panel says so, and it comes back when they do."""
    server, _home, args = scripted_model
    plan = agent_example("plan-mode/index.ts")
    kernel.execute(f"%atomic_agent start --name plan -e {plan} -- {' '.join(args)}")
    # The example asks what next after each run in plan mode: left pending, that dialog raced
    # the /plan that ends plan mode on the 0.73 line (its answer came after, or never).
    kernel.execute(
        "aj.session('plan').answer_with('Stay in plan mode', method='select', title='what next')"
    )

    def offered(prompt: str) -> set[str]:
        kernel.execute(f"%%atomic_agent --name plan --wait\n{prompt}", timeout=60)
        return set(server.requests[-1].tool_names)

    def status() -> str:
        said = kernel.execute("print(aj.session('plan').status.get('atomic-read-only'))")
        return said.stdout.strip()

    try:
        assert {"python", "edit", "write"} <= offered("hello before planning")
        toggle_plan_mode(kernel, "plan", True)
        planning = offered("hello while planning")
        assert not {"edit", "write"} & planning, planning  # the example's doing
        assert "python" not in planning, planning
        if CURRENT_LINE:  # the 0.73 line's example keeps only its own list of tools
            assert "notebook_variables" in planning, planning  # reading stays
        assert status() == "read-only: python off while edit and write are off"
        toggle_plan_mode(kernel, "plan", False)
        assert {"python", "edit", "write"} <= offered("hello after planning")
        assert status() == "None"
    finally:
        kernel.execute("%atomic_agent stop --name plan")


@pytest.mark.skipif(
    not CURRENT_LINE, reason="the 0.73 line's plan mode turns every tool but its own list off"
)
def test_a_person_can_keep_python_on_while_the_agent_is_read_only(kernel, scripted_model):
    server, _home, args = scripted_model
    plan = agent_example("plan-mode/index.ts")
    kernel.execute("%config AtomicAgent.kernel_code_when_read_only = True")
    try:
        kernel.execute(f"%atomic_agent start --name kept -e {plan} -- {' '.join(args)}")
        toggle_plan_mode(kernel, "kept", True)
        kernel.execute("%%atomic_agent --name kept --wait\nhello while planning", timeout=60)
        offered = set(server.requests[-1].tool_names)
        assert "python" in offered and "edit" not in offered, offered
    finally:
        kernel.execute("%config AtomicAgent.kernel_code_when_read_only = False")
        kernel.execute("%atomic_agent stop --name kept")
