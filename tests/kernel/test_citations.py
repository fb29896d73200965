"""Citing kernel values in prompts ($`name`), and ``%atomic_agent fix``, in a real kernel driven
like JupyterLab, with the real agent (both lines) and the scripted model, which records what
it was sent."""

from __future__ import annotations

import pytest

from atomic_jupyter.session.citations import CITED_HEADING
from tests.harness.kernel_widgets import (
    displayed,
    element_text,
    elements,
    page_of,
    panels,
    record_of,
)
from tests.harness.output_page import page_html
from tests.harness.plugin import scripted_start
from tests.harness.widget_text import visible_text

# The text our citations build; the agent only forwards the user message, which
# test_conversation checks word for word on both lines.
pytestmark = [
    pytest.mark.kernel,
    pytest.mark.agent,
    pytest.mark.one_line,
    pytest.mark.scripted_kernel,
]

#: A DataFrame-like value with a million rows: its summary must stay small.
FRAME = '''
class Frame:
    """Just enough of a DataFrame: shape, columns, dtypes, head."""
    def __init__(self, rows):
        self.rows = rows
        self.columns = ["city", "population"]
        self.shape = (rows, 2)
        self.dtypes = {"city": "object", "population": "int64"}
    def head(self, n=5):
        return Frame(min(n, self.rows))
    def to_string(self):
        return "\\n".join(f"{i} city-{i} {1000 * i}" for i in range(self.rows))
    def __repr__(self):
        return self.to_string()

df = Frame(1_000_000)
'''


@pytest.fixture(scope="module")
def kernel_setup(scripted_model) -> list[str]:
    return [scripted_start(scripted_model), FRAME]


def sent(scripted_model) -> str:
    """What the model got last: the last user message."""
    server, _home, _args = scripted_model
    return server.requests[-1].last_user_text


def test_a_cited_frame_reaches_the_model_as_its_summary_within_the_limit(kernel, scripted_model):
    kernel.execute("%%atomic_agent --wait\nwhich columns does $`df` have?", timeout=60)
    got = sent(scripted_model)
    head, _, cited = got.partition(f"---\n{CITED_HEADING}")
    assert head.strip() == "which columns does `df` have?"
    assert "`df`:" in cited and "1,000,000 rows" in cited.replace("1000000", "1,000,000")
    assert "city" in cited and "population" in cited and "int64" in cited
    assert "city-999999" not in cited  # not the whole frame
    assert len(cited) < 4500


def test_a_cited_data_frame_is_shown_as_sent_in_the_code_font_its_columns_lined_up(
    kernel, scripted_model
):
    """A real pandas DataFrame cited: its first rows, a table, are in the prompt as sent,
    which the live view (drawn by the page's module), the record that replaced it and
    nbconvert's HTML of the cell as saved each show in a pre in the code font, every line of
    the table as the agent got it, space for space."""
    import nbformat
    from nbconvert import HTMLExporter

    kernel.execute(
        "import pandas as pd\n"
        "cities = pd.DataFrame({'city': ['Oslo', 'Rio de Janeiro', 'Ulm'],"
        " 'population': [709_000, 6_211_000, 126_000]})"
    )
    source = "%%atomic_agent --wait\nwhich city is largest in $`cities`?"
    result = kernel.execute(source, timeout=60)
    table = sent(scripted_model).split("first 3 rows:\n", 1)[1].split("\n")[:4]
    assert table[0].split() == ["city", "population"] and "Rio de Janeiro" in table[2], table
    (area_id,) = result.widget_ids
    saved = nbformat.v4.new_notebook()
    saved.cells.append(
        nbformat.v4.new_code_cell(
            source,
            outputs=[
                nbformat.v4.new_output("display_data", data=displayed(kernel, output))
                for output in result.outputs
                if output["output_type"] == "display_data"
            ],
        )
    )
    converted, _ = HTMLExporter(template_name="lab").from_notebook_node(saved)
    shown = {
        "the live view": page_html(kernel.tracker.pages[area_id]),
        "the record": record_of(kernel, area_id) or "",
        "nbconvert's HTML": converted,
    }
    for where, html in shown.items():
        (element,) = elements(html, "atomic-run-sent-text")
        assert element.startswith("<pre "), (where, element[:200])
        assert "font-family:var(--jp-code-font-family,monospace)" in element, where
        text = visible_text(element)
        for line in table:
            assert f"\n{line}\n" in f"{text}\n", (where, line, text)


def test_citing_the_last_error_sends_its_traceback_and_source(kernel, scripted_model):
    failed = kernel.execute("numbers = [1, 2]\nnumbers[0] / (numbers[1] - 2)", check=False)
    assert not failed.ok
    kernel.execute("%%atomic_agent --wait\nwhy did this fail? $`Err`", timeout=60)
    got = sent(scripted_model)
    assert "numbers[0] / (numbers[1] - 2)" in got  # the cell's source
    assert "ZeroDivisionError" in got and "Traceback" in got
    assert "\x1b[" not in got  # no terminal colours


def test_an_unknown_name_stops_the_cell_and_sends_nothing(kernel, scripted_model):
    server, _home, _args = scripted_model
    before = server.request_count
    result = kernel.execute("%%atomic_agent --wait\nlook at $`no_such_thing`", check=False)
    assert not result.ok
    assert "CitationError" in result.plain_traceback
    assert (
        "no_such_thing" in result.plain_traceback and "nothing was sent" in result.plain_traceback
    )
    assert server.request_count == before
    failing = kernel.execute("%%atomic_agent --wait\nlook at $`df.no_such_column`", check=False)
    assert "AttributeError" in failing.plain_traceback
    assert server.request_count == before


@pytest.mark.parametrize(
    "prompt",
    ["echo $HOME for me", "is {a: 1} valid JSON?", "simplify $x^2$ + $`x` without a dollar"],
)
def test_a_prompt_without_citations_is_sent_exactly_as_written(kernel, scripted_model, prompt):
    kernel.execute("x = 3")
    kernel.execute(f"%%atomic_agent --wait\n{prompt}", timeout=60)
    got = sent(scripted_model)
    if "$`x`" in prompt:  # this one cites x, and only x
        assert got.startswith("simplify $x^2$ + `x` without a dollar")
    else:
        assert got == prompt


def test_fix_sends_the_last_error_and_the_transcript_keeps_both_prompts(kernel, scripted_model):
    kernel.execute("def area(r):\n    return 3.14 * r ** 2\narea('two')", check=False)
    result = kernel.execute("%atomic_agent fix --wait", timeout=60)
    got = sent(scripted_model)
    assert got.startswith("Explain the last error in this notebook and fix it")
    assert "area('two')" in got and "TypeError" in got
    (area_id,) = result.widget_ids
    page = page_of(kernel, area_id)  # as last shown
    assert "$`Err`" in element_text(page, "atomic-run-prompt")  # the prompt as written
    (fold,) = elements(page, "atomic-run-sent")
    assert fold.startswith("<details")  # folded
    assert "Sent to the agent, with 1 cited value: Err" in visible_text(fold)
    assert "TypeError" in visible_text(fold)  # the prompt as the agent got it
    final = [
        o["data"].get("text/plain", "")
        for o in result.outputs
        if o["output_type"] == "update_display_data"
    ]
    assert any("$`Err`" in t and "TypeError" in t for t in final)


def test_the_panel_editor_and_the_python_api_cite_too(kernel, scripted_model):
    server, _home, _args = scripted_model
    kernel.execute("total = sum(range(10))")
    (panel,) = panels(kernel)
    before = server.request_count
    panel.type("is $`total` right?")
    panel.send("is $`total` right?")
    kernel.wait_for(
        lambda: server.request_count > before and "`total`:" in sent(scripted_model),
        timeout=30,
        what="the panel's prompt to reach the model",
    )
    assert "45" in sent(scripted_model).split("`total`:")[1]  # its value, as the kernel has it
    kernel.execute("import atomic_jupyter as aj\naj.session().wait(timeout=60)")  # the panel's run
    kernel.execute(
        "run = aj.session().prompt('and $`total * 2`?', display=False)\n"
        "aj.session().wait(run=run, timeout=60)"
    )
    assert "`total * 2`:" in sent(scripted_model) and "90" in sent(scripted_model)
    # a failing citation in the editor keeps the text and says why, in the panel
    rev = panel.editor["rev"]
    panel.type("what about $`missing_name`?")
    panel.send("what about $`missing_name`?")
    kernel.wait_for(
        lambda: any("missing_name" in t for t in panel.texts("atomic-diagnostics")),
        timeout=15,
        what="the panel to say the citation failed",
    )
    # Nothing lost: the editor keeps the text (the page is not told to replace it).
    assert panel.editor["value"] == "what about $`missing_name`?"
    assert panel.editor["rev"] == rev
