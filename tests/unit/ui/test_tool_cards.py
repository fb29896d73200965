"""Tool cards (:mod:`atomic_jupyter.ui.tool_cards`): one view per built-in tool, safe HTML.

The inputs are the shapes the agent really sends (both agent lines, 0.73 and 1.6): arguments
as the model wrote them, the text content of the result, and ``result["details"]``. Every card
is parsed with ``html.parser`` and held to an allow-list of tags, attributes and style values;
hostile text in every field must come out as text, and malformed input must never raise.
"""

from __future__ import annotations

import base64
import html
import re
import struct
import time
import zlib
from html.parser import HTMLParser
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from atomic_jupyter.ui import tool_cards
from atomic_jupyter.ui.highlight import record_token_styles
from atomic_jupyter.ui.images import CheckedImage, RefusedImage, check_image
from atomic_jupyter.ui.markdown import record_markup
from atomic_jupyter.ui.tool_cards import (
    CODE_FOLD,
    LIST_FOLD,
    OUTPUT_TAIL,
    ToolCall,
    ToolCard,
    highlight_html,
    limits,
    registry,
    render_tool,
)
from atomic_jupyter.ui.tool_cards import styles as styles_module
from atomic_jupyter.ui.tool_cards.generic import render_generic
from atomic_jupyter.ui.tool_cards.styles import record_styles

# --- the checker ---------------------------------------------------------------------------------

TAGS = {"div", "span", "pre", "code", "table", "tr", "td", "details", "summary", "img", "b"}
VOID = {"img"}
PROPERTIES = {
    "align-items", "background", "border", "border-collapse", "border-left", "border-radius", "color",
    "cursor", "display", "flex", "font-family", "font-size", "font-style", "font-weight",
    "height", "line-height", "margin", "max-width", "min-height", "min-width", "opacity", "overflow",
    "overflow-wrap", "overflow-x", "padding", "padding-right", "padding-top", "tab-size", "text-align",
    "text-decoration", "user-select", "vertical-align", "white-space", "width",
    "background-color",
}  # fmt: skip
# A value: words, numbers, #hex, rgb()/rgba(), var(--jp-...) with a fallback. No quotes, no
# backslashes, no url(), no other custom property.
VALUE = re.compile(r"(?:[#a-zA-Z0-9 .,%\-]|rgba?\(|var\(--jp-[a-z0-9-]+,|\))+")
SRC = re.compile(r"data:image/(?:png|jpeg|gif|webp);base64,[A-Za-z0-9+/]+={0,2}")
ALT = re.compile(r"image \d+ \(image/(?:png|jpeg|gif|webp)\)")
CLASS = re.compile(r"(?:aj|ansi)-[a-z0-9-]+(?: (?:aj|ansi)-[a-z0-9-]+)*")


def style_ok(value: str) -> bool:
    if any(bad in value.lower() for bad in ("url(", "expression", "import", "\\", "/*")):
        return False
    declarations = [d.strip() for d in value.split(";") if d.strip()]
    for declaration in declarations:
        name, sep, val = declaration.partition(":")
        if not sep or name.strip() not in PROPERTIES or not VALUE.fullmatch(val.strip()):
            return False
        if "--" in val and not re.fullmatch(r"(?:[^-]|-(?!-)|--jp-)*", val):
            return False
    return bool(declarations)


class Checker(HTMLParser):
    """Collects text and checks every tag and attribute against the allow-list."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self.text: list[str] = []
        self.stack: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in TAGS:
            self.problems.append(f"tag {tag}")
        for name, value in attrs:
            if value is None:
                self.problems.append(f"bare attribute {name}")
            elif name == "class":
                if not CLASS.fullmatch(value):
                    self.problems.append(f"class {value!r}")
            elif name == "style":
                if not style_ok(value):
                    self.problems.append(f"style {value!r}")
            elif name == "src" and tag == "img":
                if not SRC.fullmatch(value):
                    self.problems.append(f"src {value[:80]!r}")
            elif name == "alt" and tag == "img":
                if not ALT.fullmatch(value):
                    self.problems.append(f"alt {value!r}")
            else:
                self.problems.append(f"attribute {name}={value!r} on {tag}")
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.problems.append(f"self-closing {tag}")

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"unbalanced </{tag}>")
        else:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def handle_comment(self, data: str) -> None:
        self.problems.append("comment")

    def handle_decl(self, decl: str) -> None:
        self.problems.append("declaration")

    def handle_pi(self, data: str) -> None:
        self.problems.append("processing instruction")

    def unknown_decl(self, data: str) -> None:
        self.problems.append("unknown declaration")


def check(markup: str) -> Checker:
    """Parse ``markup``, assert it only holds allowed markup, and return the checker."""
    checker = Checker()
    checker.feed(markup)
    checker.close()
    assert not checker.problems, checker.problems[:5]
    assert not checker.stack, f"unclosed {checker.stack}"
    return checker


def text_of(markup: str) -> str:
    return "".join(check(markup).text)


def check_card(card: ToolCard) -> ToolCard:
    assert isinstance(card, ToolCard)
    check(card.command_html)
    check(card.body_html)
    check(card.args_html)
    assert "\n" not in card.summary
    assert len(card.summary) <= tool_cards.SUMMARY_MAX + 2
    return card


def call(name: str, args: Any, result: str | None = None, **kw: Any) -> ToolCall:
    done = kw.pop("done", result is not None)
    return ToolCall(
        name=name, args=args, output=kw.pop("output", ""), result=result, done=done, **kw
    )


def render(*args: Any, **kw: Any) -> ToolCard:
    return check_card(render_tool(call(*args, **kw)))


def gutter(markup: str) -> list[int]:
    """The line numbers shown in the number columns of ``markup``."""
    columns = re.findall(r'<pre style="[^"]*user-select:none;[^"]*">([^<]*)</pre>', markup)
    return [int(n) for column in columns for n in column.split()]


def tiny_png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", 1, 1, 8, 6, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00\xff")
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


PNG = base64.b64encode(tiny_png()).decode()
FILE = "alpha\nbeta\ngamma\ndelta\nepsilon\n"

# --- edit ------------------------------------------------------------------------------------------

DIFF = " 1 alpha\n 2 beta\n-3 gamma\n+3 GAMMA\n 4 delta\n 5 epsilon"
EDIT_ARGS = {"path": "f.txt", "edits": [{"oldText": "gamma", "newText": "GAMMA"}]}


@pytest.mark.parametrize(
    "details",
    [
        {  # 1.6
            "diff": DIFF,
            "patch": "--- f.txt\n+++ f.txt\n@@ -1,5 +1,5 @@\n alpha\n beta\n-gamma\n+GAMMA\n",
            "firstChangedLine": 3,
        },
        {"diff": DIFF, "firstChangedLine": 3},  # 0.73
    ],
)
def test_edit_shows_the_diff_with_coloured_lines(details: dict[str, Any]) -> None:
    card = render("edit", EDIT_ARGS, "Successfully replaced 1 block(s) in f.txt.", details=details)
    assert card.summary == "f.txt  +1 −1"
    checker = check(card.command_html)
    spans = [attrs for tag, attrs in checker.tags if tag == "span"]
    added = [a for a in spans if a.get("class") == "aj-diff-add"]
    removed = [a for a in spans if a.get("class") == "aj-diff-del"]
    assert len(added) == 1 and len(removed) == 1
    assert "rgba(76,175,80" in str(added[0]["style"])
    assert "rgba(244,67,54" in str(removed[0]["style"])
    text = "".join(checker.text)
    assert "f.txt" in text and "GAMMA" in text and "gamma" in text and "epsilon" in text
    # the line numbers, in their own muted column
    assert gutter(card.command_html) == [1, 2, 3, 3, 4, 5]
    # the tool's closing message is what came of it
    assert text_of(card.body_html) == "Successfully replaced 1 block(s) in f.txt."
    # the texts the model sent are behind the toggle
    args_text = text_of(card.args_html)
    assert "gamma" in args_text and "GAMMA" in args_text


def test_edit_diff_with_skipped_runs_and_multi_line_replacement() -> None:
    diff = (
        "    ...\n  2 line2\n  3 line3\n  4 line4\n  5 line5\n- 6 line6\n+ 6 six\n+ 7 six-b\n"
        "  7 line7\n  8 line8\n  9 line9\n 10 line10\n 11 line11\n-12 line12\n+13 twelve"
    )
    card = render(
        "edit",
        {"path": "a.txt", "edits": [{"oldText": "line6\n", "newText": "six\nsix-b\n"}]},
        "Successfully replaced 2 block(s) in a.txt.",
        details={"diff": diff, "firstChangedLine": 6},
    )
    assert card.summary == "a.txt  +3 −2"
    assert card.command_html.count('class="aj-diff-skip"') == 1
    assert gutter(card.command_html) == [2, 3, 4, 5, 6, 6, 7, 7, 8, 9, 10, 11, 12, 13]
    assert ">twelve\n<" in card.command_html


def test_edit_diff_is_highlighted_for_the_file_language() -> None:
    diff = " 1 import os\n-2 x = 'a'  # old\n+2 x = 42  # new"
    card = render("edit", {"path": "m.py", "edits": []}, "ok", details={"diff": diff})
    assert "var(--jp-mirror-editor-keyword-color" in card.command_html
    assert "var(--jp-mirror-editor-string-color" in card.command_html
    assert "var(--jp-mirror-editor-comment-color" in card.command_html
    assert "var(--jp-mirror-editor-number-color" in card.command_html


@pytest.mark.parametrize(
    "args",
    [
        {"path": "f.txt", "oldText": "gamma", "newText": "GAMMA"},  # the legacy shape
        {"path": "f.txt", "edits": '[{"oldText": "gamma", "newText": "GAMMA"}]'},  # a JSON string
        {"path": "f.txt", "edits": {"oldText": "gamma", "newText": "GAMMA"}},  # 1.6: one object
    ],
)
def test_edit_without_a_diff_shows_old_and_new_text(args: dict[str, Any]) -> None:
    running = render("edit", args)  # while running there is no diff yet
    assert running.summary == "f.txt  +1 −1"
    assert 'class="aj-diff-del"' in running.command_html
    assert 'class="aj-diff-add"' in running.command_html
    text = text_of(running.command_html)
    assert "gamma" in text and "GAMMA" in text
    assert running.body_html == ""  # nothing came of it yet


def test_edit_pair_fallback_is_a_line_diff() -> None:
    old, new = "a\nb\nc\n", "a\nB\nc\n"
    card = render("edit", {"path": "x.txt", "edits": [{"oldText": old, "newText": new}]})
    assert card.summary == "x.txt  +1 −1"
    assert card.command_html.count('class="aj-diff-add"') == 1
    assert "  a\n" in card.command_html and "  c\n" in card.command_html
    assert gutter(card.command_html) == []  # no line numbers are known


def test_edit_error_is_shown_prominently() -> None:
    message = (
        "Could not find the exact text in f.txt. The old text must match exactly including "
        "all whitespace and newlines."
    )
    card = render("edit", EDIT_ARGS, message, details={}, is_error=True)
    assert card.summary == "f.txt"
    # What it tried to do comes first, then the error that came of it.
    assert "aj-tool-path" in card.command_html and "aj-tool-error" not in card.command_html
    assert "GAMMA" in text_of(card.command_html)
    assert card.body_html.count('class="aj-tool-error"') == 1
    assert "var(--jp-error-color1" in card.body_html
    assert text_of(card.body_html) == message


# --- write -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "result", ["Successfully wrote to new/dir/w.py", "Successfully wrote 6 bytes to new/dir/w.py"]
)
def test_write_highlights_the_content(result: str) -> None:
    content = "def main():\n    return 1  # one\n"
    card = render("write", {"path": "new/dir/w.py", "content": content}, result)
    assert card.summary == "new/dir/w.py  2 lines"
    assert card.args_html == ""
    assert "var(--jp-mirror-editor-def-color" in card.command_html
    assert "var(--jp-mirror-editor-keyword-color" in card.command_html
    assert "def main():" in text_of(card.command_html)
    assert text_of(card.body_html) == result
    # no fixed light background (the dark-theme bug of the Markdown code blocks)
    for markup in (card.command_html, card.body_html):
        assert "#f6f8fa" not in markup and "background-color:#" not in markup
    assert "background:var(--jp-cell-editor-background" in card.command_html


def test_write_folds_long_files() -> None:
    content = "".join(f"line {i}\n" for i in range(1, 101))
    card = render("write", {"path": "big.txt", "content": content})
    assert card.summary == "big.txt  100 lines"
    head, _, rest = card.command_html.partition("<details")
    assert "line 40<" in head and "line 41<" not in head
    assert "Show all 100 lines</summary>" in rest and "line 100<" in rest
    # a few lines over the threshold are not folded
    short = render("write", {"path": "s.txt", "content": "x\n" * (CODE_FOLD + 3)})
    assert "<details" not in short.command_html


def test_write_of_an_unknown_file_type_is_plain() -> None:
    card = render("write", {"path": "notes.unknownext", "content": "if x: return"})
    assert "mirror-editor" not in card.command_html
    assert "if x: return" in text_of(card.command_html)


# --- read ------------------------------------------------------------------------------------------


def test_read_shows_numbered_highlighted_content() -> None:
    card = render("read", {"path": "f.txt"}, FILE)
    assert card.summary == "f.txt  lines 1–5"
    assert card.args_html == ""
    text = text_of(card.body_html)
    assert all(word in text for word in FILE.split())


def test_read_with_offset_numbers_from_the_offset_and_shows_the_notice() -> None:
    text = "beta\ngamma\n\n[3 more lines in file. Use offset=4 to continue.]"
    card = render("read", {"path": "f.py", "offset": 2, "limit": 2}, text)
    assert card.summary == "f.py  lines 2–3"
    assert gutter(card.body_html) == [2, 3]
    assert "[3 more lines in file. Use offset=4 to continue.]" in text_of(card.body_html)
    running = render("read", {"path": "f.py", "offset": 2, "limit": 2})
    assert running.summary == "f.py  lines 2–3"


def test_read_truncated_file_folds_and_takes_the_range_from_the_notice() -> None:
    content = "\n".join(f"v{i} = {i}" for i in range(1, 2001))
    text = content + "\n\n[Showing lines 1-2000 of 2501. Use offset=2001 to continue.]"
    card = render("read", {"path": "big.py"}, text, details={"truncation": {"truncated": True}})
    assert card.summary == "big.py  lines 1–2000"
    assert card.body_html.count("<details") == 1
    assert "Show all 2000 lines" in card.body_html
    assert "var(--jp-mirror-editor-number-color" in card.body_html


def test_read_first_line_too_long() -> None:
    text = "[Line 1 is 80.0KB, exceeds 50.0KB limit. Use bash: sed -n '1p' f | head -c 51200]"
    card = render("read", {"path": "f"}, text, details={"truncation": {}})
    assert text in text_of(card.body_html)


def test_read_image_shows_the_image() -> None:
    text = (
        "Read image file [image/png]\n[Image: original 4000x3000, displayed at 2000x1500. "
        "Multiply coordinates by 2.00 to map to original image.]"
    )
    card = render("read", {"path": "img.png"}, text, images=(("image/png", PNG),))
    checker = check(card.body_html)
    images = [attrs for tag, attrs in checker.tags if tag == "img"]
    assert len(images) == 1
    assert images[0]["src"] == f"data:image/png;base64,{PNG}"
    assert "max-width:100%" in str(images[0]["style"])
    assert "Read image file" in "".join(checker.text)
    assert card.summary == "img.png"


@pytest.mark.parametrize(
    ("mime", "data"),
    [
        ("image/svg+xml", base64.b64encode(b"<svg onload='alert(1)'/>").decode()),
        ("image/png", "not base64!"),
        ("image/png", PNG[:-1]),  # bad padding
        ("image/png", base64.b64encode(b"GIF89a" + b"\0" * 20).decode()),  # not a PNG
        ("text/html", PNG),
        ("image/png", ""),
        ("image/png", None),
        (None, PNG),
    ],
)
def test_bad_images_are_not_shown(mime: Any, data: Any) -> None:
    card = render("read", {"path": "x.png"}, "Read image file [image/png]", images=((mime, data),))
    assert "<img" not in card.body_html
    assert "not shown" in text_of(card.body_html)


def test_large_images_are_not_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "IMAGE_MAX_BASE64", len(PNG) - 4)
    card = render(
        "read", {"path": "x.png"}, "Read image file [image/png]", images=(("image/png", PNG),)
    )
    assert "<img" not in card.body_html and "too large" in text_of(card.body_html)


def test_other_raster_types_are_shown() -> None:
    gif = base64.b64encode(b"GIF89a" + b"\x01\x00\x01\x00" + b"\0" * 10).decode()
    jpeg = base64.b64encode(b"\xff\xd8\xff\xe0" + b"\0" * 12).decode()
    webp = base64.b64encode(b"RIFF\x10\0\0\0WEBPVP8 " + b"\0" * 8).decode()
    images = (("image/gif", gif), ("image/jpeg", jpeg), ("image/webp", webp))
    card = render("mcp_screenshot", {}, "shot", images=images)
    srcs = [a["src"] for t, a in check(card.body_html).tags if t == "img"]
    assert srcs == [f"data:{mime};base64,{data}" for mime, data in images]


def test_read_errors() -> None:
    for message in (
        "Offset 99 is beyond end of file (6 lines total)",
        "ENOENT: no such file or directory, access '/abs/nope.txt'",
    ):
        card = render(
            "read", {"path": "nope.txt", "offset": 99}, message, details={}, is_error=True
        )
        assert message in text_of(card.body_html)
        assert 'class="aj-tool-error"' in card.body_html


# --- bash ------------------------------------------------------------------------------------------


def test_bash_success() -> None:
    card = render("bash", {"command": "echo hi; echo err >&2"}, "hi\nerr\n")
    assert card.summary == "$ echo hi; echo err >&2"
    assert card.args_html == ""
    assert text_of(card.command_html) == "$ echo hi; echo err >&2"
    text = text_of(card.body_html)
    assert "hi\nerr" in text and "exit code 0" in text
    assert "var(--jp-mirror-editor-builtin-color" in card.command_html  # echo


@pytest.mark.parametrize("is_error", [True, False])  # 1.6 sets isError, 0.73 throws (also isError)
def test_bash_exit_code(is_error: bool) -> None:
    details: Any = None if is_error else {}
    card = render(
        "bash",
        {"command": "ls; exit 3"},
        "out\n\n\nCommand exited with code 3",
        details=details,
        is_error=True,
    )
    text = text_of(card.body_html)
    assert "exit code 3" in text and "Command exited" not in text
    assert "out" in text
    assert re.search(r'font-weight:bold;margin:2px 0">exit code 3<', card.body_html)
    assert "var(--jp-error-color1" in card.body_html


def test_bash_without_output_and_with_a_timeout() -> None:
    card = render(
        "bash",
        {"command": "sleep 5", "timeout": 1},
        "Command timed out after 1 seconds",
        is_error=True,
    )
    assert "Command timed out after 1 seconds" in text_of(card.body_html)
    assert "timeout 1 s" in text_of(card.command_html)
    card = render("bash", {"command": "true"}, "(no output)")
    assert "(no output)" in text_of(card.body_html)


def test_bash_keeps_ansi_colours() -> None:
    card = render("bash", {"command": "ls --color"}, "\x1b[1;34mdir\x1b[0m\nfile\n")
    assert 'class="aj-ansi ansi-blue-fg ansi-bold"' in card.body_html
    assert "\x1b" not in card.body_html


@pytest.mark.parametrize(
    ("text", "notice"),
    [
        (
            "".join(f"{i}\n" for i in range(501, 2501))
            + "\n[Showing lines 501-2500 of 2500. Full output: /tmp/pi-bash-14a3131177048dc2.log]",
            "[Showing lines 501-2500 of 2500. Full output: /tmp/pi-bash-14a3131177048dc2.log]",
        ),
        (
            "".join(f"{i}\n" for i in range(502, 2501))
            + "\n\n\n[Showing lines 502-2501 of 2501. Full output: /tmp/pi-bash-ab.log]",
            "[Showing lines 502-2501 of 2501. Full output: /tmp/pi-bash-ab.log]",
        ),
    ],
)
def test_bash_long_output_is_tail_folded_with_the_notice(text: str, notice: str) -> None:
    card = render("bash", {"command": "seq 1 2500"}, text, details={"truncation": {}})
    body = card.body_html
    folded, _, after = body.partition("</details>")
    assert "earlier lines</summary>" in folded and "\n2499\n" not in folded
    match = re.match(r"<pre[^>]*>.*?</pre>", after, re.DOTALL)
    assert match
    tail = text_of(match.group())
    assert tail.split("\n") == [str(i) for i in range(2501 - OUTPUT_TAIL, 2501)]
    assert notice in text_of(body)


def test_bash_running_shows_the_streamed_output() -> None:
    card = render("bash", {"command": "make"}, None, output="hi\nerr\n")
    assert text_of(card.command_html) == "$ make"
    text = text_of(card.body_html)
    assert "hi\nerr" in text and "exit code" not in text
    empty = render("bash", {"command": "make"}, None)
    assert text_of(empty.command_html) == "$ make" and empty.body_html == ""


def test_bash_multi_line_command_summary() -> None:
    card = render("bash", {"command": "cd x\nmake test"}, None)
    assert card.summary == "$ cd x …"


def test_bash_status_lines_are_only_read_from_failed_calls() -> None:
    card = render(
        "bash", {"command": "printf 'Command exited with code 5'"}, "Command exited with code 5"
    )
    text = text_of(card.body_html)
    assert "Command exited with code 5" in text and "exit code 0" in text


def test_a_renderer_bug_falls_back_to_the_generic_view(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(call: ToolCall) -> ToolCard:
        raise RuntimeError("bug")

    monkeypatch.setitem(registry.RENDERERS, "read", broken)
    card = render("read", {"path": "f.txt"}, "alpha")
    assert "f.txt" in text_of(card.command_html) and "alpha" in text_of(card.body_html)


def test_bash_aborted_by_the_agent_is_an_error() -> None:
    card = render("bash", {"command": "x"}, "Operation aborted", details={}, is_error=True)
    assert 'class="aj-tool-error"' in card.body_html


# --- grep, find, ls ----------------------------------------------------------------------------------


def test_grep_groups_matches_by_file() -> None:
    card = render(
        "grep", {"pattern": "gamma", "ignoreCase": True}, "sub/g.py:1: def gamma():\nf.txt:3: GAMMA"
    )
    assert card.summary == "gamma · 2 matches in 2 files"
    text = text_of(card.body_html)
    assert "sub/g.py  (1 match)" in text and "f.txt  (1 match)" in text
    assert card.body_html.count('class="aj-grep-hit"') == 2


def test_grep_context_lines_and_limit() -> None:
    card = render(
        "grep",
        {"pattern": "GAMMA", "path": "f.txt", "context": 1},
        "f.txt-2- BETA\nf.txt:3: GAMMA\nf.txt-4- delta",
    )
    assert card.summary == "GAMMA · 1 match in 1 file"
    assert "f.txt  (1 match)" in text_of(card.body_html)
    limited = render(
        "grep",
        {"pattern": "a", "limit": 2},
        "sub/g.py:1: def gamma():\nf.txt:1: alpha\n\n[2 matches limit reached. Use limit=4 for more, or refine pattern]",
        details={"matchLimitReached": 2},
    )
    assert limited.summary == "a · 2 matches in 2 files (limit reached)"
    assert "[2 matches limit reached" in text_of(limited.body_html)


def test_grep_regex_patterns_are_not_run_here() -> None:
    card = render("grep", {"pattern": "(a+)+$"}, "f.txt:1: aaaa")
    assert "aj-grep-hit" not in card.body_html


def test_grep_no_matches_and_errors() -> None:
    assert render("grep", {"pattern": "zzz"}, "No matches found").summary == "zzz · no matches"
    error = render(
        "grep",
        {"pattern": "("},
        "regex parse error:\n    (\n    ^\nerror: unclosed group",
        is_error=True,
    )
    assert "unclosed group" in text_of(error.body_html)


def test_grep_folds_many_lines() -> None:
    text = "\n".join(f"f{i // 10}.txt:{i}: hit {i}" for i in range(200))
    card = render("grep", {"pattern": "hit"}, text)
    assert card.summary == "hit · 200 matches in 20 files"
    assert card.body_html.count("<details") == 1


def test_find_and_ls_lists() -> None:
    card = render("find", {"pattern": "*.txt"}, "big.txt\nf.txt\nnew/dir/w.txt")
    assert card.summary == "*.txt · 3 results"
    limited = render(
        "find",
        {"pattern": "*", "limit": 2},
        "img.png\nsub/\n\n[2 results limit reached. Use limit=4 for more, or refine pattern]",
        details={"resultLimitReached": 2},
    )
    assert limited.summary == "* · 2 results (limit reached)"
    assert 'class="aj-dir"' in limited.body_html
    none = render("find", {"pattern": "*.zz"}, "No files found matching pattern")
    assert none.summary == "*.zz · 0 results"
    ls = render("ls", {}, "big.txt\nf.txt\nimg.png\nnew/\nsub/")
    assert ls.summary == ". · 5 entries"
    assert ls.body_html.count('class="aj-dir"') == 2
    assert render("ls", {"path": "e"}, "(empty directory)").summary == "e · 0 entries"
    ls_limited = render(
        "ls",
        {"limit": 2},
        "big.txt\nf.txt\n\n[2 entries limit reached. Use limit=4 for more]",
        details={"entryLimitReached": 2},
    )
    assert ls_limited.summary == ". · 2 entries (limit reached)"
    error = render("ls", {"path": "/abs"}, "Not a directory: /abs", is_error=True)
    assert "Not a directory: /abs" in text_of(error.body_html)


def test_lists_fold_after_the_threshold() -> None:
    text = "\n".join(f"file{i}.txt" for i in range(120))
    card = render("ls", {"path": "d"}, text)
    assert card.summary == "d · 120 entries"
    head, _, rest = card.body_html.partition("<details")
    assert f"file{LIST_FOLD - 1}.txt" in head and f"file{LIST_FOLD}.txt" not in head
    assert "Show all 120 entries" in rest


# --- other tools ----------------------------------------------------------------------------------------


def test_generic_tool_shows_arguments_and_result() -> None:
    args = {"query": "weather in Paris", "options": {"units": "metric", "days": [1, 2]}, "n": 3}
    card = render("web_search", args, "\x1b[32mSunny\x1b[0m, 21°C")
    assert card.summary == "weather in Paris"
    assert card.args_html == ""
    command = text_of(card.command_html)
    assert "query" in command and "weather in Paris" in command
    assert '{"units":"metric","days":[1,2]}' in command
    text = text_of(card.body_html)
    assert "Sunny, 21°C" in text and "ansi-green-fg" in card.body_html
    running = render("web_search", args, None, output="partial…")
    assert "partial…" in text_of(running.body_html)


def test_generic_result_folds_after_its_start() -> None:
    card = render("fetch", {"url": "u"}, "".join(f"row {i}\n" for i in range(100)))
    head, _, rest = card.body_html.partition("<details")
    assert "row 39" in head and "row 40" not in head
    assert "Show all 100 lines</summary>" in rest and "row 99" in rest
    running = render("fetch", {"url": "u"}, None, output="".join(f"row {i}\n" for i in range(100)))
    head, _, rest = running.body_html.partition("</details>")
    assert "Show 60 earlier lines" in head and "row 59<" in head and "row 60" in rest


def test_generic_error() -> None:
    card = render("nope", {"a": 1}, "Tool nope not found", details={}, is_error=True)
    assert "Tool nope not found" in text_of(card.body_html)
    assert 'class="aj-tool-error"' in card.body_html


def test_builtin_tools_with_unexpected_arguments_fall_back_to_generic() -> None:
    for name in ("read", "write", "bash", "grep", "find"):
        card = render(name, {"weird": [1, 2]}, "text")
        assert "weird" in text_of(card.command_html)
    card = render("bash", {"command": "ls", "cwd": "/tmp"}, "x")
    assert "cwd" in text_of(card.args_html)


# --- highlight_html ------------------------------------------------------------------------------------


def test_highlight_html() -> None:
    markup = highlight_html("x = 1  # c\nprint('s')\n", "a.py")
    text = text_of(markup)
    assert "x = 1  # c\nprint('s')" in text
    for variable in ("comment", "string", "number", "operator", "builtin"):
        assert f"var(--jp-mirror-editor-{variable}-color," in markup
    numbered = highlight_html("a\nb", language="text", first_line=7)
    assert gutter(numbered) == [7, 8]
    assert gutter(highlight_html("a")) == []
    assert "<details" not in highlight_html("x\n" * 500)
    plain = highlight_html("<b>&amp;</b>", language="no-such-language")
    assert text_of(plain) == "<b>&amp;</b>"
    # every colour of a token is a theme variable
    for style in re.findall(r'style="(color:[^"]*)"', highlight_html("def f(x): return x", "m.py")):
        assert style.startswith("color:var(--jp-")


def test_leading_newline_survives_the_pre() -> None:
    card = render("bash", {"command": "printf '\\nx'"}, "\nx")
    assert "\nx" in text_of(card.body_html)


#: Python as an agent writes it in an answer: typed, short lines, few docstrings (a coloured
#: token every dozen characters: denser than the standard library, whose long docstrings are
#: one span each).
SAMPLE_PYTHON = '''\
"""Inventory of a small shop: stock levels, orders and a daily report."""

from __future__ import annotations

import dataclasses
import logging
from collections import defaultdict
from typing import Iterable

log = logging.getLogger(__name__)

LOW_STOCK = 5  # reorder below this many items


@dataclasses.dataclass
class Item:
    """One product on the shelf."""

    sku: str
    name: str
    price: float
    count: int = 0

    def value(self) -> float:
        return round(self.price * self.count, 2)


class Inventory:
    def __init__(self, items: Iterable[Item] = ()) -> None:
        self.items = {item.sku: item for item in items}
        self.sold: dict[str, int] = defaultdict(int)

    def sell(self, sku: str, count: int = 1) -> bool:
        item = self.items.get(sku)
        if item is None or item.count < count:
            log.warning("cannot sell %d of %s", count, sku)
            return False
        item.count -= count
        self.sold[sku] += count
        return True

    def low(self) -> list[Item]:
        return sorted(
            (item for item in self.items.values() if item.count < LOW_STOCK),
            key=lambda item: (item.count, item.name),
        )

    def report(self) -> str:
        lines = [f"{len(self.items)} products, worth {self.total():.2f}"]
        for item in self.low():
            lines.append(f"  reorder {item.name!r}: {item.count} left")
        if not self.sold:
            lines.append("nothing sold today")
        return "\\n".join(lines)

    def total(self) -> float:
        return sum(item.value() for item in self.items.values())
'''


def test_highlighted_code_is_compact() -> None:
    code = SAMPLE_PYTHON * (30_000 // len(SAMPLE_PYTHON) + 1)  # about 30 KB
    markup = highlight_html(code, "inventory.py")
    assert text_of(markup) == code.removesuffix("\n")
    # One span per token, with the long fallbacks, made this 9.9 times the text.
    ratio = len(markup) / len(code)
    assert ratio <= 7.7, f"{ratio:.2f} times the visible text"


def test_highlighting_marks_up_colour_only() -> None:
    markup = highlight_html("result = items.get(key)\nif a is not b:\n    pass\n", "m.py")
    code = markup.split("<pre", 1)[1]
    # The dot of a.b is plain, as in JupyterLab; names and punctuation carry no span.
    assert "items.get(key)" in code
    # Whitespace between two tokens of one colour does not split their span.
    assert re.search(
        r'<span style="color:var\(--jp-mirror-editor-keyword-color,[^"]*">is not</span>', code
    )
    docstring = highlight_html('"""One.\n\n    Two.\n    """\n', "m.py")
    assert docstring.count("mirror-editor-string-color") == 1  # one span over its lines
    assert "<span" not in highlight_html("a = b", language="text").split("<pre", 1)[1]


def test_image_checks() -> None:
    image = check_image(
        " IMAGE/JPG ", base64.b64encode(b"\xff\xd8\xff" + b"\0" * 9).decode(), max_base64=99
    )
    assert isinstance(image, CheckedImage) and image.data_url.startswith(
        "data:image/jpeg;base64,/9j/"
    )
    hostile_type = "\x1b[31mimage/x\nevil" + "x" * 99  # shown as one line of 60 characters
    refusals = {
        ("image/svg+xml", PNG, 10**6): "unsupported type image/svg+xml",
        (hostile_type, PNG, 10**6): "unsupported type image/x evil" + "x" * 47 + "…",
        (None, PNG, 10**6): "unsupported type NoneType",
        ("image/png", "", 10**6): "no data",
        ("image/png", PNG, 8): "too large (0.0 MB)",
        ("image/png", PNG[:-1] + "!", 10**6): "the data is not valid base64",
        ("image/gif", PNG, 10**6): "the data is not a image/gif image",
    }
    for (mime, data, limit), reason in refusals.items():
        assert check_image(mime, data, max_base64=limit) == RefusedImage(reason)


# --- hostile text in every field ------------------------------------------------------------------------

PAYLOAD = (
    '<script>alert(1)</script><img src=x onerror=alert(1)>" onmouseover="x '
    "javascript:alert(1) $\\style{color:red}{x}$"
)
P = PAYLOAD


def hostile_calls() -> list[ToolCall]:
    diff = f" 1 {P}\n-2 {P}\n+2 {P}\n    ...\n{P}"
    details = {
        "diff": diff,
        "patch": P,
        "truncation": {"content": P},
        P: P,
        "imageUnsupportedByModel": P,
    }
    images = ((P, PNG), ("image/png", P), (P, P))
    cases = [
        ("read", {"path": P, "offset": P, "limit": 2}, f"{P}\n{P}\n\n[{P}]"),
        ("write", {"path": P, "content": f"{P}\n{P}"}, P),
        ("edit", {"path": P, "edits": [{"oldText": P, "newText": P}], P: P}, P),
        ("edit", {"path": P, "oldText": P, "newText": P}, P),
        (
            "bash",
            {"command": P, "timeout": P},
            f"{P}\n\n[Showing lines 1-2 of 9. Full output: {P}]\n\nCommand exited with code 2",
        ),
        (
            "grep",
            {"pattern": P, "path": P, "glob": P, "literal": True},
            f"{P}:1: {P}\n{P}-2- {P}\n{P}\n\n[{P}]",
        ),
        ("grep", {"pattern": "onerror", "ignoreCase": True}, f"a:1: {P}"),
        ("find", {"pattern": P, "path": P}, f"{P}\n{P}/\n\n[{P}]"),
        ("ls", {"path": P}, f"{P}\n{P}/"),
        (P, {P: P, "nested": {P: [P]}}, P),
    ]
    calls = []
    for name, args, result in cases:
        for done, is_error in ((True, False), (True, True), (False, False)):
            calls.append(
                ToolCall(
                    name=name,
                    args=args,
                    output=P,
                    result=result if done else None,
                    details=details,
                    images=images,
                    is_error=is_error,
                    done=done,
                )
            )
    return calls


@pytest.mark.parametrize(
    "tool", hostile_calls(), ids=lambda c: f"{c.name[:6]}-{c.done}-{c.is_error}"
)
def test_hostile_text_stays_text(tool: ToolCall) -> None:
    card = render_tool(tool)
    check_card(card)
    for markup in (card.command_html, card.body_html, card.args_html):
        checker = check(markup)
        for _tag, attrs in checker.tags:
            for value in attrs.values():
                assert "alert" not in str(value) and "javascript" not in str(value)
        assert "<script>" not in markup and "<img src=x" not in markup
    text = text_of(card.command_html) + text_of(card.body_html) + text_of(card.args_html)
    # readable: the payload's text is there
    if tool.done or PAYLOAD in str(tool.args) or tool.name == "bash":
        assert PAYLOAD in text
    assert "\n" not in card.summary


def test_hostile_text_is_whole_where_it_is_shown() -> None:
    card = render_tool(hostile_calls()[0])  # read, done
    assert text_of(card.command_html).count(PAYLOAD) == 1  # the path
    assert text_of(card.body_html).count(PAYLOAD) >= 3  # two content lines, notice
    card = render_tool(ToolCall("bash", {"command": P}, "", f"{P}\n", done=True))
    assert text_of(card.command_html).count(PAYLOAD) == 1
    assert text_of(card.body_html).count(PAYLOAD) == 1
    assert card.summary == "$ " + PAYLOAD


# --- malformed and huge input -------------------------------------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "path",
                    "content",
                    "command",
                    "edits",
                    "oldText",
                    "newText",
                    "offset",
                    "limit",
                    "pattern",
                    "diff",
                    "timeout",
                    "glob",
                    "x",
                ]
            )
            | st.text(max_size=5),  # fmt: skip
            children,
            max_size=5,
        )
    ),
    max_leaves=12,
)
NAMES = st.sampled_from([*registry.RENDERERS, "other"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=NAMES,
    args=JSON,
    details=JSON,
    result=st.none()
    | st.text(max_size=60)
    | st.sampled_from(["\n\n[x]", "Command exited with code 99999999999", "a:1: b\n\n"]),
    output=st.text(max_size=30),
    images=st.lists(
        st.tuples(
            st.one_of(st.text(max_size=10), st.none()), st.one_of(st.text(max_size=10), st.none())
        ),
        max_size=2,
    ),
    is_error=st.booleans(),
    done=st.booleans(),
)
def test_malformed_input_never_raises(
    name: str,
    args: Any,
    details: Any,
    result: Any,
    output: str,
    images: Any,
    is_error: bool,
    done: bool,
) -> None:
    tool = ToolCall(name, args, output, result, details, tuple(images), is_error, done)
    renderer = registry.RENDERERS.get(name, render_generic)
    check_card(renderer(tool))  # the view itself, not render_tool's safety net


def test_malformed_field_types_never_raise() -> None:
    weird: Any = object()
    tool = ToolCall(weird, weird, weird, weird, weird, weird, True, True)
    check_card(render_tool(tool))
    five: Any = 5
    seven: Any = 7
    short: Any = (("image/png",),)
    for name in registry.RENDERERS:
        tool = ToolCall(name, [1, {"a": None}], five, seven, "diff", short, done=True)
        check_card(registry.RENDERERS[name](tool))
    deep: Any = []
    for _ in range(100_000):
        deep = [deep]
    check_card(render_tool(ToolCall("x", {"a": deep}, "", "r", done=True)))


def test_huge_inputs_are_capped() -> None:
    started = time.monotonic()
    output = "".join(f"line {i}\n" for i in range(50_000))
    card = render("bash", {"command": "yes"}, output)
    assert "48,000" not in card.body_html
    assert "earlier lines not shown" in text_of(card.body_html)
    assert len(card.body_html) < 400_000
    content = "x = 1\n" * 30_000
    card = render("write", {"path": "a.py", "content": content})
    assert "more lines not shown" in text_of(card.command_html)
    card = render("read", {"path": "a.txt"}, "y" * 1_000_000)
    assert "the rest of line 1 is not shown" in text_of(card.body_html)
    assert len(card.body_html) < 300_000
    diff = "\n".join(f"+{i} added" for i in range(10_000))
    card = render("edit", {"path": "a.txt", "edits": []}, "ok", details={"diff": diff})
    assert len(card.command_html) < 1_500_000
    big_args = {"k": "v" * 1_000_000}
    assert len(render("custom", big_args, "ok").command_html) < 100_000
    assert time.monotonic() - started < 30


@pytest.mark.parametrize("name", [*registry.RENDERERS, "other"])
def test_summaries_stay_short(name: str) -> None:
    long = "word " * 200
    args = {key: long for key in ("path", "content", "command", "pattern", "query")}
    args["edits"] = [{"oldText": "a", "newText": "b"}]  # type: ignore[assignment]
    text = "a:1: b\n\n[2 matches limit reached]"
    card = render(name, args, text, details={"diff": "+1 x", "matchLimitReached": 2})
    assert 0 < len(card.summary) <= tool_cards.SUMMARY_MAX


def test_review_findings_slow_notice_carriage_returns_and_huge_line_numbers() -> None:
    """Found in review: a result that looks like the truncation notice but never closes it
    took seconds per render; a carriage return inside a diff line moved the +/- marks onto
    the wrong lines; a line number of thousands of digits padded every row to its width."""
    import time

    started = time.perf_counter()
    text = "out\n\n[Showing last " + "x" * 40_000
    render_tool(ToolCall("bash", {"command": "x"}, "", text, {}, (), True, True))
    assert time.perf_counter() - started < 1.0

    diff = " 1 a\n-2 old\rX\n+2 new\n 3 b"
    body = render_tool(
        ToolCall("edit", {"path": "f.txt"}, "", "ok", {"diff": diff}, (), False, True)
    ).command_html
    deleted = re.findall(r'class="aj-diff-del"[^>]*>(.*?</span>.*?)\n</span>', body)
    added = re.findall(r'class="aj-diff-add"[^>]*>(.*?</span>.*?)\n</span>', body)
    assert [re.sub(r"<[^>]+>", "", d) for d in deleted] == ["− old␍X"]
    assert [re.sub(r"<[^>]+>", "", a) for a in added] == ["+ new"]

    huge = "\n".join(f"+{'9' * 3000} line {i}" for i in range(200))
    body = render_tool(
        ToolCall("edit", {"path": "f.txt"}, "", "ok", {"diff": huge}, (), False, True)
    ).command_html
    assert len(body) < 100_000


# --- what a call is about to do, then what came of it ------------------------------------------

#: Each kind of tool: (name, arguments, result, details, what only the command section shows,
#: what only the body shows, whether the command section is the same while the call runs).
SECTIONS = [
    ("bash", {"command": "echo about-to-run"}, "the-output\n", None, "$ echo about-to-run", "the-output", True),
    ("powershell", {"command": "Write-Output x"}, "the-output", None, "PS> Write-Output x", "the-output", True),
    ("edit", EDIT_ARGS, "Successfully replaced 1 block(s) in f.txt.", {"diff": DIFF}, "GAMMA", "Successfully replaced", False),
    ("write", {"path": "w.py", "content": "print('written')\n"}, "Successfully wrote 17 bytes to w.py", None, "print('written')", "Successfully wrote", True),
    ("read", {"path": "f.txt"}, FILE, None, "f.txt  lines 1–5", "epsilon", False),
    ("grep", {"pattern": "gamma", "path": "src", "glob": "*.py", "ignoreCase": True}, "src/g.py:3: x = gamma", None, "gamma  in src  (*.py)  ignore case", "x = gamma", True),
    ("find", {"pattern": "*.txt", "path": "src"}, "src/a.txt\nsrc/b.txt", None, "*.txt  in src", "src/b.txt", True),
    ("ls", {"path": "srcdir"}, "a.txt\nsub/", None, "srcdir", "sub/", True),
    ("web_search", {"query": "weather in Paris"}, "Sunny", None, "weather in Paris", "Sunny", True),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "args", "result", "details", "command", "output", "stable"),
    SECTIONS,
    ids=[case[0] for case in SECTIONS],
)
def test_each_kind_shows_what_it_is_about_to_do_apart_from_what_came_of_it(
    name: str,
    args: Any,
    result: str,
    details: Any,
    command: str,
    output: str,
    stable: bool,
) -> None:
    card = render(name, args, result, details=details)
    before, after = text_of(card.command_html), text_of(card.body_html)
    assert command in before and command not in after
    assert output in after and output not in before
    for cls in ("aj-tool-command", "aj-tool-diff", "aj-tool-path", "aj-tool-args"):
        assert cls not in card.body_html  # the command, diff, path, arguments: never after
    running = render(name, args, None, output="so-far")
    assert command.split("  ")[0] in text_of(running.command_html)
    if stable:  # what it is about to do does not change once it ran
        assert running.command_html == card.command_html
    if name in ("bash", "powershell", "web_search"):  # the output streamed so far
        assert text_of(running.body_html) == "so-far"


def test_a_diff_is_never_in_the_output_section() -> None:
    for details in ({"diff": DIFF}, {}):
        card = render(
            "edit", EDIT_ARGS, "Successfully replaced 1 block(s) in f.txt.", details=details
        )
        assert (
            'class="aj-diff-add"' in card.command_html
            and 'class="aj-diff-del"' in card.command_html
        )
        assert "aj-diff" not in card.body_html and "GAMMA" not in text_of(card.body_html)


def test_a_blocked_command_shows_its_command_then_the_dialog_then_the_error() -> None:
    """A command a guard blocked fails with no exit status: its result is the error text. The
    card shows the command first, then the dialog that decided it, then the error."""
    from atomic_jupyter.session.transcript import ToolBlock
    from atomic_jupyter.ui.record import part_html, part_plain
    from atomic_jupyter.ui.run_parts import Markup, describe_tool
    from tests.harness.run_events import confirm_dialog

    dialog, _sent = confirm_dialog("d1", "Run it?")
    dialog.respond(False)
    error = "Blocked: the user declined rm -rf build"
    block = ToolBlock(
        call_id="c1",
        name="bash",
        args={"command": "rm -rf build"},
        result=error,
        is_error=True,
        done=True,
    )
    block.dialogs.append(dialog)
    card = render("bash", block.args, error, is_error=True)
    assert text_of(card.command_html) == "$ rm -rf build"
    assert text_of(card.body_html) == error
    assert "aj-tool-error" in card.body_html and "aj-tool-error" not in card.command_html

    tool = describe_tool(block)
    classes = [getattr(part, "cls", "") for part in tool.children]
    assert classes == [
        "atomic-tool-header",
        "atomic-tool-command",
        "atomic-tool-dialogs",
        "atomic-tool-output",
    ]
    command, output = tool.children[1], tool.children[3]
    assert isinstance(command, Markup) and command.html == card.command_html
    assert isinstance(output, Markup) and output.html == card.body_html
    # The record says it in the same order: command, dialog and its outcome, the error.
    shown = html.unescape(re.sub(r"<[^>]*>", "", part_html(tool)))
    said = [shown.index(text) for text in ("$ rm -rf build", "Run it?", "→ No", error)]
    assert said == sorted(said), shown
    plain = part_plain(tool)
    assert plain.index("Run it?") < plain.index(error), plain


def test_what_came_of_a_call_is_its_output_then_its_result() -> None:
    # bash: the output, the truncation notice, the exit code
    result = (
        "".join(f"out-{i}\n" for i in range(1, 6))
        + "\n[Showing lines 1-5 of 9. Full output: /tmp/x.log]\n\nCommand exited with code 2"
    )
    body = text_of(render("bash", {"command": "seq 9"}, result, is_error=True).body_html)
    at = [body.index(text) for text in ("out-1", "out-5", "[Showing lines 1-5", "exit code 2")]
    assert at == sorted(at), body
    timed_out = render("bash", {"command": "sleep 9"}, "part\n\nCommand timed out after 1 seconds")
    assert text_of(timed_out.body_html).index("part") < text_of(timed_out.body_html).index(
        "Command timed out"
    )
    # read: the lines, then the agent's notice
    text = "beta\ngamma\n\n[3 more lines in file. Use offset=4 to continue.]"
    body = text_of(render("read", {"path": "f.py", "offset": 2, "limit": 2}, text).body_html)
    assert body.index("gamma") < body.index("[3 more lines")
    # grep: the matches, then the notice
    text = "a.txt:1: hit\nb.txt:2: hit\n\n[2 matches limit reached. Use limit=4 for more]"
    body = text_of(render("grep", {"pattern": "hit", "limit": 2}, text).body_html)
    assert body.index("b.txt") < body.index("[2 matches limit reached")
    # any other tool: the result, then its images
    card = render("shot", {}, "the-result", images=(("image/png", PNG),))
    assert card.body_html.index("the-result") < card.body_html.index("<img")


# --- the record form -------------------------------------------------------------------------------

#: Python as an agent writes a small script (30 lines).
SCRIPT = '''\
"""Count the words of text files, most frequent first."""

import argparse
import collections
import pathlib
import re

WORD = re.compile(r"[a-z']+")


def count_words(paths, minimum=1):
    counts = collections.Counter()
    for path in paths:
        text = pathlib.Path(path).read_text(encoding="utf-8")
        counts.update(WORD.findall(text.lower()))
    return [(word, n) for word, n in counts.most_common() if n >= minimum]


def main():
    """Print the most frequent words of the files given."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("paths", nargs="+", help="the files to read")
    parser.add_argument("--min", type=int, default=2, help="the fewest uses shown")
    args = parser.parse_args()
    for word, n in count_words(args.paths, args.min)[:20]:
        print(f"{n:6}  {word}")


if __name__ == "__main__":
    main()
'''


def script_edit() -> ToolCall:
    """An edit of :data:`SCRIPT` as the agent reports it: the change and 4 lines around."""
    old = '        text = pathlib.Path(path).read_text(encoding="utf-8")\n'
    new = (
        "        try:\n"
        '            text = pathlib.Path(path).read_text(encoding="utf-8")\n'
        "        except (OSError, UnicodeDecodeError) as error:\n"
        '            print(f"skipped {path}: {error}")\n'
        "            continue\n"
    )
    lines = SCRIPT.split("\n")
    changed = next(i for i, line in enumerate(lines) if "read_text" in line)
    rows = [f" {n + 1:2} {lines[n]}" for n in range(changed - 4, changed)]
    rows.append(f"-{changed + 1:2} {lines[changed]}")
    rows += [f"+{changed + 1 + k:2} {line}" for k, line in enumerate(new.rstrip("\n").split("\n"))]
    rows += [f" {n + 5:2} {lines[n]}" for n in range(changed + 1, changed + 5)]
    args = {"path": "words.py", "edits": [{"oldText": old, "newText": new}]}
    done = "Successfully replaced 1 block(s) in words.py."
    return ToolCall("edit", args, "", done, {"diff": "\n".join(rows)}, done=True)


def record_cards() -> dict[str, ToolCard]:
    output = "".join(
        f"tests/test_words.py::test_case_{i} PASSED  [{i * 5:3}%]\n" for i in range(1, 21)
    )
    write_done = f"Successfully wrote {len(SCRIPT)} bytes to words.py"
    return {
        "bash": render("bash", {"command": "pytest -v tests/test_words.py"}, output),
        "edit": check_card(render_tool(script_edit())),
        "write": render("write", {"path": "words.py", "content": SCRIPT}, write_done),
    }


def visible(markup: str) -> str:
    """The text a page shows of ``markup``: tags dropped, entities decoded."""
    return html.unescape(re.sub(r"<[^>]*>", "", markup))


@pytest.mark.parametrize("kind", ["bash", "edit", "write"])
def test_the_record_form_of_a_card_is_at_most_three_times_its_text(kind: str) -> None:
    card = record_cards()[kind]
    whole = card.command_html + card.body_html + card.args_html
    record = record_markup(whole)
    shown = visible(record)
    assert shown == visible(whole)  # nothing visible is lost
    assert len(SCRIPT.splitlines()) == 30 and shown.count("PASSED") in (0, 20)
    ratio = len(record) / len(shown)
    # The live form with its theme variables was 3 (bash) to 9 (edit) times its text.
    assert ratio <= 3, f"{kind}: {ratio:.2f} times the visible text"
    # Every style left is a short record form, in literal colours.
    forms = set(record_styles().values()) | set(record_token_styles().values())
    styles = re.findall(r' style="([^"]*)"', record)
    assert styles and all(style in forms for style in styles), set(styles) - forms
    assert "var(" not in record


def test_a_diff_keeps_its_colours_in_the_record() -> None:
    record = record_markup(check_card(render_tool(script_edit())).command_html)
    checker = check(record)
    lines = {
        kind: [attrs for tag, attrs in checker.tags if attrs.get("class") == f"aj-diff-{kind}"]
        for kind in ("add", "del")
    }
    assert [len(lines["add"]), len(lines["del"])] == [5, 1]
    for kind, colour in (("add", "#2a7"), ("del", "#d44")):
        for attrs in lines[kind]:
            assert f"background:{colour}" in str(attrs["style"])
    # each changed line is a line of its own, its mark and text together
    shown = visible(record)
    assert "\n+             continue\n" in shown and "\n+         try:\n" in shown
    assert '\n−         text = pathlib.Path(path).read_text(encoding="utf-8")\n' in shown
    # the numbers stay beside their lines: code beside numbers does not wrap
    assert 'style="white-space:pre;' in record and 'style="display:flex"' in record
    # an error stays red, a note muted
    failed = render("bash", {"command": "x"}, "Blocked by a guard", is_error=True)
    assert 'class="aj-tool-error" style="color:#d44' in record_markup(failed.body_html)
    assert 'class="aj-tool-note" style="color:#888' in record_markup(
        render("bash", {"command": "true"}, "").body_html
    )


#: Properties JupyterLab's sanitiser keeps in an untrusted notebook (of those the record uses).
SANITISER_PROPERTIES = {
    "background", "border", "color", "display", "font-weight", "max-width", "min-width",
    "overflow-x", "padding-right", "table-layout", "text-align", "vertical-align", "white-space",
}  # fmt: skip


def test_record_styles_are_short_literal_and_kept_by_the_sanitiser() -> None:
    forms = record_styles()
    constants = {
        name: value
        for name, value in vars(styles_module).items()
        if name.isupper() and not name.startswith("_") and isinstance(value, str) and ":" in value
    }
    assert len(constants) >= 30
    missing = [name for name, value in constants.items() if value not in forms]
    assert not missing  # every style the cards write has a record form
    assert all(styles_module.gutter_style(digits) in forms for digits in range(1, 13))
    for value in forms.values():
        assert len(value) <= 45 and "var(" not in value
        for declaration in filter(None, value.split(";")):
            name, _, val = declaration.partition(":")
            assert name in SANITISER_PROPERTIES, declaration
            # literal values in units the sanitiser reads (no ``ch``)
            assert re.fullmatch(r"[#a-z0-9.%\- ]+", val), declaration
            assert not re.search(r"\dch\b", val), declaration
    # what carries meaning is kept
    assert "background:#" in forms[styles_module.ADDED_LINE]
    assert "background:#" in forms[styles_module.REMOVED_LINE]
    assert forms[styles_module.ERROR_STYLE].startswith("color:#d44")
    assert "white-space:pre-wrap" in forms[styles_module.NOTE_STYLE]
    # the page styles ``pre`` itself
    assert forms[styles_module.PRE_STYLE] == "" and forms[styles_module.ROOT_STYLE] == ""


def test_grep_lines_read_as_lines_in_the_record() -> None:
    card = render("grep", {"pattern": "hit"}, "a.py:9: one hit\na.py:10: two hits\na.py-11- after")
    live = card.body_html
    assert live.count('style="display:flex"') == 3  # live: rows, wrapped beside their number
    record = record_markup(live)
    assert "display:flex" not in record and record.count('class="aj-grep-hit"') == 2
    shown = visible(record)
    assert shown == visible(live)
    assert shown.endswith("a.py  (2 matches) 9 one hit\n10 two hits\n11 after\n"), shown
