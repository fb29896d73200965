/**
 * Test extension: every extension UI method, each behind a command, and every answer the
 * extension receives reported back with notify("got <method>: <JSON>") so a test can
 * assert exactly what reached the extension.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { writeSync } from "node:fs";

const report = (ctx: any, what: string, value: unknown) =>
	ctx.ui.notify(`got ${what}: ${value === undefined ? "undefined" : JSON.stringify(value)}`, "info");

const timeoutOf = (args: string) => {
	const ms = Number.parseInt((args || "").trim(), 10);
	return Number.isFinite(ms) && ms > 0 ? { timeout: ms } : undefined;
};

export default function (pi: ExtensionAPI) {
	pi.on("session_start", async (_event, ctx) => {
		ctx.ui.setTitle("UI test extension");
		ctx.ui.setStatus("ui-test", "ready");
	});

	pi.registerCommand("ui-select", {
		description: "select with three options; optional timeout in ms",
		handler: async (args, ctx) => report(ctx, "select", await ctx.ui.select("Pick one", ["Alpha", "Beta", "Gamma"], timeoutOf(args))),
	});

	pi.registerCommand("ui-select-many", {
		description: "select with twelve options (a dropdown)",
		handler: async (_args, ctx) => {
			const options = Array.from({ length: 12 }, (_, i) => `Option ${i + 1}`);
			report(ctx, "select", await ctx.ui.select("Pick from many", options));
		},
	});

	pi.registerCommand("ui-confirm", {
		description: "confirm; optional timeout in ms",
		handler: async (args, ctx) =>
			report(ctx, "confirm", await ctx.ui.confirm("Proceed?", "This is the message.\nIt has two lines.", timeoutOf(args))),
	});

	pi.registerCommand("ui-input", {
		description: "input with a placeholder; optional timeout in ms",
		handler: async (args, ctx) => report(ctx, "input", await ctx.ui.input("Your name", "type a name…", timeoutOf(args))),
	});

	pi.registerCommand("ui-editor", {
		description: "editor with a prefill",
		handler: async (_args, ctx) => report(ctx, "editor", await ctx.ui.editor("Edit the text", "Line 1\nLine 2")),
	});

	pi.registerCommand("ui-input-busy", {
		description: "an input dialog while custom entries keep arriving in the same run",
		handler: async (_args, ctx) => {
			let n = 0;
			const timer = setInterval(() => pi.appendEntry("tick", { n: ++n }), 40);
			try {
				report(ctx, "input", await ctx.ui.input("Type while it streams", "keep typing…"));
			} finally {
				clearInterval(timer);
			}
		},
	});

	pi.registerCommand("ui-two", {
		description: "two dialogs at once",
		handler: async (_args, ctx) => {
			const [a, b] = await Promise.all([
				ctx.ui.select("First of two", ["One", "Two"]),
				ctx.ui.input("Second of two", "anything"),
			]);
			report(ctx, "two", [a ?? null, b ?? null]);
		},
	});

	pi.registerCommand("ui-unicode", {
		description: "dialogs and lines with unicode, including U+2028 and U+2029",
		handler: async (_args, ctx) => {
			ctx.ui.setStatus("unicode", "naïve 日本語 🚀 a\u2028b\u2029c");
			report(ctx, "select", await ctx.ui.select("Ünïcödé 🚀 title\u2028sep", ["日本語", "emoji 🎉", "line\u2029sep"]));
		},
	});

	pi.registerCommand("ui-html", {
		description: "every field carries HTML and script",
		handler: async (_args, ctx) => {
			const x = (where: string) => `<img src=x onerror="window.__pwned='${where}'"><script>window.__pwned='${where}'</script><b>${where}</b>`;
			ctx.ui.setTitle(x("title"));
			ctx.ui.setStatus("html", x("status"));
			ctx.ui.setWidget("html", [x("widget-line-1"), x("widget-line-2")]);
			ctx.ui.notify(x("notify"), "warning");
			ctx.ui.setEditorText(x("editor"));
			report(ctx, "select", await ctx.ui.select(x("select-title"), [x("option-1"), x("option-2")]));
			report(ctx, "confirm", await ctx.ui.confirm(x("confirm-title"), x("confirm-message")));
			report(ctx, "input", await ctx.ui.input(x("input-title"), x("placeholder")));
			report(ctx, "editor", await ctx.ui.editor(x("editor-title"), x("prefill")));
		},
	});

	pi.registerCommand("ui-fire", {
		description: "every fire-and-forget method",
		handler: async (_args, ctx) => {
			ctx.ui.setTitle("Fired title");
			ctx.ui.setStatus("one", "status one");
			ctx.ui.setStatus("two", "status two");
			ctx.ui.setStatus("two", undefined);
			ctx.ui.setWidget("top", ["top line 1", "top line 2"]);
			ctx.ui.setWidget("bottom", ["bottom line"], { placement: "belowEditor" });
			ctx.ui.setWidget("gone", ["to be cleared"]);
			ctx.ui.setWidget("gone", undefined);
			ctx.ui.notify("an info note", "info");
			ctx.ui.notify("a warning note", "warning");
			ctx.ui.notify("an error note", "error");
			ctx.ui.notify("a default note");
			ctx.ui.setEditorText("prefilled by the extension");
		},
	});

	pi.registerCommand("ui-flood", {
		description: "N status updates as fast as possible (default 2000)",
		handler: async (args, ctx) => {
			const n = Number.parseInt((args || "").trim(), 10) || 2000;
			for (let i = 1; i <= n; i++) ctx.ui.setStatus("flood", `update ${i} of ${n}`);
			ctx.ui.notify(`flood done: ${n}`, "info");
		},
	});

	pi.registerCommand("ui-garbage", {
		description: "raw non-JSON lines on stdout, then a dialog",
		handler: async (_args, ctx) => {
			writeSync(1, "this is not json\n");
			writeSync(1, "{\"broken\": \n");
			writeSync(1, "[1, 2, 3]\n");
			report(ctx, "confirm", await ctx.ui.confirm("After garbage", "Still working?"));
		},
	});

	pi.registerCommand("ui-crash", {
		description: "show a dialog, then exit with code 3",
		handler: async (_args, ctx) => {
			setTimeout(() => {
				process.stderr.write("ui-crash: exiting on purpose\n");
				process.exit(3);
			}, 300);
			await ctx.ui.select("Doomed dialog", ["Never", "Answered"]);
		},
	});
}
