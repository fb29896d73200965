/**
 * atomic-jupyter's kernel tools, loaded into every session (`-e`): Python functions of the
 * notebook's kernel as tools of the agent.
 *
 * The session's private folder ($ATOMIC_JUPYTER_KERNEL_TOOLS) holds
 * - `secret`: this launch's secret, written by the kernel before the agent starts. It is read
 *   and deleted at load, so an extension cannot read it later from the folder; it lives on
 *   only in this closure (and is handed to the next instance of this extension across a
 *   reload or a session replacement, through the same file, see `session_shutdown`);
 * - `tools.json`: `[{"name", "description", "parameters": <JSON Schema>, "approval": bool,
 *   "approvalTitle"?, "approvalMessage"?, "builtin"?, "followsWrite"?}]`, the tools the kernel offers (the built-in
 *   `python`, `notebook_variables` and `notebook_cells`, then the exposed functions). They are registered at session start, and again whenever
 *   the kernel sends `/atomic-jupyter-tools` (after it rewrote the file): new tools are
 *   registered, changed ones registered again, listed ones made active, and tools no longer
 *   listed made inactive (tools cannot be unregistered). What was done goes to `status.json`.
 *
 * A tool's call goes back to the kernel through the agent's own stdio: an `editor` dialog
 * whose title is `atomic-kernel-call <secret>` and whose prefill is
 * `{"tool": NAME, "id": TOOL_CALL_ID, "args": {...}}`. The kernel runs the function and
 * answers with `{"ok": true, "text": "...", "images"?: [{"mimeType", "data"}], "details"?: {}}`
 * or `{"ok": false, "error": "..."}` as the editor's text: the text and images are what the
 * model gets, the details what the tool's card shows. A tool that needs approval asks with
 * a `confirm` dialog first (its title and message from the spec, when it gives them).
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { existsSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const CALL_PREFIX = "atomic-kernel-call ";
/** What the model providers accept as a function name. */
const TOOL_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

type Spec = {
	name: string;
	description: string;
	parameters: Record<string, unknown>;
	approval: boolean;
	approvalTitle?: string;
	approvalMessage?: string;
	/** One of every session's own tools: not listed in the panel's status line. */
	builtin?: boolean;
	/** It can change files or the kernel (python, notebook_edit, notebook_run): off while the
	 * agent is read-only (see `followReadOnly`). */
	followsWrite?: boolean;
};

/** The agent's own tools that change files. While every one of them the agent has is off
 * (another extension made the agent read-only, as the agent's plan-mode example does), the
 * kernel tools that can change files or the kernel are off too, and they come back with them:
 * otherwise the model could still change files through Python. */
const WRITE_TOOLS = ["edit", "write"];

/** The image types the model may be given. */
const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

type Status = { registered: string[]; active: string[]; skipped: Record<string, string> };

/** Read and delete the secret file ("" when there is none). */
function takeSecret(file: string): string {
	try {
		const secret = readFileSync(file, "utf8").trim();
		unlinkSync(file);
		return secret;
	} catch {
		return "";
	}
}

/** The specs in tools.json, and why any entry was skipped. */
function readSpecs(folder: string): { specs: Spec[]; skipped: Record<string, string> } {
	const file = join(folder, "tools.json");
	const skipped: Record<string, string> = {};
	if (!existsSync(file)) return { specs: [], skipped };
	let data: unknown;
	try {
		data = JSON.parse(readFileSync(file, "utf8"));
	} catch (error) {
		skipped["tools.json"] = `not JSON: ${error instanceof Error ? error.message : String(error)}`;
		return { specs: [], skipped };
	}
	if (!Array.isArray(data)) {
		skipped["tools.json"] = "not a list of tools";
		return { specs: [], skipped };
	}
	const specs: Spec[] = [];
	const seen = new Set<string>();
	data.forEach((entry: any, index: number) => {
		const name = typeof entry?.name === "string" ? entry.name : `#${index}`;
		const parameters = entry?.parameters;
		if (!TOOL_NAME.test(name)) {
			skipped[name] = "a tool name is a letter or _, then up to 63 letters, digits, _ or -";
		} else if (seen.has(name)) {
			skipped[name] = "listed twice";
		} else if (typeof parameters !== "object" || parameters === null || Array.isArray(parameters)) {
			skipped[name] = "its parameters are not a JSON Schema object";
		} else {
			seen.add(name);
			specs.push({
				name,
				description: typeof entry.description === "string" ? entry.description : "",
				parameters,
				approval: entry.approval === true,
				...(typeof entry.approvalTitle === "string" ? { approvalTitle: entry.approvalTitle } : {}),
				...(typeof entry.approvalMessage === "string" ? { approvalMessage: entry.approvalMessage } : {}),
				...(entry.builtin === true ? { builtin: true } : {}),
				...(entry.followsWrite === true ? { followsWrite: true } : {}),
			});
		}
	});
	return { specs, skipped };
}

function errorText(error: unknown): string {
	return error instanceof Error ? error.message : String(error);
}

/** Resolve with `promise`, or reject once `signal` aborts. */
function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined, what: string): Promise<T> {
	if (!signal) return promise;
	if (signal.aborted) return Promise.reject(new Error(`${what} was aborted.`));
	return new Promise<T>((resolve, reject) => {
		const onAbort = () => reject(new Error(`${what} was aborted.`));
		signal.addEventListener("abort", onAbort, { once: true });
		promise.then(
			(value) => {
				signal.removeEventListener("abort", onAbort);
				resolve(value);
			},
			(error) => {
				signal.removeEventListener("abort", onAbort);
				reject(error);
			},
		);
	});
}

export default function kernelTools(pi: ExtensionAPI) {
	const folder = process.env.ATOMIC_JUPYTER_KERNEL_TOOLS;
	if (!folder) return;
	const secretFile = join(folder, "secret");
	const secret = takeSecret(secretFile);
	/** Tools this instance registered: name -> the spec they were registered with (JSON). */
	const registered = new Map<string, string>();
	/** The tools tools.json lists now (a call of any other is refused). */
	let listed = new Set<string>();
	/** Which of them are every session's own (python, notebook_variables, notebook_cells). */
	let builtins = new Set<string>();
	/** Which of them can change files or the kernel (off while the agent is read-only). */
	let followers = new Set<string>();
	/** Those of them this instance turned off because the agent is read-only. */
	const heldBack = new Set<string>();
	/** The read-only status last shown (undefined: none). */
	let shownStatus: string | undefined;

	/** Whether the agent is read-only: it has edit or write, and neither is active. */
	function readOnly(): boolean {
		const all = new Set(pi.getAllTools().map((tool) => tool.name));
		const present = WRITE_TOOLS.filter((name) => all.has(name));
		const active = new Set(pi.getActiveTools());
		return present.length > 0 && present.every((name) => !active.has(name));
	}

	/** Turn the tools that change files or the kernel off while the agent is read-only, and
	 * back on (those this turned off, if still listed) once it is not; say so in the panel. */
	function followReadOnly(ctx: any): void {
		const active = pi.getActiveTools();
		if (readOnly()) {
			// All of them, also those the other extension turned off itself (the 0.73 line's
			// plan mode keeps only its own list): they come back with edit and write.
			for (const name of followers) if (listed.has(name)) heldBack.add(name);
			const next = active.filter((name) => !followers.has(name));
			if (next.length !== active.length) pi.setActiveTools(next);
		} else if (heldBack.size) {
			const back = [...heldBack].filter((name) => listed.has(name) && followers.has(name) && !active.includes(name));
			heldBack.clear();
			if (back.length) pi.setActiveTools([...active, ...back]);
		}
		const held = [...heldBack];
		const status = held.length ? `read-only: ${held.join(", ")} off while edit and write are off` : undefined;
		if (status !== shownStatus && ctx?.ui) {
			// Sent when it changes, not at every turn.
			shownStatus = status;
			ctx.ui.setStatus("atomic-read-only", status);
		}
	}

	async function call(spec: Spec, toolCallId: string, params: unknown, signal: AbortSignal | undefined, onUpdate: any, ctx: any) {
		const name = spec.name;
		if (!listed.has(name)) throw new Error(`${name} is no longer one of the notebook's tools.`);
		if (spec.approval) {
			const title = spec.approvalTitle || `Run ${name} in the kernel?`;
			const message = spec.approvalMessage ?? JSON.stringify(params ?? {}, null, 2);
			const ok = await ctx.ui.confirm(title, message, { signal });
			if (!ok) throw new Error(`The person declined to run ${name} in the kernel.`);
		}
		if (!secret) {
			throw new Error("The kernel did not answer (atomic-jupyter's kernel tools have no secret: restart the agent).");
		}
		onUpdate?.({ content: [{ type: "text", text: "waiting for the kernel…" }], details: {} });
		const request = JSON.stringify({ tool: name, id: toolCallId, args: params ?? {} });
		const answer: string | undefined = await unlessAborted(
			Promise.resolve(ctx.ui.editor(`${CALL_PREFIX}${secret}`, request)),
			signal,
			`The call of ${name}`,
		);
		if (answer === undefined || answer === null) {
			throw new Error("The kernel did not answer (is the notebook's kernel running?)");
		}
		let reply: any;
		try {
			reply = JSON.parse(answer);
		} catch {
			throw new Error(`The kernel's answer is not JSON: ${answer.slice(0, 200)}`);
		}
		if (reply?.ok === true) {
			const text = typeof reply.text === "string" ? reply.text : JSON.stringify(reply.text ?? "");
			const content: any[] = [{ type: "text" as const, text }];
			for (const image of Array.isArray(reply.images) ? reply.images : []) {
				if (IMAGE_TYPES.has(image?.mimeType) && typeof image?.data === "string") {
					content.push({ type: "image" as const, data: image.data, mimeType: image.mimeType });
				}
			}
			const extra = reply.details && typeof reply.details === "object" && !Array.isArray(reply.details) ? reply.details : {};
			return { content, details: { ...extra, kernel: true } };
		}
		throw new Error(typeof reply?.error === "string" ? reply.error : `${name} failed in the kernel.`);
	}

	function register(spec: Spec): void {
		const snippet = spec.description.split("\n")[0].trim().slice(0, 200);
		const definition: any = {
			name: spec.name,
			label: spec.name,
			description: spec.description || `${spec.name} (a function of the notebook's kernel)`,
			...(snippet ? { promptSnippet: snippet } : {}),
			// A plain JSON Schema: both lines validate arguments as JSON Schema (TypeBox's
			// compiler takes plain schemas on the 0.73 line, pi-schema on the current one).
			parameters: spec.parameters,
			// The kernel runs one call at a time on its main thread anyway.
			executionMode: "sequential",
			execute: (toolCallId: string, params: unknown, signal: AbortSignal | undefined, onUpdate: any, ctx: any) =>
				call(spec, toolCallId, params, signal, onUpdate, ctx),
		};
		pi.registerTool(definition);
		registered.set(spec.name, JSON.stringify(spec));
	}

	/** Make the tools exactly those of tools.json (but those held back while the agent is
	 * read-only); write and return what was done. */
	function apply(ctx: any): Status {
		const { specs, skipped } = readSpecs(folder!);
		// A tool of ours must not replace a built-in or another extension's tool.
		const others = new Set(pi.getAllTools().map((tool) => tool.name).filter((name) => !registered.has(name)));
		const wanted = new Set<string>();
		for (const spec of specs) {
			if (others.has(spec.name)) {
				skipped[spec.name] = "the agent already has a tool of that name";
				continue;
			}
			try {
				if (registered.get(spec.name) !== JSON.stringify(spec)) register(spec);
				wanted.add(spec.name);
			} catch (error) {
				skipped[spec.name] = errorText(error);
			}
		}
		listed = wanted;
		builtins = new Set(specs.filter((spec) => spec.builtin).map((spec) => spec.name));
		followers = new Set(specs.filter((spec) => spec.followsWrite).map((spec) => spec.name));
		const active = pi.getActiveTools();
		const next = active.filter((name) => !registered.has(name) || wanted.has(name));
		for (const name of wanted) if (!next.includes(name)) next.push(name);
		if (next.length !== active.length || next.some((name, i) => name !== active[i])) pi.setActiveTools(next);
		followReadOnly(ctx);
		const now = pi.getActiveTools();
		const status: Status = {
			registered: [...wanted],
			active: [...wanted].filter((name) => now.includes(name)),
			skipped,
		};
		try {
			const file = join(folder!, "status.json");
			writeFileSync(`${file}.tmp`, JSON.stringify(status), { mode: 0o600 });
			renameSync(`${file}.tmp`, file);
		} catch {
			// the folder is gone: the session is closing
		}
		return status;
	}

	/** Say what the agent can call in the notebook's panel (a status entry: the functions the
	 * person exposed; every session's own tools go unsaid), and what not. */
	function report(status: Status, ctx: any): void {
		for (const [name, why] of Object.entries(status.skipped)) {
			ctx.ui.notify(`Kernel tool ${name} not offered: ${why}`, "warning");
		}
		const names = status.active.filter((name) => !builtins.has(name));
		ctx.ui.setStatus("atomic-kernel-tools", names.length ? `kernel tools: ${names.join(", ")}` : undefined);
	}

	pi.on("session_start", async (_event, ctx) => {
		report(apply(ctx), ctx);
	});

	// Another extension may turn edit and write off or on at any time (a command, a shortcut,
	// the end of a run): each run and each turn starts with the kernel tools following them.
	pi.on("before_agent_start", async (_event, ctx) => {
		followReadOnly(ctx);
	});
	pi.on("turn_start", async (_event, ctx) => {
		followReadOnly(ctx);
	});
	// And a call that comes anyway (the tools changed within a turn) is refused in words.
	pi.on("tool_call", async (event: any) => {
		if (followers.has(event.toolName) && readOnly()) {
			return {
				block: true,
				reason: `${event.toolName} is off while the agent is read-only (edit and write are off): it could change files or the kernel.`,
			};
		}
		return undefined;
	});

	pi.on("session_shutdown", async (event) => {
		// A reload or a new session loads this extension again, in this process: hand the
		// secret to that instance. On quit nothing follows.
		if (event.reason === "quit" || !secret) return;
		try {
			writeFileSync(secretFile, secret, { mode: 0o600 });
		} catch {
			// the folder is gone: the session is closing
		}
	});

	pi.registerCommand("atomic-jupyter-tools", {
		description: "atomic-jupyter's own: offer the notebook kernel's functions as tools (sent by the notebook)",
		handler: async (_args, ctx) => {
			report(apply(ctx), ctx);
		},
	});
}
