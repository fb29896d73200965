"""What a run costs and which model runs it, in JupyterLab: the real agent on the scripted
model, which reports token usage as OpenAI-compatible providers do and is priced in the agent's
``models.json`` (two models of provider ``scripted``: ``scripted`` thinks and has a 200,000
token window, ``scripted-lite`` does not think and has 100,000).

1. A run of two turns: its footer counts the first turn while the tool call runs, then says
   the model, the thinking level, the turns, the tokens and their price; the panel's standing
   line adds the conversation up, and its context line and bar say how full the window is.
2. The lite model chosen in the panel's own ``<select>``: the next prompt goes to it (the model
   server is asked for ``scripted-lite``), its footer names it, the thinking picker offers
   only "off", and the context past 80% of its smaller window is drawn as a warning.
3. The notebook saved from JupyterLab and reopened after its kernel is gone: each run's footer
   and the panel's standing and context lines read as they did live.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from atomic_jupyter.addons.model_server import (
    ScriptedModelServer,
    Text,
    Turn,
    Usage,
)
from tests.harness.priced_models import (
    LITE_WINDOW,
    TWO_TURNS,
    WINDOW,
    cost,
    priced_agent_home,
    two_turns,
)

from .browser_harness import LabServer, NotebookPage, panel_of
from .conftest import OpenNotebook, reopened_without_kernel

pytestmark = [pytest.mark.browser, pytest.mark.agent, pytest.mark.kernel]

FILENAME = "usage.ipynb"
#: The saved file, copied as it was saved and reopened with no kernel.
REOPENED = "usage-reopened.ipynb"
#: The lite model's one turn: 82% of its window, past the warning (80%) and short of the
#: agent's own compaction threshold (the window less its 16,384 reserved tokens).
LITE_TURN = (82_000, 50)
#: The thinking level the agent starts the thinking model at.
LEVEL = "medium"
#: What the context line adds past 80% of the window.
NEARLY_FULL = " · nearly full: compact it, or start a new conversation"
#: A finished run's duration, the footer's last part.
SECONDS = r" · \d+\.\d s"


def usage_script(request: Any) -> Turn:
    """Two turns around a bash call that takes two seconds, or one turn of the lite model."""
    turn = two_turns(request)
    if turn is not None:
        return turn
    return Turn([Text(f"You said: {request.last_user_text}")], usage=Usage(*LITE_TURN))


@pytest.fixture(scope="module")
def usage_model(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[ScriptedModelServer, Path]]:
    """The scripted server, and an agent home with its two priced models of provider
    ``scripted``."""
    home = tmp_path_factory.mktemp("browser-usage-agent-home")
    with priced_agent_home(home, usage_script) as server:
        yield server, home


def cells(home: Path) -> list[tuple[str, str]]:
    return [
        (
            "start",
            "%load_ext atomic_jupyter\n"
            f"%atomic_agent start --env PI_CODING_AGENT_DIR={home} "
            "-- --provider scripted --model scripted",
        ),
        ("two", "%%atomic_agent\nplease take two turns"),
        ("lite", "%%atomic_agent\nhello lite"),
    ]


@pytest.fixture(scope="module")
def nb(open_notebook: OpenNotebook, usage_model: tuple[ScriptedModelServer, Path]) -> NotebookPage:
    """The notebook, its session started on the thinking model and idle."""
    page = open_notebook(FILENAME, cells(usage_model[1]))
    page.run("start")
    expect(panel_of(page).locator(".atomic-state")).to_have_text("idle", timeout=60_000)
    return page


@pytest.fixture(scope="module")
def live() -> dict[str, str]:
    """What the live page showed, by name, for the reopened notebook to show the same."""
    return {}


def used(tokens_in: int, tokens_out: int) -> str:
    """How the footer and the standing line say tokens and their price."""
    return f"{tokens_in:,} in / {tokens_out:,} out tokens · ${cost(tokens_in, tokens_out):.4f}"


def footer(nb: NotebookPage, cell: str) -> Any:
    return nb.output(cell).locator(".atomic-footer")


def run_done(nb: NotebookPage, cell: str) -> None:
    expect(nb.output(cell).locator(".atomic-run-state")).to_have_text("done", timeout=60_000)


#: In the page: the model picker's options, as [group's label, value, text].
OPTIONS = """(select) => [...select.options].map(
  (o) => [o.parentElement.tagName === "OPTGROUP" ? o.parentElement.label : null, o.value, o.text]
)"""

#: In the page: how much of the context bar its fill covers (0 to 1), as drawn.
BAR_FILL = """(bar) => bar.firstElementChild.getBoundingClientRect().width
  / bar.getBoundingClientRect().width"""


def test_the_footer_and_the_panel_count_the_reported_tokens_and_their_price(
    nb: NotebookPage, live: dict[str, str]
) -> None:
    panel = panel_of(nb)
    expect(panel.locator("select.atomic-thinking-choice")).to_have_value(LEVEL)
    nb.run("two")
    # While the bash call sleeps, the first turn is counted already.
    (in0, out0), (in1, out1) = TWO_TURNS
    expect(footer(nb, "two")).to_have_text(f"so far: 1 model turn · {used(in0, out0)}")
    run_done(nb, "two")
    total_in, total_out = in0 + in1, out0 + out1
    said = f"scripted · thinking {LEVEL} · 2 model turns · {used(total_in, total_out)}"
    expect(footer(nb, "two")).to_have_text(re.compile(f"^{re.escape(said)}{SECONDS}$"))
    live["two"] = footer(nb, "two").inner_text()

    standing = (
        f"model scripted/scripted · thinking {LEVEL} · this conversation: "
        f"{used(total_in, total_out)}"
    )
    expect(panel.locator(".atomic-standing")).to_have_text(standing)
    # The context: the last turn's tokens, of the model's window.
    fraction = (in1 + out1) / WINDOW
    context = panel.locator(".atomic-context")
    expect(context.locator(".atomic-context-text")).to_have_text(
        f"context {fraction:.0%} of {WINDOW:,} tokens"
    )
    expect(context).not_to_have_class(re.compile(r"\batomic-context-full\b"))
    bar = context.get_by_role("meter", name="context window used")
    expect(bar).to_have_attribute("aria-valuenow", f"{fraction * 100:.0f}")
    assert bar.evaluate(BAR_FILL) == pytest.approx(fraction, abs=0.01)
    # No key is wanted: its row is not shown.
    expect(panel.locator(".atomic-key-row")).to_be_hidden()
    nb.screenshot(nb.cell("two"), "usage-footer")


def test_a_model_chosen_in_the_panels_select_runs_the_next_prompt(
    nb: NotebookPage, usage_model: tuple[ScriptedModelServer, Path], live: dict[str, str]
) -> None:
    server = usage_model[0]
    panel = panel_of(nb)
    models = panel.locator("select.atomic-model-choice")
    thinking = panel.locator("select.atomic-thinking-choice")
    # One group for the provider, one option for each of its models; the current one says so.
    expect(models.locator("option")).to_have_count(2)
    assert models.evaluate(OPTIONS) == [
        ["scripted", "scripted/scripted", "Scripted (current)"],
        ["scripted", "scripted/scripted-lite", "Scripted-Lite"],
    ]
    expect(models).to_have_value("scripted/scripted")
    expect(thinking.locator("option")).to_contain_text(["off", LEVEL, "high"])

    models.select_option("scripted/scripted-lite")
    standing = panel.locator(".atomic-standing")
    expect(standing).to_have_text(re.compile(r"^model scripted/scripted-lite · "))
    expect(models).to_have_value("scripted/scripted-lite")
    # A model that does not think offers no level but off.
    expect(thinking.locator("option")).to_have_text(["off"])
    expect(thinking).to_be_disabled()

    nb.run("lite")
    run_done(nb, "lite")
    assert server.requests[-1].model == "scripted-lite"
    said = f"scripted-lite · 1 model turn · {used(*LITE_TURN)}"
    expect(footer(nb, "lite")).to_have_text(re.compile(f"^{re.escape(said)}{SECONDS}$"))
    live["lite"] = footer(nb, "lite").inner_text()

    grand_in = sum(i for i, _ in TWO_TURNS) + LITE_TURN[0]
    grand_out = sum(o for _, o in TWO_TURNS) + LITE_TURN[1]
    live["standing"] = (
        f"model scripted/scripted-lite · this conversation: {used(grand_in, grand_out)}"
    )
    expect(standing).to_have_text(live["standing"])
    # Past 80% of the lite model's smaller window, the context line warns.
    fraction = sum(LITE_TURN) / LITE_WINDOW
    context = panel.locator(".atomic-context")
    live["context"] = f"context {fraction:.0%} of {LITE_WINDOW:,} tokens{NEARLY_FULL}"
    expect(context.locator(".atomic-context-text")).to_have_text(live["context"])
    expect(context).to_have_class(re.compile(r"\batomic-context-full\b"))
    bar = context.get_by_role("meter", name="context window used")
    expect(bar).to_have_attribute("aria-valuenow", f"{fraction * 100:.0f}")
    assert bar.evaluate(BAR_FILL) == pytest.approx(fraction, abs=0.01)
    nb.screenshot(nb.cell("start"), "usage-panel-lite")


def test_the_model_picker_marks_the_model_chosen_as_current(nb: NotebookPage) -> None:
    panel = panel_of(nb)
    # The kernel's answer to the change is on the page: the lite model offers only off.
    expect(panel.locator("select.atomic-thinking-choice option")).to_have_text(["off"])
    labels = [
        label for _, _, label in panel.locator("select.atomic-model-choice").evaluate(OPTIONS)
    ]
    assert labels == ["Scripted", "Scripted-Lite (current)"]


def test_the_reopened_notebook_reads_the_same_without_its_kernel(
    nb: NotebookPage, lab_server: LabServer, chromium: Any, live: dict[str, str]
) -> None:
    assert set(live) == {"two", "lite", "standing", "context"}, "the tests above run first"
    # The panel's record copy (hidden beside the live panel) is current before the save.
    copy = nb.output("start").locator(".atomic-record-copy")
    expect(copy.locator(".atomic-copy-standing")).to_have_text(live["standing"])
    expect(copy.locator(".atomic-copy-context-text")).to_have_text(live["context"])
    nb.page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    nb.wait_saved()
    shutil.copy(lab_server.root / FILENAME, lab_server.root / REOPENED)

    with reopened_without_kernel(lab_server, chromium, REOPENED, nb.names) as again:
        for cell in ("two", "lite"):
            expect(footer(again, cell)).to_be_visible()
            expect(footer(again, cell)).to_have_text(live[cell])
        panel = again.output("start").locator(".atomic-record-copy")
        expect(panel).to_be_visible()
        expect(panel.locator(".atomic-copy-standing")).to_have_text(live["standing"])
        context = panel.locator(".atomic-copy-context")
        expect(context.locator(".atomic-copy-context-text")).to_have_text(live["context"])
        expect(context).to_have_class(re.compile(r"\batomic-copy-context-full\b"))
        again.expect_no_lost_widget_shown()
        again.screenshot(again.cell("start"), "usage-panel-reopened")
        assert again.page_errors == [], again.page_errors
