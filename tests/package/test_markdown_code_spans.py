"""Every Markdown we publish renders without a code span that swallows text.

The citation syntax (`` $`name` ``) holds a backquote. Written inside a one-backquote code
span, it ends the span early: the rest of the sentence turns into code and a stray backquote
is left in the text (this is how the quickstart read until issue 33). The README, the design
documents, the documentation site's pages and every notebook's Markdown cells are rendered
here with markdown-it-py, and a backquote left in the rendered text fails the test.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[2]

#: The quickstart's sixth Markdown cell as it was: one backquote around a citation.
GARBLED = (
    "Cite a value of the kernel with a dollar and backquotes, `$`name``: the agent gets a "
    "readable summary of it, never the whole object. `$`Err`` cites the last failed cell."
)


#: A code span that is one citation (`` $`df` ``) or one backquoted name (`` `df` ``): the
#: only code spans whose backquotes are meant to be seen.
QUOTED = re.compile(r"\$?`[^`]+`")


def stray_backquotes(markdown: str) -> list[str]:
    """The rendered runs of text, or of code other than one quoted citation or name, that
    still hold a backquote, each with its line number."""
    parser = MarkdownIt("commonmark").enable("table")
    found = []
    for block in parser.parse(markdown):
        if block.type != "inline" or not block.children:
            continue
        line = block.map[0] + 1 if block.map else 0
        for token in block.children:
            if token.type == "text":
                left = token.content
            elif token.type == "code_inline":
                left = "" if QUOTED.fullmatch(token.content.strip()) else token.content
            else:
                continue
            if "`" in left:
                found.append(f"line {line}: {token.content.strip()!r}")
    return found


def published_markdown() -> list[tuple[str, str]]:
    """(where, Markdown) for every page and cell we publish."""
    files = [ROOT / "README.md", *sorted(ROOT.glob("*.md"))]
    files += sorted(p for p in (ROOT / "docs").rglob("*.md") if "_build" not in p.parts)
    found = [
        (str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in dict.fromkeys(files)
    ]
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        for number, cell in enumerate(cells, 1):
            if cell["cell_type"] == "markdown":
                where = f"{notebook.relative_to(ROOT)} cell {number}"
                found.append((where, "".join(cell["source"])))
    return [(where, text) for where, text in found if not where.startswith("docs/notebooks/")]


def test_a_citation_in_a_one_backquote_span_is_caught() -> None:
    assert stray_backquotes(GARBLED)
    assert not stray_backquotes(
        GARBLED.replace("`$`name``", "`` $`name` ``").replace("`$`Err``", "`` $`Err` ``")
    )


def test_code_fences_and_double_backquote_spans_pass() -> None:
    text = "Write `` $`x` `` to cite; it becomes `` `x` ``.\n\n```python\n%%atomic_agent\nwhat is $`x`?\n```\n"
    assert stray_backquotes(text) == []


def test_published_markdown_is_found() -> None:
    names = {where.split(" ")[0] for where, _ in PUBLISHED}
    assert {"README.md", "ARCHITECTURE.md", "notebooks/quickstart.ipynb"} <= names
    assert any(name.startswith("docs/guides/") for name in names)


PUBLISHED = published_markdown()


@pytest.mark.parametrize(("where", "markdown"), PUBLISHED, ids=[where for where, _ in PUBLISHED])
def test_no_code_span_swallows_text(where: str, markdown: str) -> None:
    assert stray_backquotes(markdown) == [], where
