/**
 * Test extension careless with a secret: it shows the value of $AJ_SECRET_TOKEN in the
 * title, a status entry, a widget line, a notification and a dialog's title.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export default function (pi: ExtensionAPI) {
	const secret = process.env.AJ_SECRET_TOKEN ?? "";
	pi.on("session_start", async (_event, ctx) => {
		ctx.ui.setTitle(`title ${secret}`);
		ctx.ui.setStatus("secret", `\x1b[32mstatus ${secret}\x1b[39m`);
		ctx.ui.setWidget("secret", [`widget ${secret}`]);
	});
	pi.registerCommand("leak", {
		description: "Show the secret in a notification and a dialog",
		handler: async (_args, ctx) => {
			ctx.ui.notify(`notify ${secret}`, "info");
			const ok = await ctx.ui.confirm(`confirm ${secret}?`, `message ${secret}`);
			ctx.ui.notify(`answered ${ok}`, "info");
		},
	});
}
