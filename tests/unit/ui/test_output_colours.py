"""The theme's shades of our outputs' colours (``labextension/style/index.css``, issue 55).

Our outputs carry their colours inline as the record's literal mid-tones
(:func:`atomic_jupyter.ui.tool_cards.styles.record_styles`,
:func:`atomic_jupyter.ui.highlight.record_token_styles`), and no literal colour reaches WCAG AA
(4.5:1) on both a white and a near-black page. The notebook extension's stylesheet gives each
one a shade per theme. Here, from the files alone: every literal text colour the record writes
has its rule there, and each shade reads at AA in its theme on the output's background and on
the diffs' green and red lines (tests/browser/test_browser_contrast.py measures the real page).
"""

from __future__ import annotations

import re

import pytest

from atomic_jupyter.ui.highlight import record_token_styles
from atomic_jupyter.ui.tool_cards import styles
from tests.harness.support import ROOT

STYLESHEET = ROOT / "labextension" / "style" / "index.css"
#: WCAG 2 AA for normal text.
AA = 4.5
#: The pages the outputs are on, by theme: JupyterLab's ``--jp-layout-color0`` and
#: ``--jp-layout-color1`` (the output area, the cell), light and dark.
PAGES = {"light": ["#ffffff", "#ffffff"], "dark": ["#111111", "#212121"]}

RGBA = tuple[float, float, float, float]


def colour(text: str) -> RGBA:
    """``#rgb``, ``#rgba``, ``#rrggbb`` or ``#rrggbbaa`` as (r, g, b, alpha)."""
    digits = text.lstrip("#")
    if len(digits) in (3, 4):
        digits = "".join(c * 2 for c in digits)
    values = [int(digits[i : i + 2], 16) for i in range(0, len(digits), 2)]
    alpha = values[3] / 255 if len(values) == 4 else 1.0
    return (values[0], values[1], values[2], alpha)


def over(top: RGBA, below: RGBA) -> RGBA:
    a = top[3]
    r, g, b = (top[i] * a + below[i] * (1 - a) for i in range(3))
    return (r, g, b, 1.0)


def luminance(c: RGBA) -> float:
    def channel(v: float) -> float:
        v /= 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(c[0]) + 0.7152 * channel(c[1]) + 0.0722 * channel(c[2])


def contrast(a: RGBA, b: RGBA) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def backgrounds(theme: str) -> list[RGBA]:
    """The theme's pages, and each with the record's diff lines (a green or red tint) on it."""
    record = styles.record_styles()
    tints = []
    for line in (styles.ADDED_LINE, styles.REMOVED_LINE):
        found = re.search(r"background:(#[0-9a-f]+)", record[line])
        assert found, record[line]
        tints.append(colour(found.group(1)))
    pages = [colour(page) for page in PAGES[theme]]
    return pages + [over(tint, page) for tint in tints for page in pages]


def stylesheet() -> str:
    return STYLESHEET.read_text(encoding="utf-8")


def shades(selector: str) -> dict[str, str]:
    """The ``--aj-text-*`` custom properties the rule for ``selector`` sets."""
    block = re.search(re.escape(selector) + r"\s*\{([^}]*)\}", stylesheet())
    assert block, f"no rule for {selector} in {STYLESHEET.name}"
    return dict(re.findall(r"(--aj-text-[\w-]+):\s*(#[0-9a-f]{6})\s*;", block.group(1)))


def themes() -> dict[str, dict[str, str]]:
    """Each theme's shades: the light ones are the default, the dark ones its override."""
    return {"light": shades("body"), "dark": shades("body[data-jp-theme-light='false']")}


def rules() -> dict[str, str]:
    """What the stylesheet gives each inline colour of ours: ``{style fragment: property}``."""
    found = re.findall(
        r"\[style\*='([^']+)'\]\s*\{\s*color:\s*var\((--aj-text-[\w-]+)\)\s*!important;\s*\}",
        stylesheet(),
    )
    return dict(found)


def literal_text_colours() -> set[str]:
    """Every literal text colour the record form of our outputs writes."""
    forms = set(styles.record_styles().values()) | set(record_token_styles().values())
    return {match for form in forms for match in re.findall(r"(?<![-\w])color:(#[0-9a-f]+)", form)}


def test_every_literal_text_colour_of_the_record_has_its_shade_in_both_themes() -> None:
    given = rules()
    colours = literal_text_colours()
    assert len(colours) >= 15  # the muted, error and link colours and the code's
    missing = sorted(c for c in colours if f"color:{c}" not in given)
    assert missing == [], f"no rule in {STYLESHEET.name} for {missing}"
    # the record's "warning" tone (a theme variable too light on a light page)
    assert "color:var(--jp-warn-color1" in given
    shaded = themes()
    for fragment, prop in given.items():
        assert prop in shaded["light"] and prop in shaded["dark"], (fragment, prop)


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_each_shade_reads_at_aa_on_the_page_and_on_a_diff_line(theme: str) -> None:
    weak = {
        prop: round(
            min(contrast(over(colour(value), page), page) for page in backgrounds(theme)), 2
        )
        for prop, value in themes()[theme].items()
    }
    assert weak and {prop: ratio for prop, ratio in weak.items() if ratio < AA} == {}
    # each rule's selector is scoped to our outputs (no one else's inline colours change)
    assert all(
        line.startswith(":is(.atomic-output, .atomic-record, .atomic-record-copy) [style*=")
        for line in stylesheet().splitlines()
        if "[style*=" in line
    )
