/**
 * Benchmark 5: what the shell's OS sandbox adds to one `bash` call. The same
 * trivial command (`true`) through `@rein/tools-shell`'s bash tool with
 * `sandbox: { mode: "off" }` and with the default sandbox (workspace-write, no
 * network: bubblewrap + the runtime's seccomp helper, no proxy), interleaved with
 * bubblewrap alone (`bwrap` with the same namespaces running `true`: the floor any
 * bubblewrap sandbox pays); reported as medians and the difference per call.
 */
import { spawn } from "node:child_process";
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
  const bwrapAlone = () =>
    new Promise((done, fail) => {
      const args = ["--new-session", "--die-with-parent", "--unshare-net", "--unshare-pid", "--unshare-user"];
      const child = spawn(
        "bwrap",
        [...args, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "/bin/true"],
        {
          cwd,
          stdio: "ignore",
        },
      );
      child.once("error", fail);
      child.once("close", (code) => (code === 0 ? done() : fail(new Error(`bwrap exited ${code}`))));
    });
  const bare = createBashTool({ sandbox: { mode: "off" } });
  const sandboxed = createBashTool();
  log(`sandbox: ${reps} interleaved calls each`);
  const results = await interleave(
    [
      { name: "bare", run: call(bare) },
      { name: "sandboxed", run: call(sandboxed) },
      { name: "bwrap", run: bwrapAlone },
    ],
    { reps, warmup: 2 },
  );
  await releaseRuntimeIfIdle();
  rmSync(cwd, { recursive: true, force: true });
  return { bare: results.bare.median, sandboxed: results.sandboxed.median, bwrap: results.bwrap.median };
}
