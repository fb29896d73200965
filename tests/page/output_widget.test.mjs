// The page's module (atomic_jupyter/ui/output_widget.js) tested as itself, in a DOM: the
// recorded conversations the Python tests check against the kernel (sequences/*.json,
// written by tests/harness/page_sequences.py) replayed into it, and what no conversation
// shows (focus kept, folds kept, links, the countdown, another protocol version).
// Run: node --test tests/page (make test does).
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { PROTOCOL_VERSION, PageOutput } from "./page_dom.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const SEQUENCES = join(HERE, "sequences");

function check(output, facts, where) {
  const text = output.root.textContent;
  for (const said of facts.text || []) assert.ok(text.includes(said), `${where}: shows ${JSON.stringify(said)} in ${JSON.stringify(text)}`);
  for (const said of facts.absent || []) assert.ok(!text.includes(said), `${where}: does not show ${JSON.stringify(said)}`);
  for (const [selector, count] of Object.entries(facts.count || {})) {
    assert.equal(output.root.querySelectorAll(selector).length, count, `${where}: ${selector}`);
  }
  for (const [selector, value] of Object.entries(facts.value || {})) {
    assert.equal(output.find(selector).value, value, `${where}: the value of ${selector}`);
  }
  for (const [selector, disabled] of Object.entries(facts.disabled || {})) {
    assert.equal(output.find(selector).disabled, disabled, `${where}: ${selector} disabled`);
  }
}

for (const file of readdirSync(SEQUENCES).filter((name) => name.endsWith(".json")).sort()) {
  const sequence = JSON.parse(readFileSync(join(SEQUENCES, file), "utf8"));
  test(`the recorded conversation "${sequence.name}" plays out in the page`, () => {
    assert.equal(sequence.protocol, PROTOCOL_VERSION);
    const output = new PageOutput({ rootClass: "atomic-run" });
    try {
      sequence.steps.forEach((step, index) => {
        const where = `${sequence.name}, step ${index}`;
        if ("down" in step) {
          output.receive(step.down);
        } else if ("sends" in step) {
          assert.deepEqual(output.take(), step.sends, `${where}: what the page sent of itself`);
        } else if ("act" in step) {
          assert.deepEqual(output.take(), [], `${where}: nothing sent before the act`);
          output.act(step.act);
          assert.deepEqual(output.take(), step.up, `${where}: what the act sent`);
        } else {
          check(output, step.expect, where);
        }
      });
      assert.deepEqual(output.take(), [], "nothing more was sent");
    } finally {
      output.close();
    }
  });
}

// ------------------------------------------------------------------------ no conversation shows

const V = PROTOCOL_VERSION;

function patch(seq, fields) {
  return { type: "patch", v: V, seq, ...fields };
}

function withOutput(body) {
  const output = new PageOutput();
  try {
    output.take();  // its ready
    body(output);
  } finally {
    output.close();
  }
}

test("a message of another protocol version is not drawn, and the output says why", () => {
  withOutput((output) => {
    output.receive(patch(1, { blocks: { a: "<p>drawn</p>" }, order: ["a"] }));
    output.receive({ ...patch(2, { blocks: { a: "<p>misdrawn</p>" } }), v: V + 1 });
    const text = output.root.textContent;
    assert.ok(!text.includes("drawn</p>") && !text.includes("misdrawn"), text);
    assert.match(text, new RegExp(`page protocol ${V + 1}; this page speaks ${V}`));
    assert.equal(output.root.querySelectorAll("[role=alert]").length, 1);
    assert.deepEqual(output.take(), []);  // nothing asked: a snapshot would be of that version too
  });
});

test("what a person types, the focus and the cursor survive the block being drawn again", () => {
  withOutput((output) => {
    const dialog = {
      id: "d", method: "input", title: "Name?", message: "", options: [], buttons: 8,
      placeholder: "", prefill: "", rows: 4, seconds_left: null, rule_label: "", error: "",
    };
    const place = '<div data-dialog="d"></div>';
    output.receive(patch(1, { blocks: { a: `<p>1</p>${place}` }, order: ["a"], dialogs: { d: dialog } }));
    const field = output.find("input");
    field.focus();
    field.value = "half typed";
    field.setSelectionRange(2, 4);
    output.receive(patch(2, { blocks: { a: `<p>2</p>${place}` } }));
    assert.equal(output.find("input"), field, "the same node, moved");
    assert.equal(document.activeElement, field);
    assert.deepEqual([field.value, field.selectionStart, field.selectionEnd], ["half typed", 2, 4]);
    output.receive(patch(3, { dialogs: { d: { ...dialog, error: "Not sent: too long" } } }));
    assert.equal(output.find(".atomic-dialog-error").textContent, "Not sent: too long");
    assert.equal(output.find("input").value, "half typed");
  });
});

test("an open fold stays open when its block is drawn again", () => {
  withOutput((output) => {
    const block = (n) => `<details><summary>s</summary><p>${n}</p></details>`;
    output.receive(patch(1, { blocks: { a: block(1) }, order: ["a"] }));
    output.find("details").open = true;
    output.receive(patch(2, { blocks: { a: block(2) } }));
    assert.equal(output.find("details").open, true);
    assert.equal(output.find("details p").textContent, "2");
  });
});

test("a link opens in a new tab, never in place of the notebook", () => {
  withOutput((output) => {
    output.receive(patch(1, { blocks: { a: '<a href="https://example.com">x</a>' }, order: ["a"] }));
    const link = output.find("a");
    assert.equal(link.target, "_blank");
    assert.equal(link.rel, "noopener noreferrer");
  });
});

test("a timed dialog counts down by itself, from when its controls arrived", (t) => {
  t.mock.timers.enable({ apis: ["setInterval", "Date"], now: 1_000_000 });
  withOutput((output) => {
    const dialog = {
      id: "t", method: "confirm", title: "Go?", message: "", options: [], buttons: 8,
      placeholder: "", prefill: "", rows: 4, seconds_left: 3.2, rule_label: "", error: "",
    };
    output.receive(patch(1, {
      blocks: { a: '<div data-dialog="t"></div>' }, order: ["a"], dialogs: { t: dialog },
    }));
    const countdown = output.find(".atomic-countdown");
    assert.equal(countdown.textContent, "expires in 4 s");
    t.mock.timers.tick(2000);
    assert.equal(countdown.textContent, "expires in 2 s");
    t.mock.timers.tick(5000);
    assert.equal(countdown.textContent, "expires in 0 s");
  });
});

test("a click on a disabled button of ours sends nothing", () => {
  withOutput((output) => {
    output.receive(patch(1, {
      blocks: { a: '<button data-action="install" disabled>Install</button>' }, order: ["a"],
    }));
    output.find("button").click();
    assert.deepEqual(output.take(), []);
  });
});

test("a second view of the same output draws everything the model received", () => {
  const output = new PageOutput();
  try {
    output.receive(patch(1, { blocks: { a: "<p>kept</p>" }, order: ["a"] }));
    const second = document.createElement("div");
    document.body.appendChild(second);
    const { api } = globalThis.__ATOMIC_OUTPUT_KEY__;
    const dispose = api.render({ model: output.model, el: second });
    assert.equal(second.textContent, "kept");
    output.receive(patch(2, { blocks: { a: "<p>both</p>" } }));
    assert.equal(second.textContent, "both");
    assert.equal(output.root.textContent, "both");
    dispose();
  } finally {
    output.close();
  }
});

// ------------------------------------------------------------------------ the kernel is busy

function busyNote(output) {
  // The line is in the view only while shown: absent, it reads as no text.
  return output.el.querySelector(".atomic-kernel-busy") ?? { textContent: "" };
}

const CONFIRM = {
  id: "c", method: "confirm", title: "Go?", message: "", options: [], buttons: 8,
  placeholder: "", prefill: "", rows: 4, seconds_left: null, rule_label: "", error: "",
};

test("a click the kernel does not answer in time says the kernel is busy, until it answers", (t) => {
  t.mock.timers.enable({ apis: ["setTimeout", "setInterval", "Date"], now: 1_000_000 });
  withOutput((output) => {
    output.receive(patch(1, {
      blocks: { a: '<div data-dialog="c"></div>' }, order: ["a"], dialogs: { c: CONFIRM },
    }));
    assert.equal(busyNote(output).textContent, "");
    output.act({ selector: ".atomic-yes" });
    assert.equal(output.take().length, 1);  // the answer went
    t.mock.timers.tick(900);
    assert.equal(busyNote(output).textContent, "");  // not yet: an idle kernel answers sooner
    t.mock.timers.tick(200);
    assert.match(busyNote(output).textContent, /The kernel is busy running a cell/);
    assert.match(busyNote(output).textContent, /no need to click again/);
    // The cell ended: the kernel read the answer and settled the dialog.
    output.receive(patch(2, { blocks: { a: "<p>→ Yes (clicked)</p>" }, dialogs: { c: null } }));
    assert.equal(busyNote(output).textContent, "");
    assert.equal(output.el.lastElementChild, output.root);  // gone from the view
    assert.ok(output.root.textContent.includes("→ Yes (clicked)"));
  });
});

test("a click answered in time shows no busy line", (t) => {
  t.mock.timers.enable({ apis: ["setTimeout", "setInterval", "Date"], now: 1_000_000 });
  withOutput((output) => {
    output.receive(patch(1, {
      blocks: { a: '<div data-dialog="c"></div>' }, order: ["a"], dialogs: { c: CONFIRM },
    }));
    output.act({ selector: ".atomic-no" });
    t.mock.timers.tick(50);
    output.receive(patch(2, { blocks: { a: "<p>→ No (clicked)</p>" }, dialogs: { c: null } }));
    t.mock.timers.tick(5000);
    assert.equal(busyNote(output).textContent, "");
  });
});

test("where the page's manager says its kernel is idle, no busy line is shown", (t) => {
  t.mock.timers.enable({ apis: ["setTimeout", "setInterval", "Date"], now: 1_000_000 });
  withOutput((output) => {
    output.model.widget_manager = { kernel: { status: "idle" } };
    output.receive(patch(1, {
      blocks: { a: '<button data-action="stop">Stop</button>' }, order: ["a"],
    }));
    output.find("button").click();
    t.mock.timers.tick(5000);
    assert.equal(busyNote(output).textContent, "");
  });
});

// ------------------------------------------------------------------------ a dialog's buttons

function dialogOf(method, fields = {}) {
  return { ...CONFIRM, id: method, method, ...fields };
}

function drawnDialog(output, dialog) {
  // The dialog drawn in its place: its buttons and the rows they are in.
  output.receive(patch(1, {
    blocks: { a: `<div data-dialog="${dialog.id}"></div>` }, order: ["a"],
    dialogs: { [dialog.id]: dialog },
  }));
  const buttons = [...output.root.querySelectorAll(`[data-dialog="${dialog.id}"] button`)];
  return {
    labels: buttons.map((b) => b.textContent),
    titles: buttons.map((b) => b.title),
    rows: new Set(buttons.map((b) => b.parentElement)),
    buttons,
  };
}

test("a confirm's Yes, No and Dismiss each say what the extension gets, all in one row", () => {
  withOutput((output) => {
    const drawn = drawnDialog(output, dialogOf("confirm", { seconds_left: 30 }));
    assert.deepEqual(drawn.labels, ["Yes", "No", "Dismiss"]);
    const [yes, no, dismiss] = drawn.titles;
    assert.equal(yes, "Answer yes: the extension gets true");
    assert.equal(no, "Answer no: the extension gets false");
    // What the protocol's `cancelled: true` is to a confirm: false, as No.
    assert.equal(dismiss, "Close without answering (Escape): the extension is told you " +
      "cancelled, which it takes as No");
    assert.equal(drawn.rows.size, 1, "one row holds the three buttons");
    const [row] = drawn.rows;
    assert.ok(row.classList.contains("atomic-dialog-row"));
    assert.ok(row.contains(output.find(".atomic-countdown")), "the countdown beside them");
    drawn.buttons[2].click();
    assert.deepEqual(output.take(), [
      { v: V, type: "dialog", id: "confirm", action: "cancel", make_rule: false },
    ]);
  });
});

for (const [method, fields, labels, submit, dismiss] of [
  ["select", { options: ["red", "blue"] }, ["red", "blue", "Dismiss"], "",
    "Close without choosing (Escape): the extension is told you cancelled and gets no option"],
  ["select", { options: Array.from({ length: 9 }, (_, i) => `o${i}`) }, ["Submit", "Dismiss"],
    "Answer with the option chosen in the list",
    "Close without choosing (Escape): the extension is told you cancelled and gets no option"],
  ["input", {}, ["Submit", "Dismiss"], "Send this text to the extension (Enter)",
    "Close without sending (Escape): the extension is told you cancelled and gets no text"],
  ["editor", { prefill: "a\nb" }, ["Submit", "Dismiss"], "Send this text to the extension",
    "Close without sending (Escape): the extension is told you cancelled and gets no text"],
]) {
  test(`the ${method} dialog (${labels.join(", ")}) has its buttons in one row, Dismiss said alike`, () => {
    withOutput((output) => {
      const drawn = drawnDialog(output, dialogOf(method, fields));
      assert.deepEqual(drawn.labels, labels);
      assert.equal(drawn.titles.at(-1), dismiss);
      if (submit) assert.equal(drawn.titles.at(-2), submit);
      else assert.ok(drawn.titles.slice(0, -1).every((t) => t === "Answer with this option"));
      assert.equal(drawn.rows.size, 1, "one row holds every button");
    });
  });
}
