/**
 * Permission modes: how much the person lets through without being asked.
 *
 * | mode          | calls no gate has an opinion on                                      |
 * |---------------|----------------------------------------------------------------------|
 * | `default`     | the `defaults` by risk                                                |
 * | `acceptEdits` | edits inside the project (write risk, every path inside) are allowed  |
 * | `plan`        | read only: anything but a `read` call is denied, asks included        |
 * | `sandboxed`   | everything that stays inside a boundary is allowed: calls whose facts prove an OS sandbox, and edits inside the project; the rest as `default` (Codex's full-auto, never Claude Code's bypass) |
 *
 * Invariants (fail closed): a mode only ever turns an `ask` default into an
 * allow, never a `deny` default (so a stricter layer's `defaults` hold); it never
 * loosens a gate's verdict (a policy deny or ask stays as it is); `plan` only
 * tightens, and is also a gate of its own (index.ts), so a policy allow does not
 * run a write or an exec in plan mode; a call proves a sandbox only with `facts.sandbox` naming a mode and
 * `unsandboxedRequested: false` (absent facts are "off").
 */
import type { GateVerdict, ToolGateCall } from "@rein/sdk";

export const PERMISSION_MODES = ["default", "acceptEdits", "plan", "sandboxed"] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];

type Call = Pick<ToolGateCall, "name" | "risk" | "facts">;

/** Whether the call's facts prove it runs inside an OS sandbox. */
export function provesSandbox(call: Call): boolean {
  const sandbox = (call.facts as { sandbox?: { mode?: unknown; unsandboxedRequested?: unknown } } | undefined)
    ?.sandbox;
  if (sandbox === undefined || sandbox.unsandboxedRequested !== false) return false;
  return sandbox.mode === "workspace-write" || sandbox.mode === "read-only";
}

/** A write call whose every path was resolved inside the project (tools-fs declares them). */
export function editsInside(call: Call): boolean {
  if (call.risk !== "write") return false;
  const paths = (call.facts as { paths?: readonly { inside: boolean }[] } | undefined)?.paths;
  return paths !== undefined && paths.length > 0 && paths.every((p) => p.inside);
}

/** The default verdict under a mode, from the verdict the `defaults` give. */
export function modeVerdict(mode: PermissionMode, call: Call, base: GateVerdict): GateVerdict {
  if (mode === "plan") {
    if (call.risk === "read") return base;
    return {
      decision: "deny",
      reason: `permission mode "plan" is read-only: ${call.name} (risk ${call.risk ?? "unknown"}) does not run`,
    };
  }
  if (base.decision !== "ask") return base;
  if (mode === "acceptEdits" && editsInside(call)) {
    return {
      decision: "allow",
      reason: `permission mode "acceptEdits": edits inside the project are allowed`,
    };
  }
  if (mode === "sandboxed") {
    if (provesSandbox(call)) {
      return {
        decision: "allow",
        reason: `permission mode "sandboxed": ${call.name} runs inside the OS sandbox`,
      };
    }
    if (editsInside(call)) {
      return {
        decision: "allow",
        reason: `permission mode "sandboxed": edits inside the project are allowed`,
      };
    }
  }
  return base;
}

/** Plan mode answers a gate's `ask` for anything but a read with a deny (the prompt is not shown). */
export function planRefusal(mode: PermissionMode, call: Call): string | undefined {
  if (mode !== "plan" || call.risk === "read") return undefined;
  return `permission mode "plan" is read-only: ${call.name} (risk ${call.risk ?? "unknown"}) does not run`;
}
