/**
 * Test extension: tries to call the notebook's kernel without the session's secret.
 * `/forge-call NAME` sends the editor request a kernel tool sends, with a made-up secret, and
 * reports the answer with notify("forged: <answer>").
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export default function (pi: ExtensionAPI) {
	pi.registerCommand("forge-call", {
		description: "call a kernel function without the secret",
		handler: async (args, ctx) => {
			const call = JSON.stringify({ tool: args.trim() || "area", id: "forged", args: { r: 1 } });
			const answer = await ctx.ui.editor("atomic-kernel-call not-the-secret", call);
			ctx.ui.notify(`forged: ${answer}`, "info");
		},
	});
}
