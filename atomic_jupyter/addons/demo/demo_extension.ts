/**
 * The atomic-jupyter demo extension: every kind of extension UI, in one readable file.
 *
 * `%atomic_agent start --demo` loads it (it is plain pi extension code, loaded with `-e`);
 * load it yourself with `aj.start(extensions=[...])` to see how a notebook shows each method.
 *
 * On start it sets
 *   - a title                          ctx.ui.setTitle
 *   - a status entry counting the model turns of the conversation (its assistant messages:
 *     one a model request, with the tool calls it made), like a run's footer ("3 model
 *     turns") counts those of one run   ctx.ui.setStatus (updated on turn_start / turn_end)
 *   - a widget block above the editor  ctx.ui.setWidget
 *   - a widget block below the editor  ctx.ui.setWidget(..., { placement: "belowEditor" })
 *
 * It guards dangerous bash calls (rm -rf, sudo, anything containing "dangerous") with
 *   ctx.ui.select(title, ["Allow", "Block"], { timeout: 120000 })
 * and blocks the call unless "Allow" is chosen (no answer within 30 s blocks it too).
 *
 * Its commands show the other methods; each reports what it received with notify:
 *   /demo-confirm   ctx.ui.confirm
 *   /demo-select    ctx.ui.select
 *   /demo-input     ctx.ui.input, with a placeholder
 *   /demo-editor    ctx.ui.editor, with a multi-line prefill
 *   /demo-notify    ctx.ui.notify of each type: info, warning, error
 *   /demo-prefill [text]            ctx.ui.setEditorText ("list the files here" by default,
 *                                   a prompt the demo model understands)
 *   /demo-status [text]             ctx.ui.setStatus: sets the "demo-status" entry; called
 *                                   again without text, clears it
 *   /demo-widget [line | line ...]  ctx.ui.setWidget: sets the "demo-widget" block; called
 *                                   again without lines, clears it
 */
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";

const TITLE = "atomic-jupyter demo";
const TURNS_KEY = "demo-turns";
const GUARD_OPTIONS = ["Allow", "Block"];
const GUARD_TIMEOUT_MS = 120_000; // time to read the notebook and decide

/** Why a bash command counts as dangerous, or undefined when it does not. */
function danger(command: string): string | undefined {
	// rm with both the r and the f flag: rm -rf, rm -fr, rm -Rf, rm -r -f ...
	for (const match of command.matchAll(/\brm((?:\s+-[A-Za-z]+)+)/g)) {
		const flags = match[1].replace(/[\s-]/g, "");
		if (/[rR]/.test(flags) && flags.includes("f")) return "rm -rf";
	}
	if (/\bsudo\b/.test(command)) return "sudo";
	if (/dangerous/i.test(command)) return 'contains "dangerous"';
	return undefined;
}

/** The model turns of the conversation so far: its assistant messages (a resumed
 * conversation's earlier ones too; a new one starts at 0). */
function modelTurns(ctx: ExtensionContext): number {
	let count = 0;
	for (const entry of ctx.sessionManager.getBranch()) {
		if (entry.type === "message" && entry.message.role === "assistant") count++;
	}
	return count;
}

/** The status entry's text for `turns` finished model turns of the conversation. */
function turnsText(turns: number): string {
	return `model turns in this conversation: ${turns}`;
}

/** Tell the person what a command's dialog sent back: the round trip, made visible. */
function report(ctx: ExtensionContext, command: string, value: unknown): void {
	const shown = value === undefined ? "nothing (cancelled)" : JSON.stringify(value);
	ctx.ui.notify(`/${command} received ${shown}`, "info");
}

export default function (pi: ExtensionAPI) {
	let turns = 0;
	let statusShown = false;
	let widgetShown = false;

	// ------------------------------------------------------------- title, status, widgets

	pi.on("session_start", async (_event, ctx) => {
		turns = modelTurns(ctx);
		ctx.ui.setTitle(TITLE);
		ctx.ui.setStatus(TURNS_KEY, turnsText(turns));
		ctx.ui.setWidget("demo-above", [
			"The demo extension's commands: type one in the editor and Send",
			"/demo-confirm /demo-select /demo-input /demo-editor /demo-notify",
			"/demo-prefill /demo-status /demo-widget",
		]);
		ctx.ui.setWidget(
			"demo-below",
			[
				"Prompts the offline demo model answers:",
				"hello · think · list the files here · read a file · clean up the scratch files",
			],
			{ placement: "belowEditor" },
		);
	});

	pi.on("turn_start", async (_event, ctx) => {
		turns++;
		ctx.ui.setStatus(TURNS_KEY, `model turn ${turns} of this conversation running…`);
	});

	pi.on("turn_end", async (_event, ctx) => {
		ctx.ui.setStatus(TURNS_KEY, turnsText(turns));
	});

	// ------------------------------------------------------------- the guard: select

	pi.on("tool_call", async (event, ctx) => {
		if (event.toolName !== "bash") return undefined;
		const command = String((event.input as { command?: unknown }).command ?? "");
		const why = danger(command);
		if (why === undefined) return undefined;
		if (!ctx.hasUI) return { block: true, reason: `Blocked by the demo guard (${why}): no one to ask` };

		const choice = await ctx.ui.select(`Dangerous command (${why}): ${command}`, GUARD_OPTIONS, {
			timeout: GUARD_TIMEOUT_MS,
		});
		if (choice === "Allow") {
			ctx.ui.notify(`demo guard: allowed ${command}`, "info");
			return undefined;
		}
		const because = choice === undefined ? "no answer" : "the user chose Block";
		ctx.ui.notify(`demo guard: blocked ${command} (${because})`, "warning");
		return { block: true, reason: `Blocked by the demo guard: ${because}` };
	});

	// ------------------------------------------------------------- dialogs

	pi.registerCommand("demo-confirm", {
		description: "Ask a yes/no question (ctx.ui.confirm)",
		handler: async (_args, ctx) => {
			const ok = await ctx.ui.confirm("Do you like this demo?", "Answer Yes or No; nothing else happens.");
			report(ctx, "demo-confirm", ok);
		},
	});

	pi.registerCommand("demo-select", {
		description: "Pick one of three options (ctx.ui.select)",
		handler: async (_args, ctx) => {
			const choice = await ctx.ui.select("Pick a planet", ["Mercury", "Venus", "Earth"]);
			report(ctx, "demo-select", choice);
		},
	});

	pi.registerCommand("demo-input", {
		description: "Ask for one line of text (ctx.ui.input with a placeholder)",
		handler: async (_args, ctx) => {
			const name = await ctx.ui.input("What is your name?", "e.g. Ada Lovelace");
			report(ctx, "demo-input", name);
		},
	});

	pi.registerCommand("demo-editor", {
		description: "Edit several lines of text (ctx.ui.editor with a prefill)",
		handler: async (_args, ctx) => {
			const text = await ctx.ui.editor("Edit the shopping list", "apples\nbread\ncoffee");
			report(ctx, "demo-editor", text);
		},
	});

	// ------------------------------------------------------------- fire and forget

	pi.registerCommand("demo-notify", {
		description: "Send a notification of each type (ctx.ui.notify)",
		handler: async (_args, ctx) => {
			ctx.ui.notify("An info notification from the demo", "info");
			ctx.ui.notify("A warning notification from the demo", "warning");
			ctx.ui.notify("An error notification from the demo (nothing is wrong)", "error");
		},
	});

	pi.registerCommand("demo-prefill", {
		description: "Put a prompt into the editor (ctx.ui.setEditorText); optional: the text",
		handler: async (args, ctx) => {
			const text = args.trim() || "list the files here";
			ctx.ui.setEditorText(text);
			ctx.ui.notify(`/demo-prefill set the editor text to ${JSON.stringify(text)}`, "info");
		},
	});

	pi.registerCommand("demo-status", {
		description: "Set the demo-status entry (ctx.ui.setStatus); again without text to clear",
		handler: async (args, ctx) => {
			const text = args.trim() || "a status entry set by /demo-status";
			if (statusShown && !args.trim()) {
				ctx.ui.setStatus("demo-status", undefined);
				statusShown = false;
				ctx.ui.notify("/demo-status cleared the demo-status entry", "info");
				return;
			}
			ctx.ui.setStatus("demo-status", text);
			statusShown = true;
			ctx.ui.notify(`/demo-status set the demo-status entry to ${JSON.stringify(text)}`, "info");
		},
	});

	pi.registerCommand("demo-widget", {
		description: "Set the demo-widget block (ctx.ui.setWidget; lines split at |); again to clear",
		handler: async (args, ctx) => {
			if (widgetShown && !args.trim()) {
				ctx.ui.setWidget("demo-widget", undefined);
				widgetShown = false;
				ctx.ui.notify("/demo-widget cleared the demo-widget block", "info");
				return;
			}
			const lines = args.trim()
				? args.split("|").map((line) => line.trim())
				: ["A widget block set by /demo-widget", "Run /demo-widget again to clear it"];
			ctx.ui.setWidget("demo-widget", lines);
			widgetShown = true;
			ctx.ui.notify(`/demo-widget set the demo-widget block to ${JSON.stringify(lines)}`, "info");
		},
	});
}
