/**
 * `rein hook serve`: the stack built once, hook events over HTTP on
 * 127.0.0.1 with a bearer token. Every answer is 200 with JSON, failures
 * included (Claude Code lets a call run on anything else): a wrong token, a
 * bad body or a wrong Host is a deny. Decisions are recorded like the
 * command hook's, and per-call time after start is measured.
 */
import type { ChildProcess } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, project, rein, spawnRein } from "./support/rein-process.js";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const dist = (pkg: string) => JSON.stringify(join(repo, "packages", "plugins", pkg, "dist", "index.js"));
const CONFIG = `import { defineConfig } from "@rein/sdk";
import policy from ${dist("plugin-policy")};
export default defineConfig({
  model: { script: [] },
  plugins: [[policy, { rules: [
    { id: "echo", rule: "bash(echo *)", decision: "allow", reason: "echo is harmless" },
    { id: "no-touch", rule: "bash(touch *)", decision: "deny", reason: "no new files from the shell" },
  ] }]],
});
`;
const TOKEN = "test-token-0123456789";

let server: ChildProcess | undefined;
afterAll(() => {
  server?.kill("SIGTERM");
  cleanup();
});

async function start(dir: string): Promise<string> {
  server = spawnRein(["hook", "serve"], dir, { REIN_HOOK_TOKEN: TOKEN });
  let stderr = "";
  return new Promise((resolve, reject) => {
    server?.stderr?.on("data", (chunk) => {
      stderr += chunk;
      const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr)?.[1];
      if (url) resolve(url);
    });
    server?.on("exit", (code) => reject(new Error(`hook serve exited ${code}: ${stderr}`)));
  });
}

const event = (command: string, id: string) => ({
  session_id: "serve-session-1",
  cwd: "/",
  hook_event_name: "PreToolUse",
  tool_name: "Bash",
  tool_input: { command },
  tool_use_id: id,
});

interface Answer {
  hookSpecificOutput: { hookEventName: string; permissionDecision: string; permissionDecisionReason: string };
}

async function post(url: string, body: unknown, token = TOKEN): Promise<{ status: number; json: Answer }> {
  const response = await fetch(`${url}/hook/claude-code`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Answer };
}

describe("rein hook serve", () => {
  it("decides over HTTP, answers every failure as 200 with a deny, records the decisions, and is fast after start", async () => {
    const dir = project({ "rein.config.ts": CONFIG });
    const url = await start(dir);
    const denied = await post(url, event("echo ok; touch marker", "toolu_s1"));
    expect(denied.status).toBe(200);
    expect(denied.json.hookSpecificOutput).toMatchObject({
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
      permissionDecisionReason: expect.stringContaining("policy:no-touch"),
    });
    const allowed = await post(url, event("echo ok", "toolu_s2"));
    expect(allowed.json.hookSpecificOutput.permissionDecision).toBe("allow");
    for (const [body, token] of [
      [event("echo ok", "toolu_s3"), "wrong-token"],
      ["not json", TOKEN],
      [{ hook_event_name: "PreToolUse" }, TOKEN],
    ] as const) {
      const failed = await post(url, body, token);
      expect(failed.status).toBe(200);
      expect(failed.json.hookSpecificOutput.permissionDecision).toBe("deny");
      expect(failed.json.hookSpecificOutput.permissionDecisionReason).toContain("fails closed");
    }
    // Per call after start: sequential round trips on loopback, decision and audit included.
    const times: number[] = [];
    for (let i = 0; i < 60; i++) {
      const began = performance.now();
      await post(url, event(i % 2 ? "echo ok" : "touch x", `toolu_p${i}`));
      times.push(performance.now() - began);
    }
    times.sort((a, b) => a - b);
    const median = times[Math.floor(times.length / 2)] as number;
    console.log(`rein hook serve: median round trip ${median.toFixed(2)} ms over ${times.length} calls`);
    expect(median).toBeLessThan(50);
    server?.kill("SIGTERM");
    await new Promise((resolve) => server?.once("exit", resolve));
    const shown = await rein(["sessions", "show", "serve-session-1"], dir);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain("denied by policy:no-touch");
    expect(shown.stdout).toContain("allowed by policy:echo");
  }, 60_000);
});
