/**
 * The hook client and its warm daemon (`bin/rein-hook.js`, hook/hook-daemon.ts),
 * real processes on real Unix sockets: a warm answer is the answer today's
 * in-process path gives; a daemon never answers for a changed config, a
 * changed plugin file, a revoked trust record or another environment; a killed
 * daemon, a socket open to others or a wrong token leave the client deciding in
 * process; an unused daemon exits.
 */
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { reinConfigDir } from "@rein/sdk";
import { afterAll, describe, expect, it } from "vitest";
import { CLIENT_MAX_INPUT_BYTES, configDirOf, daemonDir } from "../src/hook/daemon-protocol.js";
import { MAX_INPUT_BYTES } from "../src/hook/hook-input.js";
import { isReinCommand } from "../src/hook/settings-json.js";
import { cacheRoot, cleanup, project, REIN_BIN, type ReinResult } from "./support/rein-process.js";

const cli = join(dirname(fileURLToPath(import.meta.url)), "..");
const CLIENT = join(cli, "bin", "rein-hook.js");
const repo = join(cli, "..", "..");
const dist = (pkg: string) => JSON.stringify(join(repo, "packages", "plugins", pkg, "dist", "index.js"));

const CONFIG = `import { defineConfig } from "@rein/sdk";
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
const TOUCH = (decision: string) => `export const touchDecision = ${JSON.stringify(decision)};\n`;

const created: Array<() => void> = [];
afterAll(() => {
  for (const stop of created) stop();
  cleanup();
});

/** A project with its own Rein config dir (its daemons live there) and the env its hooks run with. */
function setup(extraEnv: Record<string, string> = {}) {
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

function run(args: string[], cwd: string, env: Record<string, string>, input: string): Promise<ReinResult> {
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

const events = {
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
type AgentName = keyof typeof events;

/** The client, as `rein hook install` writes it. */
const client = (agent: AgentName, dir: string, env: Record<string, string>, command: string, id: string) =>
  run(["--liftoff-only", CLIENT, "hook", agent], dir, env, JSON.stringify(events[agent](dir, command, id)));

/** Today's in-process path: the full `rein hook <agent>`. */
const inProcess = (agent: AgentName, dir: string, env: Record<string, string>, command: string, id: string) =>
  run(["--liftoff-only", REIN_BIN, "hook", agent], dir, env, JSON.stringify(events[agent](dir, command, id)));

const answeredBy = (result: ReinResult) =>
  result.stderr.includes("rein-hook: answered by the daemon")
    ? "daemon"
    : result.stderr.includes("rein-hook: decided in process")
      ? "process"
      : "unknown";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function socketsIn(dir: string): string[] {
  try {
    return readdirSync(dir).filter((name) => name.endsWith(".sock"));
  } catch {
    return [];
  }
}

async function waitFor(condition: () => boolean, what: string | (() => string), ms = 40_000): Promise<void> {
  const until = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > until)
      throw new Error(`timed out waiting for ${typeof what === "string" ? what : what()}`);
    await sleep(50);
  }
}

/** The daemon processes started with this env's config dir (their command line names the client). */
function daemonPids(env: Record<string, string>): number[] {
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

function killDaemons(env: Record<string, string>): void {
  for (const pid of daemonPids(env)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone.
    }
  }
}

/** One daemon for this env, listening, none starting. */
const settled = (env: Record<string, string>, sockets: string) =>
  waitFor(
    () =>
      daemonPids(env).length === 1 &&
      socketsIn(sockets).length === 1 &&
      !readdirSync(sockets).some((name) => name.endsWith(".starting")),
    () => `one settled daemon (daemons ${daemonPids(env).join(" ")}; ${readdirSync(sockets).join(" ")})`,
  );

/** One cold call, then the daemon it started is listening. */
async function warm(agent: AgentName, dir: string, env: Record<string, string>, sockets: string) {
  const before = socketsIn(sockets).length;
  const first = await client(agent, dir, env, "echo warm", "warm");
  expect(answeredBy(first)).toBe("process");
  await waitFor(() => socketsIn(sockets).length > before, "the daemon's socket");
}

describe("the hook client's warm daemon", () => {
  it("pins what the client repeats of Rein: the input limit, the config dir, the installed command", () => {
    expect(CLIENT_MAX_INPUT_BYTES).toBe(MAX_INPUT_BYTES);
    for (const env of [
      { REIN_CONFIG_DIR: "/x/rein" },
      { XDG_CONFIG_HOME: "/x/xdg" },
      {},
    ] as NodeJS.ProcessEnv[])
      expect(configDirOf(env)).toBe(reinConfigDir(env));
    expect(daemonDir({ REIN_CONFIG_DIR: "/x/rein" })).toBe("/x/rein/hookd");
    expect(isReinCommand(`/usr/bin/node --liftoff-only /opt/rein/bin/rein-hook.js hook codex`)).toBe(true);
    expect(isReinCommand(`/usr/bin/node /opt/other-hook.js hook codex`)).toBe(false);
  });

  it("loads nothing but Node built-ins on the client's path", () => {
    for (const file of ["hook-client.js", "hook/daemon-protocol.js"]) {
      const text = readFileSync(join(cli, "dist", file), "utf8");
      const imports = [...text.matchAll(/^import .* from "([^"]+)";$/gm)].map((match) => match[1]);
      const allowed = imports.filter(
        (name) => name?.startsWith("node:") || name === "./hook/daemon-protocol.js",
      );
      expect(imports.length).toBeGreaterThan(0);
      expect(imports, file).toEqual(allowed);
    }
  });

  it("answers allow, deny and ask warm exactly as the in-process path does, for claude-code, codex and gemini", async () => {
    const { dir, env, sockets } = setup();
    const commands = ["echo ok", "echo ok; touch marker", "git push origin main"];
    const agents = Object.keys(events) as AgentName[];
    // One at a time: `warm` waits for one more socket, and concurrent warms would each take another agent's.
    for (const agent of agents) await warm(agent, dir, env, sockets);
    for (const agent of agents) {
      for (const [index, command] of commands.entries()) {
        const hot = await client(agent, dir, env, command, `${agent}-${index}-warm`);
        expect(answeredBy(hot), hot.stderr).toBe("daemon");
        const cold = await inProcess(agent, dir, env, command, `${agent}-${index}-cold`);
        expect({ code: hot.code, stdout: hot.stdout }).toEqual({ code: cold.code, stdout: cold.stdout });
        const said = hot.stdout + hot.stderr.replace("rein-hook: answered by the daemon\n", "");
        expect(said).toMatch(index === 0 ? /allow|^$/ : index === 1 ? /deny|touch/ : /ask|push/);
      }
    }
    const deny = await client("claude-code", dir, env, "touch marker", "deny-reason");
    expect(JSON.parse(deny.stdout).hookSpecificOutput.permissionDecision).toBe("deny");
  }, 120_000);

  it("answers from the edited config and the edited plugin file on the very next call", async () => {
    const { dir, env, sockets } = setup();
    await warm("claude-code", dir, env, sockets);
    const before = await client("claude-code", dir, env, "touch a", "e1");
    expect(answeredBy(before)).toBe("daemon");
    expect(JSON.parse(before.stdout).hookSpecificOutput.permissionDecision).toBe("deny");

    writeFileSync(join(dir, "rules", "touch.ts"), TOUCH("allow"));
    const plugin = await client("claude-code", dir, env, "touch a", "e2");
    expect(answeredBy(plugin)).toBe("process");
    expect(JSON.parse(plugin.stdout).hookSpecificOutput.permissionDecision).toBe("allow");

    await waitFor(() => socketsIn(sockets).length === 1, "the fresh daemon");
    writeFileSync(
      join(dir, "rein.config.ts"),
      CONFIG.replace(
        `decision: "allow", reason: "echo is harmless"`,
        `decision: "deny", reason: "no echo now"`,
      ),
    );
    const config = await client("claude-code", dir, env, "echo hi", "e3");
    expect(answeredBy(config)).toBe("process");
    expect(JSON.parse(config.stdout).hookSpecificOutput.permissionDecision).toBe("deny");
    expect(config.stdout).toContain("no echo now");
  }, 90_000);

  it("fails closed on the next call after the trust record is revoked", async () => {
    const { dir, env, sockets } = setup({ REIN_TRUST_PROJECT: "" });
    const trusted = await run([REIN_BIN, "trust", "--yes"], dir, env, "");
    expect(trusted.code, trusted.stderr).toBe(0);
    await warm("claude-code", dir, env, sockets);
    const ok = await client("claude-code", dir, env, "touch a", "t1");
    expect(answeredBy(ok)).toBe("daemon");
    expect(JSON.parse(ok.stdout).hookSpecificOutput.permissionDecision).toBe("deny");
    rmSync(trusted.stdout.trim());
    const revoked = await client("claude-code", dir, env, "echo ok", "t2");
    expect(answeredBy(revoked)).toBe("process");
    expect(revoked.code).toBe(2);
    expect(revoked.stderr).toContain("refusing to run project code");
  }, 90_000);

  it("still answers when the daemon is killed, when the socket is open to others, or the token is wrong", async () => {
    const { dir, env, sockets } = setup();
    await warm("claude-code", dir, env, sockets);
    const expected = (await client("claude-code", dir, env, "touch a", "k0")).stdout;
    expect(JSON.parse(expected).hookSpecificOutput.permissionDecision).toBe("deny");

    const socket = join(sockets, socketsIn(sockets)[0] as string);
    chmodSync(socket, 0o666);
    const open = await client("claude-code", dir, env, "touch a", "k1");
    expect(answeredBy(open)).toBe("process");
    expect(open.stdout).toBe(expected);
    // The refused client started a fresh daemon; it replaces the one whose socket was opened.
    await settled(env, sockets);
    expect(answeredBy(await client("claude-code", dir, env, "touch a", "k1b"))).toBe("daemon");

    const token = socket.replace(/\.sock$/, ".token");
    const real = readFileSync(token, "utf8");
    writeFileSync(token, "0".repeat(64), { mode: 0o600 });
    const forged = await client("claude-code", dir, env, "touch a", "k2");
    expect(answeredBy(forged)).toBe("process");
    expect(forged.stdout).toBe(expected);
    // The client that was refused started a fresh daemon, with a token of its own.
    await waitFor(() => readFileSync(token, "utf8") !== "0".repeat(64), "the replacing daemon's token");
    await settled(env, sockets);
    expect(readFileSync(token, "utf8")).not.toBe(real);
    expect(answeredBy(await client("claude-code", dir, env, "touch a", "k3"))).toBe("daemon");

    for (const pid of daemonPids(env)) process.kill(pid, "SIGKILL");
    await waitFor(() => daemonPids(env).length === 0, "the killed daemon to go");
    const killed = await client("claude-code", dir, env, "touch a", "k4");
    expect(answeredBy(killed)).toBe("process");
    expect(killed.stdout).toBe(expected);
  }, 90_000);

  it("never answers for another environment, and exits when unused", async () => {
    const { dir, env, sockets } = setup({ REIN_HOOK_DAEMON_IDLE_MS: "3000" });
    await warm("claude-code", dir, env, sockets);
    expect(answeredBy(await client("claude-code", dir, env, "echo ok", "v1"))).toBe("daemon");
    const other = { ...env, SOME_SETTING: "changes the environment" };
    const elsewhere = await client("claude-code", dir, other, "echo ok", "v2");
    expect(answeredBy(elsewhere)).toBe("process");
    await waitFor(() => socketsIn(sockets).length === 2, "the other environment's daemon");
    await waitFor(() => socketsIn(sockets).length === 0 && daemonPids(env).length === 0, "idle exit", 25_000);
  }, 90_000);
});
