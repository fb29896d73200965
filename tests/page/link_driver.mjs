// The notebook page the Python kernel tests link to: the extension's real link (link.ts, with
// proposal.ts and diff.ts) over a stand-in notebook (link_dom.mjs), driven by JSON lines on
// stdin, one answer line on stdout per request (tests/harness/notebook_page.py is its client).
//
// Requests, each for the page ``page``:
//   {op: "open", page, cells: [{id, type, source}], path, subshell}  the kernel announced
//       itself: the link opens its comm; answers {hello, sent}
//   {op: "deliver", page, data}   the kernel sent ``data`` on the link's comm: {sent}
//   {op: "click", page, call, accept, reason}  Accept or Reject (with a reason) in a cell
//   {op: "edit", page, id, source}  a person edits a cell
//   {op: "state", page}  {cells: [{id, type, source, execution_count}], proposals: [call]}
//   {op: "close", page}  the notebook is closed: {sent}
// ``sent`` is what the link sent on its comm since the last answer; {error} when one failed.
// The stand-in runs no cells: a "run" is answered with each cell "failed: the stand-in page
// runs no cells", as the extension answers a cell that failed to run.
import { createInterface } from "node:readline";
import { linked, tick } from "./link_dom.mjs";

const pages = new Map();

async function refuseToRun() {
  throw new Error("the stand-in page runs no cells");
}

async function handle(request) {
  if (request.op === "open") {
    const cells = request.cells.map((c) => [c.type, c.source, { id: c.id }]);
    const page = await linked(cells, {
      subshell: request.subshell ?? null, path: request.path, app: "stand-in page",
      execute: refuseToRun, kernelLinks: false,  // the kernel's own "linked" comes through deliver
    });
    pages.set(request.page, page);
    return { hello: page.comm.opened, sent: page.comm.take() };
  }
  const page = pages.get(request.page);
  if (!page) throw new Error(`no page ${request.page}`);
  if (request.op === "deliver") {
    page.comm.deliver(request.data);
    await tick();  // a run's reply comes after its cells' promises
    await tick();
    return { sent: page.comm.take() };
  }
  if (request.op === "click") {
    const box = [...document.querySelectorAll(".aj-proposal")]
      .find((b) => b.dataset.call === request.call && b.querySelector(".aj-proposal-accept"));
    if (!box) throw new Error(`no change ${request.call} shown with Accept and Reject`);
    box.querySelector(".aj-proposal-reason").value = request.reason || "";
    box.querySelector(request.accept ? ".aj-proposal-accept" : ".aj-proposal-reject").click();
    return { sent: page.comm.take() };
  }
  if (request.op === "edit") {
    const cell = page.notebook.cells.find((c) => c.id === request.id);
    if (!cell) throw new Error(`no cell ${request.id}`);
    cell.source = request.source;
    return { sent: [] };
  }
  if (request.op === "state") {
    return {
      cells: page.notebook.cells.map((c) => ({
        id: c.id, type: c.cell_type, source: c.source, execution_count: c.count ?? null,
      })),
      proposals: [...page.link.proposals.keys()],
      sent: page.comm.take(),
    };
  }
  if (request.op === "close") {
    page.link.dispose();
    pages.delete(request.page);
    return { sent: page.comm.take() };
  }
  throw new Error(`unknown op ${request.op}`);
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  let answer;
  try {
    answer = await handle(JSON.parse(line));
  } catch (error) {
    answer = { error: String(error && error.stack ? error.stack : error) };
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
}
