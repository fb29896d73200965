"""``%atomic_agent cells`` in a real page: the code the agent ran in the kernel comes back as a
new code cell right below, in JupyterLab 4 and in Notebook 7, and runs there without the agent.

The real agent runs on the scripted model (``kernel call python {...}`` makes it call its
``python`` tool, approved by a policy so nothing is clicked). ``cells`` answers with IPython's
``set_next_input`` payload (``replace=False``); both frontends insert a code cell holding its
text below the cell that ran. The test reads the new cell's editor, runs it with Ctrl+Enter
after the variable it makes was deleted, and checks that the model was asked nothing more.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from playwright.sync_api import expect

from .browser_harness import LabServer, NotebookPage, panel_of, write_notebook
from .conftest import OPEN_PAGES, OpenNotebook, new_page

pytestmark = [pytest.mark.browser, pytest.mark.agent, pytest.mark.kernel]

CODE = "left_behind = 6 * 7\nprint(left_behind)"
POLICY = '%atomic_agent policy --title "Python in the kernel" yes'
#: The new cell's source: one call, headed by the comment that names it, then its code.
AGENT_CELL = re.compile(
    r"^# Agent\[(\d+)\]: run (\d+), call 1 of 1\nleft_behind = 6 \* 7\nprint\(left_behind\)\n?$"
)
NEW = "agent-code"


def cells(scripted_model: Any) -> list[tuple[str, str]]:
    """The notebook: a session on the scripted model with the python tool approved, a prompt
    that makes the agent run CODE in the kernel, the variable deleted, ``cells``, a check."""
    _server, home, args = scripted_model
    return [
        (
            "start",
            "%load_ext atomic_jupyter\n"
            f"%atomic_agent start --env PI_CODING_AGENT_DIR={home} -- {' '.join(args)}\n"
            f"{POLICY}",
        ),
        ("prompt", "%%atomic_agent --wait\nkernel call python " + json.dumps({"code": CODE})),
        ("forget", "del left_behind\nprint('left_behind' in dir())"),
        ("cells", "%atomic_agent cells"),
        ("check", "print(left_behind)"),
    ]


def source_of(nb: NotebookPage, index: int) -> str:
    """The source of the notebook's cell ``index`` as the page's notebook model holds it."""
    source: str = nb.page.evaluate(
        """([path, index]) => {
          for (const widget of Array.from(window.jupyterapp.shell.widgets("main"))) {
            if (!widget.context || widget.context.path !== path) continue;
            return widget.content.model.cells.get(index).sharedModel.getSource();
          }
          return null;
        }""",
        [nb.filename, index],
    )
    return source


def cells_bring_back_the_agents_code(nb: NotebookPage, scripted_model: Any) -> None:
    """Steps 1 to 3 in the open notebook ``nb`` (its page's own errors so far are allowed)."""
    server = scripted_model[0]
    at_load = list(nb.page_errors)
    all_cells = nb.notebook.locator(".jp-Cell")

    nb.run("start")
    panel = panel_of(nb)
    expect(panel.locator(".atomic-state")).to_have_text("idle", timeout=60_000)
    expect(nb.output("start")).to_contain_text("Python in the kernel")

    # 1. The agent runs CODE in the kernel (the policy answers its approval).
    nb.run("prompt", timeout=60_000)
    prompt = nb.output("prompt")
    expect(prompt.locator(".atomic-run-state")).to_have_text("done")
    card = prompt.locator(".atomic-tool").first
    expect(card.locator(".atomic-tool-header")).to_contain_text("python")
    expect(card).to_contain_text("left_behind = 6 * 7")
    expect(card).to_contain_text("42")
    expect(prompt.locator(".atomic-assistant-text").last).to_contain_text("The tool answered")
    nb.run("forget")
    expect(nb.output("forget")).to_have_text("False")

    # 2. `cells`: one new code cell right below it, with the call's code under its heading.
    count = len(nb.names)
    expect(all_cells).to_have_count(count)
    nb.run("cells")
    expect(all_cells).to_have_count(count + 1)
    below = nb.names.index("cells") + 1
    nb.names.insert(below, NEW)  # the page's cells, in order, again
    said = nb.output("cells").inner_text()
    reported = re.search(
        r"The code of run (\d+) \(1 call, Agent\[(\d+)\]\) is in a new cell below", said
    )
    assert reported, said
    new = nb.cell(NEW)
    expect(new).to_have_class(re.compile(r"\bjp-CodeCell\b"))
    expect(new.locator(".jp-InputArea-prompt")).to_have_text(re.compile(r"^\[ ?\]:$"))
    expect(new.locator(".jp-OutputArea-output")).to_have_count(0)
    editor = new.locator(".jp-InputArea-editor .cm-content")
    expect(editor).to_contain_text("left_behind = 6 * 7")
    expect(editor).to_have_text(re.compile(r"^# Agent\["), use_inner_text=True)
    source = source_of(nb, below)
    match = AGENT_CELL.match(source)
    assert match, source
    assert (match.group(2), match.group(1)) == reported.groups(), (source, said)
    # The cells around it are the person's, unchanged.
    assert source_of(nb, below - 1) == "%atomic_agent cells"
    assert source_of(nb, below + 1) == "print(left_behind)"
    nb.screenshot(nb.cell(NEW), f"agent-cells-{nb.filename.removesuffix('.ipynb')}")

    # 3. The new cell runs on its own: the variable is back, and the model was asked nothing.
    asked = len(server.requests)
    nb.run(NEW)
    expect(nb.output(NEW)).to_have_text("42")
    nb.run("check")
    expect(nb.output("check")).to_have_text("42")
    assert len(server.requests) == asked
    expect(all_cells).to_have_count(count + 1)  # running it added no cell
    pwned = nb.pwned()
    assert pwned["value"] is None and pwned["hits"] == [], pwned
    assert nb.page_errors == at_load, nb.page_errors


def test_cells_puts_the_agents_code_into_a_new_cell_in_jupyterlab(
    open_notebook: OpenNotebook, scripted_model: Any
) -> None:
    nb = open_notebook("agent_cells.ipynb", cells(scripted_model))
    cells_bring_back_the_agents_code(nb, scripted_model)


def test_cells_puts_the_agents_code_into_a_new_cell_in_notebook_7(
    notebook7: LabServer, chromium: Any, scripted_model: Any
) -> None:
    filename = "agent_cells_nb7.ipynb"
    notebook = cells(scripted_model)
    write_notebook(notebook7.root / filename, [source for _, source in notebook])
    nb, context = new_page(chromium, filename, [name for name, _ in notebook])
    try:
        nb.page.goto(notebook7.lab_url(filename))
        nb.wait_ready()
        cells_bring_back_the_agents_code(nb, scripted_model)
    finally:
        OPEN_PAGES.remove(nb)
        context.close()
        notebook7.shutdown_kernel_of(filename)
