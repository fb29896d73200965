"""Terminal escape codes in agent text: stripped, or shown as styled spans and never as markup."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from atomic_jupyter.ui.ansi import Style, ansi_spans, ansi_to_html, has_ansi, strip_ansi

ESC = "\x1b"
CSI = "\x1b["

# Exactly the declarations ansi_to_html writes.
_COLOUR = (
    r"(?:#[0-9a-f]{6}"
    r"|rgb\((?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d), (?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d), (?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\)"
    r"|var\(--jp-ui-inverse-font-color0, #fff\)|var\(--jp-inverse-layout-color0, #111\))"
)
_DECLARATION = (
    rf"(?:color: {_COLOUR}|background-color: {_COLOUR}|font-weight: bold|opacity: 0\.7"
    r"|font-style: italic|text-decoration: (?:underline|line-through|underline line-through))"
)
STYLE_VALUE = re.compile(rf"{_DECLARATION}(?:; {_DECLARATION})*")
CLASS_VALUE = re.compile(
    r"aj-ansi(?: (?:ansi-(?:black|red|green|yellow|blue|magenta|cyan|white)(?:-intense)?-(?:fg|bg)"
    r"|ansi-default-inverse-(?:fg|bg)|ansi-bold|ansi-underline))*"
)
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


class _Spans(HTMLParser):
    """Collects the text of HTML and fails on anything but our own spans."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.styles: list[str] = []
        self.depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        assert tag == "span", tag
        assert [name for name, _ in attrs] == ["class", "style"], attrs
        values = dict(attrs)
        assert values["class"] is not None and CLASS_VALUE.fullmatch(values["class"]), attrs
        assert values["style"] is not None and STYLE_VALUE.fullmatch(values["style"]), attrs
        assert self.depth == 0, "spans are never nested"
        self.depth += 1
        self.styles.append(values["style"])

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        raise AssertionError(f"self-closing tag {tag}")

    def handle_endtag(self, tag: str) -> None:
        assert tag == "span" and self.depth == 1, tag
        self.depth -= 1

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def handle_comment(self, data: str) -> None:
        raise AssertionError(f"comment {data!r}")

    def handle_decl(self, decl: str) -> None:
        raise AssertionError(f"declaration {decl!r}")

    def handle_pi(self, data: str) -> None:
        raise AssertionError(f"processing instruction {data!r}")

    def unknown_decl(self, data: str) -> None:
        raise AssertionError(f"unknown declaration {data!r}")


def parse(markup: str) -> _Spans:
    """Parse ``markup``, asserting it holds only our spans, and return the parser."""
    parser = _Spans()
    parser.feed(markup)
    parser.close()
    assert parser.depth == 0
    # Every '<' in the markup opens one of our tags; every '>' closes one.
    assert markup.count("<") == markup.count(">") == 2 * len(parser.styles)
    return parser


def text_of(markup: str) -> str:
    return "".join(parse(markup).text)


def style_of(markup: str) -> str:
    """The style of the one span in ``markup``."""
    styles = parse(markup).styles
    assert len(styles) == 1, markup
    return styles[0]


# --- strip_ansi -------------------------------------------------------------------------------


def test_plain_text_is_unchanged() -> None:
    text = "plain <b>text</b> & \"quotes\" 'too'\n\tindented ✓"
    assert strip_ansi(text) == text
    assert not has_ansi(text)
    assert ansi_to_html(text) == html.escape(text, quote=True)


def test_has_ansi() -> None:
    assert has_ansi(f"{CSI}31mred")
    assert has_ansi("\x9b31mred")
    assert has_ansi(ESC)
    assert not has_ansi("a\rb\x07")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"{CSI}31mred{CSI}0m", "red"),
        (f"{CSI}mreset{CSI};m", "reset"),
        ("\x9b1;32mgreen\x9b0m", "green"),
        (f"a{CSI}2Kb{CSI}1Ac{CSI}10;20Hd{CSI}Je{CSI}?25lf{CSI}?25hg{CSI}>4;1mh", "abcdefgh"),
        (f"{ESC}]0;window title\x07after", "after"),
        (f"{ESC}]2;title{ESC}\\after", "after"),
        (f"{ESC}]8;;https://evil.example/x{ESC}\\the link{ESC}]8;;{ESC}\\ after", "the link after"),
        (f"{ESC}]8;id=1;https://x.example\x07link{ESC}]8;;\x07", "link"),
        (f"{ESC}(Bcharset{ESC})0{ESC}7{ESC}8{ESC}c{ESC}=", "charset"),
        (f"{ESC}Pq#0;2;0;0;0{ESC}\\dcs gone", "dcs gone"),
        (f"{ESC}_apc{ESC}\\{ESC}^pm{ESC}\\{ESC}Xsos{ESC}\\x", "x"),
        ("\x9d0;title\x9cafter", "after"),
        ("one\r\ntwo\rthree\r\n", "one\ntwothree\n"),
        ("bell\x07 back\x08space nul\x00 del\x7f c1\x85", "bell backspace nul del c1"),
        ("tab\tand\nnewline", "tab\tand\nnewline"),
        # Cut off at the end: dropped.
        (f"text{CSI}38;2;1", "text"),
        (f"text{ESC}", "text"),
        (f"text{ESC}]8;;https://x.example", "text"),
        (f"text{ESC}(", "text"),
        # A broken CSI loses what was read of it; the rest is text.
        (f"a{CSI}31\nb", "a\nb"),
        (f"a{CSI}1;é", "aé"),
        (f"a{ESC}\nb", "a\nb"),
        # An ESC inside an OSC ends it and starts a sequence of its own.
        (f"{ESC}]0;title{CSI}1mbold", "bold"),
    ],
)
def test_strip_ansi(text: str, expected: str) -> None:
    assert strip_ansi(text) == expected
    assert text_of(ansi_to_html(text)) == expected


def test_the_status_line_example() -> None:
    text = "\x1b[38;2;181;189;104m✓\x1b[39m ready"
    assert strip_ansi(text) == "✓ ready"
    assert ansi_to_html(text) == (
        '<span class="aj-ansi" style="color: rgb(181, 189, 104)">✓</span> ready'
    )


def test_hyperlink_keeps_its_text_and_loses_its_url() -> None:
    text = (
        f"see {ESC}]8;;https://evil.example/?a=<b>{ESC}\\{CSI}4mthe docs{CSI}24m{ESC}]8;;{ESC}\\."
    )
    markup = ansi_to_html(text)
    assert "evil" not in markup
    assert "<a" not in markup and "href" not in markup
    assert text_of(markup) == "see the docs."
    assert 'style="text-decoration: underline">the docs</span>' in markup


# --- SGR ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "style", "classes"),
    [
        ("1", "font-weight: bold", ["ansi-bold"]),
        ("2", "opacity: 0.7", []),
        ("3", "font-style: italic", []),
        ("4", "text-decoration: underline", ["ansi-underline"]),
        ("4:3", "text-decoration: underline", ["ansi-underline"]),
        ("9", "text-decoration: line-through", []),
        ("4;9", "text-decoration: underline line-through", ["ansi-underline"]),
        ("31", "color: #e75c58", ["ansi-red-fg"]),
        ("30", "color: #3e424d", ["ansi-black-fg"]),
        ("37", "color: #c5c1b4", ["ansi-white-fg"]),
        ("91", "color: #b22b31", ["ansi-red-intense-fg"]),
        ("97", "color: #a1a6b2", ["ansi-white-intense-fg"]),
        ("42", "background-color: #00a250", ["ansi-green-bg"]),
        ("104", "background-color: #0065ca", ["ansi-blue-intense-bg"]),
        ("1;33;44", "color: #ddb62b; background-color: #208ffb; font-weight: bold",
         ["ansi-yellow-fg", "ansi-blue-bg", "ansi-bold"]),
        # 256 colours: 0-15 are the themed palette, then the cube, then the greys.
        ("38;5;1", "color: #e75c58", ["ansi-red-fg"]),
        ("38;5;9", "color: #b22b31", ["ansi-red-intense-fg"]),
        ("48;5;6", "background-color: #60c6c8", ["ansi-cyan-bg"]),
        ("38;5;16", "color: rgb(0, 0, 0)", []),
        ("38;5;196", "color: rgb(255, 0, 0)", []),
        ("38;5;67", "color: rgb(95, 135, 175)", []),
        ("48;5;231", "background-color: rgb(255, 255, 255)", []),
        ("38;5;232", "color: rgb(8, 8, 8)", []),
        ("38;5;255", "color: rgb(238, 238, 238)", []),
        ("38:5:208", "color: rgb(255, 135, 0)", []),
        # True colour, with semicolons and colons.
        ("38;2;1;2;3", "color: rgb(1, 2, 3)", []),
        ("48;2;255;0;10", "background-color: rgb(255, 0, 10)", []),
        ("38:2::10:20:30", "color: rgb(10, 20, 30)", []),
        ("38:2:0:10:20:30", "color: rgb(10, 20, 30)", []),
        ("38:2:10:20:30", "color: rgb(10, 20, 30)", []),
        ("48:2::4:5:6", "background-color: rgb(4, 5, 6)", []),
        ("38;2;;;", "color: rgb(0, 0, 0)", []),
        # An extended colour's parameters are used up by it, not read as codes.
        ("38;5;1;4", "color: #e75c58; text-decoration: underline", ["ansi-red-fg", "ansi-underline"]),
        ("38;2;1;2;3;1", "color: rgb(1, 2, 3); font-weight: bold", ["ansi-bold"]),
        ("38;5;999;1", "font-weight: bold", ["ansi-bold"]),
        # Inverse swaps the colours; a default colour becomes the theme's inverse colour.
        ("31;42;7", "color: #00a250; background-color: #e75c58", ["ansi-green-fg", "ansi-red-bg"]),
        ("7", "color: var(--jp-ui-inverse-font-color0, #fff); "
              "background-color: var(--jp-inverse-layout-color0, #111)",
         ["ansi-default-inverse-fg", "ansi-default-inverse-bg"]),
        ("7;31", "color: var(--jp-ui-inverse-font-color0, #fff); background-color: #e75c58",
         ["ansi-red-bg", "ansi-default-inverse-fg"]),
    ],
)  # fmt: skip
def test_sgr(params: str, style: str, classes: list[str]) -> None:
    markup = ansi_to_html(f"{CSI}{params}mX{CSI}0m")
    assert markup == f'<span class="{" ".join(["aj-ansi", *classes])}" style="{style}">X</span>'
    assert style_of(markup) == style


@pytest.mark.parametrize(
    ("params", "reset"),
    [
        ("1", "22"),
        ("2", "22"),
        ("1;2", "22"),
        ("3", "23"),
        ("4", "24"),
        ("4", "4:0"),
        ("7", "27"),
        ("9", "29"),
        ("31", "39"),
        ("38;5;200", "39"),
        ("38;2;1;2;3", "39"),
        ("41", "49"),
        ("48;2;1;2;3", "49"),
        ("1;3;4;7;9;31;42", "0"),
        ("1;3;4;7;9;31;42", ""),
        ("1;3;4;7;9;31;42", "22;23;24;27;29;39;49"),
    ],
)
def test_sgr_resets(params: str, reset: str) -> None:
    assert ansi_to_html(f"{CSI}{params}m{CSI}{reset}mplain") == "plain"
    assert ansi_spans(f"{CSI}{params}mA{CSI}{reset}mB")[-1] == ("B", Style())


def test_styles_accumulate_and_runs_merge() -> None:
    text = f"{CSI}1mbold {CSI}31mred {CSI}1m{CSI}Kstill{CSI}22m plain red{CSI}0m end"
    assert ansi_spans(text) == [
        ("bold ", Style(bold=True)),
        ("red still", Style(fg=1, bold=True)),
        (" plain red", Style(fg=1)),
        (" end", Style()),
    ]
    assert text_of(ansi_to_html(text)) == "bold red still plain red end"


@pytest.mark.parametrize(
    "params",
    [
        "38;2;999999999999;1;2",
        "38;2;256;0;0",
        "38;2;1;2",
        "38;2",
        "38;5",
        "38;5;256",
        "38",
        "48;7",
        "38:2::1",
        "38:5",
        "38:9:1",
        "38:2::1:2:300",
        "9" * 5000,
        "1" + "0" * 5000 + "1",
        "38;5;" + "9" * 5000,
        "58;2;1;2;3",
        "5;6;8;21;53;60",
        "?1",
        ">4;2",
        "1<2",
        "4:9",
    ],
)
def test_malformed_sgr_is_ignored(params: str) -> None:
    assert ansi_to_html(f"{CSI}{params}mtext") == "text"


def test_sgr_only_with_final_m() -> None:
    assert ansi_to_html(f"{CSI}31Htext") == "text"
    assert ansi_to_html(f"{CSI}31 mtext") == "text"


# --- hostile input ----------------------------------------------------------------------------

HOSTILE = [
    f"{CSI}31m<script>alert(1)</script>",
    f"{CSI}1m<img src=x onerror=alert(1)>{CSI}0m",
    f'{CSI}38;2;1;2;3" onmouseover="x"mtext',
    f"{CSI}38;2;1;2;3' onmouseover='x'mtext",
    f'{CSI}38;2;1;2;3;"><script>alert(1)</script>m',
    f"{CSI}38;2;1;2;3;background:url(javascript:x)m",
    f'{CSI}38:2::1:2:3;"style=x"m',
    f"{CSI}31;</span><img src=x onerror=alert(1)>m",
    f"{CSI}31m{ESC}]8;;javascript:alert(1){ESC}\\<a href=x>click</a>{ESC}]8;;{ESC}\\",
    f"{CSI}4m&lt;b&gt; &amp; &#60;script&#62; \"'",
    f"{CSI}31m<!-- comment --><![CDATA[x]]><?pi x?><!DOCTYPE html>",
    f"{CSI}7m</span></span><span style='x'>",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_input_never_becomes_markup(text: str) -> None:
    markup = ansi_to_html(text)
    assert text_of(markup) == strip_ansi(text)
    assert "<script" not in markup and "<img" not in markup and "<a " not in markup


def test_a_quote_in_a_sequence_cannot_reach_the_style_attribute() -> None:
    markup = ansi_to_html(f'{CSI}38;2;1;2;3" onmouseover="x"mtext')
    # The quote is an intermediate byte and 'o' the final byte: a CSI that is not SGR, dropped.
    assert markup == "nmouseover=&quot;x&quot;mtext"


# --- properties --------------------------------------------------------------------------------

_FRAGMENTS = [
    ESC, CSI, "\x9b", "\x9d", "\x9c", "\x90", f"{ESC}]", f"{ESC}]8;;", f"{ESC}\\", "\x07",
    "[", "]", ";", ":", "::", "m", "38", "48", "2", "5", "0", "1", "4", "7", "255", "256",
    "999999999999", "(", "B", "?", ">", "<", "&", '"', "'", "\r", "\n", "\r\n", "\t", "\x08",
    "\x00", "\x7f", " ", "<script>", "</span>", "&amp;", "✓", "\U0001f680", "\u2028",
]  # fmt: skip
_sgr = st.lists(
    st.integers(0, 300).map(str) | st.sampled_from(["", "38;5", "38;2", "48;5", "48;2", "38:2:"]),
    max_size=8,
).map(lambda params: f"{CSI}{';'.join(params)}m")
texts = st.lists(
    st.sampled_from(_FRAGMENTS)
    | _sgr
    | st.text(st.characters(codec=None, exclude_categories=["Cs"]), max_size=6),
    max_size=30,
).map("".join)


@settings(max_examples=100, deadline=None)
@given(texts)
def test_properties(text: str) -> None:
    stripped = strip_ansi(text)
    assert not CONTROL.search(stripped)
    assert strip_ansi(stripped) == stripped
    markup = ansi_to_html(text)
    assert text_of(markup) == stripped
    spans = ansi_spans(text)
    assert "".join(chunk for chunk, _ in spans) == stripped
    assert all(chunk for chunk, _ in spans)
    assert all(a[1] != b[1] for a, b in zip(spans, spans[1:], strict=False))


@settings(max_examples=50, deadline=None)
@given(st.text(st.characters(codec=None, exclude_categories=("Cs", "Cc"))))
def test_text_without_controls_is_only_escaped(text: str) -> None:
    assert strip_ansi(text) == text
    assert ansi_to_html(text) == html.escape(text, quote=True)
