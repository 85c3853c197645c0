/**
 * The sandbox boundary as gates see it, and the one way out of it.
 *
 * Invariants:
 * - every bash call's facts say which boundary it runs in (`facts.sandbox`), so a
 *   policy can decide on it;
 * - a call that asks to run unsandboxed (`dangerouslyDisableSandbox: true`) gets an
 *   `ask` from this plugin's gate: it runs only when a person answers allow; with
 *   nobody to answer, the harness denies it. A bash tool built without that gate
 *   refuses the argument instead.
 */
import type { Rein } from "@rein/sdk";
import type { SandboxMode } from "./sandbox-policy.js";

export interface SandboxFacts {
  /** The mode the tool is configured with. */
  mode: SandboxMode;
  /** Whether this call asked to run outside the sandbox. */
  unsandboxedRequested: boolean;
}

declare module "@rein/harness" {
  interface ToolCallFacts {
    /** The shell's OS boundary for this call (`@rein/tools-shell`). */
    sandbox?: SandboxFacts;
  }
}

/** The bash argument that asks to run one command outside the sandbox. */
export const ESCAPE_ARGUMENT = "dangerouslyDisableSandbox";

/** Installs the gate that turns every unsandboxed request of `toolName` into an `ask`. */
export function gateUnsandboxedRuns(rein: Rein, toolName: string): void {
  rein.hooks.toolGate.tap(rein.plugin.name, (call) => {
    if (call.name !== toolName || call.facts.sandbox?.unsandboxedRequested !== true) return undefined;
    return {
      decision: "ask",
      rule: "unsandboxed",
      reason:
        "this command asks to run outside the sandbox (dangerouslyDisableSandbox): it could write anywhere, " +
        "read credentials and reach any host",
    };
  });
}
