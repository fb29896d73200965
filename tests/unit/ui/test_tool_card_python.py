"""The card of the agent's ``python`` tool (:mod:`atomic_jupyter.ui.tool_cards.python`).

Pure unit tests, no kernel: the code highlighted and numbered, the status while it runs, the
outputs in order (stdout, stderr marked, displays, values, notes, images), a display's HTML
kept as a table but nothing else of it, the traceback as the error, and malformed or hostile
input never raising and never reaching the page as markup.
"""

from __future__ import annotations

import base64
import html
import re
import struct
import zlib
from html.parser import HTMLParser
from typing import Any

import pytest

from atomic_jupyter.ui.markdown import record_markup
from atomic_jupyter.ui.sanitize import sanitize_table_html
from atomic_jupyter.ui.tool_cards import ToolCall, ToolCard, registry, render_tool
from atomic_jupyter.ui.tool_cards.python import HTML_MAX_CHARS, render_python

TAGS = {"div", "span", "pre", "details", "summary", "img", "br", "b", "strong", "i", "em"}
TABLE_TAGS = {"table", "caption", "thead", "tbody", "tfoot", "tr", "th", "td"}
VOID = {"img", "br"}
CLASS = re.compile(r"(?:aj|ansi)-[a-z0-9-]+(?: (?:aj|ansi)-[a-z0-9-]+)*")
STYLE = re.compile(r"(?:[a-z-]+:(?:[#a-zA-Z0-9 .,%\-]|rgba?\(|var\(--jp-[a-z0-9-]+,|\))+;?)+")
SRC = re.compile(r"data:image/(?:png|jpeg|gif|webp);base64,[A-Za-z0-9+/]+={0,2}")


class Checker(HTMLParser):
    """Collects the text and the tags, and every tag or attribute outside the allow-list."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self.text: list[str] = []
        self.tags: list[str] = []
        self.stack: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag not in TAGS | TABLE_TAGS:
            self.problems.append(f"tag {tag}")
        for name, value in attrs:
            ok = {
                "class": lambda v: bool(CLASS.fullmatch(v)),
                "style": lambda v: bool(STYLE.fullmatch(v)) and "url(" not in v,
                "src": lambda v: tag == "img" and bool(SRC.fullmatch(v)),
                "alt": lambda v: tag == "img" and v.startswith("image "),
                "colspan": lambda v: tag in ("th", "td") and v.isdigit(),
                "rowspan": lambda v: tag in ("th", "td") and v.isdigit(),
            }.get(name)
            if value is None or ok is None or not ok(value):
                self.problems.append(f"attribute {name}={value!r} on {tag}")
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack.pop() != tag:
            self.problems.append(f"unbalanced </{tag}>")

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def handle_comment(self, data: str) -> None:
        self.problems.append("comment")


def check(markup: str) -> Checker:
    checker = Checker()
    checker.feed(markup)
    checker.close()
    assert not checker.problems, checker.problems[:5]
    assert not checker.stack, checker.stack
    return checker


def text(markup: str) -> str:
    return "".join(check(markup).text)


def card(**fields: Any) -> ToolCard:
    """The card of a python call, every section checked against the allow-list."""
    fields.setdefault("args", {"code": "print(1)"})
    fields.setdefault("output", "")
    fields.setdefault("result", None)
    fields.setdefault("done", fields["result"] is not None)
    rendered = render_python(ToolCall(name="python", **fields))
    for markup in (rendered.command_html, rendered.body_html, rendered.args_html):
        check(markup)
    assert "\n" not in rendered.summary and len(rendered.summary) <= 100
    return rendered


def png() -> str:
    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", 1, 1, 8, 6, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00\xff")
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels)
    return base64.b64encode(data + chunk(b"IEND", b"")).decode()


PNG = png()
CODE = "\n\nimport math  # the first line\nx = math.pi\nx * 2\n"
DATAFRAME = (
    "<div><style scoped>.dataframe tbody tr th { vertical-align: top; }</style>"
    '<table border="1" class="dataframe" style="position:fixed;top:0">'
    '<thead><tr style="text-align: right;"><th></th><th colspan="2" onmouseover="x()">a</th>'
    "</tr></thead><tbody><tr><th>0</th><td>1.5</td><td>"
    '<img src=x onerror="window.__pwned=1">two'
    '<a href="javascript:alert(1)">link</a></td></tr></tbody></table>'
    "<script>window.__pwned=2</script><iframe src=https://e.com>framed</iframe></div>"
)


def test_the_code_is_highlighted_and_numbered_and_the_heading_says_what_it_does() -> None:
    shown = card(args={"code": CODE})
    assert shown.summary == "x = math.pi · 3 lines"  # not the import
    assert "aj-tool-code" in shown.command_html and "<span style=" in shown.command_html
    numbers = re.findall(
        r'<pre style="[^"]*user-select:none;[^"]*">([^<]*)</pre>', shown.command_html
    )
    assert [int(n) for n in numbers[0].split()] == [1, 2, 3, 4, 5]
    assert "x = math.pi" in html.unescape(re.sub(r"<[^>]+>", "", shown.command_html))
    assert shown.body_html == "" and shown.args_html == ""  # not run yet, nothing else
    assert len(card(args={"code": "y = '" + "z" * 500 + "'"}).summary) == 100


def test_while_it_runs_the_kernel_status_is_a_note() -> None:
    for status in ("waiting for the kernel…", "running in the kernel… 12 s"):
        shown = card(output=status, done=False)
        assert text(shown.body_html) == status and "aj-tool-note" in shown.body_html
    assert card(output="", done=False).body_html == ""


def test_outputs_are_shown_in_the_order_they_happened() -> None:
    details = {
        "kernel": True,
        "agent_cell": 3,
        "duration_ms": 1234.5,
        "outputs": [
            {"type": "stream", "name": "stdout", "text": "printed-first\n"},
            {"type": "stream", "name": "stdout", "text": "printed-too\n"},
            {"type": "display", "text": "<Figure size 640x480>", "html": None, "image": 0},
            {"type": "note", "text": "12 more displays left out"},
            {"type": "value", "text": "6.283185307179586", "html": None, "image": None},
        ],
    }
    shown = card(result="x", details=details, images=(("image/png", PNG),))
    body = shown.body_html
    at = [body.index(mark) for mark in ("printed-first", "<img", "12 more displays", "Out:")]
    assert at == sorted(at), body
    assert body.index("Out:") < body.index("6.283185307179586")
    assert body.count("aj-tool-output") == 2  # the two prints joined, then the value's text
    assert "Figure size" not in body and body.count("<img") == 1  # the image stands for it
    said = text(body)
    assert said.endswith("ran in the kernel in 1.2 s · Agent[3]")
    assert "stderr" not in said and "aj-tool-error" not in body


def test_stderr_is_marked() -> None:
    details = {
        "outputs": [
            {"type": "stream", "name": "stderr", "text": "DeprecationWarning: old\n"},
            {"type": "stream", "name": "stdout", "text": "fine\n"},
        ]
    }
    body = card(result="", details=details).body_html
    said = text(body)
    assert said.index("stderr") < said.index("DeprecationWarning") < said.index("fine")
    assert body.count('class="aj-python-stderr"') == 1  # only the stderr is marked


def test_a_dataframe_is_kept_as_a_table_and_nothing_else_of_its_html() -> None:
    details = {"outputs": [{"type": "value", "text": "   a\n0  1.5", "html": DATAFRAME}]}
    body = card(result="", details=details).body_html
    checker = check(body)
    assert {"table", "thead", "tbody", "tr", "th", "td"} <= set(checker.tags)
    for hostile in ("<script", "onerror", "onmouseover", "javascript:", "<img", "<iframe",
                    "position:fixed", "dataframe", "border=", "<a ", "__pwned"):  # fmt: skip
        assert hostile not in body, hostile
    assert 'colspan="2"' in body  # a header spanning columns keeps its span
    said = text(body)
    assert "1.5" in said and "two" in said and "link" in said and "framed" not in said
    assert "   a\n0  1.5" not in said  # the table, not the text, stands for the value
    # the record keeps the table, without its row groups
    record = record_markup(body)
    assert "<table" in record and "<td" in record and "<tbody" not in record


def test_a_display_without_a_table_or_too_big_is_its_text() -> None:
    outputs = [
        {"type": "display", "text": "plot-a", "html": "<script>x()</script><div></div>"},
        {"type": "display", "text": "big-b", "html": "<table>" + "x" * HTML_MAX_CHARS + "</table>"},
        {"type": "display", "text": "bold-c", "html": "<b>bold &lt;c&gt;</b>"},
    ]
    body = card(result="", details={"outputs": outputs}).body_html
    said = text(body)
    assert "plot-a" in said and "big-b" in said and "xxx" not in said
    assert "bold <c>" in said and "<b>bold &lt;c&gt;</b>" in body and "bold-c" not in said


def test_an_error_shows_the_traceback_as_the_error() -> None:
    traceback = (
        "partial output\n"
        "Traceback (most recent call last):\n"
        '  File "<agent-3>", line 1, in <module>\n'
        "ZeroDivisionError: division by zero"
    )
    details = {"agent_cell": 3, "duration_ms": 12}
    shown = card(result=traceback, is_error=True, details=details)
    assert "aj-tool-error" in shown.body_html
    said = text(shown.body_html)
    assert traceback in said and said.endswith("ran in the kernel in 12 ms · Agent[3]")
    assert "&lt;agent-3&gt;" in shown.body_html and "<agent-3>" not in shown.body_html


def test_without_details_the_result_and_images_are_shown() -> None:
    shown = card(result="older agent: 42", details=None, images=(("image/png", PNG),))
    assert "older agent: 42" in text(shown.body_html) and "<img" in shown.body_html
    assert "ran in the kernel" not in text(shown.body_html)


@pytest.mark.parametrize(
    "details",
    [
        "a string",
        {"outputs": "not a list", "agent_cell": "3", "duration_ms": "soon"},
        {"outputs": [{"type": "display", "text": "fallback-text", "image": 7}], "agent_cell": True},
        {"outputs": [{"type": "display", "text": "also-text", "image": True}]},
        {"outputs": [{"type": "stream", "name": 5, "text": 123}, None, 4, "bare", [1], {}]},
        {"outputs": [{"type": "value", "text": {"a": 1}, "html": 5, "image": -1}]},
        {"outputs": [], "duration_ms": float("nan"), "agent_cell": -1},
        {"outputs": [{"type": "note", "text": None}, {"type": "other", "text": "unknown-kind"}]},
    ],
)
def test_malformed_details_never_raise_and_show_what_they_can(details: Any) -> None:
    shown = card(result="the-result", details=details, images=(("image/png", PNG), ("x", 1)))
    said = text(shown.body_html)
    if not isinstance(details, dict) or not isinstance(details.get("outputs"), list):
        assert "the-result" in said  # shown as the generic card shows a result
    outputs = details.get("outputs") if isinstance(details, dict) else None
    outputs = outputs if isinstance(outputs, list) else []
    if outputs and outputs[0].get("text") in ("fallback-text", "also-text"):
        assert outputs[0]["text"] in said  # an image it cannot find: its text
    if outputs and outputs[0].get("text") == 123:
        assert "123" in said and "bare" in said and "stderr" not in said
    if outputs and outputs[0].get("type") == "value":
        assert "{'a': 1}" in said
    assert "Agent[" not in said and "nan" not in said


def test_malformed_calls_never_raise() -> None:
    weird: Any = object()
    for args in (None, "print(", [1], {"code": 5}, {"code": None, "x": 1}, {}):
        for done in (False, True):
            card(args=args, output=weird, result=weird, details=weird, images=weird, done=done)
    shown = card(args={"code": "1", "timeout": 5})
    assert "timeout" in text(shown.args_html) and "timeout" not in text(shown.command_html)


def test_hostile_text_is_escaped_everywhere() -> None:
    payload = '</pre><script>alert(1)</script><img src=x onerror=alert(1)>"\x1b[31m'
    outputs = [
        {"type": "stream", "name": "stdout", "text": payload},
        {"type": "stream", "name": payload, "text": payload},
        {"type": "display", "text": payload, "html": payload},
        {"type": "value", "text": payload},
        {"type": "note", "text": payload},
    ]
    calls: list[dict[str, Any]] = [
        {"args": {"code": payload, payload: payload}, "output": payload, "done": False},
        {"args": {"code": payload}, "result": payload, "details": {"outputs": outputs}},
        {"args": {"code": payload}, "result": payload, "is_error": True},
        {"args": {payload: payload}, "result": payload, "details": payload},
    ]
    for fields in calls:
        shown = card(**fields)
        for markup in (shown.command_html, shown.body_html, shown.args_html):
            assert "<script" not in markup and "<img src=x" not in markup
        assert "</pre><script>alert(1)</script>" in text(shown.command_html + shown.body_html)


def test_many_outputs_and_images_are_capped() -> None:
    outputs = [{"type": "display", "text": f"d{i}", "image": i} for i in range(300)]
    images = tuple(("image/png", PNG) for _ in range(300))
    body = card(result="", details={"outputs": outputs}, images=images).body_html
    assert body.count("<img") == 8
    said = text(body)
    assert "d8" in said and "100 more outputs not shown" in said
    assert "292 more images not shown" in said


def test_sanitize_table_html_is_public_and_strict() -> None:
    assert sanitize_table_html(DATAFRAME).startswith("<table><thead><tr><th></th>")
    assert sanitize_table_html('<td rowspan="99999">x</td>') == "x"
    assert sanitize_table_html(5) == ""  # type: ignore[arg-type]


def test_render_tool_picks_the_python_card() -> None:
    assert registry.RENDERERS["python"] is render_python
    call = ToolCall("python", {"code": "print('hi')"}, "", "hi\n", {"outputs": []}, done=True)
    assert render_tool(call) == render_python(call)
    assert "aj-tool-code" in render_tool(call).command_html


@pytest.mark.parametrize(
    "code, heading",
    [
        # The heading said the import before: the least useful line.
        (
            "import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.show()",
            "plt.plot([1, 2]) · 3 lines",
        ),
        (
            "# Plot the sales by month\nimport pandas as pd\npd.Series([1]).plot()",
            "Plot the sales by month · 3 lines",
        ),
        ("from math import pi\nimport os", "from math import pi · 2 lines"),  # nothing but imports
        ("df.describe()", "df.describe()"),  # one line: no count
        ("#\nx = 1", "x = 1 · 2 lines"),  # an empty comment says nothing
    ],
)
def test_the_heading_says_what_the_code_does_and_how_long_it_is(code: str, heading: str) -> None:
    assert card(args={"code": code}).summary == heading
