"""A dialog's life: pending, then answered, cancelled, expired or closed. No widgets here.

A :class:`Dialog` guarantees that at most one ``extension_ui_response`` is ever sent for its
request, whichever thread answers and however often: the first answer wins, every later
one raises :class:`~atomic_jupyter.errors.DialogNotPendingError` and sends nothing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Literal

from atomic_jupyter.errors import DialogNotPendingError
from atomic_jupyter.protocol.messages import (
    ConfirmRequest,
    DialogRequest,
    EditorRequest,
    SelectRequest,
    UIResponse,
)
from atomic_jupyter.session.observers import Listeners, Subscription

__all__ = ["Dialog", "DialogState"]

DialogState = Literal["pending", "answered", "cancelled", "expired", "closed"]

#: Expire this much before the agent's own timer, which started before the line reached us.
EXPIRY_MARGIN_S = 0.2


class Dialog:
    """One dialog request from an extension, and what became of it.

    Attributes
    ----------
    id:
        The request id.
    method:
        ``"select"``, ``"confirm"``, ``"input"`` or ``"editor"``.
    request:
        The request as received (a dict, exactly as the agent wrote it).
    typed:
        The same request as a typed message (exact: answers echo its options and prefill).
    shown:
        What is shown of it: the typed request with secrets taken out (``typed`` itself
        when it held none).
    state:
        ``"pending"``, ``"answered"``, ``"cancelled"``, ``"expired"`` or ``"closed"``.
    answer:
        What was sent: the value (str or bool), None for a cancel or when nothing was sent.
    result:
        What came of it, without the title: ``"→ Yes (clicked)"`` (empty while pending); what
        the collapsed widget and the saved notebook show under the question.
    outcome:
        The same as one line that names the dialog: ``"Title → Yes (clicked)"``.
    received_at, deadline:
        Monotonic times; ``deadline`` is None without a timeout.
    changed:
        Listeners called with the dialog whenever its state or outcome changes.
    """

    def __init__(
        self,
        typed: DialogRequest,
        raw: Mapping[str, Any],
        send: Callable[[UIResponse], Any],
        *,
        now: float | None = None,
    ) -> None:
        self.typed = typed
        shown = typed.shown
        self.shown: DialogRequest = shown if isinstance(shown, DialogRequest) else typed
        self.request: dict[str, Any] = dict(raw)
        self.id = typed.id
        self.method = typed.method
        self.state: DialogState = "pending"
        self.answer: str | bool | None = None
        self.result = ""
        self.answered_by: str | None = None
        #: How the answer's write to the agent went (a ``process.Delivery``), once answered.
        self.delivery: Any = None
        #: The prompt run whose transcript shows the dialog (None: the panel).
        self.host: Any = None
        self.received_at = time.monotonic() if now is None else now
        timeout = typed.timeout_seconds
        self.deadline = (
            None if timeout is None else self.received_at + max(0.0, timeout - EXPIRY_MARGIN_S)
        )
        self._send = send
        self._lock = threading.Lock()
        self.changed: Listeners[Callable[[Dialog], None]] = Listeners()

    def __repr__(self) -> str:
        return f"<Dialog {self.method} {self.title!r} {self.state}>"

    @property
    def title(self) -> str:
        """The dialog's title (as shown)."""
        return self.shown.title

    @property
    def outcome(self) -> str:
        """What came of the dialog as one line that names it (empty while it is pending)."""
        return f"{self.title or self.method} {self.result}" if self.result else ""

    @property
    def pending(self) -> bool:
        """Whether the dialog still awaits an answer."""
        return self.state == "pending"

    def seconds_left(self, now: float | None = None) -> float | None:
        """Seconds until the dialog expires, or None when it has no timeout."""
        if self.deadline is None:
            return None
        return max(0.0, self.deadline - (time.monotonic() if now is None else now))

    # ------------------------------------------------------------------ answering

    def respond(self, value: str | bool, *, by: str | None = None, how: str | None = None) -> None:
        """Answer the dialog: a str for select, input and editor, a bool for confirm.

        ``by`` says who answered: ``"clicked"`` (a person, in the notebook), ``"policy"``,
        ``"rule"``, ``"stop"``, or None for code (``answered_by`` is then ``"code"``). The
        dialog's outcome line says so, in words; ``how`` replaces those words (a policy
        names itself).

        Raises
        ------
        DialogNotPendingError
            When the dialog was already answered, cancelled, expired or closed.
        TypeError, ValueError
            When the value does not fit the dialog (nothing is sent).
        """
        if not self.pending:
            raise DialogNotPendingError(
                f"the {self.method} dialog {self.title!r} was already {self.state}; nothing was sent"
            )
        if isinstance(self.typed, ConfirmRequest):
            if not isinstance(value, bool):
                raise TypeError(f"a confirm dialog takes True or False, not {value!r}")
            response = UIResponse.confirmation(self.id, value)
            shown = "Yes" if value else "No"
        else:
            if not isinstance(value, str):
                raise TypeError(f"a {self.method} dialog takes a str, not {type(value).__name__}")
            sent = self._exact(value)
            response = UIResponse.value_of(self.id, sent)
            shown = _one_line(value)
        self._finish("answered", response, value, f"→ {shown}", by, how)

    def choose(self, index: int, *, by: str | None = None, how: str | None = None) -> None:
        """Answer a select dialog with its option number ``index`` (0-based): the option is
        sent exactly as the agent sent it (also when what is shown had a secret taken out).

        Raises
        ------
        DialogNotPendingError, TypeError
            As :meth:`respond`.
        IndexError
            For a number that is not an option's.
        """
        typed, shown = self.typed, self.shown
        if not isinstance(typed, SelectRequest) or not isinstance(shown, SelectRequest):
            raise TypeError(f"a {self.method} dialog has no options to choose from")
        if not 0 <= index < len(typed.options):
            raise IndexError(f"the dialog has {len(typed.options)} options, not an option {index}")
        if not self.pending:
            raise DialogNotPendingError(
                f"the {self.method} dialog {self.title!r} was already {self.state}; nothing was sent"
            )
        label = shown.options[index] if index < len(shown.options) else typed.options[index]
        response = UIResponse.value_of(self.id, typed.options[index])
        self._finish("answered", response, label, f"→ {_one_line(label)}", by, how)

    def _exact(self, value: str) -> str:
        """The value to send for ``value`` (as shown): a select's option as the agent sent it,
        an editor's untouched prefill as it was (secrets shown as ``[redacted]`` go back as
        they came).

        Raises
        ------
        ValueError
            When ``value`` is not one of a select's options.
        """
        typed, shown = self.typed, self.shown
        if isinstance(typed, SelectRequest) and isinstance(shown, SelectRequest):
            if value in typed.options:
                return value
            if value in shown.options:
                return typed.options[list(shown.options).index(value)]
            raise ValueError(f"{value!r} is not one of the options {list(shown.options)!r}")
        untouched = (
            isinstance(typed, EditorRequest)
            and isinstance(shown, EditorRequest)
            and shown is not typed
            and value == shown.prefill
        )
        if untouched and isinstance(typed, EditorRequest) and typed.prefill is not None:
            return typed.prefill
        return value

    def cancel(self, *, by: str | None = None, how: str | None = None) -> None:
        """Dismiss the dialog; the extension gets its default (``undefined`` or ``false``).

        Raises
        ------
        DialogNotPendingError
            When the dialog was already answered, cancelled, expired or closed.
        """
        self._finish(
            "cancelled",
            UIResponse.cancellation(self.id),
            None,
            "→ cancelled",
            by,
            how,
        )

    def expire(self) -> bool:
        """Mark the dialog expired (its timeout ran out; nothing is sent). Return whether it was pending."""
        default = "No" if isinstance(self.typed, ConfirmRequest) else "no answer"
        return self._settle(
            "expired",
            f"→ timed out: {default} (the agent's default)",
        )

    def close(self, reason: str) -> bool:
        """Mark the dialog closed without an answer (the agent went away). Return whether it was pending."""
        return self._settle("closed", f"→ closed: {reason}")

    def _finish(
        self,
        state: DialogState,
        response: UIResponse,
        answer: str | bool | None,
        result: str,
        by: str | None,
        how: str | None = None,
    ) -> None:
        with self._lock:
            if self.state != "pending":
                raise DialogNotPendingError(
                    f"the {self.method} dialog {self.title!r} was already {self.state}; nothing was sent"
                )
            # Sending happens under the lock so two answers can never both go out.
            self.delivery = self._send(response)
            self.state = state
            self.answer = answer
            self.answered_by = by or "code"
            self.result = f"{result} ({how or _BY.get(self.answered_by, self.answered_by)})"
        self._notify()

    def add_note(self, text: str) -> None:
        """Add a remark to the outcome line of a settled dialog (such as a rule made of it)."""
        with self._lock:
            if self.state == "pending":
                return
            self.result += f" · {text}"
        self._notify()

    def mark_undelivered(self, reason: str) -> None:
        """The answer never reached the agent (it stopped reading): say so in the outcome."""
        with self._lock:
            if self.state not in ("answered", "cancelled") or "not delivered" in self.result:
                return
            self.result += f" (not delivered: {reason})"
        self._notify()

    def _settle(self, state: DialogState, result: str) -> bool:
        with self._lock:
            if self.state != "pending":
                return False
            self.state = state
            self.result = result
        self._notify()
        return True

    # ------------------------------------------------------------------ observers

    def observe(self, callback: Callable[[Dialog], None]) -> Subscription:
        """Call ``callback(dialog)`` whenever the dialog's state changes."""
        return self.changed.add(callback)

    def _notify(self) -> None:
        self.changed.emit(self)


#: How a stopped run is said, whoever stopped it (the Stop button, ``session.abort()``,
#: ``%atomic_agent abort``): in a dialog it cancelled and at the end of the answer it cut.
STOPPED_BY = "the run was stopped"

#: Who answered (``answered_by``) -> the words the outcome line says it in.
_BY = {
    "clicked": "clicked",
    "code": "answered by code",
    "policy": "answer policy",
    "rule": "rule",
    "stop": STOPPED_BY,
    "abort": STOPPED_BY,
}


def _one_line(text: str, limit: int = 80) -> str:
    """The answer as one short line: its first ``\\n``-line, cut at ``limit`` characters."""
    first = text.split("\n", 1)[0]
    shown = first if len(first) <= limit else first[: limit - 1] + "…"
    if "\n" in text:
        shown += f" ({text.count(chr(10)) + 1} lines)"
    elif shown != text:
        shown += f" ({len(text)} chars)"
    return shown if shown else "''"
