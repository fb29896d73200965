"""Finding the product's widgets in a :class:`~tests.harness.kernel_client.BrowserLikeKernel`
the way a person finds them on the page: a dialog in a cell's area, its collapsed line, the
panel's notifications."""

from __future__ import annotations

from .kernel_client import BrowserLikeKernel, WidgetRef
from .widget_text import has_class, text

__all__ = ["answer_html", "answers", "dialog_in", "notes", "outcome_of"]


def answers(kernel: BrowserLikeKernel, within: str) -> list[WidgetRef]:
    """The answer widgets (one per assistant message) inside ``within``, in page order."""
    return [
        ref
        for ref in kernel.descendants(within)
        if "atomic-assistant-text" in (ref.state.get("_dom_classes") or [])
    ]


def answer_html(kernel: BrowserLikeKernel, answer: WidgetRef) -> str:
    """The HTML an answer widget shows: its chunks and its tail, in order."""
    return "".join(
        str(ref.state.get("value", ""))
        for ref in kernel.descendants(answer.comm_id)
        if "atomic-assistant-piece" in (ref.state.get("_dom_classes") or [])
    )


def dialog_in(kernel: BrowserLikeKernel, area_id: str, method: str) -> WidgetRef:
    """Wait for a dialog of ``method`` inside ``area_id``."""
    return kernel.wait_for(
        lambda: next(
            iter(
                kernel.widgets(
                    "VBox", within=area_id, _dom_classes=has_class(f"atomic-dialog-{method}")
                )
            ),
            None,
        ),
        what=f"a {method} dialog",
    )


def outcome_of(kernel: BrowserLikeKernel, dialog: WidgetRef, timeout: float = 30) -> str:
    """Wait until the dialog has collapsed; return its one line."""
    label = kernel.wait_for(
        lambda: next(
            iter(
                kernel.widgets(
                    "HTML", within=dialog.comm_id, _dom_classes=has_class("atomic-dialog-outcome")
                )
            ),
            None,
        ),
        timeout=timeout,
        what="the dialog to collapse",
    )
    return text(label)


def notes(kernel: BrowserLikeKernel, panel: WidgetRef) -> list[str]:
    """The panel's notification lines, as a person reads them."""
    return [
        text(w)
        for w in kernel.widgets(
            "HTML", within=panel.comm_id, _dom_classes=has_class("atomic-notification")
        )
    ]
