"""The notebook tools' cards (``ui/tool_cards/notebook.py``): a change's diff from the
arguments, then from the kernel's check, its outcome, a cell run's outputs; every string the
agent or the notebook sent shown as text."""

from __future__ import annotations

from atomic_jupyter.ui.tool_cards import ToolCall, render_tool
from tests.harness.widget_text import visible_text

EVIL = '<img src=x onerror="window.__pwned=1">'


def edit_call(details=None, *, done=False, result=None, is_error=False, output="") -> ToolCall:
    args = {"operations": [{"op": "replace", "cell_id": "c1", "source": f"x = 2  # {EVIL}"}]}
    return ToolCall("notebook_edit", args, output, result, details, (), is_error, done)


CHANGES = {
    "notebook": f"a{EVIL}.ipynb (JupyterLab)",
    "decision": "pending",
    "changes": [
        {
            "op": "replace",
            "cell_id": "c1",
            "index": 1,
            "cell_type": "code",
            "old": "x = 1",
            "new": f"x = 2  # {EVIL}",
        },
        {
            "op": "insert",
            "cell_id": None,
            "index": 2,
            "cell_type": "markdown",
            "old": "",
            "new": "# Notes",
        },
        {
            "op": "delete",
            "cell_id": "c9",
            "index": 5,
            "cell_type": "code",
            "old": "z = 3",
            "new": "",
        },
    ],
}


def test_before_the_kernels_check_the_card_shows_the_arguments_new_source():
    card = render_tool(edit_call(output="waiting for the kernel…"))
    assert card.summary == "1 cell changed"
    assert "x = 2" in visible_text(card.command_html)
    assert "waiting for the kernel…" in visible_text(card.body_html)
    assert "<img" not in card.command_html


def test_the_kernels_diff_shows_each_change_where_it_goes_and_waits_for_a_decision():
    card = render_tool(edit_call(CHANGES))
    assert card.summary.startswith("1 cell changed, 1 cell inserted, 1 cell deleted · a")
    shown = visible_text(card.command_html)
    assert "change cell 2 (code, id c1)" in shown
    assert "new markdown cell at cell 3 (markdown)" in shown
    assert "delete cell 6 (code, id c9)" in shown
    assert 'class="aj-diff-del"' in card.command_html and 'class="aj-diff-add"' in card.command_html
    assert "waiting for a decision" in visible_text(card.body_html)
    assert "<img" not in card.command_html  # the summary is plain text, escaped where shown


def test_a_rejection_keeps_the_diff_and_shows_the_reason_as_the_error():
    card = render_tool(
        edit_call(CHANGES, done=True, is_error=True, result=f"rejected. Their reason: {EVIL}")
    )
    assert "change cell 2" in visible_text(card.command_html)
    assert f"Their reason: {EVIL}" in visible_text(card.body_html)
    assert "<img" not in card.body_html


def test_a_run_of_cells_shows_their_outputs_like_python():
    details = {
        "outputs": [
            {"type": "note", "text": "cell id c1 ran as [4]"},
            {"type": "stream", "name": "stdout", "text": "hello"},
        ],
        "kernel": True,
    }
    call = ToolCall(
        "notebook_run", {"cell_ids": ["c1"]}, "", "Ran 1 cell", details, (), False, True
    )
    card = render_tool(call)
    assert card.summary == "run 1 cell: c1"
    text = visible_text(card.body_html)
    assert "cell id c1 ran as [4]" in text and "hello" in text


def test_a_read_names_what_was_asked_for():
    call = ToolCall(
        "notebook_read", {"start": 3, "end": 9}, "", "Notebook …", None, (), False, True
    )
    assert render_tool(call).summary == "cells 3–9"
    assert render_tool(ToolCall("notebook_read", {}, "", None)).summary == "the whole notebook"
