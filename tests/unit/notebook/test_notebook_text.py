"""The open notebook as the model reads it (``notebook/notebook_text.py``): bounded listings,
ranges, one cell in full, what a run showed; and the edit's operations checked for shape and
size before the page is asked."""

from __future__ import annotations

from atomic_jupyter.notebook.notebook_text import (
    CELL_LIMIT,
    LISTING_LIMIT,
    cell_listing,
    changed_since_run,
    run_text,
)
from atomic_jupyter.notebook.notebook_tools import SOURCE_MAX, _operations


def cells(n: int, source: str = "print({k})") -> dict:
    return {
        "cells": [
            {"id": f"c{k}", "type": "code", "source": source.format(k=k), "execution_count": None}
            for k in range(1, n + 1)
        ]
    }


def test_a_500_cell_notebook_is_listed_within_the_limit_and_says_how_to_ask_for_the_rest():
    listing = cell_listing(cells(500, "x = {k}\n" + "y = 1\n" * 30))
    assert len(listing.text) < LISTING_LIMIT + 2_000
    assert "Notebook the notebook: 500 cells." in listing.text
    shown = listing.text.count("--- cell ")
    assert 10 < shown < 500
    assert f"cells {shown + 1}–500 not shown (ask with start={shown + 1})" in listing.text
    assert sorted(listing.read) == sorted(f"c{k}" for k in range(1, shown + 1))


def test_a_range_and_a_cell_by_id():
    listing = cell_listing(cells(20), start=5, end=6)
    assert "Showing cells 5–6." in listing.text
    assert "--- cell 5 · id c5 · code · not run\nprint(5)" in listing.text
    assert "cells 1–4 not shown" in listing.text and "cells 7–20 not shown" in listing.text
    one = cell_listing(cells(20), cell_id="c7")
    assert one.text.endswith("--- cell 7 · id c7 · code · not run\nprint(7)")
    assert one.read == {"c7": "print(7)"}
    missing = cell_listing(cells(3), cell_id="zz")
    assert "No cell has the id 'zz'. Ids: c1, c2, c3" in missing.text and missing.read == {}


def test_a_long_source_is_cut_and_not_counted_as_read_unless_read_alone():
    long = {"cells": [{"id": "big", "type": "code", "source": "a = 1\n" * 2_000}]}
    listing = cell_listing(long)
    assert "characters left out" in listing.text and "read it alone by its id" in listing.text
    assert listing.read == {}
    alone = cell_listing(long, cell_id="big")
    assert alone.read == {"big": "a = 1\n" * 2_000}
    huge = {"cells": [{"id": "huge", "type": "code", "source": "b" * (CELL_LIMIT + 10)}]}
    assert cell_listing(huge, cell_id="huge").read == {}


def test_the_prompts_cell_and_a_cell_edited_since_it_ran_are_named():
    notebook = {
        "cells": [
            {"id": "a", "type": "code", "source": "x = 2", "execution_count": 1},
            {"id": "b", "type": "code", "source": "%%atomic_agent\nfix it", "execution_count": 2},
        ]
    }
    listing = cell_listing(
        notebook, origin_cell="b", history=["", "x = 1", "%%atomic_agent\nfix it"]
    )
    assert "the prompt came from cell 2 (id b)" in listing.text
    assert "--- cell 1 · id a · code · ran as [1] · edited since it ran" in listing.text
    assert "--- cell 2 · id b · code · ran as [2] · the prompt came from this cell" in listing.text
    assert changed_since_run("x", 9, ["", "x"]) == "ran before this kernel started"
    assert changed_since_run("x", None, []) == ""


def test_outputs_are_summarised_without_escapes():
    notebook = {
        "cells": [
            {
                "id": "a",
                "type": "code",
                "source": "1/0",
                "outputs": [
                    {"type": "stream", "name": "stdout", "text": "hi\x1b[31m red\x1b[0m"},
                    {"type": "error", "text": "ZeroDivisionError: division by zero"},
                    {
                        "type": "display_data",
                        "text": "<Figure>",
                        "mimes": ["image/png", "text/plain"],
                    },
                ],
            }
        ]
    }
    text = cell_listing(notebook).text
    assert "[stdout] hi red" in text
    assert "[error] ZeroDivisionError: division by zero" in text
    assert "[display (image/png)] <Figure>" in text


def test_what_a_run_showed_with_images_attached_up_to_the_limit():
    images: list = []
    text, failed, shown = run_text(
        [
            {
                "id": "a",
                "execution_count": 3,
                "status": "ok",
                "outputs": [
                    {"type": "stream", "name": "stdout", "text": "hello"},
                    {"type": "display_data", "text": "<Figure>", "png": "AAAA"},
                    {"type": "display_data", "text": "<Figure 2>", "png": "BBBB"},
                ],
            }
        ],
        images,
        max_images=1,
    )
    assert not failed
    assert "--- cell id a ran as [3]" in text and "[stdout]\nhello" in text
    assert "image 1 attached" in text and images == [("image/png", "AAAA")]
    assert shown[0] == {"type": "note", "text": "cell id a ran as [3]"}
    _text, failed, _shown = run_text(
        [{"id": "b", "status": "error", "outputs": [{"type": "error", "traceback": "Trace"}]}],
        [],
        6,
    )
    assert failed


def test_operations_are_checked_for_shape_and_size_before_the_page_is_asked():
    assert _operations({}) == 'notebook_edit needs {"operations": [...]}: no operation was given'
    assert _operations({"operations": [{"op": "move"}]}) == (
        "operation 1: op is replace, insert or delete"
    )
    assert _operations({"operations": [{"op": "replace", "source": "x"}]}) == (
        "operation 1: replace needs the cell_id of the cell"
    )
    huge = [{"op": "insert", "source": "x" * (SOURCE_MAX + 1)}]
    assert "is at most 5,000,000 characters" in str(_operations({"operations": huge}))
    assert _operations({"operations": [{"op": "delete", "cell_id": "a", "extra": 1}]}) == [
        {"op": "delete", "cell_id": "a"}
    ]
