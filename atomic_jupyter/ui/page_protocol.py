"""The page protocol: what an output's widget and the page's module (``output_widget.js``)
say to each other, written down once.

Sans-IO: this module builds and reads messages; :class:`~atomic_jupyter.ui.output_widget.
OutputWidget` sends and receives them over its comm. ARCHITECTURE.md ("The page protocol")
describes every message the way Jupyter's messaging spec does.

**Kernel to page**, each numbered (``seq``, one more each time) and stamped with the protocol
version (``v``); the page applies them to its store in order, and a page that missed one asks
for the whole output (``ready``):

- :class:`Snapshot`: the whole output.
- :class:`Patch`: what changed since the last message: blocks of HTML (``blocks``, ``drop``,
  ``order``), a streamed answer's chunks (``chunks``, ``reset``, ``tails``), the open
  dialogs' controls (``dialogs``, ``None`` for one gone), the panel's ``editor`` and its
  ``settings`` (``None``: gone).

The HTML of the blocks is sanitised in the kernel; it leaves places for what the page draws
itself: ``data-dialog=ID`` (that dialog's controls), ``data-answer=KEY`` (an answer's chunks),
``data-editor`` and ``data-settings`` (the panel's editor and settings), ``data-children=K``
(where the blocks keyed ``K/...`` go) and ``data-action=A`` (a button whose click sends a
message of type ``A`` whose other fields are the button's other ``data-*`` attributes).
Every string in a description is text: the page sets it with ``textContent``.

**Page to kernel**: :func:`read_page_message` turns what the page sent into one of the
typed messages below (:data:`PageMessage`), or None for anything else (a message of another
version, an unknown type, a field of the wrong type), so an output's listeners only ever get
a well-formed message.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

__all__ = [
    "PROTOCOL_VERSION",
    "CommandClicked",
    "CompactClicked",
    "DialogAnswer",
    "DialogControls",
    "EditorControls",
    "EditorSent",
    "EditorTyped",
    "InstallClicked",
    "KeyField",
    "KeyGiven",
    "ModelChosen",
    "ModelOption",
    "PageContent",
    "PageMessage",
    "Patch",
    "Ready",
    "ResumeClicked",
    "RuleRemoved",
    "SettingsControls",
    "Snapshot",
    "StopClicked",
    "ThinkingChosen",
    "counted_down",
    "patch_between",
    "read_page_message",
    "snapshot_of",
]

log = logging.getLogger(__name__)

#: The protocol's version: in every message both ways. The page's module has its own copy
#: (``PROTOCOL_VERSION`` in ``output_widget.js``; a test checks they agree); a page that gets
#: a message of another version says so in the output instead of drawing it.
PROTOCOL_VERSION = 1

# ------------------------------------------------------------------------------ kernel -> page


class DialogControls(TypedDict):
    """What the page draws for a dialog waiting for an answer (all text)."""

    id: str
    method: Literal["select", "confirm", "input", "editor"]
    title: str
    message: str  # a confirm's question
    options: list[str]  # a select's options
    buttons: int  # a select with at most this many options shows a button per option
    placeholder: str  # an input's
    prefill: str  # an editor's text to start from
    rows: int  # an editor's height
    seconds_left: float | None  # a timed dialog's time left when the description was sent
    rule_label: str  # the label of "answer this way from now on" (empty: not offered)
    error: str  # why the last answer was not sent


class EditorControls(TypedDict):
    """The panel's editor: a text area that sends on Shift+Enter, and Send."""

    placeholder: str
    rows: int
    value: str  # the session's editor text
    rev: int  # changed when the kernel set the text (typing never comes back)
    disabled: bool  # Send disabled (no agent to send to)


class ModelOption(TypedDict):
    """One model of the panel's model picker."""

    provider: str
    id: str
    value: str  # "provider/id"
    label: str


class KeyField(TypedDict):
    """The panel's password field, offered when a provider has no key."""

    provider: str
    variable: str
    rev: int


class SettingsControls(TypedDict):
    """The panel's model and thinking pickers, Compact, and the key field."""

    models: list[ModelOption]
    model: str  # the current model's value
    levels: list[str]
    level: str
    disabled: bool
    key: KeyField | None
    error: str


class Snapshot(TypedDict):
    """The whole output (sent when a page asks for it)."""

    type: Literal["snapshot"]
    v: int
    seq: int
    order: list[str]
    blocks: dict[str, str]
    chunks: dict[str, list[str]]
    tails: dict[str, str]
    dialogs: dict[str, DialogControls]
    editor: EditorControls | None
    settings: SettingsControls | None


class Patch(TypedDict, total=False):
    """What changed since the message before (only the fields that changed are sent)."""

    type: Literal["patch"]
    v: int
    seq: int
    blocks: dict[str, str]
    drop: list[str]
    order: list[str]
    chunks: dict[str, list[str]]
    reset: list[str]
    tails: dict[str, str]
    dialogs: dict[str, DialogControls | None]
    editor: EditorControls | None
    settings: SettingsControls | None


@dataclass
class PageContent:
    """What an output shows, as the page draws it.

    Attributes
    ----------
    order:
        The blocks' keys, in page order.
    blocks:
        Each block's HTML (sanitised; with places for the parts below).
    chunks:
        Each streamed answer's settled chunks of HTML, by the answer's key (only ever grow,
        unless reset).
    tails:
        Each streamed answer's unsettled end.
    dialogs:
        Each open dialog's controls, by dialog id.
    editor:
        The panel's editor (None: the output has none).
    settings:
        The panel's settings (None: the output has none).
    """

    order: list[str] = field(default_factory=list)
    blocks: dict[str, str] = field(default_factory=dict)
    chunks: dict[str, list[str]] = field(default_factory=dict)
    tails: dict[str, str] = field(default_factory=dict)
    dialogs: dict[str, DialogControls] = field(default_factory=dict)
    editor: EditorControls | None = None
    settings: SettingsControls | None = None

    def copy(self) -> PageContent:
        """A copy whose lists and dicts are its own."""
        return PageContent(
            list(self.order),
            dict(self.blocks),
            {k: list(v) for k, v in self.chunks.items()},
            dict(self.tails),
            dict(self.dialogs),
            self.editor,
            self.settings,
        )


def patch_between(shown: PageContent, wanted: PageContent, seq: int) -> Patch | None:
    """The patch numbered ``seq`` that brings a page showing ``shown`` to ``wanted`` (None:
    nothing changed)."""
    patch: Patch = {}
    blocks = {k: v for k, v in wanted.blocks.items() if shown.blocks.get(k) != v}
    if blocks:
        patch["blocks"] = blocks
    dropped = [key for key in shown.blocks if key not in wanted.blocks]
    if dropped:
        patch["drop"] = dropped
    chunks, reset = _grown(shown.chunks, wanted.chunks)
    if chunks:
        patch["chunks"] = chunks
    if reset:
        patch["reset"] = reset
    tails = {k: v for k, v in wanted.tails.items() if shown.tails.get(k) != v}
    if tails:
        patch["tails"] = tails
    dialogs: dict[str, DialogControls | None] = {
        k: v for k, v in wanted.dialogs.items() if shown.dialogs.get(k) != v
    }
    dialogs.update({k: None for k in shown.dialogs if k not in wanted.dialogs})
    if dialogs:
        patch["dialogs"] = dialogs
    if wanted.editor != shown.editor:
        patch["editor"] = wanted.editor
    if wanted.settings != shown.settings:
        patch["settings"] = wanted.settings
    if wanted.order != shown.order:
        patch["order"] = list(wanted.order)
    if not patch:
        return None
    return {"type": "patch", "v": PROTOCOL_VERSION, "seq": seq, **patch}


def snapshot_of(
    content: PageContent, seq: int, elapsed: Mapping[str, float] | None = None
) -> Snapshot:
    """The whole of ``content`` as the message numbered ``seq``; each timed dialog counted down
    by the seconds ``elapsed`` since its controls were sent, as the page has counted."""
    elapsed = elapsed or {}
    return {
        "type": "snapshot",
        "v": PROTOCOL_VERSION,
        "seq": seq,
        "order": list(content.order),
        "blocks": dict(content.blocks),
        "chunks": {k: list(v) for k, v in content.chunks.items()},
        "tails": dict(content.tails),
        "dialogs": {k: counted_down(v, elapsed.get(k, 0.0)) for k, v in content.dialogs.items()},
        "editor": content.editor,
        "settings": content.settings,
    }


def counted_down(controls: DialogControls, elapsed: float) -> DialogControls:
    """A dialog's controls with their seconds left ``elapsed`` seconds after they were sent."""
    left = controls["seconds_left"]
    if left is None or elapsed <= 0:
        return controls
    return {**controls, "seconds_left": round(max(0.0, left - elapsed), 1)}


def _grown(
    shown: Mapping[str, list[str]], wanted: Mapping[str, list[str]]
) -> tuple[dict[str, list[str]], list[str]]:
    """The chunks to append per answer, and the answers whose chunks start over."""
    added: dict[str, list[str]] = {}
    reset: list[str] = []
    for key, chunks in wanted.items():
        before = shown.get(key, [])
        if len(chunks) >= len(before) and chunks[: len(before)] == before:
            if len(chunks) > len(before):
                added[key] = chunks[len(before) :]
        else:
            reset.append(key)
            if chunks:
                added[key] = list(chunks)
    return added, reset


# ------------------------------------------------------------------------------ page -> kernel


@dataclass(frozen=True)
class Ready:
    """``ready``: a page's model was made (or missed a message) and has everything up to
    ``seq``; the kernel sends a :class:`Snapshot` unless that is all it sent."""

    seq: int


@dataclass(frozen=True)
class DialogAnswer:
    """``dialog``: a person answered the dialog ``id``: ``choose`` an option (``index``),
    ``respond`` with a value (a confirm's bool, an input's or editor's text) or ``cancel``;
    ``make_rule``: "answer this way from now on" was checked. An index that is no whole
    number reads as None, and a value is passed on as sent (a JSON scalar): the dialog says
    what is wrong with it, under its controls."""

    id: str
    action: Literal["choose", "respond", "cancel"]
    index: int | None = None
    value: str | bool | int | float | None = None
    make_rule: bool = False


@dataclass(frozen=True)
class StopClicked:
    """``stop``: the Stop of the run drawn with the key prefix ``run``."""

    run: str


@dataclass(frozen=True)
class EditorTyped:
    """``editor``: the panel's editor text, as typed."""

    value: str


@dataclass(frozen=True)
class EditorSent:
    """``send``: Send (or Shift+Enter) in the panel's editor, with its text."""

    value: str


@dataclass(frozen=True)
class RuleRemoved:
    """``remove-rule``: the Remove of the answer policy whose key is ``policy``."""

    policy: str


@dataclass(frozen=True)
class ModelChosen:
    """``model``: a model picked in the panel (``provider/id``)."""

    value: str


@dataclass(frozen=True)
class ThinkingChosen:
    """``thinking``: a thinking level picked in the panel."""

    value: str


@dataclass(frozen=True)
class CompactClicked:
    """``compact``: the panel's Compact."""


@dataclass(frozen=True)
class KeyGiven:
    """``key``: an API key typed in the panel's password field (sent once; ``keep``: keep it
    in the agent's credential store)."""

    value: str
    keep: bool = False


@dataclass(frozen=True)
class CommandClicked:
    """``command``: a prototype's command button."""

    name: str


@dataclass(frozen=True)
class ResumeClicked:
    """``resume``: the Resume of the conversation listing's row ``row``."""

    row: int


@dataclass(frozen=True)
class InstallClicked:
    """``install``: the install offer's button."""


#: A message from the page, read.
PageMessage = (
    Ready
    | DialogAnswer
    | StopClicked
    | EditorTyped
    | EditorSent
    | RuleRemoved
    | ModelChosen
    | ThinkingChosen
    | CompactClicked
    | KeyGiven
    | CommandClicked
    | ResumeClicked
    | InstallClicked
)

_ACTIONS = frozenset({"choose", "respond", "cancel"})


def read_page_message(content: Any) -> PageMessage | None:
    """The typed message the page sent, or None (logged) when it is not one this protocol
    knows: another version, an unknown type, a field missing or of the wrong type."""
    try:
        return _read(content)
    except (KeyError, TypeError, ValueError) as exc:
        log.debug("ignored a message from the page (%s): %.200r", exc, content)
        return None


def _read(content: Any) -> PageMessage | None:
    if not isinstance(content, dict):
        raise TypeError("not an object")
    if content.get("v") != PROTOCOL_VERSION:
        raise ValueError(f"protocol version {content.get('v')!r}, not {PROTOCOL_VERSION}")
    kind = content.get("type")
    if kind == "ready":
        return Ready(_int(content["seq"]))
    if kind == "dialog":
        action = content["action"]
        if action not in _ACTIONS:
            raise ValueError(f"dialog action {action!r}")
        index = content.get("index")
        value = content.get("value")
        if not (value is None or isinstance(value, (str, bool, int, float))):
            raise TypeError("dialog value")
        return DialogAnswer(
            _text(content["id"]),
            action,
            index if isinstance(index, int) and not isinstance(index, bool) else None,
            value,
            content.get("make_rule") is True,
        )
    if kind == "stop":
        return StopClicked(_text(content.get("run", "")))
    if kind == "editor":
        return EditorTyped(_text(content["value"]))
    if kind == "send":
        return EditorSent(_text(content["value"]))
    if kind == "remove-rule":
        return RuleRemoved(_text(content["policy"]))
    if kind == "model":
        return ModelChosen(_text(content["value"]))
    if kind == "thinking":
        return ThinkingChosen(_text(content["value"]))
    if kind == "compact":
        return CompactClicked()
    if kind == "key":
        return KeyGiven(_text(content["value"]), content.get("keep") is True)
    if kind == "command":
        return CommandClicked(_text(content["name"]))
    if kind == "resume":
        return ResumeClicked(_int(content["row"]))
    if kind == "install":
        return InstallClicked()
    raise ValueError(f"unknown type {kind!r}")


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{value!r} is not text")
    return value


def _int(value: Any) -> int:
    """A whole number, also from a button's ``data-*`` attribute (text)."""
    if isinstance(value, bool):
        raise TypeError(f"{value!r} is not a number")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    raise TypeError(f"{value!r} is not a number")
