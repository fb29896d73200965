"""Tool cards (:mod:`atomic_jupyter.ui.tool_cards`): one view per built-in tool, safe HTML.

The inputs are the shapes the agent really sends (both agent lines, 0.73 and 1.6): arguments
as the model wrote them, the text content of the result, and ``result["details"]``. Every card
is parsed with ``html.parser`` and held to an allow-list of tags, attributes and style values;
hostile text in every field must come out as text, and malformed input must never raise.
"""

from __future__ import annotations

import base64
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
from atomic_jupyter.ui.tool_cards import (
    CODE_FOLD,
    LIST_FOLD,
    OUTPUT_TAIL,
    ToolCall,
    ToolCard,
    highlight_html,
    render_tool,
)

# --- the checker ---------------------------------------------------------------------------------

TAGS = {"div", "span", "pre", "table", "tr", "td", "details", "summary", "img", "b"}
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
    checker = check(card.body_html)
    spans = [attrs for tag, attrs in checker.tags if tag == "span"]
    added = [a for a in spans if a.get("class") == "aj-diff-add"]
    removed = [a for a in spans if a.get("class") == "aj-diff-del"]
    assert len(added) == 1 and len(removed) == 1
    assert "rgba(76,175,80" in str(added[0]["style"])
    assert "rgba(244,67,54" in str(removed[0]["style"])
    text = "".join(checker.text)
    assert "f.txt" in text and "GAMMA" in text and "gamma" in text and "epsilon" in text
    # the line numbers, in their own muted column
    assert gutter(card.body_html) == [1, 2, 3, 3, 4, 5]
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
    assert card.body_html.count('class="aj-diff-skip"') == 1
    assert gutter(card.body_html) == [2, 3, 4, 5, 6, 6, 7, 7, 8, 9, 10, 11, 12, 13]
    assert ">twelve<" in card.body_html


def test_edit_diff_is_highlighted_for_the_file_language() -> None:
    diff = " 1 import os\n-2 x = 'a'  # old\n+2 x = 42  # new"
    card = render("edit", {"path": "m.py", "edits": []}, "ok", details={"diff": diff})
    assert "var(--jp-mirror-editor-keyword-color" in card.body_html
    assert "var(--jp-mirror-editor-string-color" in card.body_html
    assert "var(--jp-mirror-editor-comment-color" in card.body_html
    assert "var(--jp-mirror-editor-number-color" in card.body_html


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
    assert 'class="aj-diff-del"' in running.body_html and 'class="aj-diff-add"' in running.body_html
    text = text_of(running.body_html)
    assert "gamma" in text and "GAMMA" in text


def test_edit_pair_fallback_is_a_line_diff() -> None:
    old, new = "a\nb\nc\n", "a\nB\nc\n"
    card = render("edit", {"path": "x.txt", "edits": [{"oldText": old, "newText": new}]})
    assert card.summary == "x.txt  +1 −1"
    assert card.body_html.count('class="aj-diff-add"') == 1
    assert "  a\n" in card.body_html and "  c\n" in card.body_html
    assert gutter(card.body_html) == []  # no line numbers are known


def test_edit_error_is_shown_prominently() -> None:
    message = (
        "Could not find the exact text in f.txt. The old text must match exactly including "
        "all whitespace and newlines."
    )
    card = render("edit", EDIT_ARGS, message, details={}, is_error=True)
    assert card.summary == "f.txt"
    assert card.body_html.index('class="aj-tool-error"') < card.body_html.index("aj-tool-path")
    assert "var(--jp-error-color1" in card.body_html
    assert message in text_of(card.body_html)
    assert "GAMMA" in text_of(card.body_html)  # what it tried to do


# --- write -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "result", ["Successfully wrote to new/dir/w.py", "Successfully wrote 6 bytes to new/dir/w.py"]
)
def test_write_highlights_the_content(result: str) -> None:
    content = "def main():\n    return 1  # one\n"
    card = render("write", {"path": "new/dir/w.py", "content": content}, result)
    assert card.summary == "new/dir/w.py  2 lines"
    assert card.args_html == ""
    assert "var(--jp-mirror-editor-def-color" in card.body_html
    assert "var(--jp-mirror-editor-keyword-color" in card.body_html
    text = text_of(card.body_html)
    assert "def main():" in text and result in text
    # no fixed light background (the dark-theme bug of the Markdown code blocks)
    assert "#f6f8fa" not in card.body_html and "background-color:#" not in card.body_html
    assert "background:var(--jp-cell-editor-background" in card.body_html


def test_write_folds_long_files() -> None:
    content = "".join(f"line {i}\n" for i in range(1, 101))
    card = render("write", {"path": "big.txt", "content": content})
    assert card.summary == "big.txt  100 lines"
    head, _, rest = card.body_html.partition("<details")
    assert "line 40<" in head and "line 41<" not in head
    assert "Show all 100 lines</summary>" in rest and "line 100<" in rest
    # a few lines over the threshold are not folded
    short = render("write", {"path": "s.txt", "content": "x\n" * (CODE_FOLD + 3)})
    assert "<details" not in short.body_html


def test_write_of_an_unknown_file_type_is_plain() -> None:
    card = render("write", {"path": "notes.unknownext", "content": "if x: return"})
    assert "mirror-editor" not in card.body_html
    assert "if x: return" in text_of(card.body_html)


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
    monkeypatch.setattr(tool_cards, "IMAGE_MAX_BASE64", len(PNG) - 4)
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
    text = text_of(card.body_html)
    assert "$ echo hi; echo err >&2" in text and "hi\nerr" in text and "exit code 0" in text
    assert "var(--jp-mirror-editor-builtin-color" in card.body_html  # echo


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
    text = text_of(card.body_html)
    assert "Command timed out after 1 seconds" in text and "timeout 1 s" in text
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
    text = text_of(card.body_html)
    assert "$ make" in text and "hi\nerr" in text and "exit code" not in text
    empty = render("bash", {"command": "make"}, None)
    assert "$ make" in text_of(empty.body_html)


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

    monkeypatch.setitem(tool_cards._RENDERERS, "read", broken)
    card = render("read", {"path": "f.txt"}, "alpha")
    text = text_of(card.body_html)
    assert "f.txt" in text and "alpha" in text


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
    text = text_of(card.body_html)
    assert "query" in text and "weather in Paris" in text
    assert '{"units":"metric","days":[1,2]}' in text
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
        assert "weird" in text_of(card.body_html)
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
    for markup in (card.body_html, card.args_html):
        checker = check(markup)
        for _tag, attrs in checker.tags:
            for value in attrs.values():
                assert "alert" not in str(value) and "javascript" not in str(value)
    text = text_of(card.body_html) + text_of(card.args_html)
    # readable: the payload's text is there
    if tool.done or PAYLOAD in str(tool.args) or tool.name == "bash":
        assert PAYLOAD in text
    assert "<script>" not in card.body_html and "<img src=x" not in card.body_html
    assert "\n" not in card.summary


def test_hostile_text_is_whole_where_it_is_shown() -> None:
    card = render_tool(hostile_calls()[0])  # read, done
    text = text_of(card.body_html)
    assert text.count(PAYLOAD) >= 3  # path, two content lines, notice
    card = render_tool(ToolCall("bash", {"command": P}, "", f"{P}\n", done=True))
    assert text_of(card.body_html).count(PAYLOAD) == 2
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
NAMES = st.sampled_from([*tool_cards._RENDERERS, "other"])


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
    renderer = tool_cards._RENDERERS.get(name, tool_cards._render_generic)
    check_card(renderer(tool))  # the view itself, not render_tool's safety net


def test_malformed_field_types_never_raise() -> None:
    weird: Any = object()
    tool = ToolCall(weird, weird, weird, weird, weird, weird, True, True)
    check_card(render_tool(tool))
    five: Any = 5
    seven: Any = 7
    short: Any = (("image/png",),)
    for name in tool_cards._RENDERERS:
        tool = ToolCall(name, [1, {"a": None}], five, seven, "diff", short, done=True)
        check_card(tool_cards._RENDERERS[name](tool))
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
    assert "more lines not shown" in text_of(card.body_html)
    card = render("read", {"path": "a.txt"}, "y" * 1_000_000)
    assert "the rest of line 1 is not shown" in text_of(card.body_html)
    assert len(card.body_html) < 300_000
    diff = "\n".join(f"+{i} added" for i in range(10_000))
    card = render("edit", {"path": "a.txt", "edits": []}, "ok", details={"diff": diff})
    assert len(card.body_html) < 1_500_000
    big_args = {"k": "v" * 1_000_000}
    assert len(render("custom", big_args, "ok").body_html) < 100_000
    assert time.monotonic() - started < 30


@pytest.mark.parametrize("name", [*tool_cards._RENDERERS, "other"])
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
    ).body_html
    deleted = re.findall(r'class="aj-diff-del"[^>]*>(.*?</span>.*?)</span>', body)
    added = re.findall(r'class="aj-diff-add"[^>]*>(.*?</span>.*?)</span>', body)
    assert [re.sub(r"<[^>]+>", "", d) for d in deleted] == ["− old␍X"]
    assert [re.sub(r"<[^>]+>", "", a) for a in added] == ["+ new"]

    huge = "\n".join(f"+{'9' * 3000} line {i}" for i in range(200))
    body = render_tool(
        ToolCall("edit", {"path": "f.txt"}, "", "ok", {"diff": huge}, (), False, True)
    ).body_html
    assert len(body) < 100_000
