"""Tool cards through the real agent, the scripted model and a real kernel driven like
JupyterLab: an edit's diff, a write's highlighted code, a read image, a guarded command's
dialog in its card, and a decision made once (issue 16)."""

from __future__ import annotations

import base64
import re
import struct
import zlib

import pytest

from atomic_jupyter.ui.dialog_controls import RULE_TEXT
from tests.harness.kernel_client import BrowserLikeKernel
from tests.harness.kernel_widgets import dialog_in, elements, outcome_of, page_of, panels, texts_of
from tests.harness.plugin import scripted_start
from tests.harness.support import EXTENSIONS
from tests.harness.widget_text import visible_text

pytestmark = [pytest.mark.kernel, pytest.mark.agent, pytest.mark.scripted_kernel]


def tiny_png() -> bytes:
    """A real 2x2 red PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * 2 for _ in range(2))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


@pytest.fixture(scope="module")
def kernel_setup(scripted_model) -> list[str]:
    """Files for the tools to touch, and a session with the guard extension."""
    png = base64.b64encode(tiny_png()).decode()
    return [
        "from pathlib import Path\nimport base64\n"
        "Path('greeting.txt').write_text('line one\\nhello world\\nline three\\n')\n"
        f"Path('dot.png').write_bytes(base64.b64decode({png!r}))",
        scripted_start(scripted_model, f"-e {EXTENSIONS / 'guard.ts'}"),
    ]


def run(kernel: BrowserLikeKernel, prompt: str, flags: str = "--wait") -> str:
    """Run a prompt cell; return the comm id of its output."""
    (output,) = kernel.execute(f"%%atomic_agent {flags}\n{prompt}").widget_ids
    return output


def card_in(kernel: BrowserLikeKernel, output: str, done: bool = False) -> str:
    """The run's one tool card as the page shows it (as last shown: a finished run's output
    is closed once its record is shown); with ``done``, once the call is over."""

    def card() -> str | None:
        found = elements(page_of(kernel, output), "atomic-tool")
        if not found:
            return None
        (shown,) = found
        return shown if not done or "atomic-tool-done" in shown[: shown.index(">")] else None

    return kernel.wait_for(card, what="the tool card" + (" to be done" if done else ""))


def part(card: str, name: str) -> str:
    """The HTML of one part of a card (its header, command, output...)."""
    (found,) = elements(card, f"atomic-tool-{name}")
    return found


def test_an_edit_shows_a_coloured_diff_that_matches_the_file_change(kernel) -> None:
    card = card_in(kernel, run(kernel, "please change the greeting"), done=True)
    assert "greeting.txt  +1 −1" in visible_text(part(card, "header"))
    body = part(card, "command")  # the diff: what it was about to do (the record's form)
    lines = {
        kind: [
            re.sub(r"<[^>]+>", "", m).rstrip("\n")  # a changed line ends with its break
            for m in re.findall(rf'class="aj-diff-{kind}"[^>]*>(.*?)</span>', body, re.S)
        ]
        for kind in ("del", "add")
    }
    assert lines == {"del": ["− hello world"], "add": ["+ goodbye world"]}
    # Removed red, added green (short literal colours: the live view is the record's HTML).
    shades = {
        kind: re.search(rf'class="aj-diff-{kind}" style="background:#(\w)(\w)(\w)', body)
        for kind in ("del", "add")
    }
    red, green = ([int(c, 16) for c in shades[k].groups()] for k in ("del", "add"))
    assert red[0] > red[1] and green[1] > green[0], shades
    on_disk = kernel.execute("print(open('greeting.txt').read(), end='')").stdout
    assert on_disk == "line one\ngoodbye world\nline three\n"


def test_a_write_of_a_python_file_shows_highlighted_code(kernel) -> None:
    card = card_in(kernel, run(kernel, "please write a python script"))
    assert "script.py" in visible_text(part(card, "header"))
    body = part(card, "command")  # the content it was about to write
    assert re.search(r'<span style="color:#[0-9a-f]{3,6}">def</span>', body)  # a keyword
    assert "print" in visible_text(body)


def test_a_read_of_a_png_shows_the_image_from_its_data(kernel) -> None:
    card = card_in(kernel, run(kernel, "please look at the picture"))
    body = part(card, "output")
    (src,) = re.findall(r'<img[^>]* src="([^"]+)"', body)
    assert src.startswith("data:image/png;base64,")
    assert base64.b64decode(src.split(",", 1)[1]).startswith(b"\x89PNG")


def test_a_guarded_commands_dialog_sits_in_its_card_and_a_rule_decides_the_next(kernel) -> None:
    (panel,) = panels(kernel)
    output = run(kernel, "run something dangerous", flags="")
    dialog = dialog_in(kernel, output, "confirm")
    card = card_in(kernel, output)
    # Inside the card of the command, in the place its dialogs have.
    assert f'data-dialog="{dialog.id}"' in part(card, "dialogs")
    assert "echo dangerous-but-fine" in visible_text(part(card, "header"))
    assert dialog.description["rule_label"] == RULE_TEXT  # "answer this way from now on" is offered
    (offered,) = elements(page_of(kernel, output), "atomic-make-rule")
    assert visible_text(offered).strip() == RULE_TEXT  # after its box
    dialog.confirm(True, rule=True)  # Yes, with the box checked
    assert outcome_of(kernel, dialog).startswith("→ Yes (clicked)")
    made = "→ Yes (clicked) · made the rule for this session"
    kernel.wait_for(
        lambda: texts_of(kernel, output, "atomic-dialog-outcome") == [made],
        what="the settled line to say a rule was made",
    )
    listed = kernel.wait_for(lambda: panel.texts("atomic-rule-text"), what="the rule in the panel")
    assert listed == ["confirm “Run a dangerous command?” → Yes (rule)"]

    waited = kernel.execute("%atomic_agent wait --timeout 60")  # the first run ends first
    assert waited.stdout == "" and waited.stderr == ""
    again = run(kernel, "run something dangerous again")  # --wait: no click needed
    settled = kernel.wait_for(
        lambda: (lambda found: found or None)(
            elements(part(card_in(kernel, again), "dialogs"), "atomic-dialog-outcome")
        ),
        what="the settled dialog in the card",
    )
    assert [visible_text(o) for o in settled] == ["→ Yes (rule)"]
    assert "atomic-dialog-controls" not in page_of(kernel, again)  # nobody was asked
    assert (
        "allowed"
        in kernel.execute(
            "import atomic_jupyter as aj\nprint(aj.session().notifications[-1]['message'])"
        ).stdout
    )

    (remove,) = elements(panel.html, "atomic-rule-remove")
    assert 'data-action="remove-rule"' in remove and ">Remove<" in remove
    (rule,) = re.findall(r'data-policy="([^"]*)"', remove)
    clicked = panel.remove_rule(0)
    kernel.wait_for(lambda: not elements(panel.html, "atomic-rule"), what="the rule to be removed")
    kernel.wait_idle(clicked)
    # A second click, as the page may send before it redraws: nothing more happens.
    late = kernel.send_custom(panel.comm_id, {"type": "remove-rule", "policy": rule})
    kernel.wait_idle(late)
    assert (
        kernel.execute("import atomic_jupyter as aj\nprint(aj.session().policies)").stdout == "[]\n"
    )
