/**
 * Whether the sandbox works on this machine: one trivial command run through a real
 * sandboxed bash tool (`rein doctor` reports it). Never throws.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openBashTool } from "./bash.js";
import type { SandboxOptions } from "./sandbox-policy.js";
import { releaseRuntimeIfIdle } from "./sandbox-runtime.js";

export interface SandboxCheck {
  ok: boolean;
  /** What failed and what to do, when not ok. */
  reason?: string;
  /** How long the check's command took, in ms. */
  ms: number;
}

export async function checkSandbox(options: SandboxOptions = {}): Promise<SandboxCheck> {
  const started = Date.now();
  const cwd = mkdtempSync(join(tmpdir(), "rein-sandbox-check-"));
  const handle = openBashTool({ sandbox: { ...options, mode: "workspace-write" }, timeout: 30 });
  try {
    const result = await handle.tool.execute(
      { command: "echo sandboxed" },
      {
        signal: new AbortController().signal,
        update: () => undefined,
        cwd,
        sessionId: "rein-doctor",
        toolCallId: "sandbox-check",
        facts: {},
      },
    );
    const text = result.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");
    const ms = Date.now() - started;
    if (!result.isError && text.startsWith("sandboxed\n")) return { ok: true, ms };
    return { ok: false, reason: text.replace(/\s+/g, " ").trim(), ms };
  } catch (error) {
    return { ok: false, reason: (error as Error).message, ms: Date.now() - started };
  } finally {
    handle.dispose();
    await releaseRuntimeIfIdle().catch(() => undefined);
    rmSync(cwd, { recursive: true, force: true });
  }
}
