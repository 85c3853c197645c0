/**
 * MCP servers as `rein tools` and `rein doctor` show them, read from the session
 * entry `@rein/tools-mcp` records (`custom` entry `rein.mcp-servers`): which
 * servers there are, their state, their tools with risks, and why one failed.
 * The CLI does not import the tool pack: the entry is its interface.
 */
import type { SessionEntry } from "@rein/harness";

export const MCP_STATUS_ENTRY = "rein.mcp-servers";

export interface McpServerReport {
  name: string;
  transport: string;
  state: string;
  reason?: string;
  restarts: number;
  /** The MCP revision the connection speaks (`2026-07-28`, `2025-11-25`), once connected. */
  protocolVersion?: string;
  tools: { name: string; mcpName: string; risk: string; paths: string[] }[];
  skipped: { tool: string; reason: string }[];
}

/** Every server of the latest status entry of each MCP plugin instance (usually one). */
export function mcpServers(entries: readonly SessionEntry[]): McpServerReport[] {
  for (let index = entries.length - 1; index >= 0; index--) {
    const entry = entries[index];
    if (entry?.type !== "custom" || entry.customType !== MCP_STATUS_ENTRY) continue;
    const servers = (entry.data as { servers?: unknown } | undefined)?.servers;
    return Array.isArray(servers) ? (servers as McpServerReport[]) : [];
  }
  return [];
}

const count = (tools: McpServerReport["tools"]) => {
  const byRisk = new Map<string, number>();
  for (const tool of tools) byRisk.set(tool.risk, (byRisk.get(tool.risk) ?? 0) + 1);
  const risks = [...byRisk].map(([risk, n]) => `${risk} ${n}`).join(", ");
  return `${tools.length} tool${tools.length === 1 ? "" : "s"}${risks ? ` (${risks})` : ""}`;
};

/** One line per server for people: state, tools by risk, transport; the reason when it is not ready. */
export function describeServer(server: McpServerReport): { ok: boolean; line: string; reason?: string } {
  const ok = server.state === "ready";
  const restarts = server.restarts > 0 ? `, restarted ${server.restarts}x` : "";
  const protocol = typeof server.protocolVersion === "string" ? `, MCP ${server.protocolVersion}` : "";
  const line = `${server.name}: ${server.state}${restarts}, ${count(server.tools)}${protocol} - ${server.transport || "not configured"}`;
  const reasons = [server.reason, ...server.skipped.map((skip) => skip.reason)].filter(
    (reason): reason is string => typeof reason === "string" && reason !== "",
  );
  return reasons.length > 0 ? { ok, line, reason: reasons.join("; ") } : { ok, line };
}
