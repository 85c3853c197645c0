/**
 * Benchmark 7: Rein behind an agent's hooks (`rein hook`, `rein hook serve`).
 *
 * - Start-up: one `PreToolUse` event (`echo ok; touch marker`) answered by a
 *   fresh process, as an agent runs it (the command `rein hook install` writes:
 *   `node --liftoff-only bin/rein-hook.js hook ...`), on a trusted project with a
 *   policy + permissions stack; process start to exit with the answer, against
 *   `node -e 0`, interleaved: the warm path (the client asking the running hook
 *   daemon; target ≤ 2×) and the full in-process path (`bin/rein.js hook ...`,
 *   what the client falls back to). Then the cold first call separately (no
 *   daemon yet: the client decides in process and starts one; reported, no target).
 * - After start (`rein hook serve`'s path): the same event decided on a stack
 *   built once, in process (`handleEvent`: parse, map, `evaluateToolCall`,
 *   answer), without and with the audit (the session kept open and synced per
 *   event), µs per event over many events. Target: well under 1 ms.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { interleave, now } from "./stats.mjs";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const REIN = path.join(repo, "packages/cli/bin/rein.js");
const CLIENT = path.join(repo, "packages/cli/bin/rein-hook.js");
const cli = (file) => path.join(repo, "packages/cli/dist", file);
const plugin = (name) => JSON.stringify(path.join(repo, "packages/plugins", name, "dist/index.js"));

const CONFIG = `import { defineConfig } from "@rein/sdk";
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

/** Runs `node <args>` with `input` on stdin: its exit code, stdout and stderr. */
export function run(args, { env, cwd, input }) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env, cwd, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input ?? "");
  });
}

/**
 * One agent session per path: an agent's session goes through one of them, and the
 * hook daemon keeps its session open between events (hook-audit.ts); an in-process
 * event on the same session would make the daemon give it back and re-read it next time.
 */
const event = (cwd, id, session = "bench-session") =>
  JSON.stringify({
    session_id: session,
    cwd,
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command: "echo ok; touch marker" },
    tool_use_id: `toolu_${id}`,
  });

/** The hook daemons started with `env` (their environment names the bench's config dir). */
function daemonPids(env) {
  const pids = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8");
      if (!cmdline.includes("daemon-entry.js")) continue;
      if (
        fs.readFileSync(`/proc/${entry}/environ`, "utf8").includes(`REIN_CONFIG_DIR=${env.REIN_CONFIG_DIR}\0`)
      )
        pids.push(Number(entry));
    } catch {
      // Gone, or not ours to read.
    }
  }
  return pids;
}

function killDaemons(env) {
  for (const pid of daemonPids(env)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone.
    }
  }
}

const sockets = (env) => {
  try {
    return fs.readdirSync(path.join(env.REIN_CONFIG_DIR, "hookd")).filter((name) => name.endsWith(".sock"));
  } catch {
    return [];
  }
};

async function until(condition, what, ms = 60_000) {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function benchProcess({ reps, dir, env, log }) {
  const trusted = await run([REIN, "trust", "--yes"], { env, cwd: dir });
  if (trusted.code !== 0) throw new Error(`rein trust failed: ${trusted.stderr}`);
  let n = 0;
  const check = (result, by) => {
    if (result.code !== 0 || !result.stdout.includes('"permissionDecision":"deny"'))
      throw new Error(`rein hook answered ${result.code}: ${result.stdout} ${result.stderr}`);
    if (by && !result.stderr.includes(`rein-hook: ${by}`))
      throw new Error(`expected "${by}", the client said: ${result.stderr}`);
  };
  const traced = { ...env, REIN_HOOK_DAEMON_TRACE: "1" };
  const client = (runEnv) =>
    run(["--liftoff-only", CLIENT, "hook", "claude-code"], { env: runEnv, cwd: dir, input: event(dir, n++) });
  // The daemon the warm path asks: started by a first call, as an agent's first event starts it.
  check(await client(traced), "decided in process");
  await until(() => sockets(traced).length === 1, "the hook daemon");
  log(
    `agent hook: node -e 0 vs the warm client vs rein hook in process (policy + permissions), ${reps} reps, interleaved`,
  );
  const times = await interleave(
    [
      { name: "node", run: () => run(["-e", "0"], { env, cwd: dir }) },
      { name: "warm", run: async () => check(await client(traced), "answered by the daemon") },
      {
        name: "hook",
        run: async () =>
          check(
            await run(["--liftoff-only", REIN, "hook", "claude-code"], {
              env,
              cwd: dir,
              input: event(dir, n++, "bench-session-in-process"),
            }),
          ),
      },
    ],
    { reps },
  );
  killDaemons(traced);
  // The cold first call: no daemon for this environment yet (a fresh variable each time).
  const coldReps = Math.max(3, Math.ceil(reps / 2));
  log(`agent hook: the client's cold first call (no daemon yet), ${coldReps} reps`);
  const cold = [];
  for (let i = 0; i < coldReps; i++) {
    const coldEnv = { ...traced, REIN_BENCH_COLD: `${i}-${Date.now()}` };
    const began = now();
    check(await client(coldEnv), "decided in process");
    cold.push(now() - began);
    await until(
      () => daemonPids(coldEnv).length === 0 || sockets(coldEnv).length > 0,
      "the cold call's daemon",
    );
    killDaemons(coldEnv);
    await until(() => daemonPids(coldEnv).length === 0, "the daemon to go");
  }
  cold.sort((a, b) => a - b);
  const coldMedian =
    cold.length % 2 ? cold[cold.length >> 1] : (cold[cold.length / 2 - 1] + cold[cold.length / 2]) / 2;
  return {
    node: times.node.median,
    warm: times.warm.median,
    hook: times.hook.median,
    cold: coldMedian,
    load: os.loadavg()[0],
  };
}

async function benchServe({ scale, dir, log }) {
  process.env.REIN_CACHE_DIR ??= path.join(dir, "cache");
  const { buildAgent } = await import(cli("agent/build-agent.js"));
  const { handleEvent, prepareHarness } = await import(cli("hook/handle-event.js"));
  const { parseHookInput } = await import(cli("hook/hook-input.js"));
  const { auditFor } = await import(cli("hook/hook-options.js"));
  const agent = await buildAgent({ cwd: dir, ephemeral: true, modelOptional: true });
  prepareHarness(agent.harness);
  const events = Math.max(50, Math.round(2000 * scale));
  log(`agent hook: ${events} PreToolUse events on one stack, without and with the audit`);
  const measure = async (audit) => {
    for (let i = 0; i < 50; i++)
      await handleEvent(agent.harness, audit, parseHookInput("claude-code", event(dir, `w${i}`)), 20_000);
    const began = now();
    for (let i = 0; i < events; i++) {
      const answer = await handleEvent(
        agent.harness,
        audit,
        parseHookInput("claude-code", event(dir, i)),
        20_000,
      );
      if (!answer.stdout.includes('"deny"'))
        throw new Error(`unexpected answer ${answer.stdout}${answer.stderr}`);
    }
    return ((now() - began) * 1000) / events;
  };
  const decisionUs = await measure(undefined);
  const audit = auditFor(agent.loaded, { keepOpen: true });
  const auditedUs = await measure(audit);
  audit?.close();
  await agent.dispose();
  return { events, decisionUs, auditedUs };
}

/** `{ process: { node, hook } (ms medians), serve: { events, decisionUs, auditedUs } }` */
export async function benchAgentHook({ reps, scale, log = () => {} }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rein-bench-hook-"));
  fs.writeFileSync(path.join(dir, "rein.config.ts"), CONFIG);
  const env = {
    ...process.env,
    NO_COLOR: "1",
    REIN_CONFIG_DIR: path.join(dir, "rein-config"),
    XDG_CONFIG_HOME: path.join(dir, "xdg"),
    REIN_MANAGED_CONFIG: path.join(dir, "no-managed.json"),
    REIN_CACHE_DIR: path.join(dir, "cache"),
  };
  delete env.REIN_TRUST_PROJECT;
  try {
    const processTimes = await benchProcess({ reps, dir, env, log });
    // In process the project is this bench's own code, trusted for the measurement.
    process.env.REIN_TRUST_PROJECT = "1";
    const serve = await benchServe({ scale, dir, log });
    return { process: processTimes, serve };
  } finally {
    killDaemons(env);
    delete process.env.REIN_TRUST_PROJECT;
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const ms = (value) => `${value.toFixed(value < 100 ? 1 : 0)} ms`;
const us = (value) => `${value.toFixed(value < 10 ? 2 : value < 100 ? 1 : 0)} µs`;

export function agentHookRows({ process: times, serve }) {
  const group =
    "7. Agent hooks: one PreToolUse event (`echo ok; touch marker`, denied) on a policy + permissions stack";
  const ratio = times.hook / times.node;
  const warmRatio = times.warm / times.node;
  return [
    {
      group,
      name: "warm: the hook client (`bin/rein-hook.js`) answered by the hook daemon, process start to answer, vs `node -e 0`",
      measured: `${ms(times.warm)} vs ${ms(times.node)} (load average ${times.load.toFixed(1)})`,
      ratio: `${warmRatio.toFixed(2)}× node -e 0`,
      target: "≤ 2.00×",
      met: warmRatio <= 2 ? "yes" : "**no**",
    },
    {
      group,
      name: "in process: `rein hook claude-code` (the client's fallback), process start to answer, vs `node -e 0`",
      measured: `${ms(times.hook)} vs ${ms(times.node)}`,
      ratio: `${ratio.toFixed(2)}× node -e 0`,
      target: "",
      met: "",
    },
    {
      group,
      name: "cold: the client's first call (no daemon yet: decided in process, daemon started)",
      measured: ms(times.cold),
      ratio: `${(times.cold / times.node).toFixed(2)}× node -e 0`,
      target: "",
      met: "",
    },
    {
      group,
      name: `\`rein hook serve\`'s path after start: decision only (${serve.events} events)`,
      measured: `${us(serve.decisionUs)}/event`,
      ratio: "",
      target: "< 1 ms",
      met: serve.decisionUs < 1000 ? "yes" : "**no**",
    },
    {
      group,
      name: "the same with the audit (Rein session kept open, synced per event)",
      measured: `${us(serve.auditedUs)}/event`,
      ratio: "",
      target: "",
      met: "",
    },
  ];
}
