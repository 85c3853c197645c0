/**
 * Runs the built `rein` binary as a real child process (no in-process shortcuts),
 * in temporary projects outside the workspace, with a private jiti cache.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const REIN_BIN = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "dist", "bin.js");

export interface ReinResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

const created: string[] = [];
export const cacheRoot = mkdtempSync(join(tmpdir(), "rein-cache-"));
/**
 * The machine's own config layers stay out of the tests: an empty user config dir
 * and no managed file (a test that wants them passes its own env). The temp
 * projects are the tests' own code: `REIN_TRUST_PROJECT=1` trusts it for each
 * process without a trust record; the trust tests pass `REIN_TRUST_PROJECT: ""`.
 */
export const machineEnv = {
  XDG_CONFIG_HOME: join(cacheRoot, "config"),
  REIN_MANAGED_CONFIG: join(cacheRoot, "no-managed.json"),
  REIN_TRUST_PROJECT: "1",
};
// Also for the tests that spawn rein with this process's environment (terminals, MCP clients).
process.env.REIN_TRUST_PROJECT = "1";

/** A temporary project folder (outside the workspace: no node_modules, no @rein/sdk installed). */
export function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "rein-e2e-"));
  created.push(dir);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

export function cleanup(): void {
  for (const dir of created.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export function spawnRein(args: string[], cwd: string, env: Record<string, string> = {}): ChildProcess {
  return spawn(process.execPath, [REIN_BIN, ...args], {
    cwd,
    env: { ...process.env, NO_COLOR: "1", REIN_CACHE_DIR: cacheRoot, ...machineEnv, ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
}

export function rein(
  args: string[],
  cwd: string,
  options: { env?: Record<string, string>; input?: string } = {},
) {
  return new Promise<ReinResult>((resolve, reject) => {
    const child = spawnRein(args, cwd, options.env);
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr?.on("data", (chunk) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin?.end(options.input ?? "");
  });
}

/** The faux-script reply shapes the CLI accepts, written as JSON config. */
export const scriptedConfig = (script: unknown[], extra = "") => `import { defineConfig } from "@rein/sdk";
export default defineConfig({
  model: { script: ${JSON.stringify(script)} },
  ${extra}
});
`;

/** A tool pack plugin file that imports @rein/sdk without installing it. */
export const TOOLS_PLUGIN = `import { definePlugin, defineTool, Type } from "@rein/sdk";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

export default definePlugin({
  name: "test-tools",
  setup(rein) {
    rein.registerTool(defineTool({
      name: "echo",
      description: "Echo text",
      parameters: Type.Object({ text: Type.String() }),
      risk: "read",
      execute: async (args) => ({ content: [{ type: "text", text: "echo: " + args.text }] }),
    }));
    rein.registerTool(defineTool({
      name: "wait",
      description: "Wait until aborted",
      parameters: Type.Object({}),
      risk: "read",
      execute: (_args, ctx) => new Promise((resolve) => {
        writeFileSync(join(ctx.cwd, "waiting"), String(process.pid));
        ctx.signal.addEventListener("abort", () => resolve({ content: [{ type: "text", text: "stopped" }], isError: true }));
      }),
    }));
    rein.registerTool(defineTool({
      name: "push",
      description: "Pretend to push",
      parameters: Type.Object({ remote: Type.String() }),
      risk: "exec",
      execute: async (args) => ({ content: [{ type: "text", text: "pushed to " + args.remote }] }),
    }));
  },
});
`;

/** A policy plugin file; \`denyPush\` decides whether push is denied. */
export const policyPlugin = (denyPush: boolean) => `import { definePlugin } from "@rein/sdk";
export default definePlugin({
  name: "house-rules",
  setup(rein) {
    rein.hooks.toolGate.tapPromise("house-rules", async (call) =>
      call.name === "push" && ${denyPush}
        ? { decision: "deny", reason: "no pushing on Fridays", rule: "no-push" }
        : undefined);
  },
});
`;
