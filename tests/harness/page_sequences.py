"""Recorded conversations between an output's widget and the page: what the Python tests and
the page module's own tests (``tests/page/output_widget.test.mjs``) share.

Each scenario drives the kernel's real side (an :class:`~atomic_jupyter.ui.output_widget.
OutputWidget`, fed by a :class:`~atomic_jupyter.ui.run_output.RunOutput` or
:class:`~tests.harness.dialog_output.DialogOutput` with real dialogs, or by page content
of the panel's parts) and writes down, step by step:

- ``{"down": message}``: a message the kernel sent, as sent;
- ``{"expect": facts}``: what a person sees on the page then (``text``: strings the output
  shows, ``absent``: strings it does not, ``count``: ``{selector: n}``, ``value``:
  ``{selector: a field's value}``, ``disabled``: ``{selector: bool}``);
- ``{"act": what, "up": messages}``: what a person does (``selector``, ``nth``, ``action``
  ``click|type|choose|check|key``, ``value``, ``key``, ``shift``) and the messages the page
  sends for it, each with the name of the typed message the kernel reads it as
  (``reads_as``). The kernel is handed those messages, so the ``down`` steps after an ``act``
  are the kernel's answer to it;
- ``{"sends": messages}``: what the page sent of itself since the step before (its ``ready``
  when its model is made, first, and when it missed a message), handed to the kernel too.

``tests/unit/ui/test_page_sequences.py`` checks that each file in ``tests/page/sequences/`` is what the
kernel sends today (``ATOMIC_UPDATE_PAGE_SEQUENCES=1`` writes them again) and that every ``up``
message reads as recorded; the page's tests replay the files into the real module in a DOM.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from atomic_jupyter.protocol.messages import DialogRequest, parse_message
from atomic_jupyter.session.citations import expand
from atomic_jupyter.session.dialogs import Dialog
from atomic_jupyter.session.runs import PromptRun
from atomic_jupyter.ui.output_widget import OutputWidget
from atomic_jupyter.ui.page_protocol import (
    PROTOCOL_VERSION,
    EditorControls,
    KeyField,
    ModelOption,
    PageContent,
    SettingsControls,
    read_page_message,
)
from atomic_jupyter.ui.run_output import RunOutput

from .dialog_output import DialogOutput

__all__ = ["SCENARIOS", "SEQUENCES_DIR", "Recorder", "record"]

#: Where the recorded sequences are kept (one JSON file per scenario).
SEQUENCES_DIR = Path(__file__).resolve().parent.parent / "page" / "sequences"


class Recorder:
    """Writes down one conversation with ``widget`` (see the module's docstring)."""

    def __init__(self, widget: OutputWidget) -> None:
        self.widget = widget
        self.steps: list[dict[str, Any]] = []
        send = widget.send

        def sent(message: dict[str, Any], buffers: Any = None) -> None:
            self.steps.append({"down": json.loads(json.dumps(message))})
            send(message, buffers)

        widget.send = sent  # type: ignore[method-assign]
        # The page's model is made now: a widget that sent some already is asked for the
        # whole output, as a page made late asks (its snapshot is the first step down).
        self.sends({"type": "ready", "seq": 0})

    def expect(self, **facts: Any) -> None:
        """What the page shows now."""
        self.steps.append({"expect": facts})

    def act(self, what: dict[str, Any], *up: dict[str, Any]) -> None:
        """A person does ``what``; the page sends ``up`` (written without the version, which
        every message carries), which the kernel is handed."""
        self._up({"act": what}, up)

    def sends(self, *up: dict[str, Any]) -> None:
        """The page sends ``up`` of itself, which the kernel is handed."""
        self._up({}, up)

    def _up(self, step: dict[str, Any], up: tuple[dict[str, Any], ...]) -> None:
        messages = [{"v": PROTOCOL_VERSION, **message} for message in up]
        read = [read_page_message(message) for message in messages]
        key = "up" if "act" in step else "sends"
        step[key] = messages
        step["reads_as"] = [type(m).__name__ if m is not None else None for m in read]
        self.steps.append(step)
        for message in messages:
            self.widget._handle_custom_msg(message, [])


def _dialog(raw: dict[str, Any], answers: list[dict[str, Any]]) -> Dialog:
    typed = parse_message({"type": "extension_ui_request", **raw})
    assert isinstance(typed, DialogRequest)
    return Dialog(typed, raw, lambda response: answers.append(response.to_dict()))


def _run_output(*dialogs: Dialog, prompt: str = "check the tests") -> RunOutput:
    run = PromptRun("p1", prompt)
    for dialog in dialogs:
        run.transcript.add_dialog(dialog)
    return RunOutput(run, on_stop=lambda: None)


# ------------------------------------------------------------------------------ scenarios


def select_by_button(rec: Callable[[OutputWidget], Recorder]) -> None:
    """A select of two options in a run: one button each; a click answers it, and the page
    then shows the record's form of the dialog."""
    answers: list[dict[str, Any]] = []
    dialog = _dialog(
        {
            "id": "d-select",
            "method": "select",
            "title": "Pick a colour",
            "options": ["red", "blue"],
        },
        answers,
    )
    output = _run_output(dialog)
    r = rec(output.widget)
    output.render()
    r.expect(
        text=["check the tests", "Pick a colour", "red", "blue", "Dismiss"],
        count={".atomic-option": 2, "select": 0},
    )
    r.act(
        {"selector": '[data-dialog="d-select"] .atomic-option', "nth": 1},
        {"type": "dialog", "id": "d-select", "action": "choose", "make_rule": False, "index": 1},
    )
    output.render()
    r.expect(text=["Pick a colour", "→ blue (clicked)"], count={".atomic-dialog-controls": 0})
    assert answers == [{"type": "extension_ui_response", "id": "d-select", "value": "blue"}]


def select_from_a_list_with_a_rule(rec: Callable[[OutputWidget], Recorder]) -> None:
    """A select of twelve options on its own: a list and Submit; "answer this way from now
    on" checked goes with the answer."""
    answers: list[dict[str, Any]] = []
    options = [f"option {i}" for i in range(12)]
    dialog = _dialog(
        {"id": "d-list", "method": "select", "title": "Which one?", "options": options}, answers
    )
    ruled: list[Dialog] = []
    output = DialogOutput(dialog, on_rule=ruled.append)
    r = rec(output.widget)
    output.render()
    r.expect(
        text=["Which one?", "Submit", "Answer dialogs with this title this way"],
        count={"select.atomic-dialog-choice option": 12, ".atomic-option": 0},
        value={"select.atomic-dialog-choice": "0"},
    )
    place = '[data-dialog="d-list"] '
    r.act({"selector": place + ".atomic-make-rule input", "action": "check", "value": True})
    r.act({"selector": place + "select", "action": "choose", "value": "7"})
    r.act(
        {"selector": place + ".atomic-submit"},
        {"type": "dialog", "id": "d-list", "action": "choose", "make_rule": True, "index": 7},
    )
    output.render()
    r.expect(text=["→ option 7 (clicked)"], count={"select": 0})
    assert ruled == [dialog]  # the kernel made the rule of it


def input_sent_with_enter(rec: Callable[[OutputWidget], Recorder]) -> None:
    """An input: typed, then Enter sends it; an answer the dialog refuses says why under the
    controls."""
    answers: list[dict[str, Any]] = []
    dialog = _dialog(
        {"id": "d-input", "method": "input", "title": "Name?", "placeholder": "your name"}, answers
    )
    output = DialogOutput(dialog, on_rule=None)
    r = rec(output.widget)
    output.render()
    r.expect(count={"input.atomic-dialog-input[placeholder='your name']": 1})
    place = '[data-dialog="d-input"] '
    r.act({"selector": place + "input", "action": "type", "value": "Ada ✓"})
    r.act(
        {"selector": place + "input", "action": "key", "key": "Enter"},
        {
            "type": "dialog",
            "id": "d-input",
            "action": "respond",
            "make_rule": False,
            "value": "Ada ✓",
        },
    )
    output.render()
    r.expect(text=["Name?", "→ Ada ✓ (clicked)"], count={"input": 0})
    assert answers == [{"type": "extension_ui_response", "id": "d-input", "value": "Ada ✓"}]


def editor_cancelled_with_escape(rec: Callable[[OutputWidget], Recorder]) -> None:
    """An editor shows its prefill in a text area; Escape cancels."""
    answers: list[dict[str, Any]] = []
    dialog = _dialog(
        {"id": "d-editor", "method": "editor", "title": "Edit the plan", "prefill": "1. a\n2. b"},
        answers,
    )
    output = DialogOutput(dialog, on_rule=None)
    r = rec(output.widget)
    output.render()
    r.expect(value={"textarea.atomic-dialog-editor": "1. a\n2. b"})
    r.act(
        {"selector": '[data-dialog="d-editor"] textarea', "action": "key", "key": "Escape"},
        {"type": "dialog", "id": "d-editor", "action": "cancel", "make_rule": False},
    )
    output.render()
    r.expect(text=["Edit the plan", "cancelled"], count={"textarea": 0})


def confirm_with_text_from_the_agent(rec: Callable[[OutputWidget], Recorder]) -> None:
    """A confirm whose title and message hold markup: drawn as text, never as elements."""
    answers: list[dict[str, Any]] = []
    dialog = _dialog(
        {
            "id": "d-confirm",
            "method": "confirm",
            "title": "<img src=x onerror=alert(1)>",
            "message": "<script>alert(2)</script>\nsecond line",
        },
        answers,
    )
    output = DialogOutput(dialog, on_rule=None)
    r = rec(output.widget)
    output.render()
    r.expect(
        text=["<img src=x onerror=alert(1)>", "<script>alert(2)</script>"],
        count={"img": 0, "script": 0, ".atomic-yes": 1, ".atomic-no": 1},
    )
    r.act(
        {"selector": '[data-dialog="d-confirm"] .atomic-yes'},
        {
            "type": "dialog",
            "id": "d-confirm",
            "action": "respond",
            "make_rule": False,
            "value": True,
        },
    )
    output.render()
    r.expect(count={".atomic-yes": 0, "img": 0, "script": 0})


#: A cited data frame's summary as the kernel writes one (``kernel_values.summarize``): its
#: columns line up only in the code font.
CITED_FRAME = (
    "pandas.DataFrame: 3 rows × 2 columns\n"
    "columns and dtypes:\n"
    "  city        object\n"
    "  population  int64\n"
    "first 3 rows:\n"
    "             city  population\n"
    "0            Oslo      709000\n"
    "1  Rio de Janeiro     6211000\n"
    "2             Ulm      126000"
)


def prompt_sent_with_a_cited_value(rec: Callable[[OutputWidget], Recorder]) -> None:
    """A run that cited a data frame: the prompt as the agent got it, folded under "Sent to
    the agent", is drawn in a pre (the code font), its table's spaces kept."""
    expanded = expand("which city is largest in $`cities`?", lambda expression: CITED_FRAME)
    run = PromptRun("p1", expanded.written)
    run.sent, run.cited = expanded.sent, ("cities",)
    output = RunOutput(run, on_stop=lambda: None)
    r = rec(output.widget)
    output.render()
    r.expect(
        text=[
            "Sent to the agent, with 1 cited value: cities",
            "             city  population\n0            Oslo      709000\n",
            "1  Rio de Janeiro     6211000",
        ],
        count={
            "details.atomic-run-sent pre.atomic-run-sent-text": 1,
            "div.atomic-run-sent-text": 0,
        },
    )


def streamed_answer(rec: Callable[[OutputWidget], Recorder]) -> None:
    """An answer's chunks grow, its tail changes, a reset starts them over; Stop sends the
    run's key."""
    widget = OutputWidget("atomic-run")
    r = rec(widget)
    place = '<div class="atomic-assistant" data-answer="a1"></div>'
    stop = (
        '<button type="button" class="atomic-stop" data-action="stop" data-run="p1/">Stop</button>'
    )
    content = PageContent(["head", "a1"], {"head": f"<p>working {stop}</p>", "a1": place})
    content.chunks = {"a1": ["<p>first</p>"]}
    content.tails = {"a1": "<p>sec</p>"}
    widget.update_page(content)
    r.expect(text=["first", "sec", "Stop"])
    content = content.copy()
    content.chunks = {"a1": ["<p>first</p>", "<p>second</p>"]}
    content.tails = {"a1": "<p>thi</p>"}
    widget.update_page(content)
    r.expect(text=["first", "second", "thi"], absent=["sec\n"])
    content = content.copy()
    content.chunks = {"a1": ["<p>again</p>"]}
    content.tails = {"a1": ""}
    widget.update_page(content)
    r.expect(text=["again"], absent=["first", "second"])
    r.act({"selector": ".atomic-stop"}, {"run": "p1/", "type": "stop"})


def lists_inside_a_block(rec: Callable[[OutputWidget], Recorder]) -> None:
    """Blocks keyed ``K/...`` are drawn inside the block K's ``data-children`` holder, in the
    order sent; a block dropped goes."""
    widget = OutputWidget("atomic-panel")
    r = rec(widget)
    holder = '<div class="list"><b>runs</b><div data-children="runs"></div></div>'
    widget.update_page(
        PageContent(
            ["runs", "runs/1", "runs/2", "end"],
            {"runs": holder, "runs/1": "<p>one</p>", "runs/2": "<p>two</p>", "end": "<p>end</p>"},
        )
    )
    r.expect(text=["runs", "one", "two", "end"], count={"[data-children='runs'] p": 2})
    widget.update_page(
        PageContent(
            ["runs", "runs/2", "runs/1", "end"],
            {"runs": holder, "runs/1": "<p>one</p>", "runs/2": "<p>two</p>", "end": "<p>end</p>"},
        )
    )
    r.expect(count={"[data-children='runs'] p": 2})
    widget.update_page(
        PageContent(
            ["runs", "runs/2", "end"], {"runs": holder, "runs/2": "<p>two</p>", "end": "<p>end</p>"}
        )
    )
    r.expect(absent=["one"], count={"[data-children='runs'] p": 1})


def panel_editor(rec: Callable[[OutputWidget], Recorder]) -> None:
    """The panel's editor: typing is sent as it happens, Shift+Enter sends; the kernel sets
    the text (a new ``rev``) and disables Send when there is no agent."""
    widget = OutputWidget("atomic-panel")
    r = rec(widget)
    editor = EditorControls(
        placeholder="Message the agent…", rows=3, value="", rev=0, disabled=False
    )
    blocks = {"editor": '<div class="atomic-editor-place" data-editor=""></div>'}
    widget.update_page(PageContent(["editor"], dict(blocks), editor=editor))
    r.expect(
        count={"textarea[placeholder='Message the agent…']": 1}, disabled={".atomic-send": False}
    )
    r.act(
        {"selector": "textarea", "action": "type", "value": "hello"},
        {"type": "editor", "value": "hello"},
    )
    r.act(
        {"selector": "textarea", "action": "key", "key": "Enter", "shift": True},
        {"type": "send", "value": "hello"},
    )
    widget.update_page(
        PageContent(["editor"], dict(blocks), editor={**editor, "value": "", "rev": 1})
    )
    r.expect(value={"textarea": ""})
    widget.update_page(
        PageContent(["editor"], dict(blocks), editor={**editor, "rev": 1, "disabled": True})
    )
    r.expect(disabled={".atomic-send": True})


def panel_settings(rec: Callable[[OutputWidget], Recorder]) -> None:
    """The panel's settings: the models grouped by provider with the current one marked, the
    thinking levels, Compact; the key field only when a provider wants a key, emptied as soon
    as its value is sent."""
    widget = OutputWidget("atomic-panel")
    r = rec(widget)
    models = [
        ModelOption(provider="openai", id="gpt", value="openai/gpt", label="GPT"),
        ModelOption(provider="local", id="small", value="local/small", label="Small"),
    ]
    settings = SettingsControls(
        models=models,
        model="openai/gpt",
        levels=["off", "high"],
        level="off",
        disabled=False,
        key=None,
        error="",
    )
    blocks = {"settings": '<div class="atomic-settings-place" data-settings=""></div>'}
    widget.update_page(PageContent(["settings"], dict(blocks), settings=settings))
    r.expect(
        text=["GPT (current)", "Small", "Compact"],
        count={"optgroup": 2, ".atomic-thinking-choice option": 2},
        value={".atomic-model-choice": "openai/gpt", ".atomic-thinking-choice": "off"},
    )
    r.act(
        {"selector": ".atomic-model-choice", "action": "choose", "value": "local/small"},
        {"type": "model", "value": "local/small"},
    )
    r.act({"selector": ".atomic-compact"}, {"type": "compact"})
    keyed = {
        **settings,
        "model": "local/small",
        "key": KeyField(provider="openai", variable="OPENAI_API_KEY", rev=0),
        "error": "could not change the model: no key",
    }
    widget.update_page(PageContent(["settings"], dict(blocks), settings=keyed))  # type: ignore[typeddict-item]
    r.expect(
        text=["API key for openai (OPENAI_API_KEY)", "could not change the model: no key"],
        count={"input.atomic-key-input[type='password']": 1},
    )
    r.act({"selector": ".atomic-key-input", "action": "type", "value": "sk-test"})
    r.act(
        {"selector": ".atomic-key-use"},
        {"type": "key", "value": "sk-test", "keep": False},
    )
    r.expect(value={".atomic-key-input": ""})


def missed_message(rec: Callable[[OutputWidget], Recorder]) -> None:
    """A patch out of order (one was lost): the page asks once for the whole output and draws
    the snapshot it is sent."""
    widget = OutputWidget("atomic-run")
    r = rec(widget)
    widget.update_page(PageContent(["a"], {"a": "<p>one</p>"}))
    widget._seq += 1  # the next patch is lost on the way
    widget.update_page(PageContent(["a", "b"], {"a": "<p>one</p>", "b": "<p>two</p>"}))
    widget.update_page(PageContent(["a", "b"], {"a": "<p>one</p>", "b": "<p>three</p>"}))
    r.expect(text=["one"], absent=["two", "three"])
    r.sends({"type": "ready", "seq": 1})
    r.expect(text=["one", "three"])


#: Every scenario, by the name of its file.
SCENARIOS: dict[str, Callable[[Callable[[OutputWidget], Recorder]], None]] = {
    "select-by-button": select_by_button,
    "select-from-a-list-with-a-rule": select_from_a_list_with_a_rule,
    "input-sent-with-enter": input_sent_with_enter,
    "editor-cancelled-with-escape": editor_cancelled_with_escape,
    "confirm-with-text-from-the-agent": confirm_with_text_from_the_agent,
    "prompt-sent-with-a-cited-value": prompt_sent_with_a_cited_value,
    "streamed-answer": streamed_answer,
    "lists-inside-a-block": lists_inside_a_block,
    "panel-editor": panel_editor,
    "panel-settings": panel_settings,
    "missed-message": missed_message,
}


def record(name: str) -> dict[str, Any]:
    """Run scenario ``name`` against the kernel's side: its sequence, as the file holds it."""
    recorders: list[Recorder] = []

    def rec(widget: OutputWidget) -> Recorder:
        recorders.append(Recorder(widget))
        return recorders[-1]

    scenario = SCENARIOS[name]
    scenario(rec)
    (recorder,) = recorders
    recorder.widget.empty_and_close()
    return {
        "name": name,
        "about": " ".join((scenario.__doc__ or "").split()),
        "protocol": PROTOCOL_VERSION,
        "steps": recorder.steps,
    }
