"""Rendering the model's Markdown to HTML that is safe for an ``ipywidgets.HTML`` value."""

from __future__ import annotations

import html
import random
import re
from html.parser import HTMLParser

import pytest

from atomic_jupyter.ui import markdown as md
from atomic_jupyter.ui.markdown import render_markdown
from atomic_jupyter.ui.tool_cards import highlight_html
from tests.unit.ui.test_tool_cards import SAMPLE_PYTHON

ALLOWED_TAGS = {
    "div", "a", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5",
    "h6", "hr", "li", "ol", "p", "pre", "s", "span", "strong", "table", "tbody", "td",
    "th", "thead", "tr", "ul",
}  # fmt: skip
MATH_TAGS = {
    "math", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace", "mfrac", "msqrt", "mroot",
    "msub", "msup", "msubsup", "munder", "mover", "munderover", "mtable", "mtr", "mtd",
    "mstyle", "mpadded", "mphantom", "menclose", "merror",
}  # fmt: skip
ALLOWED_TAGS |= MATH_TAGS
#: Presentation attributes MathML may keep (plain values only: no url(), no script).
MATH_ATTRIBUTES = {
    "display", "mathvariant", "stretchy", "fence", "separator", "accent", "accentunder",
    "lspace", "rspace", "linethickness", "columnalign", "columnspacing", "rowspacing",
    "displaystyle", "scriptlevel", "width", "height", "depth", "notation", "minsize",
    "maxsize", "symmetric", "largeop", "movablelimits", "form", "columnlines", "rowlines",
    "frame", "align", "xmlns",
}  # fmt: skip
ALLOWED_ATTRIBUTES = {"a": {"href", "title", "rel", "target"}, "ol": {"start"}}
SPAN_PROPERTIES = {"color", "background-color", "font-weight", "font-style", "text-decoration"}
URL_JUNK = re.compile(r"[\x00-\x20\x7f-\x9f\u00ad\u200b-\u200f\u2028-\u202e\u2060-\u2064\ufeff]")


class SafetyChecker(HTMLParser):
    """Parses rendered output, collecting its visible text and every unsafe thing in it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self.text: list[str] = []
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.in_pre = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        first = not self.tags
        self.tags.append((tag, values))
        if tag not in ALLOWED_TAGS:
            self.problems.append(f"tag <{tag}>")
        if tag == "div":
            expected = {"class": "atomic-markdown", "style": md._CONTAINER_STYLE}
            if not first or values != expected:
                self.problems.append(f"div other than the wrapper: {values}")
            return
        for name, value in values.items():
            if name.startswith("on"):
                self.problems.append(f"event handler {name}= on <{tag}>")
            elif name in ("href", "src"):
                self._check_url(tag, name, value)
            elif name == "style":
                self._check_style(tag, value)
            elif tag in MATH_TAGS and name in MATH_ATTRIBUTES:
                if not re.fullmatch(r"[A-Za-z0-9 .#%+-]{0,40}", value) and not (
                    name == "xmlns" and value == "http://www.w3.org/1998/Math/MathML"
                ):
                    self.problems.append(f"MathML {name}={value!r} on <{tag}>")
            elif name not in ALLOWED_ATTRIBUTES.get(tag, set()):
                self.problems.append(f"attribute {name}= on <{tag}>")
        if tag == "a":
            if set(values.get("rel", "").split()) != {"noopener", "noreferrer"}:
                self.problems.append(f"link without rel=noopener noreferrer: {values}")
            if values.get("target") != "_blank":
                self.problems.append(f"link without target=_blank: {values}")
            if "href" not in values:
                self.problems.append("link without href")
        if tag == "pre":
            self.in_pre += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag == "pre":
            self.in_pre -= 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "pre":
            self.in_pre -= 1

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def handle_comment(self, data: str) -> None:
        self.problems.append(f"comment {data!r}")

    def handle_decl(self, decl: str) -> None:
        self.problems.append(f"declaration {decl!r}")

    def handle_pi(self, data: str) -> None:
        self.problems.append(f"processing instruction {data!r}")

    def unknown_decl(self, data: str) -> None:
        self.problems.append(f"declaration {data!r}")

    def _check_url(self, tag: str, name: str, value: str) -> None:
        # HTMLParser has decoded entities once; decode again in case of double encoding.
        url = URL_JUNK.sub("", html.unescape(value)).lower()
        if url.startswith(("javascript:", "vbscript:", "data:")):
            self.problems.append(f"dangerous {name}={value!r} on <{tag}>")
        elif not url.startswith(("http://", "https://", "mailto:")):
            self.problems.append(f"{name}={value!r} is not http(s)/mailto on <{tag}>")

    def _check_style(self, tag: str, value: str) -> None:
        if tag == "span":
            if not self.in_pre:
                self.problems.append(f"styled span outside a code block: {value!r}")
            for declaration in filter(None, value.split(";")):
                name, _, val = declaration.partition(":")
                theme = re.fullmatch(r"var\(--jp-[a-z0-9-]+,#[0-9a-fA-F]{3,8}\)", val.strip())
                if name.strip() not in SPAN_PROPERTIES or (
                    not theme and re.search(r"[()\\\"'/]", val)
                ):
                    self.problems.append(f"span style {declaration!r}")
        elif value not in md._FIXED_STYLES.get(tag, ()):
            self.problems.append(f"style={value!r} on <{tag}>")

    @property
    def visible(self) -> str:
        return "".join(self.text)


def check(markdown: str) -> SafetyChecker:
    """Render ``markdown``, assert the output is safe, return the parsed output."""
    out = render_markdown(markdown)
    lowered = out.lower()
    for needle in ("<script", "<iframe", "<object", "<embed", "<svg", "<img", "<style", "<form"):
        assert needle not in lowered, (needle, out)
    checker = SafetyChecker()
    checker.feed(out)
    checker.close()
    assert checker.problems == [], out
    assert out.startswith('<div class="atomic-markdown"') and out.endswith("</div>")
    return checker


def tags_of(checker: SafetyChecker, name: str) -> list[dict[str, str]]:
    return [attrs for tag, attrs in checker.tags if tag == name]


# --- plain Markdown renders --------------------------------------------------------------


def test_atx_headings_render_as_h1_and_h2() -> None:
    out = render_markdown("# Title\n\n## Section\n")
    assert "<h1>Title</h1>" in out
    assert "<h2>Section</h2>" in out


def test_paragraphs_and_soft_line_breaks_render_as_p_and_br() -> None:
    c = check("first line\nsecond line\n\nnext paragraph")
    assert len(tags_of(c, "p")) == 2
    assert len(tags_of(c, "br")) == 1
    assert "first line" in c.visible and "next paragraph" in c.visible


def test_emphasis_strong_and_strikethrough_render() -> None:
    out = render_markdown("*em* and **strong** and ~~gone~~")
    assert "<em>em</em>" in out
    assert "<strong>strong</strong>" in out
    assert "<s>gone</s>" in out


def test_bullet_and_nested_lists_render_as_ul_li() -> None:
    c = check("- one\n- two\n  - nested\n\n1. first\n2. second\n")
    assert len(tags_of(c, "ul")) == 2
    assert len(tags_of(c, "ol")) == 1
    assert len(tags_of(c, "li")) == 5
    assert "nested" in c.visible


def test_ordered_list_keeps_its_start_number() -> None:
    c = check("3. three\n4. four\n")
    assert tags_of(c, "ol") == [{"start": "3"}]


def test_task_list_items_show_boxes_as_text() -> None:
    c = check("- [ ] todo\n- [x] done\n")
    assert "\u2610 todo" in c.visible
    assert "\u2611 done" in c.visible
    assert "input" not in render_markdown("- [ ] todo")


def test_table_renders_with_th_td_and_alignment() -> None:
    c = check("| name | n |\n|:-----|--:|\n| a | 1 |\n| b | 2 |\n")
    assert len(tags_of(c, "table")) == 1
    assert len(tags_of(c, "th")) == 2
    assert len(tags_of(c, "td")) == 4
    assert tags_of(c, "td")[1]["style"].endswith("text-align:right")
    assert "name" in c.visible and "b" in c.visible


def test_fenced_python_block_is_highlighted_with_inline_colour_styles() -> None:
    c = check('```python\ndef greet(name):\n    return f"hi {name}"\n```\n')
    spans = tags_of(c, "span")
    assert any("color:var(--jp-mirror-editor-" in span.get("style", "") for span in spans)
    assert 'def greet(name):\n    return f"hi {name}"' in c.visible
    [pre] = tags_of(c, "pre")
    assert pre["style"] == md._PRE_STYLE and "background-color" in pre["style"]


def test_a_fence_is_highlighted_as_a_tool_card_highlights_code() -> None:
    def code_of(markup: str) -> str:
        match = re.search(r"<pre[^>]*>(.*)</pre>", markup, re.DOTALL)
        assert match is not None
        return match.group(1)

    fence = render_markdown(f"```python\n{SAMPLE_PYTHON}```\n")
    assert code_of(fence) == code_of(highlight_html(SAMPLE_PYTHON, language="python")) + "\n"
    code = SAMPLE_PYTHON * (30_000 // len(SAMPLE_PYTHON) + 1)  # about 30 KB
    ratio = len(render_markdown(f"```python\n{code}```\n")) / len(code)
    assert ratio <= 7.7, f"{ratio:.2f} times the visible text"  # over 10: a span a token


def test_fence_with_unknown_language_is_escaped_plain_text() -> None:
    c = check("```no-such-language\nif a < b && c > d: <b>x</b>\n```\n")
    assert tags_of(c, "span") == []
    assert "if a < b && c > d: <b>x</b>" in c.visible
    assert "&lt;b&gt;x&lt;/b&gt;" in render_markdown("```nope\n<b>x</b>\n```")


def test_code_block_keeps_a_leading_blank_line() -> None:
    c = check("```\n\nx = 1\n```\n")
    # HTML drops one newline right after <pre>: the text must not start with it.
    out = render_markdown("```\n\nx = 1\n```\n")
    assert re.search(r"<pre[^>]*><span></span>\nx = 1", out)
    assert "\nx = 1" in c.visible


def test_indented_code_block_renders_as_pre() -> None:
    c = check("para\n\n    x = 1 < 2\n")
    assert len(tags_of(c, "pre")) == 1
    assert "x = 1 < 2" in c.visible


def test_inline_code_renders_as_code_with_our_style() -> None:
    c = check("call `f(<x>)` now")
    assert tags_of(c, "code") == [{"style": md._CODE_STYLE}]
    assert "f(<x>)" in c.visible


def test_https_link_opens_in_new_tab_with_noopener_noreferrer() -> None:
    c = check("[docs](https://example.com/a?b=1&c=2)")
    [link] = tags_of(c, "a")
    assert link["href"] == "https://example.com/a?b=1&c=2"
    assert link["rel"] == "noopener noreferrer" and link["target"] == "_blank"
    assert "docs" in c.visible


def test_mailto_and_angle_bracket_autolinks_are_links() -> None:
    c = check("<https://example.com/x> and [mail](mailto:a@example.com)")
    assert [a["href"] for a in tags_of(c, "a")] == [
        "https://example.com/x",
        "mailto:a@example.com",
    ]


def test_relative_links_show_only_their_label() -> None:
    c = check("see [the file](src/foo.py) and [top](#top) and [host](//evil.example/x)")
    assert tags_of(c, "a") == []
    assert "see the file and top and host" in c.visible


def test_images_are_not_loaded_but_shown_as_links() -> None:
    c = check("![a chart](https://example.com/chart.png?secret=1)")
    [link] = tags_of(c, "a")
    assert link["href"] == "https://example.com/chart.png?secret=1"
    assert "image: a chart" in c.visible


def test_blockquote_renders() -> None:
    c = check("> quoted *text*\n")
    assert tags_of(c, "blockquote") == [{"style": md._BLOCKQUOTE_STYLE}]
    assert "quoted text" in c.visible


def test_horizontal_rule_and_hard_line_break_render() -> None:
    c = check("above\n\n---\n\nline one  \nline two\\\nline three")
    assert len(tags_of(c, "hr")) == 1
    assert len(tags_of(c, "br")) == 2


def test_output_is_wrapped_in_a_contained_div() -> None:
    out = render_markdown("hi")
    assert out.startswith(f'<div class="atomic-markdown" style="{md._CONTAINER_STYLE}">')
    assert "contain:content" in md._CONTAINER_STYLE


def test_our_fixed_styles_cannot_position_or_load_anything() -> None:
    styles = [md._CONTAINER_STYLE, *(s for group in md._FIXED_STYLES.values() for s in group)]
    for style in styles:
        assert not re.search(r"position|url\(|expression|@import|z-index|transform", style)


# --- hostile input ------------------------------------------------------------------------

# (markdown, text that must still be visible as text)
PAYLOADS = [
    ("<script>alert(1)</script>", "<script>alert(1)</script>"),
    ("<img src=x onerror=alert(1)>", "<img src=x onerror=alert(1)>"),
    ("<iframe src=javascript:alert(1)>", "<iframe src=javascript:alert(1)>"),
    ("[x](javascript:alert(1))", "[x](javascript:alert(1))"),
    ("[x](JaVaScRiPt:alert(1))", "[x](JaVaScRiPt:alert(1))"),
    ("[x](java\tscript:alert(1))", "script:alert(1)"),
    ("[x](&#106;avascript:alert(1))", "javascript:alert(1)"),
    ("[x](javascript&colon;alert(1))", "javascript:alert(1)"),
    ("[x](java&#x09;script:alert(1))", "script:alert(1)"),
    ("[x](<javascript:alert(1)>)", "javascript:alert(1)"),
    ("[x](  javascript:alert(1))", "javascript:alert(1)"),
    ("[x](\x00javascript:alert(1))", "javascript:alert(1)"),
    ("[x](\u200bjavascript:alert(1))", "javascript:alert(1)"),
    ("[x](vbscript:msgbox(1))", "vbscript:msgbox(1)"),
    ("[x](file:///etc/passwd)", "file:///etc/passwd"),
    ("![x](javascript:alert(1))", "![x](javascript:alert(1))"),
    ("![x](data:image/png;base64,iVBORw0KGgo=)", "data:image/png;base64,iVBORw0KGgo="),
    (
        "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
        "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
    ),
    ('<a href="javascript:alert(1)">x</a>', '<a href="javascript:alert(1)">x</a>'),
    ("<svg onload=alert(1)>", "<svg onload=alert(1)>"),
    ("<svg><script>alert(1)</script></svg>", "<svg><script>alert(1)</script></svg>"),
    (
        '<div style="position:fixed;top:0;left:0;width:100%;height:100%">',
        '<div style="position:fixed;top:0;left:0;width:100%;height:100%">',
    ),
    ("<style>body{display:none}</style>", "<style>body{display:none}</style>"),
    ('<form action="https://evil.example"><input name=q></form>', "<input name=q>"),
    ('<object data="x.swf"></object><embed src="x.swf">', '<embed src="x.swf">'),
    ('<meta http-equiv="refresh" content="0;url=https://evil.example">', "http-equiv"),
    ('<link rel=stylesheet href="https://evil.example/x.css">', "<link rel=stylesheet"),
    ('<base href="https://evil.example/">', '<base href="https://evil.example/">'),
    ("<!-- hidden --> shown", "<!-- hidden --> shown"),
    ("<javascript:alert(1)>", "<javascript:alert(1)>"),
    ("<JAVASCRIPT:alert(1)>", "<JAVASCRIPT:alert(1)>"),
    ("&lt;script&gt;alert(1)&lt;/script&gt;", "<script>alert(1)</script>"),
    ("&#60;script&#62;alert(1)", "<script>alert(1)"),
    ("[x][r]\n\n[r]: javascript:alert(1)", "[r]: javascript:alert(1)"),
    ("<p onclick=alert(1)>hi</p>", "<p onclick=alert(1)>hi</p>"),
    ("**<b onmouseover=alert(1)>bold</b>**", "<b onmouseover=alert(1)>bold</b>"),
]


@pytest.mark.parametrize(("markdown", "visible"), PAYLOADS)
def test_hostile_markdown_renders_safely_and_stays_visible_as_text(
    markdown: str, visible: str
) -> None:
    c = check(markdown)
    assert visible in c.visible


@pytest.mark.parametrize(("markdown", "visible"), PAYLOADS)
def test_hostile_markdown_inside_a_table_cell_renders_safely(markdown: str, visible: str) -> None:
    cell = markdown.replace("|", "\\|").replace("\n", " ")
    c = check(f"| a | b |\n|---|---|\n| {cell} | ok |\n")
    assert len(tags_of(c, "td")) == 2
    assert "alert" not in markdown or "alert" in c.visible


def test_table_cell_with_script_and_javascript_link_stays_text() -> None:
    c = check("| a | b |\n|---|---|\n| <script>alert(1)</script> | [x](javascript:alert(1)) |\n")
    assert "<script>alert(1)</script>" in c.visible
    assert "[x](javascript:alert(1))" in c.visible
    assert tags_of(c, "a") == []


def test_entities_stay_escaped_in_the_html() -> None:
    out = render_markdown("&lt;script&gt;alert(1)&lt;/script&gt;")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in out


def test_fence_info_string_cannot_break_out_of_the_code_block() -> None:
    c = check('```"><script>alert(1)</script>\nprint(1)\n```\n')
    assert len(tags_of(c, "pre")) == 1
    assert "print(1)" in c.visible
    # The info string is metadata, never copied into the output.
    assert "alert" not in render_markdown('```"><script>alert(1)</script>\nprint(1)\n```\n')


def test_fence_info_string_with_a_real_language_and_junk_still_highlights_safely() -> None:
    c = check('```python onload="alert(1)" class=x\nimport os\n```\n')
    assert any(
        "color:var(--jp-mirror-editor-" in span.get("style", "") for span in tags_of(c, "span")
    )


def test_link_title_with_quotes_cannot_add_an_attribute() -> None:
    c = check('[x](https://a.b "\\" onmouseover=\\"alert(1)")')
    [link] = tags_of(c, "a")
    assert link["href"] == "https://a.b"
    assert link["title"] == '" onmouseover="alert(1)'
    assert set(link) == {"href", "title", "rel", "target"}


def test_autolink_with_quotes_cannot_add_an_attribute() -> None:
    c = check('<https://ok.example/"onmouseover="alert(1)>')
    [link] = tags_of(c, "a")
    assert set(link) == {"href", "rel", "target"}
    assert '"' not in link["href"]


def test_sanitizer_alone_strips_what_markdown_it_would_never_emit() -> None:
    # Defence in depth: feed the nh3 pass raw hostile HTML, as if the first layer failed.
    dirty = (
        '<pre style="position:fixed;top:0"><span style="color:#f00;position:fixed;'
        'background-image:url(https://evil.example/x)">x</span></pre>'
        '<a href="javascript:alert(1)" onclick="alert(1)">a</a>'
        '<a href="foo.html">rel</a><img src=x onerror=alert(1)><iframe src="https://e.x"></iframe>'
        '<svg onload=alert(1)><script>alert(1)</script></svg><p style="position:fixed">p</p>'
        '<table style="position:fixed"><tr><td style="text-align:right">c</td></tr></table>'
        '<style>*{display:none}</style><form><input></form><ol start="1e9"><li>l</li></ol>'
    )
    cleaned = md._CLEANER.clean(dirty)
    assert "position" not in cleaned and "url(" not in cleaned
    assert '<span style="color:#f00">x</span>' in cleaned
    assert "alert" not in cleaned and "display:none" not in cleaned
    # An http(s) URL must name a host: "http:alert(1)" passes nh3's scheme check only.
    assert "http:alert" not in md._CLEANER.clean('<a href="http:alert(1)">h</a>')
    checker = SafetyChecker()
    checker.feed(f'<div class="atomic-markdown" style="{md._CONTAINER_STYLE}">{cleaned}</div>')
    # Links whose href was removed are reported; nothing else may be.
    assert [p for p in checker.problems if p != "link without href"] == []
    for tag, attrs in checker.tags:
        assert tag != "a" or attrs.get("rel") == "noopener noreferrer"


# --- streaming ----------------------------------------------------------------------------


def test_unclosed_code_fence_renders_the_code_so_far() -> None:
    c = check("Here:\n\n```python\ndef f():\n    return 1")
    assert "def f():\n    return 1" in c.visible


def test_half_a_table_renders_without_raising() -> None:
    for partial in ("| a | b |", "| a | b |\n|--", "| a | b |\n|---|---|\n| 1 |", "| a |\n|-"):
        check(partial)


def test_dangling_markup_renders_without_raising() -> None:
    for partial in ("**bold", "[link](https://exa", "![img](", "> quote\n>", "- [", "<scr", "&#1"):
        check(partial)


def _fresh(text: str) -> str:
    body = md._render_full(md._normalise(text)).html
    return f'<div class="atomic-markdown" style="{md._CONTAINER_STYLE}">{body}</div>'


STREAMED = """# Plan
Some intro with a [link](https://example.com) and `code`.
#tag is not a heading

- item one
- item two

- loose item after a blank
  continuation

    indented code
    more

| a | b |
|---|--:|
| 1 | 2 |

para
===

> quote
lazy line

```python
def f(x):

    return x  # blank line inside the fence
```

1. one
2. two
   - nested

1. loose ordered

2. second item after a blank

#
#heading-ish
text after

~~~
tilde fence
~~~
- [ ] task
- [x] done

Final **words**.
"""

REFERENCES = """Intro [late][r] here.

A paragraph.

- a list

[r]: https://example.com/late
More text.
"""


@pytest.mark.parametrize("doc", [STREAMED, STREAMED.replace("\n", "\r\n"), REFERENCES])
def test_streamed_prefixes_render_exactly_like_a_fresh_render(doc: str) -> None:
    md._RECENT.clear()
    for end in range(1, len(doc) + 1):
        prefix = doc[:end]
        assert render_markdown(prefix) == _fresh(prefix), repr(prefix[-40:])


FRAGMENTS = [
    "para", "#", "#tag", "# h", "-", "- item", "  indented", "    code", "1.", "1. one",
    "2. two", "* star", "> quote", "lazy", "```", "```py", "~~~", "x = 1", "| a | b |",
    "|---|---|", "| 1 | 2 |", "===", "---", "***", "[r]: https://e.x", "[r] ref",
    "**b", "`c", "[l](https://e.x)", "- [ ] t", "\t- tab", "",
]  # fmt: skip


@pytest.mark.parametrize("seed", range(12))
def test_random_streamed_documents_render_exactly_like_a_fresh_render(seed: int) -> None:
    rng = random.Random(seed)
    lines = [rng.choice(FRAGMENTS) for _ in range(40)]
    doc = "\n".join(lines) + "\n"
    md._RECENT.clear()
    for end in range(1, len(doc) + 1):
        assert render_markdown(doc[:end]) == _fresh(doc[:end]), repr(doc[:end])


def test_two_answers_streaming_at_once_both_render_correctly() -> None:
    md._RECENT.clear()
    other = "Another answer\n\n" + REFERENCES + "\n\n" + STREAMED
    for end in range(1, len(STREAMED) + 1, 7):
        for doc in (STREAMED, other):
            assert render_markdown(doc[:end]) == _fresh(doc[:end])


def test_rerendering_the_same_text_returns_the_same_html() -> None:
    assert render_markdown(STREAMED) == render_markdown(STREAMED) == _fresh(STREAMED)


def test_a_20_kb_mixed_document_renders() -> None:
    section = (
        "## Step {i}\n\nSome **bold**, *italic*, `code` and a [link](https://example.com/{i}).\n"
        "- [ ] task\n- item\n  - nested\n\n> quote\n\n| a | b |\n|---|--:|\n| {i} | <b>x</b> |\n\n"
        '```python\ndef handler_{i}(event):\n    return {{"status": 200}}\n```\n\n'
    )
    doc = ""
    i = 0
    while len(doc) < 20_000:
        doc += section.format(i=i)
        i += 1
    c = check(doc)
    assert len(tags_of(c, "pre")) == i
    assert len(tags_of(c, "table")) == i
    assert f"handler_{i - 1}" in c.visible


def test_raw_html_is_off_both_as_an_option_and_as_parser_rules() -> None:
    assert md._MD.options["html"] is False
    active = md._MD.get_active_rules()
    assert "html_block" not in active["block"] and "html_inline" not in active["inline"]


# --------------------------------------------------------------------------- maths


def test_dollar_maths_renders_as_mathml() -> None:
    c = check("Energy $E=mc^2$, and on its own line:\n\n$$\\frac{a}{b}$$\n")
    out = render_markdown("Energy $E=mc^2$, and on its own line:\n\n$$\\frac{a}{b}$$\n")
    assert '<math xmlns="http://www.w3.org/1998/Math/MathML" display="inline">' in out
    assert '<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">' in out
    assert "<msup><mi>c</mi><mn>2</mn></msup>" in out and "<mfrac>" in out
    assert "$" not in c.visible


def test_dollars_that_are_not_maths_stay_text() -> None:
    for text in ("It costs $5 or $6.", "Set $HOME and $PATH first.", "a $ b $ c"):
        out = render_markdown(text)
        assert "<math" not in out, text
        assert text in check(text).visible


@pytest.mark.parametrize(
    "latex",
    [
        r"$\href{javascript:window.__pwned='math'}{click}$",
        r"$\style{position:fixed;top:0;left:0;width:100%;height:100%}{x}$",
        r"$\text{<img src=x onerror=alert(1)>}$",
        r"$\text{<script>window.__pwned=1</script>}$",
        r"$$\class{x}{y}\cssId{z}{w}$$",
        r"$\unknowncommand{x}$",
    ],
)
def test_latex_injection_stays_inert(latex: str) -> None:
    out = render_markdown(latex)
    lowered = out.lower()
    for bad in (
        "href",
        "javascript:",
        "position:fixed",
        "onerror",
        "<img",
        "<script",
        " id=",
        'class="x',
    ):
        assert bad not in lowered.replace('class="atomic-markdown"', ""), (bad, out)
    check(latex)  # every tag and attribute is allowed


def test_the_renders_kept_for_streams_hold_at_most_their_budget_but_always_the_newest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(md, "RECENT_RENDERS_CHARS", 1000)
    md._RECENT.clear()
    small = [f"Answer {n}: short.\n\nMore of it." for n in range(3)]
    for text in small:
        render_markdown(text)
    assert [r.text for r in md._RECENT] == small[::-1]
    big = "A long answer line.\n" * 200  # 4,000 characters: over the budget alone
    render_markdown(big)
    assert [r.text for r in md._RECENT] == [big]  # the newest, whatever its size
    render_markdown(small[0])
    assert [r.text for r in md._RECENT] == [small[0]]  # the big one does not fit beside it


def test_a_text_rendered_after_the_renders_were_forgotten_renders_exactly_as_before() -> None:
    md._RECENT.clear()
    half = STREAMED[: len(STREAMED) // 2]
    render_markdown(half)
    assert md.forget_recent_renders() == len(md._normalise(half))
    assert md._RECENT == [] and md.forget_recent_renders() == 0
    assert render_markdown(STREAMED) == _fresh(STREAMED)
