/**
 * Test extension: guards bash commands that contain "dangerous" with a confirm dialog,
 * and reports each decision with notify("guard: allowed|blocked <command>").
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export default function (pi: ExtensionAPI) {
	pi.on("tool_call", async (event, ctx) => {
		if (event.toolName !== "bash") return undefined;
		const command = String((event.input as any).command ?? "");
		if (!command.includes("dangerous")) return undefined;
		const ok = await ctx.ui.confirm("Run a dangerous command?", command);
		ctx.ui.notify(`guard: ${ok ? "allowed" : "blocked"} ${command}`, ok ? "info" : "warning");
		return ok ? undefined : { block: true, reason: "Blocked by the user" };
	});
}
