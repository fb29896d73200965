"""Answers given without a person: a session's answer policies and the rules made from a
dialog's answer. No I/O.

A :class:`Policy` matches a dialog by method and a title pattern and gives an answer: a
value (a string for select, input and editor; a bool for confirm), :data:`CANCEL`, or a
callable that gets the request dict and returns one of those, or None to pass. The first
policy that decides wins. A rule (:meth:`PolicyBook.make_rule`) is a policy made from a
dialog's answer, for dialogs of the same method and title.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from atomic_jupyter.errors import AtomicAgentError
from atomic_jupyter.protocol.messages import DIALOG_METHODS, SelectRequest
from atomic_jupyter.session.observers import Listeners

if TYPE_CHECKING:
    from atomic_jupyter.session.dialogs import Dialog

__all__ = ["CANCEL", "Decision", "Policy", "PolicyBook", "decide", "parse_answer"]


class _Cancel:
    def __repr__(self) -> str:
        return "CANCEL"


#: The answer that dismisses a dialog.
CANCEL: Any = _Cancel()


@dataclass(frozen=True)
class Decision:
    """What a policy decided: ``cancel``, or ``respond`` with ``value``."""

    policy: Policy
    cancel: bool = False
    value: str | bool | None = None


_KEYS = itertools.count(1)


@dataclass(frozen=True)
class Policy:
    """Answer dialogs of ``method`` whose title matches ``title`` with ``answer``.

    Parameters
    ----------
    answer:
        A value, :data:`CANCEL`, or a callable ``(request: dict) -> value | CANCEL | None``.
    method:
        ``"select"``, ``"confirm"``, ``"input"`` or ``"editor"``; None for any.
    title:
        A regular expression searched in the dialog's title; None for any.
    rule:
        Whether a person made it from a dialog (see ``AgentSession.make_rule``).
    """

    answer: Any
    method: str | None = None
    title: str | None = None
    #: Made from a dialog ("answer this way from now on"): its answers say "(rule)".
    rule: bool = False
    #: A number no other policy of this process has (what a Remove button names).
    key: int = field(default_factory=lambda: next(_KEYS), compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.method is not None and self.method not in DIALOG_METHODS:
            raise ValueError(f"method must be one of {sorted(DIALOG_METHODS)}, not {self.method!r}")
        if self.title is not None:
            re.compile(self.title)

    def matches(self, method: str, title: str) -> bool:
        """Whether the policy applies to a dialog of ``method`` titled ``title``."""
        if self.method is not None and self.method != method:
            return False
        return self.title is None or re.search(self.title, title) is not None

    def decide(self, method: str, title: str, request: dict[str, Any]) -> Decision | None:
        """The policy's decision for a dialog, or None when it does not apply."""
        if not self.matches(method, title):
            return None
        answer = self.answer(dict(request)) if callable(self.answer) else self.answer
        if answer is None:
            return None
        if answer is CANCEL:
            return Decision(self, cancel=True)
        return Decision(self, value=answer)

    def describe(self) -> str:
        """One line for listings."""
        if self.answer is CANCEL:
            answer = "cancel"
        elif callable(self.answer):
            answer = getattr(self.answer, "__name__", repr(self.answer))
        elif isinstance(self.answer, bool):
            answer = _answer_text(self.answer)  # Yes / No, as a dialog's outcome says it
        else:
            answer = repr(self.answer)
        if self.rule and self.title and self.title.startswith("^") and self.title.endswith("\\Z"):
            title = _unescape(self.title[1:-2])
            shown = "cancel" if self.answer is CANCEL else _answer_text(self.answer)
            return f"{self.method} “{title}” → {shown} (rule)"
        return f"{self.method or 'any dialog'} titled /{self.title or '.*'}/ → {answer}"

    @classmethod
    def exactly(cls, method: str, title: str, answer: Any) -> Policy:
        """A rule for dialogs of ``method`` titled exactly ``title``."""
        return cls(answer, method=method, title="^" + re.escape(title) + "\\Z", rule=True)


def _unescape(pattern: str) -> str:
    """The text that ``re.escape`` made ``pattern`` of."""
    return re.sub(r"\\(.)", r"\1", pattern, flags=re.DOTALL)


def _answer_text(answer: Any) -> str:
    if isinstance(answer, bool):
        return "Yes" if answer else "No"
    text = str(answer).split("\n", 1)[0]
    return text if len(text) <= 60 else text[:59] + "…"


def decide(
    policies: Iterable[Policy], method: str, title: str, request: dict[str, Any]
) -> Decision | None:
    """The first decision of ``policies`` for a dialog, or None."""
    for policy in policies:
        decision = policy.decide(method, title, request)
        if decision is not None:
            return decision
    return None


def parse_answer(text: str, method: str | None) -> Any:
    """An answer typed in a magic: ``cancel``, yes/no for confirm, else the text itself."""
    lowered = text.strip().lower()
    if lowered == "cancel":
        return CANCEL
    if method == "confirm" or (method is None and lowered in ("yes", "no", "true", "false")):
        if lowered in ("yes", "y", "true"):
            return True
        if lowered in ("no", "n", "false"):
            return False
        raise ValueError(f"a confirm policy answers yes, no or cancel, not {text!r}")
    return text


PolicyAnswer = Callable[[dict[str, Any]], Any]


class PolicyBook:
    """The answer policies (and rules) of one session, in order, and how they are applied to
    a dialog: ``answer_with``, ``make_rule`` and ``remove_policy``.

    Parameters
    ----------
    diagnose:
        Told, in plain words, when a policy fails or does not fit a dialog.
    pending:
        Gives the dialogs waiting for an answer (a new policy answers those it covers).
    """

    def __init__(
        self,
        diagnose: Callable[[str], None],
        pending: Callable[[], Iterable[Dialog]] = list,
    ) -> None:
        self._diagnose = diagnose
        self._pending = pending
        self._lock = threading.Lock()
        self._policies: list[Policy] = []
        #: Called with no argument after a policy is added or removed.
        self.changed: Listeners[Callable[[], None]] = Listeners()

    def list(self) -> list[Policy]:
        """The policies, tried in order for every new dialog."""
        with self._lock:
            return list(self._policies)

    def add(self, policy: Policy, pending: Iterable[Dialog] = ()) -> None:
        """Add a policy after the others, and apply it to the ``pending`` dialogs it covers."""
        with self._lock:
            self._policies.append(policy)
        self.changed.emit()
        for dialog in pending:
            if policy.matches(dialog.method, dialog.title):
                self.apply(dialog)

    def answer_with(
        self, answer: Any, *, method: str | None = None, title: str | None = None
    ) -> Policy:
        """Answer future dialogs without a human.

        Parameters
        ----------
        answer:
            A value (str for select, input and editor; bool for confirm), ``"cancel"`` or
            :data:`~atomic_jupyter.session.policies.CANCEL`, or a callable that gets the
            request dict and returns a value, ``CANCEL`` or None (None leaves the dialog to a
            person; a string it returns, ``"cancel"`` too, is the answer's text).
        method:
            Only dialogs of this method (``"select"``, ``"confirm"``, ``"input"``, ``"editor"``).
        title:
            Only dialogs whose title matches this regular expression (``re.search``).

        Returns
        -------
        Policy
            The policy added (remove it with :meth:`remove_policy`). Dialogs already
            pending that it covers are answered at once.
        """
        policy = Policy(CANCEL if answer == "cancel" else answer, method=method, title=title)
        self.add(policy, pending=self._pending())
        return policy

    def make_rule(self, dialog: Dialog) -> Policy:
        """Make a dialog's answer the rule for the rest of the session: later dialogs of the
        same method and title are answered the same way, with no click (their outcome says
        "(rule)"). The rule is listed in :attr:`policies` and in the panel, where it can be
        removed (or use :meth:`remove_policy`).

        Raises
        ------
        ValueError
            When the dialog was not answered or cancelled (there is nothing to repeat).
        """
        if dialog.state == "cancelled":
            answer: Any = CANCEL
        elif dialog.state == "answered" and dialog.answer is not None:
            answer = dialog.answer
        else:
            raise ValueError(f"the dialog {dialog.title!r} was {dialog.state}: no answer to repeat")
        shown, exact = dialog.shown, dialog.typed
        if (
            isinstance(shown, SelectRequest)
            and isinstance(exact, SelectRequest)
            and (answer not in exact.options or list(shown.options).count(answer) != 1)
        ):
            raise ValueError(
                "the option chosen had a secret taken out of it, or looks like another: "
                "it cannot be repeated safely"
            )
        policy = Policy.exactly(dialog.method, dialog.title, answer)
        self.add(policy, pending=self._pending())
        dialog.add_note("made the rule for this session")
        return policy

    def remove_policy(self, policy: Policy | None = None) -> None:
        """Remove one policy, or all of them when ``policy`` is None."""
        with self._lock:
            if policy is None:
                self._policies.clear()
            elif policy in self._policies:
                self._policies.remove(policy)
        self.changed.emit()

    def apply(self, dialog: Dialog) -> None:
        """Answer ``dialog`` if a policy decides; leave it to a person otherwise."""
        try:
            decision = decide(self.list(), dialog.method, dialog.title, dialog.request)
        except Exception as exc:  # a policy's own code failed: leave the dialog to a person
            self._diagnose(
                f"an answer policy failed on the dialog {dialog.title!r}: {type(exc).__name__}: {exc}"
            )
            return
        if decision is None:
            return
        try:
            by = "rule" if decision.policy.rule else "policy"
            how = "rule" if decision.policy.rule else f"answer policy: {decision.policy.describe()}"
            if decision.cancel:
                dialog.cancel(by=by, how=how)
            else:
                assert decision.value is not None
                dialog.respond(decision.value, by=by, how=how)
        except (TypeError, ValueError) as exc:
            self._diagnose(
                f"the policy {decision.policy.describe()} does not fit the dialog "
                f"{dialog.title!r}: {exc}"
            )
        except AtomicAgentError:
            pass  # already answered, or the agent is gone: nothing to do
