/**
 * Test extension: a message sent with steer or follow-up that contains "gated" is let
 * through only after a confirm (an `input` hook, which the agent runs before it answers).
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export default function (pi: ExtensionAPI) {
	pi.on("input", async (event, ctx) => {
		if (!event.text.includes("gated") || !event.streamingBehavior) return { action: "continue" };
		const ok = await ctx.ui.confirm("Let this message through?", event.text);
		return ok ? { action: "continue" } : { action: "handled" };
	});
}
