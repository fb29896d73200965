// The page the Python tests draw our outputs with: the real module in a DOM (page_dom.mjs),
// driven by JSON lines on stdin, one answer line on stdout per request
// (tests/harness/output_page.py is its client).
//
// Requests: {op: "open", id, root_class, root_style} | {op: "receive", id, msg} |
// {op: "receive", id, msgs: [...]} | {op: "act", id, selector, nth, action, value, key, shift} |
// {op: "html", id} | {op: "store", id} | {op: "close", id} | {op: "parse", html}. Each answer is {sent: [messages the module sent]}
// ({html} too for "html"), or {error: "..."}.
import { createInterface } from "node:readline";
import { PageOutput } from "./page_dom.mjs";

const outputs = new Map();

function handle(request) {
  if (request.op === "open") {
    const output = new PageOutput({
      id: request.id, rootClass: request.root_class || "", rootStyle: request.root_style || "",
    });
    outputs.set(request.id, output);
    return { sent: output.take() };
  }
  if (request.op === "parse") {  // HTML as the page's DOM writes it back
    const holder = document.createElement("div");
    holder.innerHTML = request.html;
    return { html: holder.innerHTML, sent: [] };
  }
  const output = outputs.get(request.id);
  if (!output) throw new Error(`no output ${request.id}`);
  if (request.op === "receive") {
    for (const msg of request.msgs || [request.msg]) output.receive(msg);
    return { sent: output.take() };
  }
  if (request.op === "act") {
    output.act(request);
    return { sent: output.take() };
  }
  if (request.op === "store") return { store: output.store(), sent: output.take() };
  if (request.op === "html") return { html: output.html({ flat: request.flat !== false }), sent: output.take() };
  if (request.op === "close") {
    output.close();
    outputs.delete(request.id);
    return { sent: [] };
  }
  throw new Error(`unknown op ${request.op}`);
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  let answer;
  try {
    answer = handle(JSON.parse(line));
  } catch (error) {
    answer = { error: String(error && error.stack ? error.stack : error) };
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
}
