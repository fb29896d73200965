"""The registry of every place agent-supplied text reaches the page, each shown as text.

Each entry injects a payload at one place, the way the agent would send it (through
``AgentSession.feed``: the same framing, decoding and dispatch as the agent's stdout), renders
the widgets, and checks that no widget holds the payload as markup while a person can still
read it. The browser suite (tests/browser) checks the same payloads in a real page.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from html.parser import HTMLParser

import ipywidgets as w
import pytest

from atomic_jupyter.notebook.presentation import view_of
from atomic_jupyter.session.runs import PromptRun
from atomic_jupyter.session.session import AgentSession
from atomic_jupyter.transport.launch import LaunchSpec
from atomic_jupyter.ui.output_widget import OutputWidget
from atomic_jupyter.ui.panel_parts import panel_record
from atomic_jupyter.ui.record import run_record
from tests.harness.output_page import page_html, page_text


def payload(place: str) -> str:
    return f'<img src=x onerror="window.__pwned=\'{place}\'"><script>window.__pwned="{place}"</script>$\\style{{color:red}}{{{place}}}$'


def line(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode() + b"\n"


def ui(method: str, **fields: object) -> bytes:
    return line(
        {
            "type": "extension_ui_request",
            "id": f"id-{method}-{len(fields)}-{id(fields)}",
            "method": method,
            **fields,
        }
    )


def tool_events(place: str) -> bytes:
    return (
        line({"type": "agent_start"})
        + line(
            {
                "type": "tool_execution_start",
                "toolCallId": "t1",
                "toolName": payload(place + "-name"),
                "args": {"command": payload(place + "-args")},
            }
        )
        + line(
            {
                "type": "tool_execution_end",
                "toolCallId": "t1",
                "toolName": "bash",
                "result": {"content": [{"type": "text", "text": payload(place + "-output")}]},
                "isError": False,
            }
        )
    )


def assistant(place: str) -> bytes:
    message = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": payload(place + "-thinking")},
            {"type": "text", "text": payload(place + "-markdown")},
        ],
        "stopReason": "error",
        "errorMessage": payload(place + "-error"),
    }
    return line({"type": "message_start", "message": {"role": "assistant", "content": []}}) + line(
        {"type": "message_end", "message": message}
    )


#: Every place agent text reaches the page: (name, bytes the agent writes, markers to see).
REGISTRY: list[tuple[str, Callable[[], bytes], list[str]]] = [
    ("panel title (setTitle)", lambda: ui("setTitle", title=payload("title")), ["title"]),
    (
        "custom entry (pi.appendEntry)",
        lambda: line(
            {
                "type": "entry_appended",
                "entry": {
                    "type": "custom",
                    "customType": payload("entrytype"),
                    "data": payload("entrydata"),
                },
            }
        ),
        ["entrytype", "entrydata"],
    ),
    (
        "status bar (setStatus)",
        lambda: ui("setStatus", statusKey="k", statusText=payload("status")),
        ["status"],
    ),
    (
        "widget lines (setWidget)",
        lambda: ui("setWidget", widgetKey="k", widgetLines=[payload("widget")]),
        ["widget"],
    ),
    (
        "notification (notify)",
        lambda: ui("notify", message=payload("notify"), notifyType="error"),
        ["notify"],
    ),
    ("editor (set_editor_text)", lambda: ui("set_editor_text", text=payload("editor")), ["editor"]),
    (
        "select title and options",
        lambda: ui("select", title=payload("select"), options=[payload("option")]),
        ["select", "option"],
    ),
    (
        "select with many options",
        lambda: ui("select", title="many", options=[payload(f"opt{i}") for i in range(10)]),
        ["opt3"],
    ),
    (
        "confirm title and message",
        lambda: ui("confirm", title=payload("confirm"), message=payload("message")),
        ["confirm", "message"],
    ),
    (
        "input title and placeholder",
        lambda: ui("input", title=payload("input"), placeholder=payload("placeholder")),
        ["input", "placeholder"],
    ),
    (
        "editor dialog title and prefill",
        lambda: ui("editor", title=payload("editdlg"), prefill=payload("prefill")),
        ["editdlg", "prefill"],
    ),
    ("diagnostics (garbage lines)", lambda: payload("garbage").encode() + b"\n", ["garbage"]),
    (
        "extension errors",
        lambda: line(
            {
                "type": "extension_error",
                "extensionPath": payload("extpath"),
                "event": "x",
                "error": payload("exterror"),
            }
        ),
        ["exterror"],
    ),
    ("transcript: tool cards", lambda: tool_events("tool"), ["tool-args", "tool-output"]),
    (
        "transcript: thinking, Markdown, errors",
        lambda: assistant("answer"),
        ["answer-thinking", "answer-markdown", "answer-error"],
    ),
    (
        "transcript: notes",
        lambda: line(
            {
                "type": "auto_retry_start",
                "attempt": 1,
                "maxAttempts": 3,
                "delayMs": 0,
                "errorMessage": payload("retry"),
            }
        ),
        ["retry"],
    ),
]


class _Markup(HTMLParser):
    """Collects the tags and attributes of an HTML fragment."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))


def dangerous_markup(value: str) -> list[str]:
    """Elements or attributes in ``value`` that could run script or load anything."""
    parser = _Markup()
    parser.feed(value)
    found = []
    for tag, attrs in parser.tags:
        if tag in ("script", "img", "iframe", "svg", "object", "embed", "style", "link", "form"):
            found.append(tag)
        found += [
            f"{tag}[{k}]"
            for k, v in attrs
            if k.startswith("on") or (v or "").strip().lower().startswith("javascript:")
        ]
    return found


def walk(widget: w.Widget) -> list[w.Widget]:
    found = [widget]
    for child in getattr(widget, "children", ()):
        found += walk(child)
    return found


def markup_of(widget: w.Widget) -> str | None:
    """The HTML a widget puts in the page (an output of ours: as its module draws it)."""
    if isinstance(widget, OutputWidget):
        return page_html(widget)
    if isinstance(widget, w.HTML):
        return str(widget.value)
    return None


def visible(widget: w.Widget) -> str:
    """What a person reads in a widget (HTML: tags dropped, entities decoded)."""
    if isinstance(widget, OutputWidget):
        return page_text(widget)
    if isinstance(widget, w.HTML):
        return html.unescape(re.sub(r"<[^>]*>", "", widget.value))
    texts = [getattr(widget, name, "") for name in ("value", "description", "placeholder")]
    if isinstance(widget, w.Dropdown):
        texts += [label for label, _ in widget.options]
    return " ".join(t for t in texts if isinstance(t, str))


@pytest.mark.parametrize("name, data, markers", REGISTRY, ids=[entry[0] for entry in REGISTRY])
def test_agent_text_is_shown_as_text(
    name: str, data: Callable[[], bytes], markers: list[str]
) -> None:
    session = AgentSession("untrusted", LaunchSpec(command=["true"]))
    session.state = "starting"  # never started: bytes go straight to the client, dialogs stay open
    run = PromptRun("r1", "prompt")
    run.shown = True
    session.tracker.sent(run)
    view = view_of(session)
    roots = [session.panel, view.run_area(run)]
    session.client.receive_data(data())
    view.render_run(run)
    view.pump()  # the dialogs of no prompt, in the panel
    widgets = [x for root in roots if root is not None for x in walk(root)]
    for widget in widgets:
        markup = markup_of(widget)
        if markup is not None:
            assert dangerous_markup(markup) == [], (name, markup[:300])
            assert not isinstance(widget, w.HTMLMath)
        assert not isinstance(widget, w.Label), f"{name}: a Label typesets LaTeX"
    shown = "\n".join(visible(x) for x in widgets)
    for marker in markers:
        expected = payload(marker)
        if (
            marker == "answer-markdown"
        ):  # its $...$ is maths now (MathML, no style): the rest is text
            expected = expected.split("$")[0]
        assert expected in shown, f"{name}: {marker} is not visible as text"
    # The static records of the same outputs (the saved notebook's) hold no live markup either.
    for record in (run_record(run), panel_record(session, [run])):
        assert dangerous_markup(record.html) == [], (name, record.html[:300])
        assert "style=" not in "".join(re.findall(r"<math.*?</math>", record.html, re.S))


def test_a_custom_entry_of_no_run_is_shown_in_the_panel_and_its_record() -> None:
    session = AgentSession("entries", LaunchSpec(command=["true"]))
    session.state = "starting"  # never started: bytes go straight to the client
    view = view_of(session)
    entry = {"type": "custom", "customType": "status-card", "data": {"message": "<i>ok</i>"}}
    session.client.receive_data(line({"type": "entry_appended", "entry": entry}))
    session.client.receive_data(line({"type": "entry_appended", "entry": {"type": "usage"}}))
    assert session.extension_ui.entries == [("status-card", {"message": "<i>ok</i>"})]
    view.pump()
    shown = page_html(view.panel)
    assert shown.count('class="atomic-entry"') == 1 and "<i>ok</i>" in visible(view.panel)
    record = panel_record(session)
    assert "[entry status-card]" in record.plain and "&lt;i&gt;ok&lt;/i&gt;" in record.html
