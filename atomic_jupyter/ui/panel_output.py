"""The session panel as one :class:`~atomic_jupyter.ui.output_widget.OutputWidget`.

Its sections are the record's (:mod:`atomic_jupyter.ui.panel_parts`): title and state, the
agent, a continued conversation, the extensions' status and widgets, the custom entries, the
notifications. What a person acts on is drawn by the page's module in places the HTML leaves
for it: the editor (typing is kept by the session as it happens; Shift+Enter or Send sends),
the rules' Remove buttons, and the runs and dialogs the panel shows itself (the prompts sent
from its editor, the dialogs of no prompt on the page), newest first in a bounded list, each
drawn by the same :class:`~atomic_jupyter.ui.run_output.RunOnPage` as a run's own output.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from atomic_jupyter.session.dialogs import Dialog
from atomic_jupyter.session.runs import PromptRun
from atomic_jupyter.ui.output_base import OutputBase
from atomic_jupyter.ui.page_protocol import (
    CompactClicked,
    EditorControls,
    EditorSent,
    EditorTyped,
    KeyField,
    KeyGiven,
    ModelChosen,
    ModelOption,
    PageContent,
    PageMessage,
    RuleRemoved,
    SettingsControls,
    ThinkingChosen,
)
from atomic_jupyter.ui.panel_parts import (
    NOTIFICATION_COLORS,
    about_text,
    entries_html,
    head_html,
    notification_html,
    standing_parts,
    status_html,
    widget_block_html,
)
from atomic_jupyter.ui.record import NO_TYPESETTING, ROOT_STYLE, earlier_record
from atomic_jupyter.ui.run_list import RunList
from atomic_jupyter.ui.run_output import OnRule
from atomic_jupyter.ui.text import escape, pre_html

if TYPE_CHECKING:
    from atomic_jupyter.session.session import AgentSession
    from atomic_jupyter.session.standing import Standing

__all__ = [
    "NOTIFICATIONS_SHOWN",
    "PANEL_ENTRIES",
    "SETTING_MESSAGES",
    "PanelOutput",
    "SettingMessage",
]

#: Notifications the panel shows (all are kept in ``session.notifications``).
NOTIFICATIONS_SHOWN = 30
#: Runs and dialogs the panel shows itself, at most (the oldest settled ones go first).
PANEL_ENTRIES = 20
EDITOR_PLACEHOLDER = "Message the agent… (Shift+Enter sends)"
#: What a person sets from the panel: the messages of the settings controls.
SettingMessage = ModelChosen | ThinkingChosen | CompactClicked | KeyGiven
SETTING_MESSAGES = (ModelChosen, ThinkingChosen, CompactClicked, KeyGiven)

_STATE_TEXT = {
    "new": "not started",
    "starting": "starting…",
    "idle": "idle",
    "working": "working…",
    "stopped": "stopped",
    "asleep": "asleep (idle): the next prompt starts it again",
}
_MUTED = "opacity:.7"


class PanelOutput(OutputBase):
    """The panel of one session, drawn by one widget.

    Parameters
    ----------
    session:
        The session shown.
    schedule:
        Asks for a render on the kernel's thread (a dialog the panel shows changed).
    on_send:
        Called with the editor's text when a person sends it.
    on_stop:
        Called with a run the panel shows whose Stop was clicked.
    on_rule:
        Called with a dialog answered with "answer this way from now on" checked.
    on_setting:
        Called with a settings control's message (:data:`SettingMessage`); returns what went
        wrong, in words, or None.
    """

    def __init__(
        self,
        session: AgentSession,
        schedule: Callable[[], None],
        on_send: Callable[[str], None],
        on_stop: Callable[[PromptRun], None],
        on_rule: OnRule,
        on_setting: Callable[[SettingMessage], str | None] = lambda _message: None,
    ) -> None:
        self.session = session
        self._on_send = on_send
        self._on_setting = on_setting
        self._setting_error = ""
        self._key_rev = 0
        #: The runs and dialogs the panel shows.
        self.run_list = RunList("runs", schedule, on_stop, on_rule, PANEL_ENTRIES)
        self._editor_rev = 0
        self._earlier: tuple[Any, ...] = ()
        self._earlier_html = ""
        super().__init__(f"atomic-panel {NO_TYPESETTING}", ROOT_STYLE)

    # ------------------------------------------------------------------ what is shown

    def add(self, shown: PromptRun | Dialog) -> None:
        """Show a run sent from the editor, or a dialog of no prompt, at the top of the list;
        past :data:`PANEL_ENTRIES`, the oldest settled ones are let go."""
        with self._lock:
            if not self.closed:
                self.run_list.add(shown)

    @property
    def runs(self) -> list[PromptRun]:
        """The runs the panel shows, oldest first."""
        return self.run_list.runs

    def editor_set(self) -> None:
        """The editor's text was set by the agent (or cleared by a send): the page shows it."""
        with self._lock:
            self._editor_rev += 1

    def page_content(self) -> PageContent:
        """The panel's sections as the session is now."""
        s = self.session
        content = PageContent()

        def add(key: str, html: str) -> None:
            if html:
                content.order.append(key)
                content.blocks[key] = html

        state = f"exited with code {s.returncode}" if s.state == "exited" else s.state
        add("head", head_html(s.title or f"atomic agent: {s.name}", _STATE_TEXT.get(state, state)))
        about = about_text(s)
        if s.spec.trust_project:
            about += (" · " if about else "") + "project trust on (its .pi extensions and settings)"
        if about:
            add("about", f'<div class="atomic-about" style="{_MUTED}">{escape(about)}</div>')
        standing = s.standing.current
        add("standing", standing_parts(standing)[0])
        add("settings", '<div class="atomic-settings-place" data-settings=""></div>')
        content.settings = self._settings(standing)
        add("earlier", self._earlier_section())
        if s.status:
            add("status", status_html(s.status, live=True))
        above = [b for b in s.widgets.values() if b.get("placement") != "belowEditor"]
        below = [b for b in s.widgets.values() if b.get("placement") == "belowEditor"]
        add("above", _widgets("atomic-widgets-above", above))
        add("editor", '<div class="atomic-editor-place" data-editor=""></div>')
        content.editor = EditorControls(
            placeholder=EDITOR_PLACEHOLDER,
            rows=3,
            value=s.editor_text,
            rev=self._editor_rev,
            disabled=s.state not in ("idle", "working", "asleep"),
        )
        add("below", _widgets("atomic-widgets-below", below))
        add("rules", self._rules_section())
        self.run_list.fill(content, "atomic-panel-dialogs")
        add("entries", entries_html(s.entries)[0])
        notes = list(s.notifications)[-NOTIFICATIONS_SHOWN:]
        if notes:
            lines = "".join(notification_html(note, live=True) for note in notes)
            add("notifications", f'<div class="atomic-notifications">{lines}</div>')
        if s.diagnostic_count:
            last = s.diagnostics[-1] if s.diagnostics else ""
            said = f"{s.diagnostic_count} message(s) from the agent were ignored; last: {last}"
            add("diagnostics", f'<div class="atomic-diagnostics">{escape(said)}</div>')
        if s.state == "exited":
            tail = s.stderr_tail.strip() or "(none)"
            said = f"The agent exited with code {s.returncode}. Its last stderr lines:"
            exited = pre_html([said, tail], NOTIFICATION_COLORS["error"])
            exited += pre_html(["Run %atomic_agent restart to start it again."])
            add("exit", f'<div class="atomic-exit">{exited}</div>')
        return content

    def _settings(self, standing: Standing) -> SettingsControls:
        """What the model, thinking and compaction controls (and the key field) show."""
        s = self.session
        current = standing.model.key if standing.model is not None else ""
        models = [
            ModelOption(provider=m.provider, id=m.id, value=m.key, label=m.name or m.id)
            for m in standing.models
        ]
        if current and current not in {m["value"] for m in models}:
            # The agent lists the models it has a key for: the current one has none.
            model = standing.model
            assert model is not None
            label = f"{model.name or model.id}{' (no key)' if standing.models_listed else ''}"
            entry = ModelOption(provider=model.provider, id=model.id, value=current, label=label)
            models.insert(0, entry)
        wanted = s.key_wanted
        return {
            "models": models,
            "model": current,
            "levels": list(standing.levels),
            "level": standing.thinking or "",
            "disabled": s.state not in ("idle", "working", "asleep"),
            "key": (
                KeyField(
                    provider=wanted.provider, variable=wanted.variable or "", rev=self._key_rev
                )
                if wanted is not None
                else None
            ),
            "error": self._setting_error,
        }

    def _earlier_section(self) -> str:
        conversations = self.session.addon("conversations")
        if conversations is None:
            return ""
        key = (conversations.continued, tuple(conversations.notes), id(conversations.earlier))
        if key != self._earlier:  # the turns' records are made once per start
            self._earlier = key
            record = earlier_record(
                conversations.continued, conversations.notes, conversations.earlier
            )
            inner = record.html
            self._earlier_html = f'<div class="atomic-earlier-view">{inner}</div>' if inner else ""
        return self._earlier_html

    def _rules_section(self) -> str:
        """One line per answer policy, each with a button that removes it."""
        policies = list(self.session.policies)
        if not policies:
            return ""
        rows = [f'<div style="{_MUTED}">Answered without asking:</div>']
        for policy in policies:
            rows.append(
                '<div class="atomic-rule">'
                '<button type="button" class="atomic-rule-remove jupyter-button widget-button" '
                f'data-action="remove-rule" data-policy="{policy.key}" '
                'title="Stop answering these dialogs this way">Remove</button> '
                f'<span class="atomic-rule-text">{escape(policy.describe())}</span></div>'
            )
        return f'<div class="atomic-rules">{"".join(rows)}</div>'

    # ------------------------------------------------------------------ the page -> the session

    def act(self, message: PageMessage) -> None:
        """The editor's typing and Send, a rule's Remove, a setting, or a click for a run or
        dialog the panel shows."""
        if isinstance(message, EditorTyped):
            self.session.set_editor_text(message.value)
        elif isinstance(message, EditorSent):
            self.session.set_editor_text(message.value)
            self._on_send(self.session.editor_text)
        elif isinstance(message, RuleRemoved):
            self._remove_rule(message.policy)
        elif isinstance(message, SETTING_MESSAGES):
            with self._lock:
                if isinstance(message, KeyGiven):
                    self._key_rev += 1  # the field is emptied, whatever came of it
                self._setting_error = self._on_setting(message) or ""
            self.render()
        else:
            self.run_list.act(message)

    def _remove_rule(self, which: str) -> None:
        """Remove the rule of the line clicked (a late second click finds it gone: nothing
        else is removed)."""
        for policy in self.session.policies:
            if str(policy.key) == which:
                self.session.remove_policy(policy)
                return

    def let_go(self) -> None:
        """Let the runs and dialogs it shows go (as the panel closes)."""
        self.run_list.close()


def _widgets(cls: str, blocks: list[dict[str, Any]]) -> str:
    if not blocks:
        return ""
    inner = "".join(widget_block_html(block.get("lines") or []) for block in blocks)
    return f'<div class="{cls}">{inner}</div>'
