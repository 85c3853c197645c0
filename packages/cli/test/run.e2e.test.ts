import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { JsonlStorage, Session, SessionStore } from "@rein/harness";
import { afterAll, describe, expect, it } from "vitest";
import {
  cleanup,
  policyPlugin,
  project,
  rein,
  scriptedConfig,
  spawnRein,
  TOOLS_PLUGIN,
} from "./support/rein-process.js";

afterAll(cleanup);

const sessionsIn = (dir: string) => new SessionStore(join(dir, ".rein/sessions"));

describe("rein run", { timeout: 60_000 }, () => {
  it("runs a scripted model with a .ts plugin from outside the workspace that imports @rein/sdk", async () => {
    const dir = project({
      "rein.config.ts": scriptedConfig(
        [{ toolCalls: [{ name: "echo", args: { text: "hi" } }] }, "All done."],
        'plugins: ["./tools.ts"],',
      ),
      "tools.ts": TOOLS_PLUGIN,
    });
    const result = await rein(["run", "say hi"], dir);
    expect(result.stderr).not.toContain("rein:");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("All done.");
    expect(result.stderr).toContain("echo");
    expect(result.stderr).toContain("echo: hi");
    const sessions = sessionsIn(dir).list();
    expect(sessions).toHaveLength(1);
    expect(sessions[0]?.messageCount).toBe(4);
  });

  it("--json prints one parseable event per line, from agent_start to settled", async () => {
    const dir = project({
      "rein.config.ts": scriptedConfig(
        [{ toolCalls: [{ name: "echo", args: { text: "x" } }] }, "ok"],
        'plugins: ["./tools.ts"],',
      ),
      "tools.ts": TOOLS_PLUGIN,
    });
    const result = await rein(["run", "--json", "go"], dir);
    expect(result.code).toBe(0);
    const events = result.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string });
    const types = events.map((e) => e.type);
    expect(types.indexOf("agent_start")).toBeGreaterThanOrEqual(0);
    expect(types.slice(0, types.indexOf("agent_start")).every((t) => t === "config_change")).toBe(true);
    // The harness's last event, then the CLI's own end line (status, exit code, usage totals).
    expect(types.slice(-2)).toEqual(["settled", "end"]);
    expect(types).toContain("tool_decision");
    expect(events.find((e) => e.type === "tool_decision")).toMatchObject({
      decision: "allow",
      toolName: "echo",
    });
  });

  it("--continue resumes the latest session and the model sees the earlier turns", async () => {
    const dir = project({
      "rein.config.ts": scriptedConfig(["first answer", "second answer"]),
    });
    const first = await rein(["run", "remember the word plum"], dir);
    expect(first.code).toBe(0);
    // The script goes on where the session left off: the second run gets the second reply.
    const second = await rein(["run", "--continue", "--json", "what was the word?"], dir);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('"second answer"');
    expect(second.stdout).not.toContain('"first answer"');
    const sessions = sessionsIn(dir).list();
    expect(sessions).toHaveLength(1);
    const session = Session.open(JsonlStorage.open(sessions[0]?.path as string, { readOnly: true }));
    const users = session
      .buildContext()
      .messages.filter((m) => m.role === "user")
      .map((m) => m.content);
    expect(users).toEqual(["remember the word plum", "what was the word?"]);
    session.close();
  });

  it("a second Ctrl-C is not needed: SIGINT during a tool call aborts cleanly and the session reopens consistent", async () => {
    const dir = project({
      "rein.config.ts": scriptedConfig(
        [{ toolCalls: [{ name: "wait", args: {} }] }, "never"],
        'plugins: ["./tools.ts"],',
      ),
      "tools.ts": TOOLS_PLUGIN,
    });
    const child = spawnRein(["run", "wait for it"], dir);
    let stderr = "";
    child.stderr?.on("data", (c) => {
      stderr += c;
    });
    child.stdin?.end();
    const marker = join(dir, "waiting");
    for (let i = 0; i < 400 && !existsSync(marker); i++) await new Promise((r) => setTimeout(r, 25));
    expect(existsSync(marker)).toBe(true);
    child.kill("SIGINT");
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(code).toBe(1);
    expect(stderr).toContain("stopping");
    // The lock was released and every tool call has its result.
    const store = sessionsIn(dir);
    const [summary] = store.list();
    const session = store.open(summary?.id as string);
    const messages = session.buildContext().messages;
    const calls = messages.flatMap((m) =>
      m.role === "assistant"
        ? m.content.filter((b) => b.type === "toolCall").map((b) => (b.type === "toolCall" ? b.id : ""))
        : [],
    );
    const results = messages.flatMap((m) => (m.role === "toolResult" ? [m.toolCallId] : []));
    expect(calls).toHaveLength(1);
    expect(results).toEqual(calls);
    session.close();
  });

  it("a config syntax error names the file and line, exit code 2", async () => {
    const dir = project({
      "rein.config.ts":
        'import { defineConfig } from "@rein/sdk";\n\nexport default defineConfig({\n  model: { script: ["hi"] },,\n});\n',
    });
    const result = await rein(["run", "hi"], dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/rein\.config\.ts:4/);
    expect(result.stderr).not.toMatch(/^\s+at /m);
  });

  it("a config with a wrong type names the option, file and line", async () => {
    const dir = project({
      "rein.config.ts": 'export default {\n  model: { script: ["hi"] },\n  thinkingLevel: "maximum",\n};\n',
    });
    const result = await rein(["run", "hi"], dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("rein.config.ts:3");
    expect(result.stderr).toContain("thinkingLevel");
  });

  it("a missing plugin says which specifier and where it was looked for", async () => {
    const dir = project({
      "rein.config.ts": scriptedConfig(["hi"], 'plugins: ["@acme/not-installed", "./nope.ts"],'),
    });
    const result = await rein(["run", "hi"], dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('cannot find plugin "@acme/not-installed"');
    expect(result.stderr).toContain("plugins[0]");
    expect(result.stderr).toContain("node_modules");
    expect(readdirSync(dir)).not.toContain(".rein"); // nothing written
    expect(result.stderr).toContain("npm install @acme/not-installed");
    // One of Rein's own that is not installed: the registry has none of them yet, so the hint is the tarball.
    const ours = project({
      "rein.config.ts": scriptedConfig(["hi"], 'plugins: ["@rein/plugin-nonexistent"],'),
    });
    const missing = await rein(["run", "hi"], ours);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(
      "not on the npm registry yet: npm install -D the rein-plugin-nonexistent tarball that pnpm release:pack prints",
    );
    expect(missing.stderr).not.toContain("npm install @rein/");
  });

  it("a missing API key names the variable to set", async () => {
    const dir = project({ "rein.config.ts": 'export default { model: "anthropic/claude-sonnet-4-5" };\n' });
    const result = await rein(["run", "hi"], dir, {
      env: { ANTHROPIC_API_KEY: "", ANTHROPIC_OAUTH_TOKEN: "" },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("ANTHROPIC_API_KEY");
  });
});

describe("rein replay", { timeout: 90_000 }, () => {
  it("replays recorded calls through the current gates, marks a changed verdict and exits 1", async () => {
    const dir = project({
      "rein.config.ts": scriptedConfig(
        [
          {
            toolCalls: [
              { name: "push", args: { remote: "origin" } },
              { name: "echo", args: { text: "x" } },
            ],
          },
          "done",
        ],
        'plugins: ["./tools.ts", "./policy.ts"],',
      ),
      "tools.ts": TOOLS_PLUGIN,
      "policy.ts": policyPlugin(false),
    });
    expect((await rein(["run", "push it"], dir)).code).toBe(0);
    const [summary] = sessionsIn(dir).list();
    const unchanged = await rein(["replay", summary?.id as string], dir);
    expect(unchanged.code).toBe(0);
    expect(unchanged.stderr).toContain("2 tool calls replayed, 0 changed");

    writeFileSync(join(dir, "policy.ts"), policyPlugin(true));
    const changed = await rein(["replay", "--json", summary?.id as string], dir);
    expect(changed.code).toBe(1);
    const lines = changed.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({
      tool: "push",
      recorded: "allow",
      now: "deny",
      by: "house-rules:no-push",
      changed: true,
    });
    expect(lines[1]).toMatchObject({ tool: "echo", changed: false });
    const text = await rein(["replay", summary?.id as string], dir);
    expect(text.stdout).toMatch(/CHANGED #1 push/);
    expect(text.stdout).toContain("no pushing on Fridays");
  });

  it("an ask nobody answered replays as unchanged (exit 0), also from sessions recorded before the mark", async () => {
    const askPolicy = (verdict: string) => `import { definePlugin } from "@rein/sdk";
export default definePlugin({
  name: "house-rules",
  setup(rein) {
    rein.hooks.toolGate.tapPromise("house-rules", async (call) =>
      call.name === "push" ? { decision: "${verdict}", reason: "pushing needs a human", rule: "push" } : undefined);
  },
});
`;
    const dir = project({
      "rein.config.ts": scriptedConfig(
        [{ toolCalls: [{ name: "push", args: { remote: "origin" } }] }, "done"],
        'plugins: ["./tools.ts", "./policy.ts"],',
      ),
      "tools.ts": TOOLS_PLUGIN,
      "policy.ts": askPolicy("ask"),
    });
    expect((await rein(["run", "push it"], dir)).code).toBe(0);
    const [summary] = sessionsIn(dir).list();
    const id = summary?.id as string;
    const file = readdirSync(join(dir, ".rein/sessions"), { recursive: true })
      .map(String)
      .find((name) => name.endsWith(".jsonl") && name.includes(id)) as string;
    const sessionFile = join(dir, ".rein/sessions", file);
    expect(readFileSync(sessionFile, "utf8")).toContain('"unanswered":true');

    const replayed = await rein(["replay", "--json", id], dir);
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(JSON.parse(replayed.stdout.trim())).toMatchObject({
      tool: "push",
      recorded: "ask",
      recordedOutcome: "deny",
      now: "ask",
      changed: false,
    });

    // A session written before `unanswered` existed: only the reason tells.
    writeFileSync(sessionFile, readFileSync(sessionFile, "utf8").replaceAll(',"unanswered":true', ""));
    expect(readFileSync(sessionFile, "utf8")).not.toContain("unanswered");
    const old = await rein(["replay", id], dir);
    expect(old.code, old.stderr).toBe(0);
    expect(old.stderr).toContain("1 tool call replayed, 0 changed");

    writeFileSync(join(dir, "policy.ts"), askPolicy("deny"));
    const tightened = await rein(["replay", id], dir);
    expect(tightened.code).toBe(1);
    expect(tightened.stdout).toMatch(/CHANGED #1 push .*recorded ask \(then deny\) → now deny/);
  });
});

describe("inspection commands", { timeout: 90_000 }, () => {
  it("plugins, tools, sessions show/tree/export and doctor describe the configured stack", async () => {
    const dir = project({
      "rein.config.ts": scriptedConfig(
        [{ toolCalls: [{ name: "push", args: { remote: "origin" } }] }, "done"],
        'plugins: ["./tools.ts", "./policy.ts"],',
      ),
      "tools.ts": TOOLS_PLUGIN,
      "policy.ts": policyPlugin(true),
    });
    const plugins = await rein(["plugins"], dir);
    expect(plugins.code).toBe(0);
    expect(plugins.stdout).toContain("house-rules");
    expect(plugins.stdout).toContain("taps toolGate");
    const tools = await rein(["tools", "--json"], dir);
    expect(JSON.parse(tools.stdout).map((t: { name: string }) => t.name)).toEqual(["echo", "wait", "push"]);

    expect((await rein(["run", "push"], dir)).code).toBe(0);
    const [summary] = sessionsIn(dir).list();
    const id = summary?.id as string;
    const show = await rein(["sessions", "show", id.slice(0, 8)], dir);
    expect(show.stdout).toContain("denied by house-rules:no-push: no pushing on Fridays");
    const tree = await rein(["sessions", "tree", id], dir);
    expect(tree.stdout).toContain("◀ leaf");
    const md = await rein(["sessions", "export", id], dir);
    expect(md.stdout).toContain("**Denied** by `house-rules:no-push`");
    const html = await rein(["sessions", "export", id, "--html", "-o", "out.html"], dir);
    expect(html.code).toBe(0);
    expect(readFileSync(join(dir, "out.html"), "utf8")).toContain('data-decision="deny"');
    const doctor = await rein(["doctor"], dir);
    expect(doctor.code).toBe(0);
    expect(doctor.stdout).toContain("✓ plugins");
  });

  it("--version and --help start without a config and exit 0", async () => {
    const dir = project({});
    const version = await rein(["--version"], dir);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    const unknown = await rein(["frobnicate"], dir);
    expect(unknown.code).toBe(2);
  });
});
