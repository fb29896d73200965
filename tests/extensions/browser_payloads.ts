/**
 * Browser test extension: HTML, script and LaTeX payloads in every field an extension can
 * fill. Each payload tries to set `window.__pwned` to the name of its field, five ways
 * (img onerror, script, svg onload, an iframe's srcdoc script, a javascript: link) plus
 * MathJax macros (`\style`, `\href{javascript:...}`). The browser suite asserts the global is
 * never set and the payload is shown as text. Every answer is reported with
 * notify("got <method>: <JSON>"), which carries the payload once more.
 *
 * tests/browser/browser_payloads.py builds the same strings in Python; keep the two in step.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

const payload = (field: string) =>
	`${field}: <img src=x onerror="window.__pwned='${field}'">` +
	` <script>window.__pwned='${field}'</script>` +
	` <svg onload="window.__pwned='${field}'"></svg>` +
	` <iframe srcdoc="<script>parent.__pwned='${field}'</script>"></iframe>` +
	` <a href="javascript:window.__pwned='${field}'">link</a>` +
	` $\\style{background:red}{${field}}$ $$\\href{javascript:window.__pwned='${field}'}{tex}$$`;

const report = (ctx: any, what: string, value: unknown) =>
	ctx.ui.notify(`got ${what}: ${value === undefined ? "undefined" : JSON.stringify(value)}`, "info");

export default function (pi: ExtensionAPI) {
	pi.on("session_start", async (_event, ctx) => {
		ctx.ui.setTitle("Payload test extension");
	});

	pi.registerCommand("payload-fields", {
		description: "payloads in every fire-and-forget field",
		handler: async (_args, ctx) => {
			ctx.ui.setTitle(payload("title"));
			ctx.ui.setStatus("payload", payload("status"));
			ctx.ui.setWidget("payload-above", [payload("widget-above-1"), payload("widget-above-2")]);
			ctx.ui.setWidget("payload-below", [payload("widget-below")], { placement: "belowEditor" });
			ctx.ui.notify(payload("notify-info"), "info");
			ctx.ui.notify(payload("notify-warning"), "warning");
			ctx.ui.notify(payload("notify-error"), "error");
			ctx.ui.setEditorText(payload("set-editor-text"));
			ctx.ui.notify("payload fields set", "info");
		},
	});

	pi.registerCommand("payload-dialogs", {
		description: "payloads in every dialog field, one dialog after the other",
		handler: async (_args, ctx) => {
			report(ctx, "select", await ctx.ui.select(payload("select-title"), [payload("option-1"), payload("option-2")]));
			const many = Array.from({ length: 10 }, (_, i) => payload(`dropdown-option-${i + 1}`));
			report(ctx, "select-many", await ctx.ui.select(payload("dropdown-title"), many));
			report(ctx, "confirm", await ctx.ui.confirm(payload("confirm-title"), payload("confirm-message")));
			report(ctx, "input", await ctx.ui.input(payload("input-title"), payload("input-placeholder")));
			report(ctx, "editor", await ctx.ui.editor(payload("editor-title"), payload("editor-prefill")));
		},
	});
}
