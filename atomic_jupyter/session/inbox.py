"""Where the agent's messages go: each one that is not the answer to a waiting command.

:class:`Inbox` is the client's ``on_message``. It runs on the agent's reader thread and
hands each message to the part that owns it: agent events to the event log, the run tracker
(which takes the session's state from them), the extension UI state and the listeners,
fire-and-forget UI requests to the :class:`~atomic_jupyter.session.extension_ui.ExtensionUiState`,
dialog requests become :class:`~atomic_jupyter.session.dialogs.Dialog` objects (decided by a
policy first, then placed in the run that raised them and listed), and whatever could not be
used is recorded as a diagnostic in plain words.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from atomic_jupyter.protocol.connection import (
    ConnectionEvent,
    DuplicateDialog,
    LateReply,
    StrayReply,
)
from atomic_jupyter.protocol.framing import Diagnostic
from atomic_jupyter.protocol.messages import (
    AgentEvent,
    DialogRequest,
    UIRequest,
    UIResponse,
    UnknownMessage,
)
from atomic_jupyter.session.dialog_registry import DialogRegistry
from atomic_jupyter.session.dialogs import Dialog
from atomic_jupyter.session.event_log import EventLog
from atomic_jupyter.session.extension_ui import ExtensionUiState
from atomic_jupyter.session.observers import Listeners, WakeSignal
from atomic_jupyter.session.policies import PolicyBook
from atomic_jupyter.session.run_tracker import RunTracker
from atomic_jupyter.session.transcript import custom_entry

__all__ = ["EVENTS_KEPT", "Inbox"]

#: How many agent events a session keeps (the newest; streaming updates are not kept).
EVENTS_KEPT = 200
_NOT_KEPT = frozenset({"message_update", "tool_execution_update", "bash_execution_update"})


class Inbox:
    """Routes the agent's messages to the session's parts.

    Parameters
    ----------
    ui, dialogs, policies, tracker:
        The parts that take UI requests, dialogs, answer policies and runs.
    wake:
        Pinged after every agent event (a blocking wait looks again).
    answer:
        Writes a dialog's answer to the agent (raises when the agent is gone).
    accepting:
        Whether the agent can still take an answer (a dialog that comes when it cannot is
        closed at once).
    claim:
        Takes a dialog request that is not for a person (a kernel call) and says so; such a
        request never becomes a dialog.
    """

    def __init__(
        self,
        *,
        ui: ExtensionUiState,
        dialogs: DialogRegistry,
        policies: PolicyBook,
        tracker: RunTracker,
        wake: WakeSignal,
        answer: Callable[[UIResponse], Any],
        accepting: Callable[[], bool],
        claim: Callable[[DialogRequest], bool] = lambda _request: False,
    ) -> None:
        self._ui = ui
        self._dialogs = dialogs
        self._policies = policies
        self._tracker = tracker
        self._wake = wake
        #: The newest agent events (bounded; streaming updates are not kept).
        self.events = EventLog(EVENTS_KEPT)
        #: Called with every agent event, on the reader thread.
        self.listeners: Listeners[Callable[[AgentEvent], None]] = Listeners(ui.diagnose)
        self._answer = answer
        self._accepting = accepting
        self._claim = claim

    def __call__(self, message: ConnectionEvent) -> None:
        """Take one message (on the reader thread)."""
        if isinstance(message, AgentEvent):
            self.event(message)
        elif isinstance(message, DialogRequest):
            if not self._claim(message):
                self.dialog(message)
        elif isinstance(message, UIRequest):
            if not self._ui.apply(message):
                method = message.to_dict()["method"]
                self._ui.diagnose(
                    f"ignored an extension UI request with an unknown method {method!r}"
                )
        else:
            self._ui.diagnose(_why_ignored(message))

    def event(self, event: AgentEvent) -> None:
        """Take one agent event: kept, followed by the run tracker (and so the session's
        state), a custom entry of no run shown in the panel, then handed to the listeners."""
        if event.type not in _NOT_KEPT:
            self.events.append(event)
        taken = self._tracker.on_event(event)
        entry = None if taken else custom_entry(event)
        if entry is not None:  # appended while no run goes: the panel shows it
            self._ui.add_entry(*entry)
        elif event.type == "extension_error":
            self._ui.extension_error(event)
        self.listeners.emit(event)
        self._wake.ping()

    def dialog(
        self, request: DialogRequest, answer: Callable[[UIResponse], Any] | None = None
    ) -> Dialog:
        """Make a dialog of a request, decide it by policy, place it in its run, list it.

        ``answer``: where its answer goes, for a dialog the session asks itself (a notebook
        change to accept); None: to the agent.
        """
        raw = request.raw if request.raw is not None else request.to_dict()
        dialog = Dialog(request, raw, answer if answer is not None else self._answer)
        if not self._accepting():
            dialog.close("the agent is not running")
        else:
            self._policies.apply(dialog)  # before the dialog is published: a wait never sees it
        dialog.host = host = self._tracker.dialog_host()
        if host is not None:
            host.transcript.add_dialog(dialog)
        self._dialogs.add(dialog)
        if host is not None:
            self._tracker.changed.emit(host, "now")  # a dialog is shown at once, not throttled
        return dialog


def _why_ignored(message: Any) -> str:
    """The diagnostic for a message the session cannot use."""
    if isinstance(message, Diagnostic):
        return (
            f"ignored a line that is {message.reason} ({message.length} bytes): {message.excerpt}"
        )
    if isinstance(message, DuplicateDialog):
        request = message.request
        return f"ignored a second {request.method} dialog with the same id {request.id!r}"
    if isinstance(message, LateReply):
        r = message.response
        return f"a late answer to {r.command!r} (id {r.id}) came after its timeout"
    if isinstance(message, StrayReply):
        r = message.response
        return f"a response nobody asked for: {r.command!r} id={r.id!r} success={r.success}" + (
            f" error={r.error!r}" if r.error else ""
        )
    value = message.value if isinstance(message, UnknownMessage) else message
    text = repr(value)
    excerpt = text if len(text) <= 200 else text[:199] + "…"
    return f"ignored a message that is not an object with a type: {excerpt}"
