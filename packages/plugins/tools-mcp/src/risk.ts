/**
 * MCP tool annotations to Rein risk.
 *
 * Invariant: only hints the server actually set count (MCP's own defaults, e.g.
 * `destructiveHint: true` when absent, are not applied), and the result is the
 * most cautious reading: reaching outside (`openWorldHint`) is `network` even for
 * a read-only tool; `destructiveHint` is `write` even if `readOnlyHint` claims
 * otherwise; a read-only tool is `read`; any other annotated tool changes
 * something (`write`); a tool with no hints at all is `exec`, the cautious default.
 * An explicit `risks` entry in the server's config overrides all of this.
 */
import type { ToolRisk } from "@rein/sdk";

export interface ToolAnnotations {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export function riskFromAnnotations(annotations: ToolAnnotations | undefined): ToolRisk {
  if (!annotations) return "exec";
  const { readOnlyHint, destructiveHint, openWorldHint } = annotations;
  if (readOnlyHint === undefined && destructiveHint === undefined && openWorldHint === undefined)
    return "exec";
  if (openWorldHint === true) return "network";
  if (destructiveHint === true) return "write";
  if (readOnlyHint === true) return "read";
  return "write";
}
