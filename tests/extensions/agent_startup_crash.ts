/**
 * Test extension: dies while the agent loads it. The factory writes a marker on stderr and
 * exits with code 7, so the agent never becomes ready; a test checks that start() fails with
 * AgentStartError carrying the marker and the exit code.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export default function (_pi: ExtensionAPI) {
	process.stderr.write("agent-startup-crash: marker-7f3a dying during load\n");
	process.exit(7);
}
