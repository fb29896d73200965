/**
 * atomic-jupyter's prototype hub, loaded into every session (`-e`).
 *
 * Extensions written in notebook cells (`%%atomic_extension NAME`) live as NAME.ts files in
 * the session's private folder ($ATOMIC_JUPYTER_PROTOTYPES). This hub loads every one listed
 * in that folder's manifest.json, each with an API whose handlers report their errors with
 * the prototype's own file name and line, and registers `/atomic-jupyter-reload`, which
 * reloads the agent's extensions (this hub included) so a redefined prototype replaces the
 * old one without restarting the agent. What loaded, and what failed, goes to status.json.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";

type Status = { ok: boolean; error?: string; where?: string; commands: string[] };

/** "NAME.ts:LINE:COL" of the first stack frame in the prototype's file, if any. */
function whereIn(error: unknown, file: string): string | undefined {
	const stack = error instanceof Error ? error.stack ?? "" : "";
	const name = basename(file);
	for (const line of stack.split("\n")) {
		const match = line.match(/([^\s(]+\.[cm]?[jt]s):(\d+):(\d+)/);
		if (match && basename(match[1]) === name) return `${name}:${match[2]}:${match[3]}`;
	}
	return undefined;
}

/** Rethrow an error with the prototype's file and line in its message (extension_error shows only the message). */
function located(error: unknown, file: string, prototype: string): Error {
	const where = whereIn(error, file) ?? `${basename(file)}`;
	const message = error instanceof Error ? error.message : String(error);
	const wrapped = new Error(`${message} [atomic-extension ${prototype} at ${where}]`);
	if (error instanceof Error && error.stack) wrapped.stack = error.stack;
	return wrapped;
}

function guard<F extends (...args: any[]) => any>(fn: F, file: string, prototype: string): F {
	return (async (...args: any[]) => {
		try {
			return await fn(...args);
		} catch (error) {
			throw located(error, file, prototype);
		}
	}) as F;
}

/** The API a prototype sees: the real one, with every handler it registers guarded. */
function apiFor(pi: ExtensionAPI, file: string, prototype: string, commands: string[]): ExtensionAPI {
	return new Proxy(pi, {
		get(target, key, receiver) {
			const value = Reflect.get(target, key, receiver);
			if (key === "on") {
				return (event: string, handler: any) => (target as any).on(event, guard(handler, file, prototype));
			}
			if (key === "registerCommand") {
				return (name: string, options: any) => {
					commands.push(name);
					return target.registerCommand(name, { ...options, handler: guard(options.handler, file, prototype) });
				};
			}
			if (key === "registerTool") {
				return (tool: any) => target.registerTool({ ...tool, execute: guard(tool.execute, file, prototype) });
			}
			return typeof value === "function" ? value.bind(target) : value;
		},
	}) as ExtensionAPI;
}

export default async function (pi: ExtensionAPI) {
	pi.registerCommand("atomic-jupyter-reload", {
		description: "Reload extensions (atomic-jupyter uses this after a prototype cell runs)",
		handler: async (_args, ctx) => {
			await ctx.reload();
			return;
		},
	});
	const folder = process.env.ATOMIC_JUPYTER_PROTOTYPES;
	if (!folder || !existsSync(join(folder, "manifest.json"))) return;
	const names: string[] = JSON.parse(readFileSync(join(folder, "manifest.json"), "utf8"));
	const status: Record<string, Status> = {};
	for (const prototype of names) {
		const file = join(folder, `${prototype}.ts`);
		const commands: string[] = [];
		try {
			const module = await import(file);
			const factory = module.default ?? module;
			if (typeof factory !== "function") throw new Error("the extension has no default export function");
			await factory(apiFor(pi, file, prototype, commands));
			status[prototype] = { ok: true, commands };
		} catch (error) {
			status[prototype] = {
				ok: false,
				error: error instanceof Error ? error.message : String(error),
				where: whereIn(error, file),
				commands,
			};
		}
	}
	writeFileSync(join(folder, "status.json"), JSON.stringify(status), { mode: 0o600 });
}
