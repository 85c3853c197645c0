/**
 * The hook daemon's audit (hook-audit.ts, kept-open sessions), real processes:
 * an entry the daemon answered for is in the session's journal even when the
 * daemon is SIGKILLed the moment its answer arrives (written to the OS before
 * it answers); the in-process fallback and a second daemon record into a
 * session the daemon keeps open (it gives the session back when they wait for
 * it, not only after its idle time), and no entry is lost, doubled or torn.
 */
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  answeredBy,
  CLIENT,
  daemonPids,
  events,
  run,
  setup,
  socketsIn,
  stopAll,
  waitFor,
  warm,
} from "./support/hook-daemons.js";
import { REIN_BIN, type ReinResult } from "./support/rein-process.js";

afterAll(stopAll);

/** A PreToolUse event of the agent session `session` running `command`. */
const eventOf = (dir: string, session: string, command: string, id: string) =>
  JSON.stringify({ ...events["claude-code"](dir, command, id), session_id: session });

const viaClient = (dir: string, env: Record<string, string>, input: string) =>
  run(["--liftoff-only", CLIENT, "hook", "claude-code"], dir, env, input);
const viaProcess = (dir: string, env: Record<string, string>, input: string) =>
  run(["--liftoff-only", REIN_BIN, "hook", "claude-code"], dir, env, input);

/** The journal of agent session `session` (the Rein session of that id), one parsed entry a line. */
function journal(dir: string, session: string): Array<Record<string, unknown>> {
  const found = (readdirSync(dir, { recursive: true }) as string[]).filter((name) =>
    name.endsWith(`_${session}.jsonl`),
  );
  expect(found, `one journal of ${session}`).toHaveLength(1);
  const text = readFileSync(join(dir, found[0] as string), "utf8");
  expect(text.endsWith("\n"), "whole lines").toBe(true);
  // A torn or interleaved line does not parse.
  return text
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Every shell command the journal records a decided call of, in order. */
function recordedCommands(entries: ReadonlyArray<Record<string, unknown>>): string[] {
  const commands: string[] = [];
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) for (const item of value) walk(item);
    else if (typeof value === "object" && value !== null)
      for (const [key, inner] of Object.entries(value)) {
        if (key === "command" && typeof inner === "string") commands.push(inner);
        else walk(inner);
      }
  };
  for (const entry of entries) {
    const message = entry.message as { role?: string } | undefined;
    if (entry.type === "message" && message?.role === "assistant") walk(message);
  }
  return commands;
}

const decisions = (entries: ReadonlyArray<Record<string, unknown>>) =>
  entries
    .map(
      (entry) => entry.message as { role?: string; decision?: { decision: string; by: string } } | undefined,
    )
    .filter((message) => message?.role === "toolResult")
    .map((message) => message?.decision);

const denied = (result: ReinResult) =>
  JSON.parse(result.stdout).hookSpecificOutput.permissionDecision === "deny";

describe("the hook daemon's audit", () => {
  it("keeps an entry the daemon answered after the daemon is SIGKILLed as its answer arrives", async () => {
    const { dir, env, sockets } = setup();
    await warm("claude-code", dir, env, sockets);
    const [pid, ...others] = daemonPids(env);
    expect(others).toEqual([]);
    // Killed on the first byte of the answer on the client's stdout, before the client has even exited.
    const answered = await new Promise<ReinResult>((resolve, reject) => {
      const child = spawn(process.execPath, ["--liftoff-only", CLIENT, "hook", "claude-code"], {
        cwd: dir,
        env,
        stdio: ["pipe", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk) => {
        if (stdout === "") process.kill(pid as number, "SIGKILL");
        stdout += chunk;
      });
      child.stderr.on("data", (chunk) => {
        stderr += chunk;
      });
      child.on("error", reject);
      child.on("close", (code) => resolve({ code, stdout, stderr }));
      child.stdin.end(eventOf(dir, "cc-killed", "echo ok; touch killed", "killed"));
    });
    expect(answeredBy(answered), answered.stderr).toBe("daemon");
    expect(denied(answered)).toBe(true);
    await waitFor(() => daemonPids(env).length === 0, "the killed daemon to go");

    const entries = journal(dir, "cc-killed");
    expect(recordedCommands(entries)).toEqual(["echo ok; touch killed"]);
    expect(decisions(entries)).toEqual([
      expect.objectContaining({ decision: "deny", by: expect.stringContaining("touch") }),
    ]);
    const shown = await run([REIN_BIN, "sessions", "show", "cc-killed"], dir, env, "");
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain("touch killed");

    // The killed daemon's lock is stale: the next writer (in process now) takes it over and appends.
    const next = await viaClient(dir, env, eventOf(dir, "cc-killed", "touch after", "after"));
    expect(answeredBy(next)).toBe("process");
    expect(denied(next)).toBe(true);
    expect(recordedCommands(journal(dir, "cc-killed"))).toEqual(["echo ok; touch killed", "touch after"]);
  }, 120_000);

  it("lets the in-process fallback and a second daemon record into a session the daemon keeps open, whole and in turn", async () => {
    // The daemons would keep an idle session for a minute: a waiting writer gets it only because it asked.
    const { dir, env, sockets } = setup({ REIN_HOOK_SESSION_IDLE_MS: "60000" });
    await warm("claude-code", dir, env, sockets);
    const session = "cc-shared";
    const sent: string[] = [];
    const daemon = async (command: string, runEnv = env) => {
      sent.push(command);
      const result = await viaClient(dir, runEnv, eventOf(dir, session, command, command.replace(/\W/g, "")));
      expect(answeredBy(result), result.stderr).toBe("daemon");
      expect(denied(result), result.stdout).toBe(true);
    };
    const fallback = async (command: string) => {
      sent.push(command);
      const result = await viaProcess(dir, env, eventOf(dir, session, command, command.replace(/\W/g, "")));
      expect(result.code, result.stderr).toBe(0);
      expect(denied(result), result.stdout).toBe(true);
    };

    await daemon("touch d1"); // the daemon now holds the session open
    await fallback("touch p1"); // waits, asks, gets it
    await daemon("touch d2"); // the daemon reopens it after the fallback
    await Promise.all([daemon("touch d3"), fallback("touch p2"), fallback("touch p3")]);
    expect(recordedCommands(journal(dir, session)).slice(0, 3)).toEqual(["touch d1", "touch p1", "touch d2"]);

    // A second daemon (another environment) on the same agent session.
    const other = { ...env, SOME_SETTING: "a second daemon" };
    const first = await viaClient(dir, other, eventOf(dir, session, "touch o0", "o0"));
    sent.push("touch o0");
    expect(answeredBy(first)).toBe("process");
    await waitFor(() => socketsIn(sockets).length === 2, "the second daemon");
    await daemon("touch o1", other);
    await daemon("touch d4");
    await Promise.all([daemon("touch o2", other), daemon("touch d5"), fallback("touch p4")]);

    const entries = journal(dir, session);
    const recorded = recordedCommands(entries);
    // Every answered event once: nothing lost, nothing doubled.
    expect([...recorded].sort()).toEqual([...sent].sort());
    expect(decisions(entries)).toHaveLength(sent.length);
    expect(decisions(entries).every((decision) => decision?.decision === "deny")).toBe(true);
    // Each writer's own entries in the order it answered them.
    expect(recorded.filter((command) => /touch d\d/.test(command))).toEqual([
      "touch d1",
      "touch d2",
      "touch d3",
      "touch d4",
      "touch d5",
    ]);
    expect(recorded.filter((command) => /touch o\d/.test(command))).toEqual([
      "touch o0",
      "touch o1",
      "touch o2",
    ]);
    expect(readdirSync(dir, { recursive: true }).some((name) => String(name).endsWith(".wanted"))).toBe(
      false,
    );
    const shown = await run([REIN_BIN, "sessions", "show", session], dir, env, "");
    expect(shown.code, shown.stderr).toBe(0);
  }, 180_000);
});
