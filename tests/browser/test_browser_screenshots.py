"""The README's and the docs' screenshots show the current build.

``scripts/screenshots.py`` makes ``docs/_static/screenshot-{light,dark}.png`` from a real run
and writes the text the shot shows beside them (``docs/_static/screenshot.txt``, digits
masked). This module runs the script's cells in the suite's JupyterLab, photographs the same
cell (``artifacts/screenshots/readme-screenshot-light.png``) and fails when it shows other text
than the committed pictures do: a changed string cannot leave a stale picture behind.
"""

from __future__ import annotations

import difflib
import re
import shutil
from pathlib import Path
from types import ModuleType

import pytest
from playwright.sync_api import expect

from tests.harness.support import ROOT

from .browser_harness import LabServer, screenshots_script
from .conftest import OpenNotebook

pytestmark = [pytest.mark.browser, pytest.mark.agent, pytest.mark.kernel]


def load_script() -> ModuleType:
    """``scripts/screenshots.py`` as a module (its cells, its text of a shot)."""
    return screenshots_script()


def test_the_screenshots_show_what_the_current_build_shows(
    lab_server: LabServer, open_notebook: OpenNotebook
) -> None:
    script = load_script()
    data = Path(lab_server.root / "sales.csv")
    if not data.exists():
        shutil.copy(ROOT / "notebooks" / "sales.csv", data)
    cells = [(f"shot{i}", source) for i, source in enumerate(script.CELLS)]
    nb = open_notebook("readme-screenshot.ipynb", cells)
    for name, _ in cells:
        nb.run(name)
    cell = nb.cell(cells[-1][0])
    transcript = cell.locator(".atomic-transcript")
    expect(transcript.locator(".atomic-run-state")).to_have_text("done")
    expect(transcript.locator(".atomic-footer")).to_contain_text("turn")
    expect(transcript.locator(".atomic-tool img").first).to_be_visible()
    nb.screenshot(cell, "readme-screenshot-light")
    shown = script.shown_text(cell)
    committed = script.TEXT.read_text(encoding="utf-8")
    diff = "".join(
        difflib.unified_diff(
            committed.splitlines(keepends=True),
            shown.splitlines(keepends=True),
            "docs/_static/screenshot.txt (the committed pictures)",
            "the current build",
        )
    )
    assert shown == committed, (
        "docs/_static/screenshot-{light,dark}.png show an older build: run "
        f".venv/bin/python scripts/screenshots.py and commit what it writes.\n{diff}"
    )


def test_the_screenshots_alt_texts_describe_what_they_show() -> None:
    """The README's and the site's alt texts name the card the picture shows (a python card,
    its approval dialog, the plot): the text of the shot says the same."""
    shown = load_script().TEXT.read_text(encoding="utf-8")
    assert "tool python ·" in shown and "confirm dialog:" in shown
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    alts = re.findall(r'alt="([^"]+)"', readme) + re.findall(r":alt: (.+)", index)
    assert len(alts) == 3, alts
    for alt in alts:
        assert "python tool card" in alt and "plot" in alt and "dialog" in alt, alt
