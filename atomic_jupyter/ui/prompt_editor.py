"""The panel's prompt editor: a text area that sends on Shift+Enter or Ctrl+Enter.

An ipywidgets ``Textarea`` reports no keys, so the editor is a small anywidget: a plain
``<textarea>`` styled like ipywidgets' own (it carries their classes), whose value is synced
as the user types, and which sends a ``submit`` message when Shift+Enter, Ctrl+Enter or
Cmd+Enter is pressed. Enter alone adds a line, as in a notebook cell. Every key press is kept
from the notebook, as ipywidgets' text boxes do, so typing never triggers a notebook shortcut.
The front end is the inline module below: no build step, no network.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anywidget
import traitlets

from atomic_jupyter.session.observers import Listeners

_FRONT_END = r"""
function render({ model, el }) {
  el.classList.add("widget-inline-hbox", "widget-textarea", "jupyter-widget-textarea");
  const area = document.createElement("textarea");
  area.className = "atomic-editor-input";
  area.spellcheck = true;
  const show = () => {
    const value = model.get("value");
    if (area.value !== value) area.value = value;
    area.placeholder = model.get("placeholder");
    area.setAttribute("aria-label", model.get("placeholder"));
    area.rows = model.get("rows");
    area.disabled = model.get("disabled");
  };
  const keep = () => {
    if (model.get("value") !== area.value) {
      model.set("value", area.value);
      model.save_changes();
    }
  };
  area.addEventListener("input", keep);
  area.addEventListener("keydown", (event) => {
    event.stopPropagation();  // a key in the editor is not a notebook shortcut
    const sends = event.key === "Enter" && (event.shiftKey || event.ctrlKey || event.metaKey);
    if (sends && !event.isComposing) {
      event.preventDefault();
      keep();
      model.send({ type: "submit" });
    }
  });
  model.on("change", show);
  show();
  el.appendChild(area);
  return () => model.off("change", show);
}
export default { render };
"""


class PromptEditor(anywidget.AnyWidget):
    """A multi-line text box whose Shift+Enter and Ctrl+Enter (Cmd+Enter) send its text.

    Attributes
    ----------
    value:
        The text, synced as the user types.
    placeholder:
        Shown while the text is empty (also the text area's accessible name).
    rows:
        Visible lines.
    disabled:
        Whether the text area takes input.
    submitted:
        Listeners called with no argument on Shift+Enter or Ctrl+Enter, after ``value``
        holds the text as typed.
    """

    _esm = _FRONT_END
    value = traitlets.Unicode("").tag(sync=True)
    placeholder = traitlets.Unicode("").tag(sync=True)
    rows = traitlets.Int(3).tag(sync=True)
    disabled = traitlets.Bool(False).tag(sync=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.submitted: Listeners[Callable[[], None]] = Listeners()
        self.on_msg(self._on_message)

    def submit(self) -> None:
        """Do what Shift+Enter does: call every ``submitted`` listener."""
        self.submitted.emit()

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict) and content.get("type") == "submit":
            self.submit()
