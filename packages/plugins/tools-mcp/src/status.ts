/**
 * What the MCP servers are doing, for people: `rein tools`, `rein doctor`, and the
 * session record.
 *
 * Invariant: the plugin appends one `custom` session entry of type
 * `rein.mcp-servers` after setup and again whenever a server's tool set changes,
 * so a session says which servers and tools an agent had, with their risks, and
 * why a server was missing. Header values and environment values never appear.
 */
import type { SessionEntry } from "@rein/sdk";
import type { ServerState } from "./connection.js";
import type { ToolEntry } from "./tools.js";

export const MCP_STATUS_ENTRY = "rein.mcp-servers";

export interface McpServerStatus {
  name: string;
  /** `stdio <command> <args>` or `http <origin><path>`. */
  transport: string;
  state: ServerState;
  /** Why the server is failed or restarting. */
  reason?: string;
  restarts: number;
  /** The MCP revision the connection speaks (`2026-07-28`, `2025-11-25`, ...), once connected. */
  protocolVersion?: string;
  tools: ToolEntry[];
  /** MCP tools left out (unusable schema), with why. */
  skipped: { tool: string; reason: string }[];
}

export interface McpStatus {
  servers: McpServerStatus[];
}

/** The latest MCP status recorded in a session's entries, if any. */
export function readMcpStatus(entries: readonly SessionEntry[]): McpStatus | undefined {
  for (let index = entries.length - 1; index >= 0; index--) {
    const entry = entries[index];
    if (entry?.type === "custom" && entry.customType === MCP_STATUS_ENTRY) return entry.data as McpStatus;
  }
  return undefined;
}
