/**
 * Benchmark 5: what the shell's OS sandbox adds to one `bash` call. The same
 * trivial command (`true`) through `@rein/tools-shell`'s bash tool with
 * `sandbox: { mode: "off" }` and with the default sandbox (workspace-write, no
 * network: bubblewrap + the runtime's seccomp helper, no proxy), interleaved;
 * reported as medians and the difference per call.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { interleave } from "./stats.mjs";

const SHELL = new URL("../../packages/plugins/tools-shell/dist/index.js", import.meta.url);

export async function benchSandbox({ reps, log }) {
  const { createBashTool, checkSandbox, releaseRuntimeIfIdle } = await import(SHELL.href);
  const check = await checkSandbox();
  if (!check.ok) {
    log(`sandbox: skipped, it does not work here: ${check.reason}`);
    return { skipped: check.reason };
  }
  const cwd = mkdtempSync(join(tmpdir(), "rein-bench-sandbox-"));
  const context = () => ({
    signal: new AbortController().signal,
    update() {},
    cwd,
    sessionId: "bench",
    toolCallId: "call",
    facts: {},
  });
  const call = (tool) => async () => {
    const result = await tool.execute({ command: "true" }, context());
    if (result.isError) throw new Error(`bash failed: ${JSON.stringify(result.content)}`);
  };
  const bare = createBashTool({ sandbox: { mode: "off" } });
  const sandboxed = createBashTool();
  log(`sandbox: ${reps} interleaved calls each`);
  const results = await interleave(
    [
      { name: "bare", run: call(bare) },
      { name: "sandboxed", run: call(sandboxed) },
    ],
    { reps, warmup: 2 },
  );
  await releaseRuntimeIfIdle();
  rmSync(cwd, { recursive: true, force: true });
  return { bare: results.bare.median, sandboxed: results.sandboxed.median };
}
