/**
 * Rein tool names for MCP tools: `mcp__<server>__<tool>`.
 *
 * Invariant: every name produced matches the harness's TOOL_NAME_PATTERN (1-64 of
 * A-Z a-z 0-9 _ -). Characters outside that set become `_`; a name longer than 64
 * is cut and given a short hash of the full MCP name, so two long names differing
 * only at the end stay distinct. Two tools of one server that still map to the
 * same name are a `name_collision` error, never a silent shadowing.
 */
import { createHash } from "node:crypto";
import { TOOL_NAME_PATTERN } from "@rein/sdk";
import { nameCollision } from "./errors.js";

/** Server names: what appears between `mcp__` and `__`; no `__` so the split stays unambiguous. */
export const SERVER_NAME_PATTERN = /^[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*$/;
export const MAX_SERVER_NAME = 24;

const MAX = 64;
const PREFIX = "mcp__";

export function reinToolName(server: string, mcpTool: string): string {
  const safe = mcpTool.replace(/[^A-Za-z0-9_-]/g, "_") || "_";
  const full = `${PREFIX}${server}__${safe}`;
  if (full.length <= MAX) return full;
  const hash = createHash("sha256").update(mcpTool).digest("hex").slice(0, 8);
  return `${full.slice(0, MAX - hash.length - 1)}_${hash}`;
}

/** Maps each MCP tool name of one server to its Rein name; throws on a collision. */
export function reinToolNames(server: string, mcpTools: readonly string[]): Map<string, string> {
  const byReinName = new Map<string, string>();
  const result = new Map<string, string>();
  for (const mcpTool of mcpTools) {
    const name = reinToolName(server, mcpTool);
    if (!TOOL_NAME_PATTERN.test(name)) throw new Error(`internal: produced invalid tool name ${name}`);
    const first = byReinName.get(name);
    if (first !== undefined) throw nameCollision(server, name, first, mcpTool);
    byReinName.set(name, mcpTool);
    result.set(mcpTool, name);
  }
  return result;
}
