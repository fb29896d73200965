"""A dialog waiting for an answer, as the page draws it, and a person's answer to it.

:func:`dialog_place` is the HTML a live output puts where the record shows the dialog's
question and outcome: an empty element the page's module (``output_widget.js``) fills with
the controls :func:`describe_controls` describes (the title, the message, one button per
option or a list, Yes/No, a text box or a text area, Submit, Dismiss, the countdown, "answer
this way from now on"). The buttons share one row, and each one's title says what the extension
gets: Dismiss (or Escape) answers nothing, so the extension is told the dialog was cancelled
(a confirm takes that as No, the other dialogs as no value). Every string in the description
is text: the module puts it in the page with ``textContent``. :func:`answer_from_page` turns the page's message back into a call
of the :class:`~atomic_jupyter.session.dialogs.Dialog`, the same calls code makes.
"""

from __future__ import annotations

from collections.abc import Callable

from atomic_jupyter.errors import AtomicAgentError, DialogNotPendingError
from atomic_jupyter.protocol.messages import (
    ConfirmRequest,
    EditorRequest,
    InputRequest,
    SelectRequest,
)
from atomic_jupyter.session.dialogs import Dialog
from atomic_jupyter.ui.page_protocol import DialogAnswer, DialogControls
from atomic_jupyter.ui.text import escape, plain

__all__ = [
    "MAX_OPTION_BUTTONS",
    "RULE_TEXT",
    "answer_from_page",
    "describe_controls",
    "dialog_place",
]

#: A select with at most this many options shows one button per option, else a list.
MAX_OPTION_BUTTONS = 8
#: The label of the box that makes the answer given a rule of the session.
RULE_TEXT = "Answer dialogs with this title this way from now on (this session)"


def dialog_place(dialog: Dialog) -> str:
    """The element a pending dialog's controls are drawn in (the record's classes)."""
    return (
        f'<div class="atomic-dialog atomic-dialog-{escape(dialog.method)} atomic-dialog-live" '
        f'data-dialog="{escape(dialog.id)}"></div>'
    )


def describe_controls(dialog: Dialog, rule: bool, error: str = "") -> DialogControls:
    """What the page needs to draw ``dialog``'s controls (plain text only).

    ``rule``: offer "answer this way from now on"; ``error``: why the last answer was not
    sent, shown under the controls.
    """
    request = dialog.shown
    left = dialog.seconds_left()
    described: DialogControls = {
        "id": dialog.id,
        "method": dialog.method,  # type: ignore[typeddict-item]
        "title": plain(request.title or f"{dialog.method} request"),
        "message": "",
        "options": [],
        "buttons": MAX_OPTION_BUTTONS,
        "placeholder": "",
        "prefill": "",
        "rows": 4,
        "seconds_left": None if left is None else round(left, 1),
        "rule_label": RULE_TEXT if rule else "",
        "error": error,
    }
    if isinstance(request, ConfirmRequest):
        described["message"] = plain(request.message or "")
    elif isinstance(request, SelectRequest):
        described["options"] = [plain(option) for option in request.options]
    elif isinstance(request, InputRequest):
        described["placeholder"] = plain(request.placeholder or "")
    elif isinstance(request, EditorRequest):
        prefill = request.prefill or ""
        described["prefill"] = prefill
        described["rows"] = min(20, max(4, prefill.count("\n") + 2))
    return described


def answer_from_page(
    dialog: Dialog, message: DialogAnswer, on_rule: Callable[[Dialog], None] | None
) -> str:
    """Answer ``dialog`` as the page's ``message`` says (a click, a Submit, Escape); return
    what to show under its controls: empty when it went out (or when the dialog was settled
    already: a second click, a click after it expired, whose first outcome stands), else why
    nothing was sent. A checked "answer this way from now on" makes a rule of an answer."""
    try:
        if message.action == "choose":
            if message.index is None:
                return "Choose an option first."
            dialog.choose(message.index, by="clicked")
        elif message.action == "respond":
            dialog.respond(message.value, by="clicked")  # type: ignore[arg-type]
        else:
            dialog.cancel(by="clicked")
    except DialogNotPendingError:
        return ""
    except (AtomicAgentError, TypeError, ValueError, IndexError) as exc:
        return f"Not sent: {exc}"
    if message.make_rule and on_rule is not None and dialog.state == "answered":
        on_rule(dialog)
    return ""
