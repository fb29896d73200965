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
    assert card.summary == "1 cell to change"  # proposed: nothing is changed before a decision
    assert "x = 2" in visible_text(card.command_html)
    assert "waiting for the kernel…" in visible_text(card.body_html)
    assert "<img" not in card.command_html


def test_the_kernels_diff_shows_each_change_where_it_goes_and_waits_for_a_decision():
    card = render_tool(edit_call(CHANGES))
    assert card.summary.startswith("1 cell to change, 1 cell to insert, 1 cell to delete · a")
    shown = visible_text(card.command_html)
    assert "change cell 2 (code, id c1)" in shown
    assert "new markdown cell, at cell 3" in shown and "(markdown)" not in shown
    assert "delete cell 6 (code, id c9)" in shown
    assert 'class="aj-diff-del"' in card.command_html and 'class="aj-diff-add"' in card.command_html
    assert "waiting for a decision" in visible_text(card.body_html)
    assert "<img" not in card.command_html  # the summary is plain text, escaped where shown


def test_a_rejection_is_an_outcome_with_its_reason_not_an_error():
    rejected = {**CHANGES, "decision": "rejected", "reason": f"keep x {EVIL}"}
    card = render_tool(edit_call(rejected, done=True, result="The person rejected the change"))
    assert card.state == "rejected"
    assert card.summary.startswith("1 cell to change, 1 cell to insert, 1 cell to delete")
    assert "change cell 2" in visible_text(card.command_html)
    body = visible_text(card.body_html)
    assert body == f"Rejected: nothing was changed. The reason: keep x {EVIL}"
    assert "aj-tool-error" not in card.body_html and "aj-tool-outcome" in card.body_html
    assert "<img" not in card.body_html


def test_an_accepted_change_says_what_changed():
    accepted = {**CHANGES, "decision": "accepted"}
    card = render_tool(edit_call(accepted, done=True, result="Applied to a.ipynb"))
    assert card.summary.startswith("1 cell changed, 1 cell inserted, 1 cell deleted")
    assert card.state == ""


def test_a_failure_that_is_no_decision_stays_an_error():
    card = render_tool(edit_call(CHANGES, done=True, is_error=True, result="not applied: gone"))
    assert card.state == "" and "aj-tool-error" in card.body_html


def test_cells_are_links_with_short_ids_and_odd_ids_stay_text():
    uuid = "3f2b8c1e-9d4a-4e7b-8c2f-1a2b3c4d5e6f"
    changes = [{**CHANGES["changes"][0], "cell_id": uuid}]
    card = render_tool(edit_call({"changes": changes, "decision": "pending"}))
    assert "change cell 2 (code, id 3f2b8c1e…)" in visible_text(card.command_html)
    assert f'data-aj-cell="{uuid}"' in card.command_html
    odd = [{**CHANGES["changes"][0], "cell_id": 'c1" onclick="x'}]
    card = render_tool(edit_call({"changes": odd, "decision": "pending"}))
    assert "data-aj-cell" not in card.command_html and "onclick=" not in card.command_html


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


NAMED = [
    {"cell_id": "c1", "index": 2, "cell_type": "code", "first_line": f"x = 7  # {EVIL}"},
    {"cell_id": "c2", "index": 4, "cell_type": "code", "first_line": ""},
]


def test_a_run_names_its_cells_as_the_person_sees_them():
    details = {"cells": NAMED, "decision": "pending"}
    call = ToolCall("notebook_run", {"cell_ids": ["c1", "c2"]}, "", None, details)
    card = render_tool(call)
    assert card.summary == "run cells 3, 5"
    shown = visible_text(card.command_html)
    assert f"cell 3 (id c1): x = 7 # {EVIL}" in shown and "cell 5 (id c2): (empty)" in shown
    assert 'data-aj-cell="c1"' in card.command_html and "<img" not in card.command_html


def test_a_declined_run_is_an_outcome():
    details = {"cells": NAMED[:1], "decision": "declined"}
    call = ToolCall("notebook_run", {"cell_ids": ["c1"]}, "", "declined", details, (), False, True)
    card = render_tool(call)
    assert card.state == "declined" and card.summary == "run cell 3"
    assert visible_text(card.body_html) == "Declined: nothing ran."
