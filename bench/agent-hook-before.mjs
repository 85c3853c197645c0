/**
 * Bench row 7's warm path, two checkouts interleaved: `node -e 0`, the warm hook
 * client of a built `--before` checkout and of this one, alternating each round
 * (stats.mjs `interleave`), each against its own project, config dir and daemon.
 *
 *   node --expose-gc bench/agent-hook-before.mjs --before ../rein-before [--reps 31]
 *
 * Prints one JSON line: medians (ms), ratios to `node -e 0`, load averages.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { run } from "./src/agent-hook.mjs";
import { interleave } from "./src/stats.mjs";

const { values } = parseArgs({
  options: { before: { type: "string" }, reps: { type: "string", default: "31" } },
});
if (!values.before) throw new Error("--before <built checkout> is required");
const after = fileURLToPath(new URL("..", import.meta.url));
const reps = Number(values.reps);

const config = (repo) => {
  const plugin = (name) => JSON.stringify(path.join(repo, "packages/plugins", name, "dist/index.js"));
  return `import { defineConfig } from "@rein/sdk";
import policy from ${plugin("plugin-policy")};
import permissions from ${plugin("plugin-permissions")};
export default defineConfig({
  model: { script: [] },
  plugins: [
    [policy, { rules: [
      { id: "echo", rule: "bash(echo *)", decision: "allow", reason: "echo is harmless" },
      { id: "no-touch", rule: "bash(touch *)", decision: "deny", reason: "no new files from the shell" },
      { id: "env", rule: "read(**/.env*)", decision: "deny", reason: "secrets" },
    ] }],
    permissions,
  ],
});
`;
};

let n = 0;
const event = (cwd) =>
  JSON.stringify({
    session_id: "bench-session",
    cwd,
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command: "echo ok; touch marker" },
    tool_use_id: `toolu_${n++}`,
  });

const dirs = [];
/** A trusted project for `repo`, its daemon started; returns one warm call. */
async function warmClient(repo) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rein-bench-before-"));
  dirs.push(dir);
  fs.writeFileSync(path.join(dir, "rein.config.ts"), config(repo));
  const env = {
    ...process.env,
    NO_COLOR: "1",
    REIN_CONFIG_DIR: path.join(dir, "rein-config"),
    XDG_CONFIG_HOME: path.join(dir, "xdg"),
    REIN_MANAGED_CONFIG: path.join(dir, "no-managed.json"),
    REIN_CACHE_DIR: path.join(dir, "cache"),
    REIN_HOOK_DAEMON_TRACE: "1",
  };
  delete env.REIN_TRUST_PROJECT;
  const trusted = await run([path.join(repo, "packages/cli/bin/rein.js"), "trust", "--yes"], {
    env,
    cwd: dir,
  });
  if (trusted.code !== 0) throw new Error(`${repo}: rein trust failed: ${trusted.stderr}`);
  const client = path.join(repo, "packages/cli/bin/rein-hook.js");
  const call = () =>
    run(["--liftoff-only", client, "hook", "claude-code"], { env, cwd: dir, input: event(dir) });
  const end = Date.now() + 120_000;
  while (!(await call()).stderr.includes("answered by the daemon")) {
    if (Date.now() > end) throw new Error(`${repo}: no warm daemon after 2 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return async () => {
    const result = await call();
    if (!result.stderr.includes("answered by the daemon") || !result.stdout.includes('"deny"'))
      throw new Error(`${repo}: ${result.stderr} ${result.stdout}`);
  };
}

function killDaemons(dir) {
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const environ = fs.readFileSync(`/proc/${entry}/environ`, "utf8");
      if (environ.includes(`REIN_CONFIG_DIR=${path.join(dir, "rein-config")}\0`))
        process.kill(Number(entry), "SIGKILL");
    } catch {
      // Gone, or not ours.
    }
  }
}

try {
  const before = await warmClient(path.resolve(values.before));
  const current = await warmClient(after);
  const loadBefore = os.loadavg()[0];
  const times = await interleave(
    [
      { name: "node", run: () => run(["-e", "0"], { env: process.env, cwd: os.tmpdir() }) },
      { name: "before", run: before },
      { name: "after", run: current },
    ],
    { reps },
  );
  const median = (name) => times[name].median;
  console.log(
    JSON.stringify({
      reps,
      load: [loadBefore, os.loadavg()[0]],
      node: median("node"),
      before: median("before"),
      after: median("after"),
      ratioBefore: median("before") / median("node"),
      ratioAfter: median("after") / median("node"),
    }),
  );
} finally {
  for (const dir of dirs) {
    killDaemons(dir);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
