/**
 * What the hook daemon's e2e tests share: a trusted project with a policy +
 * permissions stack (one rule's decision in a plugin file), its private config
 * dir (its daemons live there), the client as `rein hook install` writes it,
 * the full in-process `rein hook`, and finding and killing the env's daemons.
 */
import { spawn, spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import { cacheRoot, cleanup, project, REIN_BIN, type ReinResult } from "./rein-process.js";

export const cli = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const CLIENT = join(cli, "bin", "rein-hook.js");
const repo = join(cli, "..", "..");
const dist = (pkg: string) => JSON.stringify(join(repo, "packages", "plugins", pkg, "dist", "index.js"));

export const CONFIG = `import { defineConfig } from "@rein/sdk";
import policy from ${dist("plugin-policy")};
import permissions from ${dist("plugin-permissions")};
import { touchDecision } from "./rules/touch.ts";
export default defineConfig({
  model: { script: [] },
  plugins: [
    [policy, { rules: [
      { id: "echo", rule: "bash(echo *)", decision: "allow", reason: "echo is harmless" },
      { id: "touch", rule: "bash(touch *)", decision: touchDecision, reason: "touch rule from the plugin file" },
      { id: "push", rule: "bash(git push *)", decision: "ask", reason: "pushing needs a person" },
    ] }],
    permissions,
  ],
});
`;
export const TOUCH = (decision: string) => `export const touchDecision = ${JSON.stringify(decision)};\n`;

/** What the tests started (their daemons), stopped after all (`stopAll`). */
const created: Array<() => void> = [];
export function stopAll(): void {
  for (const stop of created.splice(0)) stop();
  cleanup();
}

/** A project with its own Rein config dir (its daemons live there) and the env its hooks run with. */
export function setup(extraEnv: Record<string, string> = {}) {
  const dir = project({ "rein.config.ts": CONFIG, "rules/touch.ts": TOUCH("deny") });
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    NO_COLOR: "1",
    REIN_CACHE_DIR: cacheRoot,
    XDG_CONFIG_HOME: join(dir, ".xdg"),
    REIN_CONFIG_DIR: join(dir, ".rein-user"),
    REIN_MANAGED_CONFIG: join(dir, "no-managed.json"),
    REIN_TRUST_PROJECT: "1",
    REIN_HOOK_DAEMON_TRACE: "1",
    ...extraEnv,
  };
  created.push(() => killDaemons(env));
  return { dir, env, sockets: join(env.REIN_CONFIG_DIR as string, "hookd") };
}

export function run(
  args: string[],
  cwd: string,
  env: Record<string, string>,
  input: string,
): Promise<ReinResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
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
    child.stdin.end(input);
  });
}

export const events = {
  "claude-code": (cwd: string, command: string, id: string) => ({
    session_id: `cc-${id}`,
    cwd,
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command },
    tool_use_id: `toolu_${id}`,
  }),
  codex: (cwd: string, command: string, id: string) => ({
    session_id: `cx-${id}`,
    cwd,
    hook_event_name: "PreToolUse",
    turn_id: "turn-1",
    tool_name: "Bash",
    tool_input: { command },
    tool_use_id: `call_${id}`,
  }),
  gemini: (cwd: string, command: string, id: string) => ({
    session_id: `gm-${id}`,
    cwd,
    hook_event_name: "BeforeTool",
    tool_name: "run_shell_command",
    tool_input: { command },
  }),
};
export type AgentName = keyof typeof events;

/** The client, as `rein hook install` writes it. */
export const client = (
  agent: AgentName,
  dir: string,
  env: Record<string, string>,
  command: string,
  id: string,
) =>
  run(["--liftoff-only", CLIENT, "hook", agent], dir, env, JSON.stringify(events[agent](dir, command, id)));

/** Today's in-process path: the full `rein hook <agent>`. */
export const inProcess = (
  agent: AgentName,
  dir: string,
  env: Record<string, string>,
  command: string,
  id: string,
) =>
  run(["--liftoff-only", REIN_BIN, "hook", agent], dir, env, JSON.stringify(events[agent](dir, command, id)));

export const answeredBy = (result: ReinResult) =>
  result.stderr.includes("rein-hook: answered by the daemon")
    ? "daemon"
    : result.stderr.includes("rein-hook: decided in process")
      ? "process"
      : "unknown";

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function socketsIn(dir: string): string[] {
  try {
    return readdirSync(dir).filter((name) => name.endsWith(".sock"));
  } catch {
    return [];
  }
}

export async function waitFor(
  condition: () => boolean,
  what: string | (() => string),
  ms = 40_000,
): Promise<void> {
  const until = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > until)
      throw new Error(`timed out waiting for ${typeof what === "string" ? what : what()}`);
    await sleep(50);
  }
}

/** The daemon processes started with this env's config dir (their command line names the client). */
export function daemonPids(env: Record<string, string>): number[] {
  const ps = spawnSync("ps", ["-eo", "pid=,args="], { encoding: "utf8" }).stdout;
  const pids: number[] = [];
  for (const line of ps.split("\n")) {
    if (!line.includes("daemon-entry.js")) continue;
    const pid = Number(line.trim().split(/\s+/)[0]);
    try {
      const environ = readFileSync(`/proc/${pid}/environ`, "utf8");
      if (environ.includes(`REIN_CONFIG_DIR=${env.REIN_CONFIG_DIR}\0`)) pids.push(pid);
    } catch {
      // Gone.
    }
  }
  return pids;
}

export function killDaemons(env: Record<string, string>): void {
  for (const pid of daemonPids(env)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone.
    }
  }
}

/** One daemon for this env, listening, none starting. */
export const settled = (env: Record<string, string>, sockets: string) =>
  waitFor(
    () =>
      daemonPids(env).length === 1 &&
      socketsIn(sockets).length === 1 &&
      !readdirSync(sockets).some((name) => name.endsWith(".starting")),
    () => `one settled daemon (daemons ${daemonPids(env).join(" ")}; ${readdirSync(sockets).join(" ")})`,
  );

/** One cold call, then the daemon it started is listening. */
export async function warm(agent: AgentName, dir: string, env: Record<string, string>, sockets: string) {
  const before = socketsIn(sockets).length;
  const first = await client(agent, dir, env, "echo warm", "warm");
  expect(answeredBy(first)).toBe("process");
  await waitFor(() => socketsIn(sockets).length > before, "the daemon's socket");
}
