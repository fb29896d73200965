// The notebook extension's TypeScript (labextension/src) tested as itself, in a DOM (jsdom):
// the line diff, a proposal's checks and its apply, and the link's handling of the kernel's
// messages (version, requests, decisions, the subshell's "here", its announcement target
// removed on dispose), against the stand-ins of JupyterLab's notebook and kernel in
// link_dom.mjs (which compiles the sources). The Python tests' notebook page runs the same
// code (link_driver.mjs).
// Run: node --test tests/page (make test does).
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  ANNOUNCE, Notebook, PAGE_TARGET, PROTOCOL, Proposal, ProposalError, lineDiff, linked, tick,
} from "./link_dom.mjs";

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

/** Lay the cells of ``panel`` out as JupyterLab 4 does: the input area inside a wrapper with
 * its collapser, then the outputs' wrapper, then the footer. Returns each cell's parts. */
function asJupyterLab(panel) {
  return panel.content.widgets.map((widget) => {
    const part = (cls) => Object.assign(document.createElement("div"), { className: cls });
    const [header, wrapper, outputs, footer] =
      ["jp-CellHeader", "jp-Cell-inputWrapper", "jp-Cell-outputWrapper", "jp-CellFooter"].map(part);
    wrapper.append(part("jp-Collapser"), widget.inputArea.node);
    outputs.append(Object.assign(part("jp-OutputArea"), { textContent: "old output" }));
    widget.node.replaceChildren(header, wrapper, outputs, footer);
    widget.node.tabIndex = -1;  // as a cell is: the notebook puts the keyboard on it
    return { node: widget.node, wrapper, outputs, footer };
  });
}

/** What the page's live region says now. */
const announced = () => document.getElementById("aj-proposal-announcer")?.textContent ?? "";

/** Wait until the live region says ``text`` (polling every few milliseconds), at most 1 s. */
async function announces(text) {
  const deadline = Date.now() + 1000;
  while (announced() !== text) {
    if (Date.now() > deadline) assert.fail(`the live region says ${JSON.stringify(announced())}, not ${JSON.stringify(text)}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

test("a change shows right under its cell's source, before the cell's outputs", () => {
  const panel = panelOf([["code", "x = 1"], ["code", "y = 1"], ["code", "z = 1"]]);
  const [first, second, third] = asJupyterLab(panel);
  const [a, b, c] = panel.notebook.cells;
  const proposal = new Proposal(panel, "placed", [
    { op: "replace", cell_id: a.id, source: "x = 2" },
    { op: "delete", cell_id: b.id },
    { op: "insert", after: c.id, cell_type: "code", source: "w = 0" },
  ], { [a.id]: "x = 1", [b.id]: "y = 1" });
  proposal.show(() => {});
  for (const cell of [first, second]) {
    const box = cell.node.querySelector(".aj-proposal");
    assert.equal(box.previousElementSibling, cell.wrapper);
    assert.equal(box.nextElementSibling, cell.outputs);
  }
  // A new cell's place is below its anchor cell, outputs and all.
  assert.equal(third.footer.nextElementSibling.className, "aj-proposal aj-proposal-insert aj-proposal-new-cell");
  proposal.dispose();
});

test("a change is a region named after it, with buttons that say what they decide, announced", async () => {
  const panel = panelOf([["code", "x = 1"], ["markdown", "# T"]]);
  asJupyterLab(panel);
  const [code, title] = panel.notebook.cells;
  const proposal = new Proposal(panel, "named", [
    { op: "replace", cell_id: code.id, source: "x = 2\ny = 3" },
    { op: "insert", after: title.id, cell_type: "markdown", source: "## More" },
  ], { [code.id]: "x = 1" });
  proposal.show(() => {});
  const boxes = [...document.querySelectorAll(".aj-proposal")];
  assert.deepEqual(boxes.map((b) => [b.getAttribute("role"), b.getAttribute("aria-label")]), [
    ["region", "The agent proposes to change cell 1: +2 −1 (part 1 of 2 of one change)"],
    ["region", "The agent proposes to add a new markdown cell below cell 2 (part 2 of 2 of one change)"],
  ]);
  const buttons = [...boxes[0].querySelectorAll("button")];
  assert.deepEqual(buttons.map((b) => [b.type, b.textContent, b.getAttribute("aria-label")]), [
    ["button", "Accept", "Accept the whole change (2 parts)"],
    ["button", "Reject", "Reject the whole change (2 parts)"],
  ]);
  const region = document.getElementById("aj-proposal-announcer");
  assert.deepEqual(
    ["role", "aria-live", "aria-atomic"].map((name) => region.getAttribute(name)),
    ["status", "polite", "true"],
  );
  await announces(
    "The agent proposes to change cell 1: +2 −1 and add a new markdown cell below cell 2 in " +
    "the notebook. Accept or Reject it in the notebook (Tab from the cell).");
  proposal.apply();
  proposal.dispose();
  await announces(
    "Applied the agent's change: change cell 1: +2 −1 and add a new markdown cell below cell 2.");
});

test("a change rejected in the cell, or taken back, is announced as such", async () => {
  const panel = panelOf([["code", "a"], ["code", "b"]]);
  const [first, second] = panel.notebook.cells;
  const rejected = new Proposal(panel, "r", [{ op: "delete", cell_id: first.id }], { [first.id]: "a" });
  rejected.show(() => {});
  rejected.settling("rejecting…");
  rejected.dispose();
  await announces("Rejected the agent's change: delete cell 1. Nothing was changed.");
  const withdrawn = new Proposal(panel, "w", [{ op: "replace", cell_id: second.id, source: "B" }], { [second.id]: "b" });
  withdrawn.show(() => {});
  withdrawn.dispose();
  await announces(
    "The agent's change is no longer proposed, and was not applied: change cell 2: +1 −1.");
});

test("Escape in the reason box keeps the change and goes to Reject, then back to the cell", () => {
  const panel = panelOf([["code", "x = 1"]]);
  const [cell] = asJupyterLab(panel);
  const [code] = panel.notebook.cells;
  const decided = [];
  const proposal = new Proposal(panel, "keys", [{ op: "replace", cell_id: code.id, source: "x = 2" }], { [code.id]: "x = 1" });
  proposal.show((accept, reason) => decided.push([accept, reason]));
  const box = cell.node.querySelector(".aj-proposal");
  const [accept, reject] = box.querySelectorAll("button");
  const reason = box.querySelector("input.aj-proposal-reason");
  const press = (target, key) => {
    const event = new KeyboardEvent("keydown", { key, bubbles: true, cancelable: true });
    target.dispatchEvent(event);
    return event;
  };
  let reached = 0;
  cell.node.addEventListener("keydown", () => reached++);  // what the notebook would see
  reason.focus();
  reason.value = "keep it";
  assert.ok(press(reason, "Escape").defaultPrevented);
  assert.equal(document.activeElement, reject);
  assert.equal(reason.value, "keep it");
  assert.ok(box.isConnected);
  press(reject, "Enter");  // the button's own key: the browser clicks it, the notebook never sees it
  press(accept, " ");
  assert.equal(reached, 0);
  assert.deepEqual(decided, []);
  press(reject, "Escape");
  assert.equal(document.activeElement, cell.node);  // back on its cell
  assert.ok(box.isConnected);
  reason.focus();
  press(reason, "Enter");
  assert.deepEqual(decided, [[false, "keep it"]]);
  // The keyboard stays in the change while the decision is on its way, then goes to the cell.
  reject.focus();
  proposal.settling("rejecting…");
  assert.equal(document.activeElement, box);
  proposal.dispose();
  assert.equal(document.activeElement, cell.node);
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
  await tick();
  const done = comm.sent.find((m) => m.type === "reply" && m.id === id);
  assert.equal(done.ok, true);
  assert.deepEqual(done.cells.map((c) => [c.status, c.outputs[0].text]), [["ok", "ran\n"]]);
  assert.deepEqual(ran, [code.id]);
  const refused = ask("run", { cell_ids: [markdown.id] });
  await tick();
  assert.match(comm.sent.find((m) => m.id === refused).error, /is markdown, not code/);
  link.dispose();
});

test("over a kernel subshell the link says 'here' once linked; with the setting disabled, never", async () => {
  const early = await linked([["code", "a"]], { subshell: "sub-9", kernelLinks: false });
  assert.deepEqual(early.comm.sent, []);  // not before the kernel read its hello
  early.comm.deliver({ type: "linked", v: PROTOCOL });
  await tick();
  assert.deepEqual(early.comm.sent, [{ type: "here", v: PROTOCOL }]);
  early.link.dispose();
  const over = await linked([["code", "a"]], { subshell: "sub-9" });
  assert.deepEqual(over.comm.sent.filter((m) => m.type === "here"), [{ type: "here", v: PROTOCOL }]);
  over.link.dispose();
  const disabled = await linked([["code", "a"]], { subshell: null });
  assert.deepEqual(disabled.comm.sent.filter((m) => m.type === "here"), []);
  disabled.link.dispose();
});
