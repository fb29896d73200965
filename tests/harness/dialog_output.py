"""A dialog drawn on its own, in a widget of its own: what the tests draw one dialog with.

The package draws a dialog inside the output of the run that raised it, or in the panel's list
(:class:`~atomic_jupyter.ui.run_output.DialogOnPage` there); the tests of a dialog's controls
and answers need no run around it.
"""

from __future__ import annotations

from collections.abc import Callable

from atomic_jupyter.session.dialogs import Dialog
from atomic_jupyter.ui.output_base import OutputBase
from atomic_jupyter.ui.page_protocol import PageContent, PageMessage
from atomic_jupyter.ui.record import NO_TYPESETTING
from atomic_jupyter.ui.run_output import DialogOnPage, OnRule

__all__ = ["DialogOutput"]


class DialogOutput(OutputBase):
    """One dialog (:class:`~atomic_jupyter.ui.run_output.DialogOnPage`) in an output of its
    own; it renders at once when the dialog changes, unless ``schedule`` is given."""

    def __init__(
        self, dialog: Dialog, on_rule: OnRule | None, schedule: Callable[[], None] | None = None
    ) -> None:
        self.dialog = dialog
        self.blocks = DialogOnPage(dialog, on_rule, schedule or self.render)
        super().__init__(f"atomic-dialog-output {NO_TYPESETTING}")
        self.render()

    def page_content(self) -> PageContent:
        """The dialog as it is now."""
        content = PageContent()
        self.blocks.fill(content)
        return content

    def act(self, message: PageMessage) -> None:
        """An answer to the dialog."""
        self.blocks.act(message)

    def let_go(self) -> None:
        """Stop following the dialog."""
        self.blocks.close()
