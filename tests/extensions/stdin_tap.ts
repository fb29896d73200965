/**
 * Test extension: records every `extension_ui_response` line the agent reads on its stdin,
 * one line each, to a file: what the agent really got, for "exactly one answer per dialog".
 *
 * `/stdin-tap <file>` turns it on. It listens beside the agent's own reader (a second "data"
 * listener sees the same chunks, in order, after the agent's), and only from a command on, when
 * the agent's reader is surely attached: a listener attached earlier could start the stream
 * flowing before the agent listens, and the agent would miss lines.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { appendFileSync } from "node:fs";
import { StringDecoder } from "node:string_decoder";

export default function (pi: ExtensionAPI) {
	let tapping = "";

	pi.registerCommand("stdin-tap", {
		description: "record every extension_ui_response read on stdin to the file named",
		handler: async (args, ctx) => {
			const file = (args || "").trim();
			if (!file || tapping) {
				ctx.ui.notify(`stdin tap: ${tapping ? "already on" : "no file given"}`, "error");
				return;
			}
			tapping = file;
			const decoder = new StringDecoder("utf8");
			let buffer = "";
			process.stdin.on("data", (chunk: Buffer | string) => {
				buffer += typeof chunk === "string" ? chunk : decoder.write(chunk);
				let end = buffer.indexOf("\n");
				while (end >= 0) {
					const line = buffer.slice(0, end).replace(/\r$/, "");
					buffer = buffer.slice(end + 1);
					end = buffer.indexOf("\n");
					try {
						if (JSON.parse(line)?.type === "extension_ui_response") appendFileSync(file, `${line}\n`);
					} catch {
						// not JSON: the agent says so itself
					}
				}
			});
			ctx.ui.notify(`stdin tap on: ${file}`, "info");
		},
	});
}
