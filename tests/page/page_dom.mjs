// The real page module (atomic_jupyter/ui/output_widget.js) loaded in a DOM (jsdom), with
// models that stand in for anywidget's: what the unit tests (output_widget.test.mjs) and the
// Python tests' page (page_driver.mjs) both draw outputs with.
//
// A model here is what anywidget hands the module: get(name), on/off("msg:custom"), send().
// What the module sends is kept in `sent`, in order; `receive(msg)` delivers a message from
// the kernel as anywidget does.
import { JSDOM } from "jsdom";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
export const MODULE_PATH = join(HERE, "..", "..", "atomic_jupyter", "ui", "output_widget.js");

const dom = new JSDOM("<!doctype html><html><head></head><body></body></html>", {
  pretendToBeVisual: true,
});
for (const name of ["window", "document", "Node", "HTMLElement", "Event", "KeyboardEvent"]) {
  globalThis[name] = name === "window" ? dom.window : dom.window[name];
}

await import(pathToFileURL(MODULE_PATH).href);
// The module hands its api to the outputs' stubs under a key made of the package's version;
// loaded as a file, the key is still its placeholder.
const api = globalThis.__ATOMIC_OUTPUT_KEY__.api;

/** The protocol version the module speaks (as written in it). */
export const PROTOCOL_VERSION = Number(
  /const PROTOCOL_VERSION = (\d+);/.exec(readFileSync(MODULE_PATH, "utf8"))[1],
);

let made = 0;

/** A model of one output, with a view drawn in the document. */
export class PageOutput {
  constructor({ id, rootClass = "", rootStyle = "" } = {}) {
    this.state = { output_id: id || `output-${++made}`, root_class: rootClass, root_style: rootStyle };
    this.handlers = new Map();
    this.sent = [];
    const model = {
      get: (name) => this.state[name],
      on: (event, handler) => {
        if (!this.handlers.has(event)) this.handlers.set(event, new Set());
        this.handlers.get(event).add(handler);
      },
      off: (event, handler) => this.handlers.get(event)?.delete(handler),
      send: (msg) => this.sent.push(JSON.parse(JSON.stringify(msg))),
    };
    this.model = model;
    this.el = document.createElement("div");
    document.body.appendChild(this.el);
    this.disposeModel = api.initialize({ model });
    this.disposeView = api.render({ model, el: this.el });
  }

  /** Deliver a message from the kernel, as anywidget does. */
  receive(msg) {
    for (const handler of [...(this.handlers.get("msg:custom") || [])]) handler(msg, []);
  }

  /** What the module sent since the last call. */
  take() {
    return this.sent.splice(0);
  }

  /** The output's root element (inside the view's element). */
  get root() {
    return this.el.firstElementChild;
  }

  /** The output as a person sees it, as HTML: what they typed and chose included; `flat`:
   * without the module's own wrappers that draw no box of their own (display: contents: a
   * block's, an answer's chunks and tail), so the blocks' HTML reads as the kernel sent it. */
  html({ flat = true } = {}) {
    const copy = this.root.cloneNode(true);
    const live = [...this.root.querySelectorAll("textarea, input, select")];
    const copied = [...copy.querySelectorAll("textarea, input, select")];
    live.forEach((field, index) => {
      const twin = copied[index];
      if (field.tagName === "TEXTAREA") twin.textContent = field.value;
      else if (field.tagName === "SELECT") {
        [...twin.options].forEach((option, at) => {
          if (at === field.selectedIndex) option.setAttribute("selected", "");
          else option.removeAttribute("selected");
        });
      } else if (field.type === "checkbox") {
        if (field.checked) twin.setAttribute("checked", "");
        else twin.removeAttribute("checked");
      } else if (field.type !== "password" && field.value) twin.setAttribute("value", field.value);
    });
    if (flat) {
      for (const wrapper of [...copy.querySelectorAll("[style]")].reverse()) {
        if (wrapper.getAttribute("style") === "display: contents;") wrapper.replaceWith(...wrapper.childNodes);
      }
    }
    return copy.innerHTML;
  }

  /** What the module keeps of the output (its store, by the output's id), as JSON. */
  store() {
    const store = globalThis.__atomicOutputs.get(this.state.output_id);
    const entries = (map) => Object.fromEntries(map);
    return {
      seq: store.seq, order: store.order, blocks: entries(store.blocks),
      chunks: entries(store.chunks), tails: entries(store.tails),
      dialogs: Object.fromEntries([...store.dialogs].map(([id, { arrived, ...d }]) => [id, d])),
      editor: store.editor, settings: store.settings, mismatch: store.mismatch,
    };
  }

  /** The nth element matching `selector`. */
  find(selector, nth = 0) {
    const found = this.root.querySelectorAll(selector)[nth];
    if (!found) throw new Error(`no element ${selector} #${nth} in the output`);
    return found;
  }

  /** What a person does: click, type (input), choose (a select's value), or press a key. */
  act({ selector, nth = 0, action = "click", value, key, shift = false }) {
    const element = this.find(selector, nth);
    const { window } = dom;
    if (action === "click") element.click();
    else if (action === "type") {
      element.value = value;
      element.dispatchEvent(new window.Event("input", { bubbles: true }));
    } else if (action === "choose") {
      element.value = value;
      element.dispatchEvent(new window.Event("change", { bubbles: true }));
    } else if (action === "check") {
      element.checked = Boolean(value);
      element.dispatchEvent(new window.Event("change", { bubbles: true }));
    } else if (action === "key") {
      element.dispatchEvent(
        new window.KeyboardEvent("keydown", { key, shiftKey: shift, bubbles: true, cancelable: true }),
      );
    } else throw new Error(`unknown action ${action}`);
  }

  /** The view and the model go, as when the output is closed. */
  close() {
    this.disposeView();
    this.disposeModel();
    this.el.remove();
  }
}
