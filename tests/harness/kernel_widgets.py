"""Finding the product's widgets in a :class:`~tests.harness.kernel_client.BrowserLikeKernel`
the way a person finds them on the page: a dialog in a cell's area, its collapsed line, the
panel's notifications. A finished output's widgets are closed once its record replaces them:
these helpers then read the record, which is what the page shows."""

from __future__ import annotations

import html as html_lib
import re
from dataclasses import dataclass
from typing import Any

from .kernel_client import BrowserLikeKernel
from .output_page import Element, page_html, page_tree
from .widget_text import visible_text

__all__ = [
    "WIDGET_VIEW",
    "PageAnswer",
    "PageDialog",
    "PageOutput",
    "PagePanel",
    "outputs_of",
    "panels",
    "answer_html",
    "answers",
    "dialog_in",
    "element_text",
    "elements",
    "run_state",
    "texts_of",
    "displayed",
    "is_record_copy",
    "live_view",
    "record_copy",
    "notes",
    "outcome_of",
    "outputs_within",
    "page_of",
    "record_of",
    "final_record",
    "last_run_report",
]


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def displayed(kernel: BrowserLikeKernel, output: dict) -> dict:
    """What a browser shows now for a cell's ``display_data`` output: its bundle, as replaced
    by the latest ``update_display_data`` of its display id (sent from any cell)."""
    display_id = (output.get("transient") or {}).get("display_id")
    data = output["data"]
    if display_id is None:
        return data
    for record in kernel.displays:
        if (
            record.msg_type == "update_display_data"
            and record.transient.get("display_id") == display_id
        ):
            data = record.data
    return data


def live_view(outputs: list[dict]) -> dict:
    """The one output of a cell that was displayed as a live widget view (as first shown;
    the updates that came while the cell ran are not displays of their own)."""
    (live,) = [
        o
        for o in outputs
        if o["output_type"] == "display_data" and WIDGET_VIEW in o.get("data", {})
    ]
    return live


def is_record_copy(output: dict) -> bool:
    """Whether a cell's output is the record copy kept beside a live widget (as first shown)."""
    return "atomic-record-copy" in output.get("data", {}).get("text/html", "")


def record_copy(outputs: list[dict]) -> dict:
    """The one record copy among a cell's ``outputs``."""
    (copy,) = [o for o in outputs if o["output_type"] == "display_data" and is_record_copy(o)]
    return copy


@dataclass(frozen=True)
class PageAnswer:
    """One streamed answer as the page draws it."""

    output: str  # the output widget's comm id
    key: str
    html: str


def outputs_within(kernel: BrowserLikeKernel, within: str) -> list[str]:
    """The comm ids of our output widgets at ``within`` (a run's output, the panel): one, or
    none when it is not ours (an output draws what it shows inside itself)."""
    return [within] if within in kernel.tracker.pages else []


def final_record(kernel: BrowserLikeKernel, output: str) -> str | None:
    """The record that replaced the output ``output`` once it was made final (its widget
    closed), or None while it is live. The live view's last patch may be older than the
    record (a run's final render can come after it was made final, and then never comes):
    once replaced, the record is all the page shows."""
    if output in kernel.models:
        return None
    return record_of(kernel, output)


def page_of(kernel: BrowserLikeKernel, output: str) -> str:
    """The HTML the page shows for one of our outputs: its live view, or the record that
    replaced it (:func:`final_record`)."""
    record = final_record(kernel, output)
    return record if record is not None else page_html(kernel.tracker.pages[output])


_TAG = re.compile(r"""<(/?)([a-zA-Z][a-zA-Z0-9-]*)((?:[^>"']|"[^"]*"|'[^']*')*)>""")
_VOID = frozenset({"area", "br", "col", "hr", "img", "input", "source", "wbr"})


def elements(page: str, cls: str) -> list[str]:
    """The elements of ``page`` (HTML, as :func:`page_of` gives it) that carry the class
    ``cls``, outermost first in page order, each as its whole HTML."""
    found: list[tuple[int, str]] = []
    opened: list[tuple[str, int, bool]] = []  # tag, where it starts, whether it is wanted
    for match in _TAG.finditer(page):
        closing, name, attrs = match.group(1), match.group(2).lower(), match.group(3)
        if closing:
            while opened:  # close up to the element this ends (our HTML is well formed)
                tag, start, wanted = opened.pop()
                if wanted:
                    found.append((start, page[start : match.end()]))
                if tag == name:
                    break
            continue
        classes = re.search(r'\bclass="([^"]*)"', attrs)
        wanted = classes is not None and cls in classes.group(1).split()
        if name in _VOID or attrs.rstrip().endswith("/"):
            if wanted:
                found.append((match.start(), match.group(0)))
        else:
            opened.append((name, match.start(), wanted))
    return [html for _, html in sorted(found)]


def element_text(page: str, cls: str) -> str:
    """The visible text of the one element of class ``cls`` in ``page`` (an
    AssertionError when there is none, or more than one)."""
    found = elements(page, cls)
    assert len(found) == 1, f"{len(found)} elements of class {cls!r} in the page"
    return visible_text(found[0])


def texts_of(kernel: BrowserLikeKernel, within: str, cls: str) -> list[str]:
    """The visible text of each element of class ``cls`` that the page draws in our outputs
    at or inside ``within`` (a run's output, the panel), as last shown, in page order."""
    return [
        visible_text(found)
        for output in outputs_within(kernel, within)
        for found in elements(page_of(kernel, output), cls)
    ]


def run_state(kernel: BrowserLikeKernel, output: str) -> str:
    """What a run's header says of it (``sent``, ``working…``, ``done``, ``failed``), as the
    page shows it: its live view's, or once the output is closed, its record's (the record
    replaces the view; a run that ended before the page was ready sent it no more patches)."""
    if output not in kernel.models:
        record = record_of(kernel, output)
        if record is not None:
            return element_text(record, "atomic-run-state")
    return element_text(page_of(kernel, output), "atomic-run-state")


def record_of(kernel: BrowserLikeKernel, output: str) -> str | None:
    """The HTML that replaced the live view of the output widget ``output`` (a comm id) in
    its display (``update_display_data`` of the same display id), or None."""
    display_ids = {
        record.transient.get("display_id")
        for record in kernel.displays
        if record.msg_type == "display_data"
        and (record.data.get(WIDGET_VIEW) or {}).get("model_id") == output
    } - {None}
    shown = None
    for record in kernel.displays:
        if (
            record.msg_type == "update_display_data"
            and record.transient.get("display_id") in display_ids
            and WIDGET_VIEW not in record.data
        ):
            shown = record.data.get("text/html")
    return shown if isinstance(shown, str) else None


def answers(kernel: BrowserLikeKernel, within: str) -> list[PageAnswer]:
    """The streamed answers (one per assistant message) inside ``within``, in page order."""
    found = []
    for output in outputs_within(kernel, within):
        content = kernel.tracker.pages[output].content
        record = final_record(kernel, output)
        if record is not None:  # the record's answers, named as the live view streamed them
            keys = [key for key in content.order if f'data-answer="{key}"' in content.blocks[key]]
            shown = elements(record, "atomic-assistant-text")
            if len(keys) != len(shown):
                keys = [""] * len(shown)
            found += [PageAnswer(output, key, html) for key, html in zip(keys, shown, strict=True)]
            continue
        for key in content.order:
            if f'data-answer="{key}"' in content.blocks.get(key, ""):
                html = "".join(content.chunks.get(key, [])) + content.tails.get(key, "")
                found.append(PageAnswer(output, key, html))
    return found


def answer_html(kernel: BrowserLikeKernel, answer: PageAnswer) -> str:
    """The HTML an answer shows: its chunks and its tail, in order."""
    return answer.html


@dataclass(frozen=True)
class PageDialog:
    """A dialog waiting in one of our outputs, and what a person does to it there."""

    kernel: BrowserLikeKernel
    output: str  # the output widget's comm id
    id: str
    description: dict[str, Any]
    block: str  # the key of the output's block the dialog is drawn in

    @property
    def comm_id(self) -> str:
        """The output the dialog is drawn in."""
        return self.output

    def press(self, action: str, **extra: Any) -> str:
        """Send what the page sends for ``action`` (``choose``, ``respond``, ``cancel``);
        return the message id (see ``kernel.wait_idle``)."""
        message = {"type": "dialog", "id": self.id, "action": action, **extra}
        return self.kernel.send_custom(self.output, message)

    def choose(self, index: int, rule: bool = False) -> str:
        """Click option ``index`` (or pick it and Submit)."""
        return self.press("choose", index=index, make_rule=rule)

    def confirm(self, yes: bool, rule: bool = False) -> str:
        """Click Yes or No."""
        return self.press("respond", value=yes, make_rule=rule)

    def submit(self, text: str, rule: bool = False) -> str:
        """Type ``text`` and Submit."""
        return self.press("respond", value=text, make_rule=rule)

    def cancel(self) -> str:
        """Click Cancel (or press Escape)."""
        return self.press("cancel")


def dialog_in(kernel: BrowserLikeKernel, area_id: str, method: str) -> PageDialog:
    """Wait for a dialog of ``method`` waiting for an answer at or inside ``area_id``."""

    def find() -> PageDialog | None:
        for output in outputs_within(kernel, area_id):
            content = kernel.tracker.pages[output].content
            for dialog_id, described in content.dialogs.items():
                place = f'data-dialog="{html_lib.escape(dialog_id)}"'
                blocks = [key for key, html in content.blocks.items() if place in html]
                if described["method"] == method and blocks:
                    return PageDialog(kernel, output, dialog_id, described, blocks[0])
        return None

    return kernel.wait_for(find, what=f"a {method} dialog")


def outcome_of(kernel: BrowserLikeKernel, dialog: PageDialog, timeout: float = 30) -> str:
    """Wait until the dialog is settled on the page (its controls gone from the block it was
    drawn in, the record's card of it there; or its output replaced by its record, which then
    holds that card: :func:`final_record`); return its outcome line."""

    def outcome() -> str | None:
        block = final_record(kernel, dialog.output)
        if block is None:
            content = kernel.tracker.pages[dialog.output].content
            block = content.blocks.get(dialog.block, "")
            place = f'data-dialog="{html_lib.escape(dialog.id)}"'
            if dialog.id in content.dialogs or place in block:
                return None
        title = dialog.description["title"]
        for card in elements(block, "atomic-dialog"):
            found = elements(card, "atomic-dialog-outcome")
            if found and title in visible_text(card):
                return " ".join(visible_text(found[0]).split())
        return None

    return kernel.wait_for(outcome, timeout=timeout, what="the dialog to be settled")


def notes(kernel: BrowserLikeKernel, panel: PageOutput | str) -> list[str]:
    """The panel's notification lines, as a person reads them (as last shown)."""
    panel_id = panel if isinstance(panel, str) else panel.comm_id
    return texts_of(kernel, panel_id, "atomic-notification")


@dataclass(frozen=True)
class PageOutput:
    """One of our outputs as the page draws it (a listing, an install, a prototype's result,
    the panel), and its buttons as a person presses them."""

    kernel: BrowserLikeKernel
    comm_id: str  # its output widget

    @property
    def html(self) -> str:
        """The output as the page draws it now."""
        return page_of(self.kernel, self.comm_id)

    def texts(self, cls: str) -> list[str]:
        """The visible text of each element of class ``cls`` in it, in page order."""
        return [visible_text(found) for found in elements(self.html, cls)]

    def text(self, cls: str) -> str:
        """The visible text of its one element of class ``cls``."""
        return element_text(self.html, cls)

    def buttons(self, cls: str) -> list[Element]:
        """Its buttons of class ``cls``, in page order (``.text``, ``.attrs``)."""
        return [b for b in page_tree(self.html).find_all(cls) if b.tag == "button"]

    def press(self, cls: str, which: int | str = 0) -> str:
        """Press a button of class ``cls`` (the ``which``-th, or the one whose text is
        ``which``): send what the page's module sends (``{"type": data-action, ...its other
        data-*}``), or fail when it is disabled."""
        found = self.buttons(cls)
        if isinstance(which, str):
            (button,) = [b for b in found if b.text == which]
        else:
            button = found[which]
        assert "disabled" not in button.attrs, f"{button.text!r} is disabled"
        fields = {k[len("data-") :]: v for k, v in button.attrs.items() if k.startswith("data-")}
        action = fields.pop("action")
        return self.kernel.send_custom(self.comm_id, {"type": action, **fields})


def outputs_of(kernel: BrowserLikeKernel, kind: str) -> list[PageOutput]:
    """Our outputs of one kind (``atomic-<kind>`` on their root) open in the page, in the
    order their models were opened, each once the page has drawn it."""
    found = [
        PageOutput(kernel, comm_id)
        for comm_id, state in kernel.models.items()
        if f"atomic-{kind}" in str(state.get("root_class", "")).split()
    ]
    for output in found:
        kernel.wait_for(lambda o=output: o.html, what=f"the {kind} output to be drawn")
    return found


@dataclass(frozen=True)
class PagePanel(PageOutput):
    """A session's panel as the page draws it, and what a person does there."""

    @property
    def status(self) -> dict[str, str]:
        """The extensions' status entries as the panel shows them: each entry's text, by its
        key (the entry's ``title``, what a person sees on hovering it)."""
        found = {}
        for entry in elements(self.html, "atomic-status-entry"):
            key = re.search(r'\btitle="([^"]*)"', entry.split(">", 1)[0])
            assert key is not None, f"a status entry with no title: {entry}"
            found[html_lib.unescape(key.group(1))] = visible_text(entry)
        return found

    @property
    def editor(self) -> dict[str, Any]:
        """The editor's description (``value``, ``rev``, ``disabled``, ...)."""
        return dict(self.kernel.tracker.pages[self.comm_id].content.editor or {})

    def type(self, text: str) -> str:
        """Type ``text`` into the editor (what the page sends as a person types)."""
        return self.kernel.send_custom(self.comm_id, {"type": "editor", "value": text})

    def send(self, text: str) -> str:
        """Type ``text`` and press Shift+Enter (or Send)."""
        return self.kernel.send_custom(self.comm_id, {"type": "send", "value": text})

    @property
    def settings(self) -> dict[str, Any]:
        """The model, thinking and compaction controls' description (``models``, ``model``,
        ``levels``, ``level``, ``key``, ``error``, ...)."""
        return dict(self.kernel.tracker.pages[self.comm_id].content.settings or {})

    def choose(self, kind: str, value: str) -> str:
        """Choose ``value`` in the panel's ``kind`` picker (``"model"``: ``provider/id``;
        ``"thinking"``: a level), as the page sends a change."""
        return self.kernel.send_custom(self.comm_id, {"type": kind, "value": value})

    def compact(self) -> str:
        """Press the panel's Compact button."""
        return self.kernel.send_custom(self.comm_id, {"type": "compact"})

    def give_key(self, key: str, keep: bool = False) -> str:
        """Type ``key`` into the key field (ticking "keep it" when ``keep``) and press Use."""
        return self.kernel.send_custom(self.comm_id, {"type": "key", "value": key, "keep": keep})

    def remove_rule(self, index: int) -> str:
        """Click the Remove button of the rule on line ``index`` (as last drawn)."""
        buttons = re.findall(r'data-action="remove-rule" data-policy="([^"]*)"', self.html)
        message = {"type": "remove-rule", "policy": html_lib.unescape(buttons[index])}
        return self.kernel.send_custom(self.comm_id, message)


def panels(kernel: BrowserLikeKernel) -> list[PagePanel]:
    """The sessions' panels open in the page (in the order their models were opened), each
    once the page has drawn it."""
    return [PagePanel(kernel, o.comm_id) for o in outputs_of(kernel, "panel")]


def last_run_report(kernel: BrowserLikeKernel) -> str:
    """How the default session's newest run ended, as the kernel has it (for a failure
    message): the run, whether it finished, its error and the start of its text."""
    return kernel.execute(
        "import atomic_jupyter as aj\nr = aj.session().runs[-1]\n"
        "print(r, r.finished, r.error, r.transcript.text()[:200])"
    ).stdout
