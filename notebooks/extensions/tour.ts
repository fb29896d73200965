/**
 * A small tour extension for the quickstart notebook: one command per extension UI method.
 * Needs no model and no API key: extension commands run inside the agent.
 */
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

export default function (pi: ExtensionAPI) {
	let answers = 0;

	pi.on("session_start", async (_event, ctx) => {
		ctx.ui.setTitle("atomic-jupyter tour");
		ctx.ui.setStatus("tour", "answers: 0");
		ctx.ui.setWidget("tour", ["Try the commands below:", "/pick  /ok  /name  /edit  /prefill"]);
		ctx.ui.setWidget("tour-help", ["Dialogs appear under the cell that sent the command."], { placement: "belowEditor" });
	});

	const counted = (ctx: any) => {
		answers++;
		ctx.ui.setStatus("tour", `answers: ${answers}`);
	};

	pi.registerCommand("pick", {
		description: "Choose a fruit (a select with a 30 s timeout)",
		handler: async (_args, ctx) => {
			const fruit = await ctx.ui.select("Which fruit?", ["Apple", "Banana", "Cherry"], { timeout: 30000 });
			counted(ctx);
			ctx.ui.notify(fruit ? `You picked ${fruit}` : "No fruit picked", fruit ? "info" : "warning");
		},
	});

	pi.registerCommand("ok", {
		description: "A yes/no question",
		handler: async (_args, ctx) => {
			const ok = await ctx.ui.confirm("Deploy to production?", "This is only a tour: nothing is deployed.");
			counted(ctx);
			ctx.ui.notify(ok ? "Confirmed" : "Declined", ok ? "info" : "error");
		},
	});

	pi.registerCommand("name", {
		description: "Ask for a line of text",
		handler: async (_args, ctx) => {
			const name = await ctx.ui.input("What is your name?", "Ada Lovelace");
			counted(ctx);
			ctx.ui.notify(name ? `Hello, ${name}!` : "Nameless, then.", "info");
		},
	});

	pi.registerCommand("edit", {
		description: "Edit a few lines of text",
		handler: async (_args, ctx) => {
			const text = await ctx.ui.editor("Edit the shopping list", "eggs\nflour\nmilk");
			counted(ctx);
			ctx.ui.notify(text ? `The list has ${text.split("\n").length} lines` : "List unchanged", "info");
		},
	});

	pi.registerCommand("prefill", {
		description: "Put text in the panel's editor; press Send to run it",
		handler: async (_args, ctx) => {
			ctx.ui.setEditorText("/pick");
			ctx.ui.notify("The editor now holds /pick: press Send in the panel.", "info");
		},
	});
}
