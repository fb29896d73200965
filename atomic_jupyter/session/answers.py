"""Answers given without a person: a session's answer policies and the rules made from a
dialog's answer (:class:`AnswerPolicies`, on top of its
:class:`~atomic_jupyter.session.policies.PolicyBook`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from atomic_jupyter.protocol.messages import SelectRequest
from atomic_jupyter.session.dialogs import Dialog
from atomic_jupyter.session.observers import Listeners
from atomic_jupyter.session.policies import CANCEL, Policy, PolicyBook

__all__ = ["AnswerPolicies"]


class AnswerPolicies:
    """``answer_with``, ``make_rule`` and ``remove_policy``.

    Parameters
    ----------
    book:
        The session's policies.
    pending:
        Gives the dialogs waiting for an answer (a new policy answers those it covers).
    """

    def __init__(self, book: PolicyBook, pending: Callable[[], list[Dialog]]) -> None:
        self._book = book
        self._pending = pending

    def list(self) -> list[Policy]:
        """The answer policies, in order."""
        return self._book.list()

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
        self._book.add(policy, pending=self._pending())
        return policy

    @property
    def policy_changes(self) -> Listeners[Callable[[], None]]:
        """Listeners called after an answer policy (or rule) is added or removed."""
        return self._book.changed

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
        self._book.add(policy, pending=self._pending())
        dialog.add_note("made the rule for this session")
        return policy

    def remove_policy(self, policy: Policy | None = None) -> None:
        """Remove one policy, or all of them when ``policy`` is None."""
        self._book.remove(policy)
