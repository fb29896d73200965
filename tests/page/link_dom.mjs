// The notebook extension's TypeScript (labextension/src) loaded in a DOM (jsdom), with small
// stand-ins of what JupyterLab gives it (a notebook panel, its cells, a kernel connection and
// its comms): what its unit tests (notebook_link.test.mjs) and the Python tests' notebook page
// (link_driver.mjs, driven by tests/harness/notebook_page.py) both run.
//
// The sources are compiled with the extension's own TypeScript (labextension/node_modules,
// installed by the package's build) to CommonJS, once per version of the sources, in a folder
// of the system's temporary directory: lib/ is ES modules without file extensions, which Node
// does not load. '@jupyterlab/cells' (the one value the sources import from JupyterLab:
// CodeCell.execute) is a stub there that runs a cell through the stand-in session.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { JSDOM } from "jsdom";

const HERE = dirname(fileURLToPath(import.meta.url));
const EXTENSION = join(HERE, "..", "..", "labextension");
const SOURCES = join(EXTENSION, "src");
const TSC = join(EXTENSION, "node_modules", "typescript", "bin", "tsc");

if (typeof document === "undefined") {
  const dom = new JSDOM("<!doctype html><html><head></head><body></body></html>");
  for (const name of ["window", "document", "Node", "HTMLElement", "Event", "KeyboardEvent"]) {
    globalThis[name] = name === "window" ? dom.window : dom.window[name];
  }
}

function compiled() {
  const hash = createHash("sha256");
  for (const name of readdirSync(SOURCES).sort()) hash.update(name).update(readFileSync(join(SOURCES, name)));
  hash.update(readFileSync(join(EXTENSION, "tsconfig.json")));
  const out = join(tmpdir(), `atomic-labextension-${hash.digest("hex").slice(0, 16)}`);
  if (existsSync(join(out, "link.js"))) return out;
  const work = mkdtempSync(`${out}-building-`);
  writeFileSync(join(work, "tsconfig.json"), JSON.stringify({
    extends: join(EXTENSION, "tsconfig.json"),
    compilerOptions: { module: "commonjs", rootDir: SOURCES, outDir: work },
    files: [join(SOURCES, "link.ts")],
    include: [],
  }));
  execFileSync(process.execPath, [TSC, "-p", join(work, "tsconfig.json")], { stdio: "inherit" });
  const stub = join(work, "node_modules", "@jupyterlab", "cells");
  mkdirSync(stub, { recursive: true });
  writeFileSync(join(stub, "index.js"),
    "exports.CodeCell = { execute: (cell, context) => context.execute(cell) };\n");
  try {
    renameSync(work, out);  // whole, at once: another process may be building it too
  } catch {
    rmSync(work, { recursive: true, force: true });  // it did: use its copy
  }
  return out;
}

const load = createRequire(join(compiled(), "index.js"));
/** The extension's modules, compiled. */
export const { lineDiff } = load("./diff.js");
export const { Proposal, ProposalError } = load("./proposal.js");
export const { NotebookLink } = load("./link.js");
export const { PROTOCOL, ANNOUNCE, PAGE_TARGET } = load("./protocol.js");

/** A Lumino signal as the extension uses them: connect(fn, self), and emit here. */
export function signal() {
  const slots = [];
  return {
    connect(fn, self) { slots.push(fn.bind(self)); },
    emit(...args) { for (const slot of slots) slot(null, ...args); },
  };
}

let made = 0;

/** A notebook as the extension sees it: shared cells, cell widgets with DOM nodes. Each cell
 * is [type, source, extra] (extra: {id, running, count, outputs}). */
export class Notebook {
  constructor(cells) {
    this.cells = cells.map(([type, source, extra]) => ({
      id: `cell-${++made}`, cell_type: type, source, ...extra,
    }));
    this.widgets = new Map();
    this.node = document.createElement("div");
    document.body.appendChild(this.node);
    const shared = this.cells;
    this.sharedModel = {
      cells: shared,
      disableDocumentWideUndoRedo: false,
      transactions: 0,
      transact(fn) { this.transactions += 1; fn(); },
      insertCell(index, cell) {
        const added = { id: `new-${++made}`, cell_type: cell.cell_type, source: cell.source };
        shared.splice(index, 0, added);
        return added;
      },
      deleteCell(index) { shared.splice(index, 1); },
    };
  }

  widget(shared) {
    let widget = this.widgets.get(shared.id);
    if (!widget) {
      const node = document.createElement("div");
      const input = document.createElement("div");
      node.appendChild(input);
      this.node.appendChild(node);
      widget = {
        node,
        inputArea: { node: input },
        model: {
          get id() { return shared.id; },
          get type() { return shared.cell_type; },
          get executionState() { return shared.running ? "running" : "idle"; },
          get executionCount() { return shared.count ?? null; },
          outputs: { toJSON: () => shared.outputs ?? [] },
          sharedModel: {
            getSource: () => shared.source,
            setSource: (source) => { shared.source = source; },
          },
        },
      };
      this.widgets.set(shared.id, widget);
    }
    return widget;
  }

  get content() {
    return {
      widgets: this.cells.map((c) => this.widget(c)),
      model: { sharedModel: this.sharedModel, deletedCells: [] },
      node: this.node,
      activeCell: null,
    };
  }

  sources() { return this.cells.map((c) => c.source); }
}

/** A comm as JupyterLab's kernel connection makes it (what is sent is kept): over the
 * subshell ``subshell`` once started, or never started (null: the setting "disabled"). */
export class Comm {
  constructor(target, subshell) {
    this.target = target;
    this.isDisposed = false;
    this.opened = null;
    this.sent = [];
    this.closed = false;
    this.onMsg = null;
    this.onClose = null;
    this.subshellId = null;
    this.subshellStarted = subshell === null
      ? new Promise(() => {})
      : Promise.resolve().then(() => { this.subshellId = subshell; });
  }
  open(data) { this.opened = JSON.parse(JSON.stringify(data)); }
  send(message) { this.sent.push(JSON.parse(JSON.stringify(message))); }
  close() { this.closed = true; this.isDisposed = true; }
  /** What was sent since the last call. */
  take() { return this.sent.splice(0); }
  /** The kernel sends ``data``. */
  deliver(data) { this.onMsg({ content: { data } }); }
}

/** A kernel connection: its comm targets, the comms the page made. */
export function kernelWith(subshell) {
  return {
    isDisposed: false,
    clientId: "client-1",
    targets: new Map(),
    removed: [],
    comms: [],
    registerCommTarget(name, callback) { this.targets.set(name, callback); },
    removeCommTarget(name, callback) {
      this.removed.push(name);
      if (this.targets.get(name) === callback) this.targets.delete(name);
    },
    requestCommInfo() { return Promise.resolve({ content: { status: "ok", comms: {} } }); },
    createComm(target) {
      const comm = new Comm(target, subshell);
      this.comms.push(comm);
      return comm;
    },
  };
}

export const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

/** A notebook page with the extension's link, its kernel announced, and (``kernelLinks``) the
 * kernel's ``linked`` delivered: what the tests drive. ``execute(cell)`` runs a cell for
 * ``run`` (by default: one line of output). */
export async function linked(cells, {
  subshell = "sub-1", path = "work/analysis.ipynb", app = "JupyterLab", execute, kernelLinks = true,
} = {}) {
  const notebook = new Notebook(cells);
  const kernel = kernelWith(subshell);
  const ran = [];
  const panel = {
    context: { path },
    node: document.createElement("div"),
    disposed: signal(),
    sessionContext: {
      kernelChanged: signal(),
      statusChanged: signal(),
      connectionStatusChanged: signal(),
      ready: Promise.resolve(),
      session: { kernel },
      execute: execute ?? (async (cell) => {
        ran.push(cell.model.id);
        const shared = notebook.cells.find((c) => c.id === cell.model.id);
        shared.count = ran.length;
        shared.outputs = [{ output_type: "stream", name: "stdout", text: "ran\n" }];
        return { content: { status: "ok" } };
      }),
    },
  };
  Object.defineProperty(panel, "content", { get: () => notebook.content });
  const link = new NotebookLink(panel, app);
  await tick();  // context.ready, requestCommInfo
  kernel.targets.get(ANNOUNCE)();  // the kernel announces itself
  const comm = kernel.comms.at(-1);
  if (kernelLinks) comm.deliver({ type: "linked", v: PROTOCOL });  // as the kernel answers a hello
  await tick();  // the comm's subshell, if any
  let number = 0;
  const ask = (op, fields = {}) => {
    const id = ++number;
    comm.deliver({ type: "request", v: PROTOCOL, id, op, ...fields });
    return id;
  };
  const reply = (id) => comm.sent.find((m) => m.type === "reply" && m.id === id);
  return { notebook, kernel, panel, link, comm, ask, reply, ran };
}
