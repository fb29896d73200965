"""Tool cards through the real agent, the scripted model and a real kernel driven like
JupyterLab: an edit's diff, a write's highlighted code, a read image, a guarded command's
dialog in its card, and a decision made once (issue 16)."""

from __future__ import annotations

import base64
import re
import struct
import zlib
from pathlib import Path

import pytest

from tests.harness.kernel_client import BrowserLikeKernel, WidgetRef
from tests.harness.kernel_widgets import dialog_in, outcome_of
from tests.harness.support import EXTENSIONS
from tests.harness.widget_text import has_class, text

pytestmark = [pytest.mark.kernel, pytest.mark.agent]


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
def kernel_agent_home(scripted_model) -> Path:
    _server, home, _args = scripted_model
    return home


@pytest.fixture(scope="module")
def kernel_setup(scripted_model) -> list[str]:
    """Files for the tools to touch, and a session with the guard extension."""
    _server, _home, args = scripted_model
    png = base64.b64encode(tiny_png()).decode()
    return [
        "from pathlib import Path\nimport base64\n"
        "Path('greeting.txt').write_text('line one\\nhello world\\nline three\\n')\n"
        f"Path('dot.png').write_bytes(base64.b64decode({png!r}))",
        f"%atomic_agent start -e {EXTENSIONS / 'guard.ts'} -- {' '.join(args)}",
    ]


def card_of(kernel: BrowserLikeKernel, prompt: str, flags: str = "--wait") -> WidgetRef:
    (area,) = kernel.execute(f"%%atomic_agent {flags}\n{prompt}").widget_ids
    return kernel.wait_for(
        lambda: next(
            iter(
                kernel.widgets(
                    "VBox", within=area, last_shown=True, _dom_classes=has_class("atomic-tool")
                )
            ),
            None,
        ),
        what="the tool card",
    )


def part(kernel: BrowserLikeKernel, card: WidgetRef, name: str) -> WidgetRef:
    # As the page last showed it: a finished run's widgets are closed once its record is shown.
    return kernel.find(
        "HTML", within=card.comm_id, last_shown=True, _dom_classes=has_class(f"atomic-tool-{name}")
    )


def test_an_edit_shows_a_coloured_diff_that_matches_the_file_change(kernel) -> None:
    card = card_of(kernel, "please change the greeting")
    kernel.wait_for(
        lambda: "atomic-tool-done" in kernel.widget(card.comm_id).state["_dom_classes"],
        what="the edit to finish",
    )
    assert "greeting.txt  +1 −1" in text(part(kernel, card, "header"))
    body = part(kernel, card, "command").state["value"]  # the diff: what it was about to do
    lines = {
        kind: [
            re.sub(r"<[^>]+>", "", m).rstrip("\n")  # a changed line ends with its break
            for m in re.findall(rf'class="aj-diff-{kind}"[^>]*>(.*?</span>.*?)</span>', body, re.S)
        ]
        for kind in ("del", "add")
    }
    assert lines == {"del": ["− hello world"], "add": ["+ goodbye world"]}
    assert "rgba(244,67,54" in body and "rgba(76,175,80" in body  # removed red, added green
    on_disk = kernel.execute("print(open('greeting.txt').read(), end='')").stdout
    assert on_disk == "line one\ngoodbye world\nline three\n"


def test_a_write_of_a_python_file_shows_highlighted_code(kernel) -> None:
    card = card_of(kernel, "please write a python script")
    assert "script.py" in text(part(kernel, card, "header"))
    body = part(kernel, card, "command").state["value"]  # the content it was about to write
    assert re.search(r'<span style="[^"]*--jp-mirror-editor-keyword-color[^"]*">def</span>', body)
    assert "print" in text(part(kernel, card, "command"))


def test_a_read_of_a_png_shows_the_image_from_its_data(kernel) -> None:
    card = card_of(kernel, "please look at the picture")
    body = part(kernel, card, "output").state["value"]
    (src,) = re.findall(r'<img[^>]* src="([^"]+)"', body)
    assert src.startswith("data:image/png;base64,")
    assert base64.b64decode(src.split(",", 1)[1]).startswith(b"\x89PNG")


def test_a_guarded_commands_dialog_sits_in_its_card_and_a_rule_decides_the_next(kernel) -> None:
    panel = kernel.find("VBox", _dom_classes=has_class("atomic-panel"))
    card = card_of(kernel, "run something dangerous", flags="")
    dialogs = kernel.find(
        "VBox", within=card.comm_id, last_shown=True, _dom_classes=has_class("atomic-tool-dialogs")
    )
    dialog = dialog_in(kernel, dialogs.comm_id, "confirm")  # inside the card of the command
    assert "echo dangerous-but-fine" in text(part(kernel, card, "header"))
    rule = kernel.find(
        "Checkbox", within=dialog.comm_id, _dom_classes=has_class("atomic-make-rule")
    )
    kernel.set_value(rule.comm_id, value=True)
    kernel.click(kernel.find("Button", within=dialog.comm_id, description="Yes").comm_id)
    outcome_of(kernel, dialog)
    kernel.wait_for(
        lambda: any(
            text(w) == "Run a dangerous command? → Yes (clicked) · made the rule for this session"
            for w in kernel.widgets(
                "HTML",
                within=dialog.comm_id,
                last_shown=True,
                _dom_classes=has_class("atomic-dialog-outcome"),
            )
        ),
        what="the collapsed line to say a rule was made",
    )
    listed = kernel.wait_for(
        lambda: [
            text(w)
            for w in kernel.widgets(
                "HTML", within=panel.comm_id, _dom_classes=has_class("atomic-rule-text")
            )
        ],
        what="the rule in the panel",
    )
    assert listed == ["confirm “Run a dangerous command?” → Yes (rule)"]

    waited = kernel.execute("%atomic_agent wait --timeout 60")  # the first run ends first
    assert waited.stdout == "" and waited.stderr == ""
    again = card_of(kernel, "run something dangerous again")  # --wait: no click needed
    dialogs = kernel.find(
        "VBox", within=again.comm_id, last_shown=True, _dom_classes=has_class("atomic-tool-dialogs")
    )
    answered = kernel.find(
        "VBox", within=dialogs.comm_id, last_shown=True, _dom_classes=has_class("atomic-dialog")
    )
    assert outcome_of(kernel, answered) == "Run a dangerous command? → Yes (rule)"
    assert (
        "allowed"
        in kernel.execute(
            "import atomic_jupyter as aj\nprint(aj.session().notifications[-1]['message'])"
        ).stdout
    )

    remove = kernel.find(
        "Button", within=panel.comm_id, _dom_classes=has_class("atomic-rule-remove")
    )
    kernel.click(remove.comm_id)
    kernel.wait_for(
        lambda: (
            not kernel.widgets(
                "HTML", within=panel.comm_id, _dom_classes=has_class("atomic-rule-text")
            )
        ),
        what="the rule to be removed",
    )
    assert (
        kernel.execute("import atomic_jupyter as aj\nprint(aj.session().policies)").stdout == "[]\n"
    )
