// One output of atomic-jupyter, drawn in the page: a run, a dialog, a listing.
//
// It speaks the page protocol, written down in atomic_jupyter/ui/page_protocol.py and in
// ARCHITECTURE.md ("The page protocol"). The kernel sends the output's blocks as sanitised
// HTML made by the record's renderer (atomic_jupyter/ui/record.py), keyed, so an update
// carries only what changed. This module only places that HTML and draws the interactive
// parts the HTML leaves a place for:
//   [data-dialog=ID]  a dialog waiting for an answer (its controls, from `dialogs`)
//   [data-answer=KEY] a streamed answer (its settled chunks, then its tail)
//   [data-editor]     the panel's editor: a text area that sends on Shift+Enter (`editor`)
//   [data-settings]   the panel's model and thinking pickers, its Compact button and, when a
//                     provider has no key, a password field whose value is sent once and
//                     never kept here (`settings`)
//   [data-action=A]   a button whose click sends {type: A, ...its other data-*} (Stop, ...)
//   [data-children=K] where the blocks keyed "K/..." go (a list inside a block)
// Every message both ways carries the protocol's version (v); a message of another version
// is not drawn: the output says so instead. Nothing it receives is run; HTML is inserted as sent (it was escaped and sanitised in the
// kernel), text it draws itself goes through textContent.
//
// The content lives on the model (initialize), not on a view: messages that arrive while no
// view exists are kept, and a view made later (a second display, a tab switched) draws it
// all. Every message carries a sequence number; a model that missed one (or that was made
// after the kernel sent its first ones) asks for the whole output again.

// The page protocol's version (PROTOCOL_VERSION in page_protocol.py; a test checks they agree).
const PROTOCOL_VERSION = 1;

// How long an action (a click, a Send) may wait for the kernel's next message before the
// output says the kernel is busy: where the page's messages go to the kernel's main shell
// (comms over subshells disabled, a kernel without subshells, VS Code, Colab), a running cell
// holds them until it ends. Over a subshell the kernel answers within milliseconds.
const HEARD_WITHIN_MS = 1000;
// What the output says meanwhile (the action is not lost: it goes once the cell ends).
const BUSY_TEXT = "The kernel is busy running a cell: this reaches the agent when that cell " +
  "ends (nothing is lost; no need to click again).";
// The messages that expect no answer from the kernel.
const QUIET = new Set(["ready", "editor"]);

// By the output's id: initialize and render are each given their own proxy of the model.
const STORES = (globalThis.__atomicOutputs ||= new Map());

// The controls' few styles, once per page; colours come from JupyterLab's theme variables.
const STYLES = `
.atomic-output .atomic-dialog-controls { display: flex; flex-direction: column; gap: 4px; }
.atomic-output .atomic-dialog-row { display: flex; flex-flow: row wrap; gap: 4px;
  align-items: center; }
.atomic-output .atomic-dialog-message { margin: 0; white-space: pre-wrap;
  font-family: var(--jp-code-font-family, monospace); }
.atomic-output .atomic-dialog-input { min-width: 40%; }
.atomic-output .atomic-dialog-controls .jupyter-button { width: auto; min-width: 4em;
  max-width: 100%; }
.atomic-output .atomic-dialog-controls .atomic-cancel { margin-left: 1em; background: transparent;
  border: 1px solid var(--jp-border-color1, #999); }
.atomic-output textarea.atomic-dialog-editor, .atomic-output .atomic-editor-input { width: 100%;
  box-sizing: border-box; font-family: var(--jp-code-font-family, monospace); }
.atomic-output input, .atomic-output textarea, .atomic-output select {
  color: var(--jp-ui-font-color0, inherit); background: var(--jp-layout-color1, inherit);
  border: 1px solid var(--jp-border-color1, #999); }
.atomic-output .atomic-dialog-live { border: 1px solid var(--jp-brand-color1, #1976d2);
  padding: 6px; margin: 4px 0; }
.atomic-output .atomic-dialog-error { color: var(--jp-error-color1, #c62828); }
.atomic-output .atomic-dialog-error:empty, .atomic-output .atomic-countdown:empty { display: none; }
.atomic-output .atomic-countdown { opacity: .7; }
.atomic-output .atomic-kernel-busy { margin: 2px 0 4px; padding: 2px 6px;
  border-left: 3px solid var(--jp-warn-color1, #f57c00); color: var(--jp-ui-font-color1, inherit); }

.atomic-output button:focus-visible, .atomic-output input:focus-visible,
.atomic-output textarea:focus-visible, .atomic-output select:focus-visible {
  outline: 2px solid var(--jp-brand-color1, #1976d2); outline-offset: 1px; }
`;
if (typeof document !== "undefined" && !document.getElementById("atomic-output-styles")) {
  const style = document.createElement("style");
  style.id = "atomic-output-styles";
  style.textContent = STYLES;
  document.head.appendChild(style);
}

function storeOf(model) {
  const id = model.get("output_id");
  let store = STORES.get(id);
  if (!store) {
    store = {
      seq: 0, asked: false, order: [], blocks: new Map(), chunks: new Map(), tails: new Map(),
      dialogs: new Map(), editor: null, settings: null, mismatch: null, views: new Set(),
      busy: false, awaiting: null,
    };
    STORES.set(id, store);
  }
  return store;
}

function post(model, msg) {
  // Every message to the kernel says which protocol it speaks.
  model.send({ v: PROTOCOL_VERSION, ...msg });
  if (!QUIET.has(msg.type)) awaitAnswer(model);
}

function kernelIdle(model) {
  // Whether the page's widget manager says its kernel is idle (JupyterLab, Notebook 7); where
  // it says nothing (Colab, a test), the kernel may be busy.
  try {
    const kernel = model.widget_manager && model.widget_manager.kernel;
    return Boolean(kernel) && kernel.status === "idle";
  } catch (error) {
    return false;
  }
}

function awaitAnswer(model) {
  // An action went: if nothing comes back in time from a kernel that is not idle, say so.
  const store = storeOf(model);
  if (store.awaiting !== null) clearTimeout(store.awaiting);
  store.awaiting = setTimeout(() => {
    store.awaiting = null;
    if (store.busy || kernelIdle(model)) return;
    store.busy = true;
    for (const view of store.views) view({ busy: true });
  }, HEARD_WITHIN_MS);
}

function heard(store) {
  // The kernel sent something: it is reading what the page sends. Whether the busy line goes.
  if (store.awaiting !== null) {
    clearTimeout(store.awaiting);
    store.awaiting = null;
  }
  if (!store.busy) return false;
  store.busy = false;
  return true;
}

function arrived(dialog) {
  // When its seconds left were counted: every view counts down from the same moment.
  return { ...dialog, arrived: Date.now() };
}

function apply(store, msg) {
  if (msg.type === "snapshot") {
    store.order = msg.order;
    store.blocks = new Map(Object.entries(msg.blocks));
    store.chunks = new Map(Object.entries(msg.chunks));
    store.tails = new Map(Object.entries(msg.tails));
    store.dialogs = new Map(Object.entries(msg.dialogs).map(([id, d]) => [id, arrived(d)]));
    store.editor = msg.editor;
    store.settings = msg.settings;
    store.seq = msg.seq;
    store.asked = false;
    return { all: true };
  }
  const changed = {
    blocks: new Set(), answers: new Set(), dialogs: new Set(), order: false,
    editor: "editor" in msg, settings: "settings" in msg,
  };
  for (const [key, html] of Object.entries(msg.blocks || {})) {
    store.blocks.set(key, html);
    changed.blocks.add(key);
  }
  for (const key of msg.drop || []) store.blocks.delete(key);
  for (const key of msg.reset || []) {
    store.chunks.set(key, []);
    changed.answers.add(key);
  }
  for (const [key, added] of Object.entries(msg.chunks || {})) {
    store.chunks.set(key, (store.chunks.get(key) || []).concat(added));
    changed.answers.add(key);
  }
  for (const [key, html] of Object.entries(msg.tails || {})) {
    store.tails.set(key, html);
    changed.answers.add(key);
  }
  for (const [id, dialog] of Object.entries(msg.dialogs || {})) {
    if (dialog === null) store.dialogs.delete(id);
    else store.dialogs.set(id, arrived(dialog));
    changed.dialogs.add(id);
  }
  if (changed.editor) store.editor = msg.editor;
  if (changed.settings) store.settings = msg.settings;
  if (msg.order) {
    store.order = msg.order;
    changed.order = true;
  }
  store.seq = msg.seq;
  return changed;
}

function initialize({ model }) {
  const store = storeOf(model);
  const received = (msg) => {
    if (!msg || (msg.type !== "snapshot" && msg.type !== "patch")) return;
    if (msg.v !== PROTOCOL_VERSION) {  // not ours to draw: say so, once
      if (store.mismatch === null) {
        store.mismatch = msg.v === undefined ? "none" : String(msg.v);
        for (const view of store.views) view({ all: true });
      }
      return;
    }
    if (msg.type === "patch" && msg.seq !== store.seq + 1) {
      if (!store.asked) {  // a message was missed: ask for the whole output once
        store.asked = true;
        post(model, { type: "ready", seq: store.seq });
      }
      return;
    }
    const changed = apply(store, msg);
    changed.busy = heard(store);
    for (const view of store.views) view(changed);
  };
  model.on("msg:custom", received);
  post(model, { type: "ready", seq: store.seq });  // a page made late (or reloaded) catches up
  return () => {
    model.off("msg:custom", received);
    if (store.awaiting !== null) clearTimeout(store.awaiting);
    STORES.delete(model.get("output_id"));
  };
}

// ------------------------------------------------------------------------------ a view

function button(cls, label, onClick, primary, title) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = `${cls} jupyter-button widget-button${primary ? " mod-primary" : ""}`;
  b.textContent = label;
  if (title) b.title = title;
  b.addEventListener("click", onClick);
  return b;
}

// A dialog's buttons say what the extension gets. Dismiss (or Escape) answers none: the
// extension is told the dialog was cancelled (the RPC's `cancelled: true`), which a confirm
// takes as false, the same as No, and a select, an input or an editor as no value.
const DISMISS = "Dismiss";
const DISMISS_TITLES = {
  confirm: "Close without answering (Escape): the extension is told you cancelled, " +
    "which it takes as No",
  select: "Close without choosing (Escape): the extension is told you cancelled and gets " +
    "no option",
  input: "Close without sending (Escape): the extension is told you cancelled and gets no text",
  editor: "Close without sending (Escape): the extension is told you cancelled and gets no text",
};
const YES_TITLE = "Answer yes: the extension gets true";
const NO_TITLE = "Answer no: the extension gets false";
const CHOOSE_TITLE = "Answer with this option";
const SUBMIT_TITLES = {
  select: "Answer with the option chosen in the list",
  input: "Send this text to the extension (Enter)",
  editor: "Send this text to the extension",
};

function dialogControls(model, dialog) {
  // A dialog's controls, built once per dialog and moved (not rebuilt) when its block is
  // drawn again, so what a person types and where the cursor is survive every update.
  const box = document.createElement("div");
  box.className = "atomic-dialog-controls";
  box.setAttribute("role", "group");
  box.setAttribute("aria-label", dialog.title);
  const title = document.createElement("strong");
  title.className = "atomic-dialog-title";
  title.textContent = dialog.title;
  box.appendChild(title);
  if (dialog.message) {
    const message = document.createElement("pre");
    message.className = "atomic-dialog-message";
    message.textContent = dialog.message;
    box.appendChild(message);
  }
  const row = document.createElement("div");
  row.className = "atomic-dialog-row";
  box.appendChild(row);
  let rule = null;
  const act = (action, extra) => {
    post(model, {
      type: "dialog", id: dialog.id, action, make_rule: !!(rule && rule.checked), ...extra,
    });
  };
  let field = null;
  // Every button of the dialog, Dismiss and the countdown last, in one row, each as wide as
  // its label (ipywidgets' buttons are 148 px: three did not fit a narrow notebook), each
  // saying in its title what it sends. Dismiss is set apart (outlined, after a gap): it is
  // no option.
  let actions = row;
  if (dialog.method === "select" && dialog.options.length <= dialog.buttons) {
    dialog.options.forEach((option, index) => {
      row.appendChild(button("atomic-option", option, () => act("choose", { index }), false,
        CHOOSE_TITLE));
    });
  } else if (dialog.method === "select") {
    field = document.createElement("select");
    field.className = "atomic-dialog-choice";
    field.setAttribute("aria-label", dialog.title);
    dialog.options.forEach((option, index) => {
      const item = document.createElement("option");
      item.value = String(index);
      item.textContent = option;
      field.appendChild(item);
    });
    row.appendChild(field);
    row.appendChild(button("atomic-submit", "Submit",
      () => act("choose", { index: Number(field.value) }), true, SUBMIT_TITLES.select));
  } else if (dialog.method === "confirm") {
    row.appendChild(button("atomic-yes", "Yes", () => act("respond", { value: true }), false,
      YES_TITLE));
    row.appendChild(button("atomic-no", "No", () => act("respond", { value: false }), false,
      NO_TITLE));
  } else {
    const editor = dialog.method === "editor";
    field = document.createElement(editor ? "textarea" : "input");
    field.className = editor ? "atomic-dialog-editor" : "atomic-dialog-input";
    if (editor) {
      field.rows = dialog.rows;
      field.value = dialog.prefill;
    } else {
      field.type = "text";
      field.placeholder = dialog.placeholder;
    }
    field.setAttribute("aria-label", dialog.title);
    const submit = () => act("respond", { value: field.value });
    field.addEventListener("keydown", (event) => {
      if (!editor && event.key === "Enter" && !event.isComposing) {
        event.preventDefault();
        submit();
      }
    });
    row.appendChild(field);
    if (editor) {  // the text area fills its row: the buttons go in the row under it
      actions = document.createElement("div");
      actions.className = "atomic-dialog-row";
      box.appendChild(actions);
    }
    actions.appendChild(button("atomic-submit", "Submit", submit, true,
      SUBMIT_TITLES[dialog.method]));
  }
  actions.appendChild(button("atomic-cancel", DISMISS, () => act("cancel", {}), false,
    DISMISS_TITLES[dialog.method]));
  const countdown = document.createElement("span");
  countdown.className = "atomic-countdown";
  countdown.setAttribute("role", "status");
  countdown.setAttribute("aria-live", "polite");
  actions.appendChild(countdown);
  if (dialog.rule_label) {
    const label = document.createElement("label");
    label.className = "atomic-make-rule";
    rule = document.createElement("input");
    rule.type = "checkbox";
    label.appendChild(rule);
    label.appendChild(document.createTextNode(" " + dialog.rule_label));
    box.appendChild(label);
  }
  const error = document.createElement("div");
  error.className = "atomic-dialog-error";
  error.setAttribute("role", "alert");
  box.appendChild(error);
  // Escape cancels; no key typed here is a notebook shortcut.
  box.addEventListener("keydown", (event) => {
    event.stopPropagation();
    if (event.key === "Escape") {
      event.preventDefault();
      act("cancel", {});
    }
  });
  let deadline = null;
  let timer = null;
  const tick = () => {
    if (deadline === null) return;
    const left = Math.max(0, Math.ceil((deadline - Date.now()) / 1000));
    const said = `expires in ${left} s`;
    if (countdown.textContent !== said) countdown.textContent = said;
  };
  const update = (data) => {
    error.textContent = data.error || "";
    deadline = data.seconds_left === null ? null : data.arrived + data.seconds_left * 1000;
    if (deadline === null) countdown.textContent = "";
    tick();
    if (deadline !== null && timer === null) timer = setInterval(tick, 1000);
  };
  update(dialog);
  const stop = () => clearInterval(timer);
  return { box, update, stop };
}

function editorControls(model, data) {
  // The panel's editor: typing is sent as it happens (the session keeps the editor's text);
  // Shift+Enter, Ctrl+Enter, Cmd+Enter or Send sends the prompt. Enter alone adds a line.
  const box = document.createElement("div");
  box.className = "atomic-editor";
  const area = document.createElement("textarea");
  area.className = "atomic-editor-input";
  area.rows = data.rows;
  area.placeholder = data.placeholder;
  area.setAttribute("aria-label", data.placeholder);
  area.spellcheck = true;
  const send = button("atomic-send", "Send", () => {
    post(model, { type: "send", value: area.value });
  }, true);
  send.title = "Send to the agent (Shift+Enter)";
  area.addEventListener("input", () => post(model, { type: "editor", value: area.value }));
  area.addEventListener("keydown", (event) => {
    event.stopPropagation();  // a key in the editor is not a notebook shortcut
    const sends = event.key === "Enter" && (event.shiftKey || event.ctrlKey || event.metaKey);
    if (sends && !event.isComposing) {
      event.preventDefault();
      if (!send.disabled) post(model, { type: "send", value: area.value });
    }
  });
  const row = document.createElement("div");
  row.className = "atomic-dialog-row";
  row.appendChild(send);
  box.appendChild(area);
  box.appendChild(row);
  let rev = null;
  const update = (next) => {
    if (next.rev !== rev) {  // the agent (or a send) set the text: typing never comes back
      rev = next.rev;
      if (area.value !== next.value) area.value = next.value;
    }
    send.disabled = !!next.disabled;
  };
  update(data);
  return { box, update, stop: () => {} };
}

function choice(cls, label) {
  const field = document.createElement("select");
  field.className = cls;
  field.setAttribute("aria-label", label);
  return field;
}

function settingsControls(model, data) {
  // The panel's settings: each change is sent at once ({type: "model" | "thinking", value});
  // the kernel answers with the panel drawn again (or an error under the controls).
  const box = document.createElement("div");
  box.className = "atomic-settings";
  box.addEventListener("keydown", (event) => event.stopPropagation());
  const row = document.createElement("div");
  row.className = "atomic-dialog-row";
  box.appendChild(row);
  const models = choice("atomic-model-choice", "Model");
  models.addEventListener("change", () => post(model, { type: "model", value: models.value }));
  const levels = choice("atomic-thinking-choice", "Thinking level");
  levels.addEventListener("change", () => post(model, { type: "thinking", value: levels.value }));
  const compact = button("atomic-compact", "Compact", () => post(model, { type: "compact" }));
  compact.title = "Summarise the conversation so far to free the context window";
  const label = (text, field) => {
    const element = document.createElement("label");
    element.textContent = text + " ";
    element.appendChild(field);
    return element;
  };
  row.appendChild(label("Model", models));
  row.appendChild(label("Thinking", levels));
  row.appendChild(compact);
  // The key field: the value goes to the kernel once and the field is emptied at once.
  const keyRow = document.createElement("div");
  keyRow.className = "atomic-dialog-row atomic-key-row";
  const keyLabel = document.createElement("label");
  const key = document.createElement("input");
  key.type = "password";
  key.className = "atomic-key-input";
  key.autocomplete = "off";
  key.spellcheck = false;
  const keep = document.createElement("input");
  keep.type = "checkbox";
  keep.className = "atomic-key-keep";
  const keepLabel = document.createElement("label");
  keepLabel.appendChild(keep);
  keepLabel.appendChild(document.createTextNode(" keep it after this kernel (the agent's credential store)"));
  const useKey = () => {
    if (!key.value) return;
    const value = key.value;
    key.value = "";
    post(model, { type: "key", value, keep: keep.checked });
  };
  key.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.isComposing) {
      event.preventDefault();
      useKey();
    }
  });
  keyRow.appendChild(keyLabel);
  keyRow.appendChild(key);
  keyRow.appendChild(button("atomic-key-use", "Use this key", useKey, true));
  keyRow.appendChild(keepLabel);
  box.appendChild(keyRow);
  const error = document.createElement("div");
  error.className = "atomic-dialog-error";
  error.setAttribute("role", "alert");
  box.appendChild(error);
  let listed = null;
  let levelsListed = null;
  const update = (next) => {
    const listing = JSON.stringify([next.models, next.model]);
    if (listing !== listed) {  // drawn again only when the list or the current model changed
      listed = listing;
      models.replaceChildren();
      const groups = new Map();
      for (const item of next.models) {
        let group = groups.get(item.provider);
        if (!group) {
          group = document.createElement("optgroup");
          group.label = item.provider;
          groups.set(item.provider, group);
          models.appendChild(group);
        }
        const option = document.createElement("option");
        option.value = item.value;
        option.textContent = item.label + (item.value === next.model ? " (current)" : "");
        group.appendChild(option);
      }
    }
    if (models.value !== next.model) models.value = next.model;
    const levelListing = JSON.stringify(next.levels);
    if (levelListing !== levelsListed) {
      levelsListed = levelListing;
      levels.replaceChildren();
      for (const level of next.levels) {
        const option = document.createElement("option");
        option.value = level;
        option.textContent = level;
        levels.appendChild(option);
      }
    }
    if (levels.value !== next.level) levels.value = next.level;
    models.disabled = !!next.disabled || next.models.length === 0;
    levels.disabled = !!next.disabled || next.levels.length <= 1;
    compact.disabled = !!next.disabled;
    keyRow.style.display = next.key ? "" : "none";
    if (next.key) {
      keyLabel.textContent = `API key for ${next.key.provider} (${next.key.variable}) `;
      key.setAttribute("aria-label", `API key for ${next.key.provider}`);
    }
    error.textContent = next.error || "";
  };
  update(data);
  return { box, update, stop: () => {} };
}

// The panel's own parts, each drawn in its place ([data-editor], [data-settings]).
const PANEL_PARTS = [["editor", editorControls], ["settings", settingsControls]];

function render({ model, el }) {
  const store = storeOf(model);
  // The page's own styles for rendered HTML (code blocks, tables, quotes), as a record has.
  el.classList.add("jp-RenderedHTMLCommon");
  const root = document.createElement("div");
  root.className = model.get("root_class");
  root.setAttribute("style", model.get("root_style"));
  // The kernel is busy (see awaitAnswer): in the view only while it says so, so the output's
  // layout is the record's otherwise (the root stays its element's last child).
  const busyNote = document.createElement("div");
  busyNote.className = "atomic-kernel-busy";
  busyNote.setAttribute("role", "status");
  busyNote.setAttribute("aria-live", "polite");
  el.appendChild(root);
  const blockEls = new Map();  // key -> its element
  const answerEls = new Map();  // key -> { chunks: [element], tail: element }
  const dialogEls = new Map();  // id -> its controls
  const panelEls = { editor: null, settings: null };  // the panel's editor and settings

  root.addEventListener("click", (event) => {
    // A button of ours: its data-action is the message's type, its other data-* its fields.
    const target = event.target.closest("[data-action]");
    if (!target || !root.contains(target) || target.disabled) return;
    const { action, ...fields } = target.dataset;
    post(model, { ...fields, type: action });
  });

  const answerOf = (key) => {
    let answer = answerEls.get(key);
    if (!answer) {
      const tail = document.createElement("div");
      tail.className = "atomic-assistant-tail";
      tail.style.display = "contents";
      answer = { chunks: [], tail };
      answerEls.set(key, answer);
    }
    return answer;
  };

  const drawAnswer = (key) => {
    const answer = answerOf(key);
    const chunks = store.chunks.get(key) || [];
    if (chunks.length < answer.chunks.length) {
      for (const chunk of answer.chunks) chunk.remove();
      answer.chunks = [];
    }
    for (const html of chunks.slice(answer.chunks.length)) {
      const chunk = document.createElement("div");
      chunk.className = "atomic-assistant-chunk";
      chunk.style.display = "contents";
      chunk.innerHTML = html;
      fixLinks(chunk);
      answer.chunks.push(chunk);
      answer.tail.before(chunk);
    }
    const tail = store.tails.get(key) || "";
    if (answer.tail.dataset.html !== tail) {
      answer.tail.innerHTML = tail;
      answer.tail.dataset.html = tail;
      fixLinks(answer.tail);
    }
  };

  const fill = (element) => {
    for (const place of element.querySelectorAll("[data-answer]")) {
      const answer = answerOf(place.dataset.answer);
      for (const chunk of answer.chunks) place.appendChild(chunk);
      place.appendChild(answer.tail);
      drawAnswer(place.dataset.answer);
    }
    for (const place of element.querySelectorAll("[data-dialog]")) {
      const data = store.dialogs.get(place.dataset.dialog);
      if (!data) continue;
      let controls = dialogEls.get(data.id);
      if (!controls) {
        controls = dialogControls(model, data);
        dialogEls.set(data.id, controls);
      }
      place.appendChild(controls.box);
    }
    for (const [part, draw] of PANEL_PARTS) {
      const place = element.querySelector(`[data-${part}]`);
      const data = store[part];
      if (!place || !data) continue;
      if (!panelEls[part]) panelEls[part] = draw(model, data);
      place.appendChild(panelEls[part].box);
    }
  };

  const drawBlock = (key) => {
    let element = blockEls.get(key);
    if (!element) {
      element = document.createElement("div");
      element.style.display = "contents";
      element.dataset.block = key;
      blockEls.set(key, element);
    }
    // Open folds survive the block being drawn again (and so do the focus and the cursor:
    // see draw).
    const open = [...element.querySelectorAll("details")].map((d) => d.open);
    for (const holder of element.querySelectorAll("[data-children]")) {
      holder.replaceChildren();  // the blocks listed in it keep what they hold
    }
    for (const place of element.querySelectorAll(
      "[data-answer], [data-dialog], [data-editor], [data-settings]")) {
      place.replaceChildren();  // keep the answer's and the dialogs' nodes out of the way
    }
    element.innerHTML = store.blocks.get(key) || "";
    fixLinks(element);
    [...element.querySelectorAll("details")].forEach((d, i) => {
      if (open[i]) d.open = true;
    });
    fill(element);
  };

  const placeOf = (key) => {
    const at = key.indexOf("/");
    if (at < 0) return root;
    const parent = key.slice(0, at);
    const holder = blockEls.get(parent);
    if (!holder) return root;
    for (const place of holder.querySelectorAll("[data-children]")) {
      if (place.dataset.children === parent) return place;
    }
    return root;
  };

  const drawOrder = () => {
    const wanted = new Map();  // where -> its blocks' elements, in order
    for (const key of store.order) {
      if (!blockEls.has(key)) drawBlock(key);
      const where = placeOf(key);
      if (!wanted.has(where)) wanted.set(where, []);
      wanted.get(where).push(blockEls.get(key));
    }
    const kept = new Set(store.order);
    for (const [key, element] of blockEls) {
      if (!kept.has(key)) {
        element.remove();
        blockEls.delete(key);
      }
    }
    for (const [where, elements] of wanted) {
      elements.forEach((element, index) => {
        if (where.children[index] !== element) {
          where.insertBefore(element, where.children[index] || null);
        }
      });
    }
  };

  const forgetDialogs = () => {
    for (const [id, controls] of dialogEls) {
      if (!store.dialogs.has(id)) {
        controls.stop();
        controls.box.remove();
        dialogEls.delete(id);
      }
    }
  };

  const updatePanel = () => {
    for (const [part, draw] of PANEL_PARTS) {
      const controls = panelEls[part];
      if (controls && store[part]) {
        controls.update(store[part]);
      } else if (controls) {
        controls.box.remove();
        panelEls[part] = null;
      } else if (store[part]) {  // its place was drawn before it came
        const place = root.querySelector(`[data-${part}]`);
        if (place) {
          panelEls[part] = draw(model, store[part]);
          place.appendChild(panelEls[part].box);
        }
      }
    }
  };

  const drawMismatch = () => {
    // A message of another protocol version: nothing of it is drawn, and the output says why.
    const said = document.createElement("div");
    said.className = "atomic-protocol-mismatch";
    said.setAttribute("role", "alert");
    said.textContent = `This output was sent by another version of atomic-jupyter (page protocol ${
      store.mismatch}; this page speaks ${PROTOCOL_VERSION}). Run its cell again, or reload the page.`;
    root.replaceChildren(said);
  };

  const drawChanged = (changed) => {
    if (store.mismatch !== null) {
      drawMismatch();
      return;
    }
    if (changed.all) {
      for (const key of store.order) drawBlock(key);
      drawOrder();
      for (const [id, controls] of dialogEls) {
        const data = store.dialogs.get(id);
        if (data) controls.update(data);
      }
      forgetDialogs();
      updatePanel();
      return;
    }
    for (const id of changed.dialogs) {
      const data = store.dialogs.get(id);
      const controls = dialogEls.get(id);
      if (data && controls) controls.update(data);
    }
    const shown = new Set(store.order);
    for (const key of changed.blocks) if (shown.has(key)) drawBlock(key);
    if (changed.order || changed.blocks.size) drawOrder();  // a list's holder drawn again
    for (const key of changed.answers) if (answerEls.has(key)) drawAnswer(key);
    forgetDialogs();
    if (changed.editor || changed.settings) updatePanel();
  };

  const draw = (changed) => {
    const note = store.busy && store.mismatch === null ? BUSY_TEXT : "";
    if (note && !busyNote.isConnected) {
      busyNote.textContent = note;
      el.appendChild(busyNote);
    } else if (!note && busyNote.isConnected) {
      busyNote.remove();
    }
    if (Object.keys(changed).length === 1 && changed.busy) return;  // only the note changed
    // What a person is doing survives every update: the focus, and the cursor in a text box
    // (its node is moved, never made again, so its text stays).
    const active = document.activeElement;
    const focused = active && root.contains(active) ? active : null;
    const selection = focused && typeof focused.selectionStart === "number"
      ? [focused.selectionStart, focused.selectionEnd, focused.selectionDirection] : null;
    drawChanged(changed);
    if (focused && focused.isConnected && document.activeElement !== focused) {
      focused.focus({ preventScroll: true });
      if (selection) focused.setSelectionRange(...selection);
    }
  };

  store.views.add(draw);
  draw({ all: true });
  const stopWatching = watchKernel(model, el);
  return () => {
    store.views.delete(draw);
    stopWatching();
    for (const controls of dialogEls.values()) controls.stop();
  };
}

function watchKernel(model, el) {
  // A restart or a shut-down kernel leaves our views as they were: ipywidgets marks its own
  // views "jupyter-widgets-disconnected" when the kernel restarts, not an anywidget's (its
  // model's comm_live_update reaches no view class). So each view marks itself: when its
  // model's comm goes (ipywidgets' comm_live_update, sent only as a kernel restarts), and,
  // where the page's widget manager tells its kernel (JupyterLab, Notebook 7), when that
  // kernel is gone. The output's record copy then shows instead of controls that can no
  // longer answer. Marked for good: the model went with the kernel.
  let timer = null;
  const mark = () => {
    el.classList.add("jupyter-widgets-disconnected");
    if (timer !== null) clearInterval(timer);
  };
  model.on("comm_live_update", mark);
  const stop = () => {
    model.off("comm_live_update", mark);
    if (timer !== null) clearInterval(timer);
  };
  let manager = null;
  try {
    manager = model.widget_manager;
  } catch (error) {
    return stop;
  }
  if (!manager || !manager.kernel) return stop;
  const first = manager.kernel;
  const look = () => {
    const kernel = manager.kernel;
    if (kernel === first && !kernel.isDisposed && kernel.status !== "dead") return;
    mark();
  };
  timer = setInterval(look, 1000);
  return stop;
}

function fixLinks(element) {
  // A link opens in a new tab: followed in place, it would leave the notebook.
  for (const link of element.querySelectorAll("a[href]")) {
    link.target = "_blank";
    link.rel = "noopener noreferrer";
  }
}

// Every output's model waits for these (its own module is a short stub: see
// output_widget.py); this module's own model, the holder, draws nothing.
const slot = (globalThis["__ATOMIC_OUTPUT_KEY__"] ||= { waiting: [] });
slot.api = { initialize, render };
for (const resolve of slot.waiting.splice(0)) resolve(slot.api);

export default { initialize() {} };
