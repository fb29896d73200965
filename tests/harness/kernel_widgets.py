"""Finding the product's widgets in a :class:`~tests.harness.kernel_client.BrowserLikeKernel`
the way a person finds them on the page: a dialog in a cell's area, its collapsed line, the
panel's notifications. A finished output's widgets are closed once its record replaces them:
these helpers read them as the page last showed them (``last_shown``)."""

from __future__ import annotations

from .kernel_client import BrowserLikeKernel, WidgetRef
from .widget_text import has_class, text

__all__ = [
    "WIDGET_VIEW",
    "answer_html",
    "answers",
    "dialog_in",
    "displayed",
    "is_record_copy",
    "record_copy",
    "notes",
    "outcome_of",
    "last_run_report",
]


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def displayed(kernel: BrowserLikeKernel, output: dict) -> dict:
    """What a browser shows now for a cell's ``display_data`` output: its bundle, as replaced
    by the latest ``update_display_data`` of its display id (sent from any cell)."""
    display_id = (output.get("transient") or {}).get("display_id")
    data = output["data"]
    if display_id is None:
        return data
    for record in kernel.displays:
        if (
            record.msg_type == "update_display_data"
            and record.transient.get("display_id") == display_id
        ):
            data = record.data
    return data


def is_record_copy(output: dict) -> bool:
    """Whether a cell's output is the record copy kept beside a live widget (as first shown)."""
    return "atomic-record-copy" in output.get("data", {}).get("text/html", "")


def record_copy(outputs: list[dict]) -> dict:
    """The one record copy among a cell's ``outputs``."""
    (copy,) = [o for o in outputs if o["output_type"] == "display_data" and is_record_copy(o)]
    return copy


def answers(kernel: BrowserLikeKernel, within: str) -> list[WidgetRef]:
    """The answer widgets (one per assistant message) inside ``within``, in page order."""
    return [
        ref
        for ref in kernel.descendants(within, last_shown=True)
        if "atomic-assistant-text" in (ref.state.get("_dom_classes") or [])
    ]


def answer_html(kernel: BrowserLikeKernel, answer: WidgetRef) -> str:
    """The HTML an answer widget shows: its chunks and its tail, in order."""
    return "".join(
        str(ref.state.get("value", ""))
        for ref in kernel.descendants(answer.comm_id, last_shown=True)
        if "atomic-assistant-piece" in (ref.state.get("_dom_classes") or [])
    )


def dialog_in(kernel: BrowserLikeKernel, area_id: str, method: str) -> WidgetRef:
    """Wait for a dialog of ``method`` inside ``area_id``."""
    return kernel.wait_for(
        lambda: next(
            iter(
                kernel.widgets(
                    "VBox",
                    within=area_id,
                    last_shown=True,
                    _dom_classes=has_class(f"atomic-dialog-{method}"),
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
                    "HTML",
                    within=dialog.comm_id,
                    last_shown=True,
                    _dom_classes=has_class("atomic-dialog-outcome"),
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


def last_run_report(kernel: BrowserLikeKernel) -> str:
    """How the default session's newest run ended, as the kernel has it (for a failure
    message): the run, whether it finished, its error and the start of its text."""
    return kernel.execute(
        "import atomic_jupyter as aj\nr = aj.session().runs[-1]\n"
        "print(r, r.finished, r.error, r.transcript.text()[:200])"
    ).stdout
