// atomic-jupyter's extension checker: load a prototype the way the agent does (jiti, with the
// agent's module aliases), call its factory with a recording stand-in API, and print one JSON
// line: {"ok": true, "commands": [...], "events": [...], "tools": [...]} or
// {"ok": false, "kind": "syntax" | "load", "message": ..., "line": N, "column": N}.
// Usage: node --enable-source-maps check.mjs <extension.ts> <agent package dir> <aliases>
// where aliases is a JSON object: each name the running agent resolves for extensions (its
// own packages, under each scope it answers to) -> the file it means (api_modules.py).
import { createRequire } from "node:module";
import { basename, join } from "node:path";

const [file, agentDir, aliases] = process.argv.slice(2);
const require = createRequire(join(agentDir, "package.json"));
const { createJiti } = await import(require.resolve("jiti"));

const alias = {
	...JSON.parse(aliases || "{}"),
	typebox: require.resolve("typebox"),
	"typebox/compile": require.resolve("typebox/compile"),
	"typebox/value": require.resolve("typebox/value"),
	"@sinclair/typebox": require.resolve("typebox"),
};

function where(error) {
	const text = `${error?.stack ?? ""}\n${error?.message ?? ""}`;
	const name = basename(file);
	for (const match of text.matchAll(/([^\s(]+\.[cm]?[jt]s):(\d+):(\d+)/g)) {
		if (basename(match[1]) === name) return { line: Number(match[2]), column: Number(match[3]) };
	}
	return {};
}

const out = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);
let factory;
try {
	const jiti = createJiti(import.meta.url, { moduleCache: false, fsCache: false, sourceMaps: true, alias });
	const module = await jiti.import(file, { default: true });
	factory = typeof module === "function" ? module : module?.default;
} catch (error) {
	const message = String(error?.message ?? error).split("\n")[0].trim();
	const kind = /Cannot find (module|package)/.test(message) ? "load" : "syntax";
	out({ ok: false, kind, message, ...where(error) });
	process.exit(0);
}
if (typeof factory !== "function") {
	out({ ok: false, kind: "load", message: "the extension has no default export function" });
	process.exit(0);
}
const seen = { commands: [], events: [], tools: [] };
const stub = new Proxy(
	{},
	{
		get(_target, key) {
			if (key === "registerCommand") return (name) => seen.commands.push(name);
			if (key === "on") return (event) => seen.events.push(event);
			if (key === "registerTool") return (tool) => seen.tools.push(tool?.name);
			if (key === "events") return { on() {}, emit() {} };
			return () => undefined;
		},
	},
);
try {
	await factory(stub);
	out({ ok: true, ...seen });
} catch (error) {
	out({ ok: false, kind: "load", message: String(error?.message ?? error), ...where(error) });
}
