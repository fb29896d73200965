// The notebook extension's TypeScript (labextension/src) tested as itself, in a DOM (jsdom):
// the line diff, a proposal's checks and its apply, and the link's handling of the kernel's
// messages (version, requests, decisions, the subshell's "here", its announcement target
// removed on dispose), against a small stand-in of JupyterLab's notebook and kernel.
//
// The sources are compiled with the extension's own TypeScript (labextension/node_modules,
// installed by the package's build) to CommonJS in a temporary folder: lib/ is ES modules
// without file extensions, which Node does not load. '@jupyterlab/cells' (the one value the
// sources import from JupyterLab: CodeCell.execute) is a stub there that runs a cell through
// the stand-in session.
// Run: node --test tests/page (make test does).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { JSDOM } from "jsdom";

const HERE = dirname(fileURLToPath(import.meta.url));
const EXTENSION = join(HERE, "..", "..", "labextension");
const TSC = join(EXTENSION, "node_modules", "typescript", "bin", "tsc");

const dom = new JSDOM("<!doctype html><html><head></head><body></body></html>");
for (const name of ["window", "document", "Node", "HTMLElement", "Event", "KeyboardEvent"]) {
  globalThis[name] = name === "window" ? dom.window : dom.window[name];
}

const OUT = mkdtempSync(join(tmpdir(), "atomic-labextension-"));
// The extension's own compiler options, but CommonJS into OUT.
writeFileSync(join(OUT, "tsconfig.json"), JSON.stringify({
  extends: join(EXTENSION, "tsconfig.json"),
  compilerOptions: { module: "commonjs", rootDir: join(EXTENSION, "src"), outDir: OUT },
  files: [join(EXTENSION, "src", "link.ts")],
  include: [],
}));
execFileSync(process.execPath, [TSC, "-p", join(OUT, "tsconfig.json")], { stdio: "inherit" });
const stub = join(OUT, "node_modules", "@jupyterlab", "cells");
mkdirSync(stub, { recursive: true });
writeFileSync(join(stub, "index.js"),
  "exports.CodeCell = { execute: (cell, context) => context.execute(cell) };\n");
const load = createRequire(join(OUT, "index.js"));
const { lineDiff } = load("./diff.js");
const { Proposal, ProposalError } = load("./proposal.js");
const { NotebookLink } = load("./link.js");
const { PROTOCOL, ANNOUNCE, PAGE_TARGET } = load("./protocol.js");

// ------------------------------------------------------------------------ stand-ins

function signal() {
  const slots = [];
  return {
    connect(fn, self) { slots.push(fn.bind(self)); },
    emit(...args) { for (const slot of slots) slot(null, ...args); },
  };
}

let made = 0;

/** A notebook as the extension sees it: shared cells, cell widgets with DOM nodes. */
class Notebook {
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
        const made_ = { id: `new-${++made}`, cell_type: cell.cell_type, source: cell.source };
        shared.splice(index, 0, made_);
        return made_;
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

/** A comm as JupyterLab's kernel connection makes it (what is sent is kept). */
class Comm {
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
      ? new Promise(() => {})  // the setting "disabled": never started
      : Promise.resolve().then(() => { this.subshellId = subshell; });
  }
  open(data) { this.opened = data; }
  send(message) { this.sent.push(JSON.parse(JSON.stringify(message))); }
  close() { this.closed = true; this.isDisposed = true; }
  /** The kernel sends ``data``. */
  deliver(data) { this.onMsg({ content: { data } }); }
}

function kernelWith(subshell) {
  const kernel = {
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
  return kernel;
}

/** A notebook panel with a link, its kernel announced; returns what the test drives. */
async function linked(cells, { subshell = "sub-1" } = {}) {
  const notebook = new Notebook(cells);
  const kernel = kernelWith(subshell);
  const ran = [];
  const panel = {
    content: notebook.content,
    context: { path: "work/analysis.ipynb" },
    node: document.createElement("div"),
    disposed: signal(),
    sessionContext: {
      kernelChanged: signal(),
      statusChanged: signal(),
      connectionStatusChanged: signal(),
      ready: Promise.resolve(),
      session: { kernel },
      execute: async (cell) => {
        ran.push(cell.model.id);
        const shared = notebook.cells.find((c) => c.id === cell.model.id);
        shared.count = ran.length;
        shared.outputs = [{ output_type: "stream", name: "stdout", text: "ran\n" }];
        return { content: { status: "ok" } };
      },
    },
  };
  Object.defineProperty(panel, "content", { get: () => notebook.content });
  const link = new NotebookLink(panel, "JupyterLab");
  await new Promise((resolve) => setTimeout(resolve, 0));  // context.ready, requestCommInfo
  kernel.targets.get(ANNOUNCE)();  // the kernel announces itself
  const comm = kernel.comms.at(-1);
  await new Promise((resolve) => setTimeout(resolve, 0));  // the comm's subshell, if any
  let number = 0;
  const ask = (op, fields = {}) => {
    const id = ++number;
    comm.deliver({ type: "request", v: PROTOCOL, id, op, ...fields });
    return id;
  };
  const reply = (id) => comm.sent.find((m) => m.type === "reply" && m.id === id);
  return { notebook, kernel, panel, link, comm, ask, reply, ran };
}

// ------------------------------------------------------------------------ the diff

test("the line diff keeps, removes and adds lines in order", () => {
  const rows = lineDiff("a\nb\nc", "a\nB\nc\nd");
  assert.deepEqual(rows.map((r) => `${r.kind}${r.text}`), [" a", "-b", "+B", " c", "+d"]);
  assert.deepEqual(lineDiff("same", "same").map((r) => r.kind), [" "]);
});

test("past its size a diff is all removed then all added", () => {
  const old = Array.from({ length: 3000 }, (_, i) => `old ${i}`).join("\n");
  const next = Array.from({ length: 3000 }, (_, i) => `new ${i}`).join("\n");
  const rows = lineDiff(old, next);
  assert.equal(rows.length, 6000);
  assert.ok(rows.slice(0, 3000).every((r) => r.kind === "-"));
  assert.ok(rows.slice(3000).every((r) => r.kind === "+"));
});

// ------------------------------------------------------------------------ a proposal

function panelOf(cells) {
  const notebook = new Notebook(cells);
  const panel = { notebook };
  Object.defineProperty(panel, "content", { get: () => notebook.content });
  return panel;
}

test("a proposal is checked against the notebook as it is now, in words for the model", () => {
  const panel = panelOf([["code", "x = 1"], ["markdown", "# T"], ["code", "busy()", { running: true }]]);
  const [code, , busy] = panel.notebook.cells;
  const refused = (operations, expected, why) => {
    assert.throws(() => new Proposal(panel, "c", operations, expected),
      (error) => error instanceof ProposalError && why.test(error.message));
  };
  refused([], {}, /no operations/);
  refused([{ op: "replace", cell_id: "nope", source: "y" }], {}, /no cell "nope"/);
  refused([{ op: "replace", cell_id: code.id, source: "y" }], {}, /read cell .* before changing it/);
  refused([{ op: "replace", cell_id: code.id, source: "y" }], { [code.id]: "x = 0" }, /changed since you read it/);
  refused([{ op: "replace", cell_id: code.id, source: "x = 1" }], { [code.id]: "x = 1" }, /its source now/);
  refused([{ op: "delete", cell_id: busy.id }], { [busy.id]: "busy()" }, /is running/);
  refused([{ op: "insert", after: "gone", source: "z" }], {}, /to insert after/);
  refused([{ op: "insert", cell_type: "image", source: "z" }], {}, /code, markdown or raw/);
  refused(
    [{ op: "delete", cell_id: code.id }, { op: "replace", cell_id: code.id, source: "q" }],
    { [code.id]: "x = 1" }, /changed twice/,
  );
  assert.deepEqual(panel.notebook.sources(), ["x = 1", "# T", "busy()"]);  // nothing changed
});

test("a proposal is shown in its cells as text, and applied as one edit", () => {
  const panel = panelOf([["code", "x = 1"], ["markdown", "# T"], ["code", "old()"]]);
  const [code, title, old] = panel.notebook.cells;
  const proposal = new Proposal(panel, "call-1", [
    { op: "replace", cell_id: code.id, source: "x = 2" },
    { op: "insert", after: title.id, cell_type: "code", source: "<img src=x onerror=alert(1)>" },
    { op: "delete", cell_id: old.id },
  ], { [code.id]: "x = 1", [old.id]: "old()" });
  assert.deepEqual(proposal.changes().map((c) => [c.op, c.index]), [["replace", 0], ["insert", 2], ["delete", 2]]);
  const decided = [];
  proposal.show((accept, reason) => decided.push([accept, reason]));
  const boxes = [...document.querySelectorAll(".aj-proposal")];
  assert.equal(boxes.length, 3);
  assert.match(boxes[0].querySelector(".aj-proposal-head").textContent, /change this cell: \+1 −1 \(part 1 of 3/);
  assert.equal(document.querySelectorAll("img").length, 0);  // the agent's text is text
  assert.ok(boxes[1].textContent.includes("<img src=x onerror=alert(1)>"));
  boxes[0].querySelector(".aj-proposal-reject").click();
  assert.deepEqual(decided, [[false, ""]]);
  const applied = proposal.apply();
  assert.deepEqual(panel.notebook.sources(), ["x = 2", "# T", "<img src=x onerror=alert(1)>"]);
  assert.equal(panel.notebook.sharedModel.transactions, 1);
  assert.deepEqual(applied.map((a) => [a.op, a.index]), [["insert", 2], ["replace", 0], ["delete", -1]]);
  proposal.dispose();
  assert.equal(document.querySelectorAll(".aj-proposal").length, 0);
});

test("a proposal whose cell was edited while it waited applies nothing", () => {
  const panel = panelOf([["code", "a"], ["code", "b"]]);
  const [first, second] = panel.notebook.cells;
  const proposal = new Proposal(panel, "c", [
    { op: "replace", cell_id: first.id, source: "A" },
    { op: "replace", cell_id: second.id, source: "B" },
  ], { [first.id]: "a", [second.id]: "b" });
  second.source = "b, edited by a person";
  assert.throws(() => proposal.apply(), /was edited while the change waited/);
  assert.deepEqual(panel.notebook.sources(), ["a", "b, edited by a person"]);
  proposal.dispose();
});

// ------------------------------------------------------------------------ the link

test("the link opens with its hello, answers a read with the version, and refuses another", async () => {
  const { kernel, comm, ask, reply, link } = await linked([["code", "x = 1", { count: 3 }]]);
  assert.equal(comm.target, PAGE_TARGET);
  assert.deepEqual(comm.opened, {
    type: "hello", protocol: PROTOCOL, client: "client-1", path: "work/analysis.ipynb", app: "JupyterLab",
  });
  const read = reply(ask("read"));
  assert.equal(read.v, PROTOCOL);
  assert.equal(read.ok, true);
  assert.deepEqual(read.cells.map((c) => [c.source, c.execution_count, c.running]), [["x = 1", 3, false]]);
  comm.deliver({ type: "request", v: PROTOCOL + 1, id: 99, op: "read" });
  const refused = reply(99);
  assert.equal(refused.ok, false);
  assert.match(refused.error, /speaks version \d+ of the notebook link/);
  comm.deliver({ type: "request", v: PROTOCOL, id: 100, op: "mystery" });
  assert.match(reply(100).error, /does not know the request "mystery"/);
  link.dispose();
  assert.deepEqual(kernel.removed, [ANNOUNCE]);  // its announcement target, removed
  assert.equal(comm.closed, true);
});

test("a change proposed, accepted in the cell, then decided and applied", async () => {
  const { notebook, comm, ask, reply, link } = await linked([["code", "x = 1"]]);
  const [cell] = notebook.cells;
  const proposed = reply(ask("propose", {
    call: "call-7", operations: [{ op: "replace", cell_id: cell.id, source: "x = 7" }],
    expected: { [cell.id]: "x = 1" }, ask: true,
  }));
  assert.equal(proposed.ok, true);
  assert.deepEqual(proposed.changes.map((c) => [c.old, c.new]), [["x = 1", "x = 7"]]);
  assert.match(reply(ask("propose", {
    call: "call-7", operations: [], expected: {}, ask: true,
  })).error, /proposed already/);
  notebook.widget(cell).node.querySelector(".aj-proposal-accept").click();
  const decision = comm.sent.find((m) => m.type === "decision");
  assert.deepEqual(decision, { type: "decision", call: "call-7", accept: true, reason: "", v: PROTOCOL });
  const decided = reply(ask("decide", { call: "call-7", accept: true }));
  assert.equal(decided.ok, true);
  assert.deepEqual(notebook.sources(), ["x = 7"]);
  assert.match(reply(ask("decide", { call: "call-7", accept: true })).error, /no longer shown/);
  link.dispose();
});

test("cells run as Shift+Enter would, and the run stops at the first that fails", async () => {
  const { notebook, ask, comm, ran, link } = await linked([["code", "a"], ["markdown", "# m"]]);
  const [code, markdown] = notebook.cells;
  const id = ask("run", { cell_ids: [code.id] });
  await new Promise((resolve) => setTimeout(resolve, 0));
  const done = comm.sent.find((m) => m.type === "reply" && m.id === id);
  assert.equal(done.ok, true);
  assert.deepEqual(done.cells.map((c) => [c.status, c.outputs[0].text]), [["ok", "ran\n"]]);
  assert.deepEqual(ran, [code.id]);
  const refused = ask("run", { cell_ids: [markdown.id] });
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.match(comm.sent.find((m) => m.id === refused).error, /is markdown, not code/);
  link.dispose();
});

test("over a kernel subshell the link says 'here' once it exists; with the setting disabled, never", async () => {
  const over = await linked([["code", "a"]], { subshell: "sub-9" });
  assert.deepEqual(over.comm.sent.filter((m) => m.type === "here"), [{ type: "here", v: PROTOCOL }]);
  over.link.dispose();
  const disabled = await linked([["code", "a"]], { subshell: null });
  assert.deepEqual(disabled.comm.sent.filter((m) => m.type === "here"), []);
  disabled.link.dispose();
});
