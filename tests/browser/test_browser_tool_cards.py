"""Tool cards in JupyterLab, in the light and the dark theme (issue 16).

A scripted model in the kernel makes the real agent call each built-in tool once: ``edit`` on
greeting.txt, ``write`` of a Python file, ``read`` of a PNG, and (twice) a ``bash`` command
that tests/extensions/guard.ts guards with a confirm. The tests read the real page: the
diff's removed and added lines have different backgrounds, the written code is highlighted,
the image loaded from its ``data:`` URL, the guard's dialog sits inside the command's card,
and a dialog answered "from now on" makes a rule that answers the next one.

Every card is photographed in both themes (``artifacts/screenshots/tool-card-*-light.png``
and ``-dark.png``): the light ones as each card arrives, then the theme is switched live
(Settings → Theme → JupyterLab Dark) and the same outputs photographed again. In the dark
theme no part of a card may be a light box, and its text must stay readable. The theme is
a user setting kept by the server: the module puts it back as it found it.
"""

from __future__ import annotations

import base64
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.harness.support import CARD_TOOL_CALLS, EXTENSIONS
from tests.kernel.test_tool_cards import tiny_png

from .browser_harness import LabServer, NotebookPage, panel_of
from .wcag import COMPOSITE_JS

pytestmark = [pytest.mark.browser, pytest.mark.agent, pytest.mark.kernel]

GUARD = str(EXTENSIONS / "guard.ts")
THEMES_PLUGIN = "@jupyterlab/apputils-extension:themes"
LIGHT = "JupyterLab Light"
DARK = "JupyterLab Dark"
CONFIRM_TITLE = "Run a dangerous command?"
DANGEROUS_COMMAND = "echo dangerous-but-fine"

#: The first cell: the files the tools touch, in the kernel's (and the agent's) working
#: directory, then a scripted model in the kernel that calls one tool per prompt (chosen by
#: keyword, as ``tests.harness.support.conversation_script`` does), and a session on it with
#: the guard extension.
START = f"""%load_ext atomic_jupyter
import base64
import tempfile
from pathlib import Path
import atomic_jupyter as aj
from atomic_jupyter.addons.model_server import ScriptedModelServer, Text, ToolCall, Turn, Usage, agent_args, write_models_json

Path("greeting.txt").write_text("line one\\nhello world\\nline three\\n")
Path("dot.png").write_bytes(base64.b64decode({base64.b64encode(tiny_png()).decode()!r}))

CARD_TOOL_CALLS = {CARD_TOOL_CALLS!r}

def script(request):
    prompt = request.last_user_text.lower()
    first = request.turn_index == 0
    if "dangerous" in prompt:
        if first:
            return Turn([ToolCall("bash", {{"command": {DANGEROUS_COMMAND!r}}})], usage=Usage(80, 10))
        return Turn([Text("The command ran (or was blocked).")], usage=Usage(90, 8))
    for keyword, (tool, args) in CARD_TOOL_CALLS.items():
        if keyword in prompt:
            if first:
                return Turn([ToolCall(tool, args)], usage=Usage(60, 10))
            return Turn([Text("Done with the file.")], usage=Usage(70, 5))
    return Turn([Text("You said: " + request.last_user_text)], usage=Usage(10, 5))

server = ScriptedModelServer(script).start()
agent_dir = tempfile.mkdtemp(prefix="tool-cards-agent-", dir=".")  # in the lab's scratch root
write_models_json(agent_dir, server)
s = aj.start(extensions=[{GUARD!r}], env={{"PI_CODING_AGENT_DIR": agent_dir}}, extra_args=agent_args(server))"""

CELLS = [
    ("start", START),
    ("edit", "%%atomic_agent\nplease change the greeting"),
    ("write", "%%atomic_agent\nplease write a python script"),
    ("read", "%%atomic_agent\nplease look at the picture"),
    ("danger", "%%atomic_agent\nrun something dangerous"),
    ("danger_again", "%%atomic_agent\nrun something dangerous again"),
]

#: The cards photographed again in the dark theme (``tool-card-<kind>-dark.png``): kind -> the
#: cell whose card it is.
CARD_SHOTS = {
    "edit": "edit",
    "write": "write",
    "read": "read",
    "bash-after": "danger",
    "bash-rule": "danger_again",
}

# --------------------------------------------------------------------------- colours in the page

#: JavaScript helpers: parse a computed colour, composite it over what is behind it (the
#: backgrounds of the element and its ancestors, and its ancestors' opacity), and measure
#: relative luminance and contrast as WCAG defines them.
COLOUR_JS = (
    """
const parse = (c) => {
  const m = (c || '').match(/rgba?\\(([^)]+)\\)/);
  if (!m) return [0, 0, 0, 0];
  const p = m[1].split(/[ ,\\/]+/).filter(Boolean).map(Number);
  return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
};
"""
    + COMPOSITE_JS
    + """
const foreground = (el) => {
  const c = parse(getComputedStyle(el).color);
  c[3] *= opacity(el);
  return over(c, background(el));
};
const describe = (el) => {
  const cls = typeof el.className === 'string' && el.className ? '.' + el.className.trim().split(/\\s+/).join('.') : '';
  return el.tagName.toLowerCase() + cls + ' "' + (el.innerText || '').trim().slice(0, 40) + '"';
};
"""
)

#: What one element looks like: its computed colours, and composited ones.
LOOK = (
    "(el) => {"
    + COLOUR_JS
    + """
  const style = getComputedStyle(el);
  const bg = background(el), fg = foreground(el);
  return {color: style.color, backgroundColor: style.backgroundColor,
          background: bg, foreground: fg, backgroundLuminance: luminance(bg),
          contrast: contrast(fg, bg)};
}"""
)

#: Inside ``root``: every element with text of its own whose text contrasts less than 3:1
#: with what is behind it, and (when ``dark``) every element with a background of its own
#: that ends up light (luminance above 0.4: a white box in the dark theme).
PROBLEMS = (
    "([root, dark]) => {"
    + COLOUR_JS
    + """
  const problems = [];
  for (const el of [root, ...root.querySelectorAll('*')]) {
    if (!el.getClientRects().length) continue;  // not shown (a closed fold, display:none)
    const style = getComputedStyle(el);
    if (style.visibility === 'hidden') continue;
    const ownText = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    if (ownText || el.tagName === 'INPUT' || el.tagName === 'BUTTON') {
      const ratio = contrast(foreground(el), background(el));
      if (ratio < 3) problems.push(`low contrast ${ratio.toFixed(2)}: ${describe(el)} (${style.color} on ${background(el).map(Math.round)})`);
    }
    if (dark && parse(style.backgroundColor)[3] > 0) {
      const lum = luminance(background(el));
      if (lum > 0.4) problems.push(`light box (luminance ${lum.toFixed(2)}): ${describe(el)} (${style.backgroundColor})`);
    }
  }
  return problems;
}"""
)


def look(locator: Any) -> dict[str, Any]:
    return dict(locator.evaluate(LOOK))


def problems(nb: NotebookPage, locator: Any, dark: bool) -> list[str]:
    return list(nb.page.evaluate(PROBLEMS, [locator.element_handle(), dark]))


# --------------------------------------------------------------------------- the page

#: Requests of the page that went anywhere but the lab server (none may: the image is a
#: ``data:`` URL, and nothing else is fetched from outside).
OUTSIDE_REQUESTS: list[str] = []


@pytest.fixture(scope="module")
def theme_setting(lab_server: LabServer) -> Iterator[str]:
    """The server's theme setting as this module found it; put back afterwards (JupyterLab
    keeps a theme chosen in a page as the user's setting, for every page opened later)."""
    raw = str(lab_server.lab_setting(THEMES_PLUGIN).get("raw") or "{}")
    yield raw
    if lab_server.lab_setting(THEMES_PLUGIN).get("raw") != raw:
        lab_server.put_lab_setting(THEMES_PLUGIN, raw)
    assert lab_server.lab_setting(THEMES_PLUGIN)["settings"].get("theme", LIGHT) == LIGHT


@pytest.fixture(scope="module")
def nb(theme_setting: str, open_notebook: Any, lab_server: LabServer) -> NotebookPage:
    page = open_notebook("tool-cards.ipynb", CELLS)
    OUTSIDE_REQUESTS.clear()
    page.page.on(
        "request",
        lambda request: (
            None
            if request.url.startswith((lab_server.base, "data:", "blob:"))
            else OUTSIDE_REQUESTS.append(request.url)
        ),
    )
    assert page.page.evaluate("() => document.body.dataset.jpThemeName") == LIGHT
    page.run("start")
    expect(panel_of(page).locator(".atomic-state")).to_have_text("idle", timeout=60_000)
    return page


def card_of(nb: NotebookPage, cell: str) -> Any:
    return nb.output(cell).locator(".atomic-tool")


def run_done(nb: NotebookPage, cell: str) -> Any:
    """Wait until the cell's run is over; return its one tool card."""
    transcript = nb.output(cell).locator(".atomic-transcript")
    expect(transcript.locator(".atomic-run-state")).to_have_text("done", timeout=60_000)
    card = card_of(nb, cell)
    expect(card).to_have_count(1)
    expect(card).to_have_class(re.compile(r"\batomic-tool-done\b"))
    return card


def assert_clean(nb: NotebookPage) -> None:
    pwned = nb.pwned()
    assert pwned["value"] is None and pwned["hits"] == [], f"a payload ran: {pwned}"
    assert nb.page_errors == [], nb.page_errors
    assert nb.js_dialogs == [], nb.js_dialogs
    assert OUTSIDE_REQUESTS == [], OUTSIDE_REQUESTS


def theme_saved(lab_server: LabServer, theme: str) -> None:
    """Wait until the server holds ``theme`` as the user's setting (the page saves it)."""
    deadline = time.monotonic() + 30
    while (saved := lab_server.lab_setting(THEMES_PLUGIN)["settings"].get("theme")) != theme:
        assert time.monotonic() < deadline, (
            f"the server's theme setting is {saved!r}, not {theme!r}"
        )
        time.sleep(0.2)  # polling an HTTP endpoint


def header(tool: str, summary: str) -> re.Pattern[str]:
    return re.compile(rf"^tool {tool} · {summary} · done( · \d+ ms)?$")


# --------------------------------------------------------------------------- the tests (in order)


def test_an_edit_card_shows_removed_and_added_lines_in_different_colours(
    nb: NotebookPage, lab_server: LabServer
) -> None:
    nb.run("edit")
    card = run_done(nb, "edit")
    expect(card.locator(".atomic-tool-header")).to_have_text(
        header("edit", r"greeting\.txt\s+\+1 −1")
    )
    body = card.locator(".atomic-tool-command")  # the diff: what the edit was about to do
    removed, added = body.locator(".aj-diff-del"), body.locator(".aj-diff-add")
    expect(removed).to_have_text(["− hello world"])
    expect(added).to_have_text(["+ goodbye world"])
    del_bg = look(removed)["backgroundColor"]
    add_bg = look(added)["backgroundColor"]
    assert del_bg != add_bg, (del_bg, add_bg)
    red = [float(v) for v in re.findall(r"[\d.]+", del_bg)]
    green = [float(v) for v in re.findall(r"[\d.]+", add_bg)]
    assert red[0] > red[1] and green[1] > green[0], (del_bg, add_bg)  # red-ish, green-ish
    assert red[3:] and red[3] > 0 and green[3:] and green[3] > 0  # translucent, not none
    assert (lab_server.root / "greeting.txt").read_text() == "line one\ngoodbye world\nline three\n"
    assert problems(nb, card, dark=False) == []
    nb.screenshot(card, "tool-card-edit-light")
    assert_clean(nb)


def test_a_write_card_shows_the_python_code_highlighted(
    nb: NotebookPage, lab_server: LabServer
) -> None:
    nb.run("write")
    card = run_done(nb, "write")
    expect(card.locator(".atomic-tool-header")).to_have_text(
        header("write", r"script\.py\s+5 lines")
    )
    code = card.locator(".atomic-tool-command .aj-tool-code")  # the content it wrote
    expect(code).to_contain_text("def main():")
    keyword = code.locator("span[style*='color']", has_text="def").first
    expect(keyword).to_have_text("def")
    plain = keyword.locator("xpath=ancestor::pre[1]")
    assert look(keyword)["color"] != look(plain)["color"], (look(keyword), look(plain))
    _tool, args = CARD_TOOL_CALLS["write a python script"]
    assert (lab_server.root / "script.py").read_text() == args["content"]
    assert problems(nb, card, dark=False) == []
    nb.screenshot(card, "tool-card-write-light")
    assert_clean(nb)


def test_a_read_card_shows_the_png_from_its_data(nb: NotebookPage) -> None:
    nb.run("read")
    card = run_done(nb, "read")
    expect(card.locator(".atomic-tool-header")).to_have_text(header("read", r"dot\.png"))
    image = card.locator(".atomic-tool-output img")
    expect(image).to_have_count(1)
    expect(image).to_have_attribute("src", re.compile(r"^data:image/png;base64,"))
    nb.page.wait_for_function("(img) => img.complete", arg=image.element_handle())
    loaded = image.evaluate(
        "(img) => ({width: img.naturalWidth, height: img.naturalHeight, src: img.currentSrc})"
    )
    assert (loaded["width"], loaded["height"]) == (2, 2), loaded
    assert base64.b64decode(loaded["src"].split(",", 1)[1]) == tiny_png()
    assert problems(nb, card, dark=False) == []
    nb.screenshot(card, "tool-card-read-light")
    assert_clean(nb)


def test_a_guarded_commands_dialog_sits_in_its_card_and_makes_a_rule(nb: NotebookPage) -> None:
    nb.run("danger")
    card = card_of(nb, "danger")
    dialog = nb.output("danger").locator(
        ".atomic-tool .atomic-tool-dialogs.atomic-dialog.atomic-dialog-confirm"
    )
    expect(dialog).to_be_visible(timeout=60_000)
    expect(card).to_have_count(1)
    # The dialog is inside the card of the command it is about.
    assert dialog.evaluate(
        "(d) => !!d.closest('.atomic-tool-dialogs') && !!d.closest('.atomic-tool')"
        " && d.closest('.atomic-tool').querySelector('.atomic-tool-header').innerText"
        f".includes({DANGEROUS_COMMAND!r})"
    )
    expect(card.locator(".atomic-tool-header")).to_contain_text(f"$ {DANGEROUS_COMMAND}")
    expect(dialog).to_contain_text(CONFIRM_TITLE)
    expect(dialog).to_contain_text(DANGEROUS_COMMAND)
    rule = dialog.locator(".atomic-make-rule")
    expect(rule).to_contain_text("Answer dialogs with this title this way from now on")
    assert problems(nb, card, dark=False) == []
    nb.screenshot(card, "tool-card-bash-dialog-light")
    # The dialog only shows before it is answered: its dark picture is taken now.
    dark = nb.set_theme(DARK)
    assert dark["light"] is False, dark
    assert problems(nb, card, dark=True) == []
    nb.screenshot(card, "tool-card-bash-dialog-dark")
    assert nb.set_theme(LIGHT)["light"] is True

    rule.locator("input[type=checkbox]").check()
    expect(rule.locator("input[type=checkbox]")).to_be_checked()
    dialog.locator("button.atomic-yes").click()
    outcome = nb.output("danger").locator(
        ".atomic-tool .atomic-tool-dialogs .atomic-dialog-outcome"
    )
    expect(outcome).to_have_text(re.compile(r"made the rule for this session$"))
    expect(outcome).to_have_text("→ Yes (clicked) · made the rule for this session")
    rules = panel_of(nb).locator(".atomic-rules")
    expect(rules.locator(".atomic-rule-text")).to_have_text(
        [f"confirm “{CONFIRM_TITLE}” → Yes (rule)"]
    )
    expect(rules.locator(".atomic-rule .atomic-rule-remove")).to_have_count(1)
    card = run_done(nb, "danger")
    expect(card.locator(".atomic-tool-output")).to_contain_text("dangerous-but-fine")
    notes = (
        panel_of(nb)
        .locator(".atomic-notification")
        .filter(has_text=f"guard: allowed {DANGEROUS_COMMAND}")
    )
    expect(notes).to_have_count(1)
    assert problems(nb, card, dark=False) == []
    nb.screenshot(card, "tool-card-bash-after-light")
    nb.screenshot(rules, "tool-card-rules-light")
    assert_clean(nb)


def test_the_rule_answers_the_next_guarded_command_without_a_click(nb: NotebookPage) -> None:
    nb.run("danger_again")
    card = run_done(nb, "danger_again")
    outcome = card.locator(".atomic-tool-dialogs .atomic-dialog-outcome")
    expect(outcome).to_have_text(re.compile(r"\(rule\)$"))
    expect(outcome).to_have_text("→ Yes (rule)")
    expect(card.locator(".atomic-tool-dialogs button")).to_have_count(0)
    expect(card.locator(".atomic-tool-output")).to_contain_text("dangerous-but-fine")
    expect(
        panel_of(nb)
        .locator(".atomic-notification")
        .filter(has_text=f"guard: allowed {DANGEROUS_COMMAND}")
    ).to_have_count(2)
    assert problems(nb, card, dark=False) == []
    nb.screenshot(card, "tool-card-bash-rule-light")
    assert_clean(nb)


def test_every_card_in_the_dark_theme(nb: NotebookPage, lab_server: LabServer) -> None:
    dark = nb.set_theme(DARK)
    assert dark["light"] is False, dark
    # The theme is the user's setting on the server (so the fixture puts it back).
    theme_saved(lab_server, DARK)

    # The point of the issue: the code box is dark in the dark theme, its text light.
    code = card_of(nb, "write").locator(".atomic-tool-command .aj-tool-code")
    box = look(code)
    assert box["backgroundLuminance"] < 0.1, box
    keyword = code.locator("span[style*='color']", has_text="def").first
    plain = keyword.locator("xpath=ancestor::pre[1]")
    assert look(keyword)["color"] != look(plain)["color"]
    assert look(plain)["contrast"] >= 4.5 and look(keyword)["contrast"] >= 3, (
        look(plain),
        look(keyword),
    )
    # The diff's colours still differ.
    body = card_of(nb, "edit").locator(".atomic-tool-command")
    assert (
        look(body.locator(".aj-diff-del"))["background"]
        != look(body.locator(".aj-diff-add"))["background"]
    )
    # The image is still there.
    image = card_of(nb, "read").locator(".atomic-tool-output img")
    assert image.evaluate("(img) => img.naturalWidth") == 2

    found = {}
    for kind, cell in CARD_SHOTS.items():
        card = card_of(nb, cell)
        found[kind] = problems(nb, card, dark=True)
        nb.screenshot(card, f"tool-card-{kind}-dark")
    rules = panel_of(nb).locator(".atomic-rules")
    found["rules"] = problems(nb, rules, dark=True)
    nb.screenshot(rules, "tool-card-rules-dark")
    assert {kind: p for kind, p in found.items() if p} == {}

    light = nb.set_theme(LIGHT)
    assert light["light"] is True, light
    theme_saved(lab_server, LIGHT)
    assert_clean(nb)
