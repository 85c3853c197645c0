/**
 * Stable identities of tool-call arguments, for plugins that compare or record
 * calls (audit hashes, exact permission grants, loop detection). Invariant:
 * arguments that are equal as JSON values give the same text and the same hash,
 * whatever the order of their object keys.
 */
import { createHash } from "node:crypto";

/** JSON with object keys sorted at every level. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value)) ?? "null";
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) out[key] = sortKeys((value as Record<string, unknown>)[key]);
    return out;
  }
  return value;
}

/** `sha256:<hex>` of the canonical JSON of `args`. */
export const argsHash = (args: unknown): string =>
  `sha256:${createHash("sha256").update(canonicalJson(args)).digest("hex")}`;
