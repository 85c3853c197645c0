/**
 * The hook client and its warm daemon (`bin/rein-hook.js`, hook/hook-daemon.ts),
 * real processes on real Unix sockets: a warm answer is the answer today's
 * in-process path gives; a daemon never answers for a changed config, a
 * changed plugin file, a revoked trust record or another environment; a killed
 * daemon, a socket open to others or a wrong token leave the client deciding in
 * process; an unused daemon exits.
 */
import { spawn } from "node:child_process";
import { chmodSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { join } from "node:path";
import { reinConfigDir } from "@rein/sdk";
import { afterAll, describe, expect, it } from "vitest";
import { CLIENT_MAX_INPUT_BYTES, configDirOf, daemonDir, PROTOCOL } from "../src/hook/daemon-protocol.js";
import { MAX_INPUT_BYTES } from "../src/hook/hook-input.js";
import { isReinCommand } from "../src/hook/settings-json.js";
import {
  type AgentName,
  answeredBy,
  CLIENT,
  CONFIG,
  cli,
  client,
  daemonPids,
  events,
  inProcess,
  run,
  settled,
  setup,
  socketsIn,
  stopAll,
  TOUCH,
  waitFor,
  warm,
} from "./support/hook-daemons.js";
import { REIN_BIN } from "./support/rein-process.js";

afterAll(stopAll);

/** One request line to a daemon's socket, its one reply parsed. */
function askSocket(path: string, request: object): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = createConnection(path, () => socket.end(`${JSON.stringify(request)}\n`));
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", reject);
    socket.on("close", () => resolve(JSON.parse(Buffer.concat(chunks).toString("utf8"))));
  });
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
      // Static imports, dynamic ones and built-ins taken with `process.getBuiltinModule`.
      const imports = [
        ...text.matchAll(/^import .* from "([^"]+)";$/gm),
        ...text.matchAll(/\bimport\(\s*"([^"]+)"\s*\)/g),
        ...text.matchAll(/getBuiltinModule\(\s*"([^"]+)"\s*\)/g),
      ].map((match) => match[1]);
      // `./bin.js`: the full `rein`, loaded only to decide in process (the fallback).
      const allowed = imports.filter(
        (name) =>
          name?.startsWith("node:") ||
          name === "./hook/daemon-protocol.js" ||
          (file === "hook-client.js" && name === "./bin.js"),
      );
      expect(imports.length).toBeGreaterThan(2);
      expect(imports, file).toEqual(allowed);
      // Nothing else is loaded: no import or require of a module name held in a variable.
      expect(text).not.toMatch(/\bimport\(\s*[^"\s)]|\brequire\(/);
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

  it("an agent that never closes stdin gets a refusal (exit 2) within the time limit, and the client exits", async () => {
    const { dir, env } = setup();
    const child = spawn(
      process.execPath,
      ["--liftoff-only", CLIENT, "hook", "claude-code", "--timeout", "800"],
      {
        cwd: dir,
        env,
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.stdin.write('{"session_id": "open-'); // part of an event, and the pipe stays open
    const started = Date.now();
    const code = await new Promise<number | null>((resolve) => child.on("exit", (exit) => resolve(exit)));
    child.stdin.destroy();
    expect(code).toBe(2);
    expect(stderr).toContain("no complete hook input on stdin within 800 ms");
    expect(Date.now() - started).toBeLessThan(15_000);
  }, 30_000);

  it("never answers for another environment, and exits when unused", async () => {
    const { dir, env, sockets } = setup({ REIN_HOOK_DAEMON_IDLE_MS: "3000" });
    await warm("claude-code", dir, env, sockets);
    expect(answeredBy(await client("claude-code", dir, env, "echo ok", "v1"))).toBe("daemon");
    const other = { ...env, SOME_SETTING: "changes the environment" };
    const elsewhere = await client("claude-code", dir, other, "echo ok", "v2");
    expect(answeredBy(elsewhere)).toBe("process");
    await waitFor(() => socketsIn(sockets).length === 2, "the other environment's daemon");
    // A request with the right token and socket name but another state (a forged
    // fingerprint collision) is refused: the daemon compares the whole state.
    const name = socketsIn(sockets)[0] as string;
    const socket = join(sockets, name);
    const forged = await askSocket(socket, {
      v: PROTOCOL,
      token: readFileSync(socket.replace(/\.sock$/, ".token"), "utf8").trim(),
      fingerprint: name.replace(/\.sock$/, ""),
      state: JSON.stringify([PROTOCOL, "another", "state"]),
      input: JSON.stringify(events["claude-code"](dir, "echo ok", "v3")),
    });
    expect(forged).toEqual({ v: PROTOCOL, refused: "another process state" });
    await waitFor(() => socketsIn(sockets).length === 0 && daemonPids(env).length === 0, "idle exit", 25_000);
  }, 90_000);
});
