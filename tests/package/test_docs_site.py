"""The documentation site, built as ``make docs`` builds it (warnings are errors), and read.

One build for the module: the notebooks run on the offline demo model as the site builds, so
their pages carry the records of a real run, readable with no kernel and no widget manager.
"""

from __future__ import annotations

import html
import os
import re
import subprocess
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.build,
    pytest.mark.agent,
    pytest.mark.kernel,
    # The site runs the notebooks on the current line, the one a reader installs.
    pytest.mark.one_line,
    pytest.mark.timeout(900),
]

#: A Markdown link or image: [text](target) or ![alt](target).
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


@dataclass(frozen=True)
class Build:
    """``make docs`` run into a fresh folder: the folder, and what it printed."""

    out: Path
    stdout: str
    stderr: str


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Build:
    """The site built by ``make docs`` into a fresh folder; fails with Sphinx's output."""
    out = tmp_path_factory.mktemp("site")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    done = subprocess.run(
        ["make", "--no-print-directory", "docs", f"DOCS_BUILD={out}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=840,
    )
    assert done.returncode == 0, f"make docs failed:\n{done.stdout[-4000:]}\n{done.stderr[-8000:]}"
    return Build(out, done.stdout, done.stderr)


@pytest.fixture(scope="module")
def site(build: Build) -> Path:
    """The built site's folder."""
    return build.out


def test_make_docs_is_quiet_when_nothing_is_wrong(build: Build) -> None:
    """No warning on a good build: not the kernels' "running over TCP without encryption",
    not nbclient's "No handler found for comm target" (nbclient has no page to link), not
    its progress lines. (Sphinx's own warnings fail the build: -W.)"""
    assert build.stderr == "", build.stderr[-4000:]
    assert "WARNING" not in build.stdout, build.stdout[-4000:]


class ProseText(HTMLParser):
    """The words of a page outside code and outside the notebooks' outputs (a record shows
    what a person typed and the agent said, backquotes and all, as text)."""

    SKIPPED = {"script", "style", "pre", "code", "kbd", "samp"}
    VOID = {"br", "img", "hr", "input", "meta", "link", "wbr", "source", "col", "area"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.words: list[str] = []
        self._stack: list[bool] = []  # per open element: whether it is skipped

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.VOID:
            return
        classes = (dict(attrs).get("class") or "").split()
        skipped = tag in self.SKIPPED or "cell_output" in classes
        self._stack.append(skipped or any(self._stack[-1:]))

    def handle_endtag(self, tag: str) -> None:
        if tag not in self.VOID and self._stack:
            self._stack.pop()

    def handle_data(self, data: str) -> None:
        if not any(self._stack[-1:]):
            self.words.append(data)


def test_no_page_shows_a_raw_backquote_outside_code(site: Path) -> None:
    """A backquote a reader sees outside code is Markdown or reStructuredText that was not
    rendered (such as a setting's help inserted as plain text)."""
    shown = {}
    for page in sorted(site.rglob("*.html")):
        prose = ProseText()
        prose.feed(page.read_text(encoding="utf-8"))
        words = " ".join(" ".join(prose.words).split())
        found = [m.group(0) for m in re.finditer(r".{0,40}`.{0,40}", words)]
        if found:
            shown[str(page.relative_to(site))] = found[:3]
    assert shown == {}, shown


def page_text(page: Path) -> str:
    """A built page as the words a reader sees (no scripts, styles or tags)."""
    text = page.read_text(encoding="utf-8")
    text = re.sub(r"<(script|style)\b.*?</\1>", " ", text, flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", text)))


def anchors(page: Path) -> set[str]:
    """Every id in a built page."""
    return set(re.findall(r'\bid="([^"]+)"', page.read_text(encoding="utf-8")))


def test_the_quickstart_page_shows_the_records_of_a_real_run(site: Path) -> None:
    page = site / "notebooks" / "quickstart.html"
    text = page_text(page)
    assert "> hello! who are you?" in text  # the prompt
    assert "Hello from the offline demo model" in text  # the streamed answer
    assert "tool bash · $ ls -la · done" in text  # a tool card
    assert "→ Block (answered by code)" in text  # a decided dialog
    assert "→ Yes (answered by code)" in text
    raw = page.read_text(encoding="utf-8")
    # Records, not live widgets: nothing needs a kernel or the widget manager's scripts.
    assert "application/vnd.jupyter.widget-view+json" not in raw
    assert "@jupyter-widgets/html-manager" not in raw
    assert "application/vnd.jupyter.widget-state+json" not in raw  # conf.py drops it


def test_every_notebook_is_a_page_of_the_site(site: Path) -> None:
    notebooks = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert notebooks
    for name in notebooks:
        assert (site / "notebooks" / f"{name}.html").is_file(), name
    analysis = page_text(site / "notebooks" / "data_analysis.html")
    assert "ran in the kernel" in analysis and "Agent[1]" in analysis


def option_strings(help_text: str) -> set[str]:
    """The options a magic's help lists in its options column (``--kernel-code``, ``-e``)."""
    found: set[str] = set()
    for line in help_text.splitlines():
        if line.startswith("  -"):
            column = line.strip().split("  ")[0]
            found.update(re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", column))
    return found - {"-h", "--help"}


@pytest.mark.parametrize("magic", ["atomic_agent", "atomic_extension"])
def test_the_reference_lists_every_option_the_magic_help_lists(site: Path, magic: str) -> None:
    from atomic_jupyter.notebook import magics

    method: Any = getattr(
        magics.AtomicAgentMagics if magic == "atomic_agent" else magics.AtomicExtensionMagics,
        magic,
    )
    shown = method.__doc__  # what %atomic_agent? pages
    options = option_strings(shown)
    assert {"--name"} <= options
    if magic == "atomic_agent":
        assert {"-e", "--extension", "--kernel-code", "--demo", "--trust-project"} <= options
    text = page_text(site / "reference" / "magics.html")
    missing = {option for option in options if option not in text}
    assert not missing
    assert "–" not in text.split("Options")[0]  # no option turned into an en dash
    assert "saved conversations" not in page_text(site / "notebooks" / "quickstart.html")
    if magic == "atomic_agent":
        for action in method.parser._actions:
            for choice in action.choices or []:
                assert choice in text, choice


def test_the_command_line_reference_lists_every_subcommand_and_option(site: Path) -> None:
    from atomic_jupyter import cli

    text = page_text(site / "reference" / "command-line.html")
    top = cli.parser()
    subcommands = next(a for a in top._actions if a.choices)
    for name, sub in subcommands.choices.items():
        assert f"atomic-jupyter {name}" in text
        for action in sub._actions:
            for option in set(action.option_strings) - {"-h", "--help"}:
                assert option in text, option


def test_the_python_api_is_documented_from_its_docstrings(site: Path) -> None:
    import atomic_jupyter

    page = site / "reference" / "python.html"
    assert atomic_jupyter.start.__doc__
    assert atomic_jupyter.start.__doc__.splitlines()[0] in page_text(page)
    ids = anchors(page)
    for name in atomic_jupyter.__all__:
        if name[0].isalpha() and name != "load_ipython_extension":
            assert f"atomic_jupyter.{name}" in ids, name
    assert "atomic_jupyter.AgentSession.prompt" in ids


def test_the_design_pages_include_the_design_documents(site: Path) -> None:
    for document, page in [
        ("ARCHITECTURE.md", "architecture"),
        ("RELIABILITY.md", "reliability"),
        ("BENCHMARKS.md", "benchmarks"),
    ]:
        title = (ROOT / document).read_text(encoding="utf-8").splitlines()[0].lstrip("# ")
        assert title in page_text(site / "design" / f"{page}.html"), document


def site_page(target: str) -> tuple[Path, str] | None:
    """The built page (and anchor) a README link points to, or None for an outside link."""
    if re.match(r"^[a-z]+:", target):
        return None
    path, _, anchor = target.partition("#")
    if path.startswith("docs/"):
        path = path[len("docs/") :]
    if path.endswith((".md", ".ipynb")):
        path = path.rsplit(".", 1)[0] + ".html"
    return Path(path), anchor


def test_every_link_in_the_readme_resolves_into_the_site(site: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = LINK.findall(readme) + re.findall(r'(?:src|srcset)="([^"]+)"', readme)
    local = [t for t in targets if site_page(t) is not None]
    assert len(local) >= 10, "the README links into the site"
    broken = []
    for target in local:
        found = site_page(target)
        assert found is not None
        path, anchor = found
        page = site / path
        if not page.is_file() or (anchor and anchor not in anchors(page)):
            broken.append(target)
    assert broken == []


def test_site_page_maps_readme_links_to_built_pages() -> None:
    assert site_page("https://mybinder.org/v2/gh/x") is None
    assert site_page("docs/guides/citing.md#fix") == (Path("guides/citing.html"), "fix")
    assert site_page("notebooks/quickstart.ipynb") == (Path("notebooks/quickstart.html"), "")
    assert site_page("docs/_static/screenshot-light.png") == (
        Path("_static/screenshot-light.png"),
        "",
    )


@pytest.mark.browser
@pytest.mark.parametrize("theme", ["light", "dark"])
def test_a_notebook_page_reads_in_the_browser_with_no_kernel(
    site: Path, chromium: Any, theme: str
) -> None:
    """Chromium opens the built quickstart from disk: the records are visible, the tool
    card's output is monospace, and the page raises no script error, in both themes."""
    from playwright.sync_api import expect

    from tests.browser.browser_harness import VIEWPORT, WAIT_MS

    context = chromium.new_context(viewport=VIEWPORT, color_scheme=theme)
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto((site / "notebooks" / "quickstart.html").as_uri())
        answer = page.get_by_text("Hello from the offline demo model").first
        expect(answer).to_be_visible(timeout=WAIT_MS)
        expect(page.get_by_text("→ Block (answered by code)").first).to_be_visible()
        listing = page.locator("pre", has_text="drwxr-xr-x").first
        expect(listing).to_be_visible()
        font = listing.evaluate("e => getComputedStyle(e).fontFamily")
        assert "monospace" in font.lower()
        assert page.evaluate("document.body.dataset.theme || 'auto'") in {"auto", theme}
        assert errors == []
    finally:
        context.close()
