/**
 * Benchmark 7: Rein behind an agent's hooks (`rein hook`, `rein hook serve`).
 *
 * - Start-up: one `PreToolUse` event (`echo ok; touch marker`) answered by a
 *   fresh `rein hook claude-code` process, as an agent runs it (the command
 *   `rein hook install` writes: `node --liftoff-only bin/rein.js hook ...`), on a
 *   trusted project with a policy + permissions stack; process start to exit
 *   with the answer, against `node -e 0`, interleaved. Target: ≤ 2×.
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

function run(args, { env, cwd, input }) {
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

const event = (cwd, id) =>
  JSON.stringify({
    session_id: "bench-session",
    cwd,
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command: "echo ok; touch marker" },
    tool_use_id: `toolu_${id}`,
  });

async function benchProcess({ reps, dir, env, log }) {
  const trusted = await run([REIN, "trust", "--yes"], { env, cwd: dir });
  if (trusted.code !== 0) throw new Error(`rein trust failed: ${trusted.stderr}`);
  let n = 0;
  const check = (result) => {
    if (result.code !== 0 || !result.stdout.includes('"permissionDecision":"deny"'))
      throw new Error(`rein hook answered ${result.code}: ${result.stdout} ${result.stderr}`);
  };
  log(`agent hook: node -e 0 vs rein hook claude-code (policy + permissions), ${reps} reps, interleaved`);
  const times = await interleave(
    [
      { name: "node", run: () => run(["-e", "0"], { env, cwd: dir }) },
      {
        name: "hook",
        run: async () =>
          check(
            await run(["--liftoff-only", REIN, "hook", "claude-code"], {
              env,
              cwd: dir,
              input: event(dir, n++),
            }),
          ),
      },
    ],
    { reps },
  );
  return { node: times.node.median, hook: times.hook.median };
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
  return [
    {
      group,
      name: "`rein hook claude-code`, process start to answer, vs `node -e 0`",
      measured: `${ms(times.hook)} vs ${ms(times.node)}`,
      ratio: `${ratio.toFixed(2)}× node -e 0`,
      target: "≤ 2.00×",
      met: ratio <= 2 ? "yes" : "**no**",
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
