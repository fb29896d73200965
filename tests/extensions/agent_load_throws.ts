/**
 * Test extension: its factory throws while the agent loads it. pi 0.73.1 in RPC mode does
 * not carry on without it: it prints "Failed to load extension ..." on stderr and exits with
 * code 1, so start() must fail with AgentStartError carrying that text.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export default function (_pi: ExtensionAPI) {
	throw new Error("agent-load-throws: marker-c41d thrown by the factory");
}
