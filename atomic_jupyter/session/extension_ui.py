"""What the fire-and-forget UI requests set: title, status bar, widget blocks, editor text and
notifications; and the session's diagnostics (messages it had to ignore). No widgets.

Every change is announced on :attr:`ExtensionUiState.changed` with the name of the part
that changed (``"title"``, ``"status"``, ``"widgets"``, ``"editor"``, ``"notifications"``,
``"diagnostics"``; the session adds ``"state"``), so a view re-reads only that part.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

from atomic_jupyter.protocol.messages import (
    AgentEvent,
    NotifyRequest,
    SetEditorTextRequest,
    SetStatusRequest,
    SetTitleRequest,
    SetWidgetRequest,
    UIRequest,
)
from atomic_jupyter.session.observers import Listeners

__all__ = ["DIAGNOSTICS_KEPT", "NOTIFICATIONS_KEPT", "ExtensionUiState"]

#: How many custom entries of no run are kept for the panel (the newest).
ENTRIES_KEPT = 20
#: How many notifications and diagnostics are kept (the newest).
NOTIFICATIONS_KEPT = 500
DIAGNOSTICS_KEPT = 100

PartListener = Callable[[str], None]


class ExtensionUiState:
    """The extension UI state of one session.

    Parameters
    ----------
    redact:
        Applied to notifications and diagnostics (they may quote secrets); the session
        gives a new one at each launch (:meth:`use_redactor`).
    """

    def __init__(self, redact: Callable[[str], str] = lambda text: text) -> None:
        self._redactor = redact
        self._lock = threading.Lock()
        #: Listeners called with the name of each part that changed.
        self.changed: Listeners[PartListener] = Listeners()
        self.title = ""
        self._status: dict[str, str] = {}
        self._widgets: dict[str, dict[str, Any]] = {}
        self.editor_text = ""
        self._notifications: deque[dict[str, str]] = deque(maxlen=NOTIFICATIONS_KEPT)
        self.notification_total = 0
        self.diagnostics: deque[str] = deque(maxlen=DIAGNOSTICS_KEPT)
        self.diagnostic_count = 0
        self._entries: deque[tuple[str, Any]] = deque(maxlen=ENTRIES_KEPT)

    def use_redactor(self, redact: Callable[[str], str]) -> None:
        """Take secrets out with ``redact`` from now on (a new launch's secrets)."""
        self._redactor = redact

    def redact(self, text: str) -> str:
        """``text`` with the secrets of the current launch taken out."""
        return self._redactor(text)

    def reset(self) -> None:
        """A new agent: forget title, status, widget blocks and editor text (not the logs)."""
        with self._lock:
            self.title = ""
            self._status.clear()
            self._widgets.clear()
            self.editor_text = ""
        for part in ("title", "status", "widgets", "editor"):
            self.changed.emit(part)

    @property
    def status(self) -> dict[str, str]:
        """Status key -> text."""
        with self._lock:
            return dict(self._status)

    @property
    def widgets(self) -> dict[str, dict[str, Any]]:
        """Widget key -> ``{"lines": [...], "placement": ...}`` (copies)."""
        with self._lock:
            return {
                k: {"lines": list(v["lines"]), "placement": v["placement"]}
                for k, v in self._widgets.items()
            }

    @property
    def notifications(self) -> list[dict[str, str]]:
        """Notifications kept, oldest first (copies)."""
        with self._lock:
            return [dict(n) for n in self._notifications]

    def notifications_since(self, seen: int) -> tuple[int, list[dict[str, str]]]:
        """The total count of notifications, and those after the first ``seen`` (as kept)."""
        with self._lock:
            new = min(self.notification_total - seen, len(self._notifications))
            recent = list(self._notifications)[-new:] if new > 0 else []
            return self.notification_total, [dict(n) for n in recent]

    def apply(self, request: UIRequest) -> bool:
        """Take a fire-and-forget request; return False when its method is unknown."""
        with self._lock:
            if isinstance(request, NotifyRequest):
                self._notifications.append(
                    {"message": self.redact(request.message), "type": request.notify_type}
                )
                self.notification_total += 1
                part = "notifications"
            elif isinstance(request, SetStatusRequest):
                if request.text is None:
                    self._status.pop(request.key, None)
                else:
                    self._status[request.key] = request.text
                part = "status"
            elif isinstance(request, SetWidgetRequest):
                if request.lines is None:
                    self._widgets.pop(request.key, None)
                else:
                    self._widgets[request.key] = {
                        "lines": list(request.lines),
                        "placement": request.placement,
                    }
                part = "widgets"
            elif isinstance(request, SetTitleRequest):
                self.title = request.title
                part = "title"
            elif isinstance(request, SetEditorTextRequest):
                self.editor_text = request.text
                part = "editor"
            else:
                return False
        self.changed.emit(part)
        return True

    def set_editor_text(self, text: str, *, announce: bool = False) -> None:
        """Replace the editor's text (typed in the panel: no announcement needed)."""
        self.editor_text = text
        if announce:
            self.changed.emit("editor")

    def extension_error(self, event: AgentEvent) -> None:
        """An ``extension_error`` event: an error notification naming the extension's file."""
        where = os.path.basename(str(event.get("extensionPath", "") or "")) or "an extension"
        what = f"extension error in {where} ({event.get('event', '?')}): {event.get('error', '')}"
        self.apply(NotifyRequest("", message=what, notify_type="error"))

    @property
    def entries(self) -> list[tuple[str, Any]]:
        """Extensions' custom entries appended while no run was going, oldest first:
        ``(customType, data)`` (the newest :data:`ENTRIES_KEPT`)."""
        with self._lock:
            return list(self._entries)

    def add_entry(self, custom_type: str, data: Any) -> None:
        """An extension appended a custom entry (``pi.appendEntry``) while no run was going."""
        with self._lock:
            self._entries.append((custom_type, data))
        self.changed.emit("entries")

    def diagnose(self, text: str) -> None:
        """Record a message the session had to ignore, and why."""
        text = self.redact(text)
        with self._lock:
            self.diagnostics.append(text)
            self.diagnostic_count += 1
        self.changed.emit("diagnostics")
