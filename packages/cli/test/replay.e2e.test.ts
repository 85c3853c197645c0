/**
 * `rein replay` with state, through the built binary: the recorded runs go through
 * the configured stack in order, so a budget spent in the record is spent in the
 * replay; `--isolated` decides each call alone and so reports the difference.
 */
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AssistantMessage, SessionStore } from "@rein/harness";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, project, REIN_BIN, rein, spawnRein, TOOLS_PLUGIN } from "./support/rein-process.js";

afterAll(cleanup);

const repo = join(REIN_BIN, "..", "..", "..", "..");
const dist = (pkg: string) => join(repo, "packages", "plugins", pkg, "dist", "index.js");

const echo = (n: number) => ({ toolCalls: [{ name: "echo", args: { text: `call ${n}` } }] });

const guardConfig = (limits: string) => `import { defineConfig } from "@rein/sdk";
import guard from ${JSON.stringify(dist("plugin-guard"))};
export default defineConfig({
  model: { script: ${JSON.stringify([echo(1), echo(2), echo(3), echo(4), echo(5), "done"])} },
  plugins: ["./tools.ts", [guard, ${limits}]],
});
`;

const jsonLines = (stdout: string) =>
  stdout
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));

describe("rein replay with state", { timeout: 120_000 }, () => {
  it("a run whose tool-call budget denied the fifth call replays with zero changes; --isolated reports the fifth", async () => {
    const dir = project({
      "rein.config.ts": guardConfig("{ perRun: { maxToolCalls: 4 } }"),
      "tools.ts": TOOLS_PLUGIN,
    });
    const ran = await rein(["run", "echo five times"], dir);
    // The guard stops the run at the fifth call: an aborted run exits 1.
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain("denied by guard:max-tool-calls");
    const [summary] = new SessionStore(join(dir, ".rein/sessions")).list();
    const id = summary?.id as string;

    const stateful = await rein(["replay", "--json", id], dir);
    expect(stateful.code, stateful.stderr).toBe(0);
    const lines = jsonLines(stateful.stdout);
    expect(lines.map((l) => [l.tool, l.recorded, l.now, l.changed])).toEqual([
      ["echo", "allow", "allow", false],
      ["echo", "allow", "allow", false],
      ["echo", "allow", "allow", false],
      ["echo", "allow", "allow", false],
      ["echo", "deny", "deny", false],
    ]);
    expect(lines[4]).toMatchObject({
      recordedBy: "guard:max-tool-calls",
      by: "guard:max-tool-calls",
      args: { text: "call 5" },
    });
    expect(lines[4].reason).toContain("run budget exhausted: 4 of max 4 tool calls used");
    const text = await rein(["replay", id], dir);
    expect(text.code).toBe(0);
    expect(text.stderr).toContain("5 tool calls replayed, 0 changed");
    expect(text.stdout).not.toContain("CHANGED");

    const isolated = await rein(["replay", "--isolated", "--json", id], dir);
    expect(isolated.code, isolated.stderr).toBe(1);
    const alone = jsonLines(isolated.stdout);
    expect(alone.map((l) => [l.now, l.changed])).toEqual([
      ["allow", false],
      ["allow", false],
      ["allow", false],
      ["allow", false],
      ["allow", true],
    ]);
    expect(alone[4]).toMatchObject({
      recorded: "deny",
      recordedBy: "guard:max-tool-calls",
      by: "harness:default",
    });
    const isolatedText = await rein(["replay", "--isolated", id], dir);
    expect(isolatedText.code).toBe(1);
    expect(isolatedText.stdout).toMatch(/CHANGED #5 echo .*recorded deny → now allow by harness:default/);
    expect(isolatedText.stderr).toContain("5 tool calls replayed (isolated), 1 changed");
  });

  it("a loosened budget lets the replayed run go past the record: changed, exit 1", async () => {
    const dir = project({
      "rein.config.ts": guardConfig("{ perRun: { maxToolCalls: 4 } }"),
      "tools.ts": TOOLS_PLUGIN,
    });
    expect((await rein(["run", "echo five times"], dir)).code).toBe(1);
    const [summary] = new SessionStore(join(dir, ".rein/sessions")).list();
    const id = summary?.id as string;
    writeFileSync(join(dir, "rein.config.ts"), guardConfig("{ perRun: { maxToolCalls: 10 } }"));
    const loosened = await rein(["replay", id], dir);
    expect(loosened.code).toBe(1);
    expect(loosened.stdout).toMatch(/CHANGED #5 echo .*recorded deny → now allow/);
    // The record shows run 1 stopped (aborted) there; the replay cannot tell by whom, so
    // that alone is not a change: the fifth call's verdict is.
    expect(loosened.stderr).toContain("run 1 went on past the point where the record stops it");
    expect(loosened.stderr).toContain("5 tool calls replayed, 1 changed");
  });
});

const NOTE_TOOL = `import { definePlugin, defineTool, Type } from "@rein/sdk";
export default definePlugin({
  name: "note-tool",
  setup(rein) {
    rein.registerTool(defineTool({
      name: "note",
      description: "Take a note",
      parameters: Type.Object({ text: Type.String() }),
      risk: "read",
      execute: async (args) => ({ content: [{ type: "text", text: "noted " + args.text }] }),
    }));
  },
});
`;

const coverageConfig = (script: unknown[]) => `import { defineConfig } from "@rein/sdk";
import policy from ${JSON.stringify(dist("plugin-policy"))};
import guard from ${JSON.stringify(dist("plugin-guard"))};
export default defineConfig({
  model: { script: ${JSON.stringify(script)} },
  plugins: [
    "./tools.ts",
    "./note.ts",
    [guard, { perRun: { maxToolCalls: 10 } }],
    [policy, { rules: [
      { id: "no-push", rule: "push", decision: "deny", reason: "no pushing" },
      { id: "echo-ok", rule: "echo", decision: "allow", reason: "echo is harmless" },
      { rule: "wait", decision: "deny", reason: "no waiting" },
    ] }],
  ],
});
`;

const calls = (...list: [string, Record<string, unknown>][]) => [
  { toolCalls: list.map(([name, args]) => ({ name, args })) },
  "done",
];

describe("rein replay of a run the user stopped", { timeout: 120_000 }, () => {
  it("a run interrupted with Ctrl-C replays with zero changes: the record's stop is noted, not counted", async () => {
    const dir = project({
      "rein.config.ts": `import { defineConfig } from "@rein/sdk";
export default defineConfig({
  model: { script: ${JSON.stringify([{ toolCalls: [{ name: "wait", args: {} }] }, "never reached"])} },
  plugins: ["./tools.ts"],
});
`,
      "tools.ts": TOOLS_PLUGIN,
    });
    const child = spawnRein(["run", "wait for it"], dir);
    const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
    for (let i = 0; i < 400 && !existsSync(join(dir, "waiting")); i++)
      await new Promise((r) => setTimeout(r, 25));
    expect(existsSync(join(dir, "waiting"))).toBe(true);
    child.kill("SIGINT");
    expect(await closed).toBe(1);
    const [summary] = new SessionStore(join(dir, ".rein/sessions")).list();

    const replayed = await rein(["replay", summary?.id as string], dir);
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(replayed.stderr).toContain("run 1 went on past the point where the record stops it");
    expect(replayed.stderr).toContain("1 tool call replayed, 0 changed");
  });
});

describe("rein replay keeps steering inside its run", { timeout: 120_000 }, () => {
  it("a steered message does not start a new run: the per-run budget it spent still denies", async () => {
    const dir = project({
      "rein.config.ts": guardConfig("{ perRun: { maxToolCalls: 1 } }"),
      "tools.ts": TOOLS_PLUGIN,
    });
    const echoCall = (id: string, text: string) => ({
      type: "toolCall" as const,
      id,
      name: "echo",
      arguments: { text },
    });
    const echoResult = (toolCallId: string, decision: Record<string, unknown>) =>
      ({
        role: "toolResult",
        toolCallId,
        toolName: "echo",
        content: [{ type: "text", text: "echo" }],
        isError: decision.decision === "deny",
        timestamp: 1,
        decision,
      }) as never;
    const session = new SessionStore(join(dir, ".rein/sessions")).create({ cwd: dir });
    session.appendJournal({ event: "run_start", runId: "r1" });
    session.appendMessage({ role: "user", content: "echo a", timestamp: 1 });
    session.appendMessage(reply([echoCall("e1", "a")], "toolUse"));
    session.appendMessage(echoResult("e1", { decision: "allow", by: "harness:default", reason: "default" }));
    const steered = { role: "user" as const, content: "and b", timestamp: 2 };
    session.appendJournal({ event: "queue_push", queue: "steer", queueId: "q1", message: steered });
    session.appendMessage(steered, { queueIds: ["q1"] });
    session.appendMessage(reply([echoCall("e2", "b")], "toolUse"));
    session.appendMessage(
      echoResult("e2", {
        decision: "deny",
        by: "guard:max-tool-calls",
        reason: "run budget exhausted: 1 of max 1 tool calls used (perRun.maxToolCalls); the run is stopped",
      }),
    );
    session.appendJournal({ event: "run_end", runId: "r1", status: "aborted" });
    const id = session.id;
    session.close();

    const replayed = await rein(["replay", "--json", id], dir);
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(jsonLines(replayed.stdout).map((l) => [l.args.text, l.now, l.by, l.changed])).toEqual([
      ["a", "allow", "harness:default", false],
      ["b", "deny", "guard:max-tool-calls", false],
    ]);
  });
});

describe("rein replay --coverage", { timeout: 180_000 }, () => {
  it("counts each rule's hits over three sessions, lists rules never matched and calls decided by the default", async () => {
    const dir = project({ "tools.ts": TOOLS_PLUGIN, "note.ts": NOTE_TOOL });
    const scripts = [
      calls(["echo", { text: "a" }], ["push", { remote: "origin" }]),
      calls(["echo", { text: "b" }], ["echo", { text: "c" }]),
      calls(["note", { text: "x" }], ["push", { remote: "upstream" }]),
    ];
    const ids: string[] = [];
    for (const script of scripts) {
      writeFileSync(join(dir, "rein.config.ts"), coverageConfig(script));
      const ran = await rein(["run", "go"], dir);
      expect(ran.code, ran.stderr).toBe(0);
      const known = new Set(ids);
      const fresh = new SessionStore(join(dir, ".rein/sessions")).list().find((s) => !known.has(s.id));
      ids.push(fresh?.id as string);
    }

    const json = await rein(["replay", "--coverage", "--json", ...ids], dir);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({
      sessions: 3,
      calls: 6,
      rules: [
        { rule: "guard:max-tool-calls", hits: 0 },
        { rule: "guard:loop", hits: 0 },
        { rule: "policy:no-push", hits: 2 },
        { rule: "policy:echo-ok", hits: 3 },
        { rule: "policy:rules[2]", hits: 0 },
      ],
      neverMatched: ["guard:max-tool-calls", "guard:loop", "policy:rules[2]"],
      otherDeciders: [{ rule: "harness:default", hits: 1 }],
      byDefault: [
        {
          session: ids[2],
          toolCallId: expect.any(String),
          tool: "note",
          args: { text: "x" },
          decision: "allow",
        },
      ],
      notReached: 0,
    });

    const text = await rein(["replay", "--coverage", ...ids], dir);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toBe(
      [
        "Policy coverage over 3 sessions, 6 tool calls",
        "",
        "Rules (hits):",
        "  0  guard:max-tool-calls   never matched",
        "  0  guard:loop   never matched",
        "  2  policy:no-push",
        "  3  policy:echo-ok",
        "  0  policy:rules[2]   never matched",
        "",
        "Never matched: guard:max-tool-calls, guard:loop, policy:rules[2]",
        "",
        "Other deciders (no declared rules):",
        "  1  harness:default",
        "",
        "Decided by a default (no rule matched): 1 call",
        `  ${ids[2]?.slice(0, 8)} note {"text":"x"} → allow`,
        "",
      ].join("\n"),
    );

    // --all covers the same sessions; --fail-on-default turns the defaulted call into exit 1.
    const all = await rein(["replay", "--coverage", "--all", "--json", "--fail-on-default"], dir);
    expect(all.code, all.stderr).toBe(1);
    expect(JSON.parse(all.stdout)).toMatchObject({
      sessions: 3,
      calls: 6,
      neverMatched: ["guard:max-tool-calls", "guard:loop", "policy:rules[2]"],
    });

    // Tightened: the call that fell through now has a rule, and the default decides nothing.
    writeFileSync(
      join(dir, "rein.config.ts"),
      coverageConfig([]).replace(
        '{ rule: "wait", decision: "deny", reason: "no waiting" },',
        '{ rule: "wait", decision: "deny", reason: "no waiting" },\n      { id: "notes", rule: "note", decision: "allow", reason: "notes are fine" },',
      ),
    );
    const tightened = await rein(["replay", "--coverage", "--all", "--json", "--fail-on-default"], dir);
    expect(tightened.code, tightened.stderr).toBe(0);
    const report = JSON.parse(tightened.stdout);
    expect(report.byDefault).toEqual([]);
    expect(report.rules).toContainEqual({ rule: "policy:notes", hits: 1 });
  });

  it("without --coverage, replay takes exactly one session", async () => {
    const dir = project({
      "rein.config.ts": coverageConfig([]),
      "tools.ts": TOOLS_PLUGIN,
      "note.ts": NOTE_TOOL,
    });
    const two = await rein(["replay", "a", "b"], dir);
    expect(two.code).toBe(2);
    expect(two.stderr).toContain("several sessions are for --coverage");
    // The declared rules coverage counts are what `rein plugins` lists.
    const plugins = await rein(["plugins"], dir);
    expect(plugins.stdout).toContain("  rules guard:max-tool-calls, guard:loop\n");
    expect(plugins.stdout).toContain("  rules policy:no-push, policy:echo-ok, policy:rules[2]\n");
  });
});

const ASK_PUSH = `import { definePlugin } from "@rein/sdk";
export default definePlugin({
  name: "house-rules",
  rules: ["push"],
  setup(rein) {
    rein.hooks.toolGate.tap("house-rules", (call) =>
      call.name === "push" ? { decision: "ask", reason: "pushing publishes work", rule: "push" } : undefined);
  },
});
`;

const reply = (
  content: AssistantMessage["content"],
  stopReason: AssistantMessage["stopReason"],
): AssistantMessage => ({
  role: "assistant",
  content,
  api: "faux",
  provider: "faux",
  model: "scripted",
  usage: {
    input: 1,
    output: 1,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 2,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  },
  stopReason,
  timestamp: 1,
});

const pushCall = (id: string) => ({
  type: "toolCall" as const,
  id,
  name: "push",
  arguments: { remote: "origin" },
});

const pushResult = (toolCallId: string, decision: Record<string, unknown>) =>
  ({
    role: "toolResult",
    toolCallId,
    toolName: "push",
    content: [{ type: "text", text: "pushed to origin" }],
    isError: false,
    timestamp: 1,
    decision,
  }) as never;

describe("rein replay gives session grants back", { timeout: 120_000 }, () => {
  it("a call the stack now asks about meets the grant the record gave earlier (and without that grant is denied)", async () => {
    const configDir = mkdtempSync(join(tmpdir(), "rein-grant-key-"));
    const env = { REIN_CONFIG_DIR: configDir };
    const dir = project({
      "rein.config.ts": `import { defineConfig } from "@rein/sdk";
import permissions from ${JSON.stringify(dist("plugin-permissions"))};
export default defineConfig({
  model: { script: [] },
  plugins: ["./tools.ts", "./house-rules.ts", permissions],
});
`,
      "tools.ts": TOOLS_PLUGIN,
      "house-rules.ts": ASK_PUSH,
    });
    const { loadGrantKey, scopeOf, sign } = await import(dist("plugin-permissions"));
    const key = loadGrantKey(join(configDir, "grant-key"));

    // Recorded: the first push was asked and allowed for the session; the second was not asked then.
    const record = (withGrant: boolean) => {
      const session = new SessionStore(join(dir, ".rein/sessions")).create({ cwd: dir });
      session.appendMessage({ role: "user", content: "push twice", timestamp: 1 });
      session.appendMessage(reply([pushCall("c1")], "toolUse"));
      session.appendMessage(
        pushResult("c1", {
          decision: "allow",
          by: "permissions",
          reason: "allowed for this session at the prompt",
          askedBy: "house-rules:push",
        }),
      );
      if (withGrant) {
        const grant = {
          tool: "push",
          askedBy: "house-rules:push",
          ...scopeOf({ name: "push", args: { remote: "origin" }, facts: {} }, false),
          grantedAt: "2026-11-30T10:00:00.000Z",
        };
        session.append({
          type: "custom",
          customType: "rein.permission-grant",
          data: sign(key, grant, session.id),
        });
      }
      session.appendMessage(reply([pushCall("c2")], "toolUse"));
      session.appendMessage(
        pushResult("c2", { decision: "allow", by: "house-rules:then", reason: "pushes were fine then" }),
      );
      session.appendMessage(reply([{ type: "text", text: "pushed twice" }], "stop"));
      const id = session.id;
      session.close();
      return id;
    };

    const granted = await rein(["replay", "--json", record(true)], dir, { env });
    expect(granted.code, granted.stderr).toBe(1);
    const [first, second] = jsonLines(granted.stdout);
    expect(first).toMatchObject({
      recorded: "ask",
      recordedOutcome: "allow",
      now: "ask",
      nowOutcome: "allow",
      changed: false,
    });
    expect(second).toMatchObject({
      recorded: "allow",
      now: "ask",
      nowOutcome: "allow",
      by: "house-rules:push",
      changed: true,
    });
    expect(second.reason).toContain("allowed for this session (granted 2026-11-30T10:00:00.000Z)");

    const ungranted = await rein(["replay", "--json", record(false)], dir, { env });
    expect(ungranted.code, ungranted.stderr).toBe(1);
    expect(jsonLines(ungranted.stdout)[1]).toMatchObject({ now: "ask", nowOutcome: "deny", changed: true });
  });
});
