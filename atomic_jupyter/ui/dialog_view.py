"""One renderer per dialog method: ``select``, ``confirm``, ``input``, ``editor``.

Each dialog is a VBox with the title, the message, the controls, a countdown when the
request has a timeout, and a Cancel button. Once the dialog is answered, cancelled, expired
or closed, it collapses to one line saying what happened.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import ipywidgets as w

from atomic_jupyter.errors import AtomicAgentError, DialogNotPendingError
from atomic_jupyter.protocol.messages import (
    ConfirmRequest,
    EditorRequest,
    InputRequest,
    SelectRequest,
)
from atomic_jupyter.session.dialogs import Dialog
from atomic_jupyter.ui.closing import close_widget
from atomic_jupyter.ui.text import TextLine, plain, pre_block

__all__ = ["DialogView", "MAX_OPTION_BUTTONS"]

#: A select with at most this many options shows one button per option, else a Dropdown.
MAX_OPTION_BUTTONS = 8

_BORDER = {"pending": "var(--jp-brand-color1,#1976d2)", "done": "var(--jp-border-color2,#ccc)"}


class DialogView:
    """The widget of one :class:`~atomic_jupyter.session.dialogs.Dialog`; it collapses when
    the dialog stops being pending, whoever answered it.

    Attributes
    ----------
    root:
        The VBox to display.
    buttons:
        Every button, by its role: ``"option:<n>"``, ``"yes"``, ``"no"``, ``"submit"``,
        ``"cancel"``.
    """

    def __init__(
        self,
        dialog: Dialog,
        schedule: Callable[[Callable[[], None]], None] | None = None,
        on_rule: Callable[[Dialog], None] | None = None,
    ) -> None:
        self.dialog = dialog
        self._on_rule = on_rule
        self.collapsed = False
        self.closed = False
        self._retired: list[w.Widget] = []
        self.buttons: dict[str, w.Button] = {}
        self.value_widget: w.ValueWidget | None = None
        self._summary: TextLine | None = None
        self.error = TextLine("", color="var(--jp-error-color1,#c62828)")
        self.error.layout.display = "none"
        self.countdown = TextLine("")
        self.countdown.add_class("atomic-countdown")
        request = dialog.shown
        parts: list[w.Widget] = [TextLine(request.title or f"{dialog.method} request", bold=True)]
        if isinstance(request, ConfirmRequest) and request.message:
            parts.append(pre_block(request.message.split("\n")))
        parts.append(self._controls())
        cancel = self._button("cancel", "Cancel", self._cancel)
        parts.append(w.HBox([cancel, self.countdown]))
        #: "Answer this way from now on": the answer given becomes the session's rule.
        self.rule: w.Checkbox | None = None
        if on_rule is not None:
            # No agent text here: a description is typeset as LaTeX by the page.
            self.rule = w.Checkbox(
                value=False,
                description="Answer dialogs with this title this way from now on (this session)",
                indent=False,
                layout=w.Layout(width="auto"),
            )
            self.rule.add_class("atomic-make-rule")
            parts.append(self.rule)
        parts.append(self.error)
        self.root = w.VBox(
            parts,
            layout=w.Layout(
                border=f"1px solid {_BORDER['pending']}", padding="6px", margin="4px 0"
            ),
        )
        self.root.add_class("atomic-dialog")
        self.root.add_class(f"atomic-dialog-{dialog.method}")
        # The dialog changes on other threads too (expiry, the agent's exit): ``schedule``
        # brings the collapse onto the kernel's loop (by default it runs at once).
        run = schedule or (lambda func: func())
        self._subscription = dialog.observe(lambda _d: run(self.refresh))
        self._extras = [self.error, self.countdown]
        self.refresh_countdown()
        self.refresh()

    # ------------------------------------------------------------------ building

    def _button(
        self, role: str, text: str, on_click: Callable[[], None], style: str = ""
    ) -> w.Button:
        label = plain(text)
        button = w.Button(
            description=label, tooltip=label, button_style=style, layout=w.Layout(width="auto")
        )
        button.on_click(lambda _b: self._act(on_click))
        button.add_class("atomic-" + role.split(":")[0])  # atomic-option, -yes, -submit, ...
        self.buttons[role] = button
        return button

    def _controls(self) -> w.Widget:
        request = self.dialog.shown
        if isinstance(request, SelectRequest):
            options = list(request.options)
            if len(options) <= MAX_OPTION_BUTTONS:
                return w.HBox(
                    [
                        self._button(
                            f"option:{i}",
                            option,
                            partial(self.dialog.choose, i, by="clicked"),
                        )
                        for i, option in enumerate(options)
                    ],
                    layout=w.Layout(flex_flow="row wrap"),
                )
            dropdown = w.Dropdown(
                options=[(plain(option), i) for i, option in enumerate(options)], value=0
            )
            self.value_widget = dropdown
            submit = self._button(
                "submit", "Submit", lambda: self._submit_choice(dropdown.value), "primary"
            )
            return w.HBox([dropdown, submit])
        if isinstance(request, ConfirmRequest):
            return w.HBox(
                [
                    self._button("yes", "Yes", lambda: self.dialog.respond(True, by="clicked")),
                    self._button("no", "No", lambda: self.dialog.respond(False, by="clicked")),
                ]
            )
        if isinstance(request, InputRequest):
            text = w.Text(
                value="", placeholder=plain(request.placeholder or ""), layout=w.Layout(width="60%")
            )
            self.value_widget = text
            submit = self._button(
                "submit", "Submit", lambda: self.dialog.respond(text.value, by="clicked"), "primary"
            )
            return w.HBox([text, submit])
        assert isinstance(request, EditorRequest)
        prefill = request.prefill or ""
        rows = min(20, max(4, prefill.count("\n") + 2))
        area = w.Textarea(value=prefill, rows=rows, layout=w.Layout(width="100%"))
        self.value_widget = area
        submit = self._button(
            "submit", "Submit", lambda: self.dialog.respond(area.value, by="clicked"), "primary"
        )
        return w.VBox([area, w.HBox([submit])])

    # ------------------------------------------------------------------ acting

    def _act(self, action: Callable[[], None]) -> None:
        """Run a button's action; a late or failed answer is shown, never raised."""
        try:
            action()
        except DialogNotPendingError:
            pass  # a second click, or a click after expiry: the first outcome stands
        except AtomicAgentError as exc:
            self.error.text = f"Not sent: {exc}"
            self.error.layout.display = None
        else:
            rule = self.rule is not None and self.rule.value and self._on_rule is not None
            if rule and self.dialog.state == "answered":  # Cancel makes no rule
                assert self._on_rule is not None
                self._on_rule(self.dialog)

    def _submit_choice(self, index: int | None) -> None:
        if index is None:
            self.error.text = "Choose an option first."
            self.error.layout.display = None
            return
        self.dialog.choose(index, by="clicked")

    def _cancel(self) -> None:
        self.dialog.cancel(by="clicked")

    # ------------------------------------------------------------------ updating

    def refresh_countdown(self) -> None:
        """Show the seconds left, for a dialog with a timeout."""
        left = self.dialog.seconds_left()
        if left is None or not self.dialog.pending:
            self.countdown.text = ""
        else:
            self.countdown.text = f"expires in {int(left + 0.999)} s"

    def close(self) -> None:
        """Stop observing the dialog and close every widget of the view (its output is final
        and shown by its record now)."""
        if self.closed:
            return
        self.closed = True
        self._subscription.remove()
        for widget in [*self._retired, *self._extras, self.root]:
            close_widget(widget)
        self._retired = []
        self.buttons.clear()
        self.value_widget = None

    def refresh(self) -> None:
        """Collapse to one line once the dialog is no longer pending; keep that line current
        (an answer found undelivered later says so)."""
        if self.dialog.pending or self.closed:
            return
        if self.collapsed:
            if self._summary is not None:
                self._summary.text = self.dialog.outcome
            return
        for button in self.buttons.values():
            button.disabled = True
        if self.value_widget is not None:
            self.value_widget.disabled = True
        summary = self._summary = TextLine(self.dialog.outcome)
        summary.add_class("atomic-dialog-outcome")
        summary.add_class(f"atomic-dialog-{self.dialog.state}")
        old = self.root.children
        self.root.children = (summary,)
        self.root.layout.border = f"1px solid {_BORDER['done']}"
        self.root.layout.padding = "2px 6px"
        self.collapsed = True
        # The controls are gone from the page. A click already on its way must still reach
        # a live widget (and be ignored), so their comms are closed with the view, once its
        # output is replaced by its record.
        self._retired.extend(old)
        self.buttons.clear()
        self.value_widget = None
