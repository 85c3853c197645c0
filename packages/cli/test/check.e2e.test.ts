/**
 * `rein check` through the built binary (dist/bin.js) in temporary projects with
 * Rein's real tool packs, policy and permissions plugins: the trail of every tap,
 * a deny no later allow undoes, a rewrite with its author, an ask with no
 * terminal, the exit codes, and the pinned `--json` document. Also: decision
 * trails recorded by a run (`decisions: { trail: true }`) in `sessions show` and
 * the Markdown export.
 */
import { realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { SessionStore } from "@rein/harness";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, project, rein } from "./support/rein-process.js";

afterAll(cleanup);

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const dist = (pkg: string) => JSON.stringify(join(repo, "packages", "plugins", pkg, "dist", "index.js"));

/** Denies `git push` (rule no-push). */
const FIRST = `import { definePlugin } from "@rein/sdk";
export default definePlugin({
  name: "first",
  setup(rein) {
    rein.hooks.toolGate.tap("first", (call) =>
      call.name === "bash" && call.facts.command?.commands.some((c) => c.normalized[0] === "git" && c.normalized[1] === "push")
        ? { decision: "deny", reason: "pushes are reviewed", rule: "no-push" }
        : undefined);
  },
});
`;

/** Allows every bash call (rule bash-ok). */
const SECOND = `import { definePlugin } from "@rein/sdk";
export default definePlugin({
  name: "second",
  setup(rein) {
    rein.hooks.toolGate.tap("second", (call) =>
      call.name === "bash" ? { decision: "allow", reason: "bash is fine here", rule: "bash-ok" } : undefined);
  },
});
`;

/** Drops `--force` from bash commands. */
const REWRITER = `import { definePlugin } from "@rein/sdk";
export default definePlugin({
  name: "rewriter",
  setup(rein) {
    rein.hooks.toolCall.tap("rewriter", (call) =>
      call.name === "bash" && String(call.args.command).includes(" --force")
        ? { ...call, args: { ...call.args, command: String(call.args.command).replace(" --force", "") } }
        : undefined);
  },
});
`;

/** A toolCall tap that throws: under the default policy a run would fail. */
const BOOM = `import { definePlugin } from "@rein/sdk";
export default definePlugin({
  name: "boom",
  setup(rein) {
    rein.hooks.toolCall.tap("boom", () => { throw new Error("rewrite table missing"); });
  },
});
`;

/** A gate tap that throws (fails closed: deny, in a run). */
const CRASH = `import { definePlugin } from "@rein/sdk";
export default definePlugin({
  name: "crash",
  setup(rein) {
    rein.hooks.toolGate.tap("crash", () => { throw new Error("rules file missing"); });
  },
});
`;

function config(gates: string[], extra = ""): string {
  return `import { defineConfig } from "@rein/sdk";
import shell from ${dist("tools-shell")};
import fsTools from ${dist("tools-fs")};
import policy from ${dist("plugin-policy")};
import permissions from ${dist("plugin-permissions")};

export default defineConfig({
  model: { script: [{ toolCalls: [{ name: "bash", args: { command: "git push origin main" } }] }, "done"] },
  plugins: [
    shell,
    fsTools,
    "./rewriter.ts",
    ${gates.map((g) => `"./${g}.ts"`).join(", ")},
    [policy, { rules: [{ id: "env", rule: "write(**/.env*)", decision: "ask", reason: ".env files hold secrets" }] }],
    permissions,
  ],
  ${extra}
});
`;
}

function stack() {
  return project({
    "rein.config.ts": config(["first", "second"], "decisions: { trail: true },"),
    "allow-first.config.ts": config(["second", "first"]),
    "boom.config.ts": config(["boom", "first", "second"]),
    "crash.config.ts": config(["first", "crash", "second"]),
    "inactive.config.ts": config(["first", "second"], 'tools: { active: ["read", "write"] },'),
    "broken.config.ts": `export default { model: { script: [] }, plugins: [], trail: true };\n`,
    "first.ts": FIRST,
    "second.ts": SECOND,
    "rewriter.ts": REWRITER,
    "boom.ts": BOOM,
    "crash.ts": CRASH,
    "src/.keep": "",
  });
}

const json = (stdout: string) => JSON.parse(stdout) as Record<string, unknown> & { trail: unknown[] };
const gateSteps = (report: { trail: unknown[] }) =>
  (report.trail as { hook: string }[]).filter((step) => step.hook === "toolGate");

describe("rein check", { timeout: 120_000 }, () => {
  const dir = stack();

  it("a later plugin's allow does not undo an earlier deny: the trail shows both answers, the later one not consulted, and the deny decides", async () => {
    const text = await rein(["check", "bash(git push origin main)"], dir);
    expect(text.code).toBe(1);
    const gate = text.stdout.slice(
      text.stdout.indexOf("\ntoolGate\n"),
      text.stdout.indexOf("\npermissionAsk\n"),
    );
    expect(gate.split("\n").slice(3, 8)).toEqual([
      expect.stringMatching(/^ {2}first:no-push\s+deny\s+pushes are reviewed$/),
      expect.stringMatching(
        /^ {2}second:bash-ok\s+allow\s+\(after the deny: not consulted, would have said allow\) bash is fine here$/,
      ),
      expect.stringMatching(
        /^ {2}policy\s+no opinion \(after the deny: not consulted, would have had no opinion\)$/,
      ),
      expect.stringMatching(
        /^ {2}permissions\s+no opinion \(after the deny: not consulted, would have had no opinion\)$/,
      ),
      "  not consulted: second, policy, permissions (a deny stops the remaining taps; they were asked here only to show their answers)",
    ]);
    expect(text.stdout).toMatch(/\nDENY by first:no-push: pushes are reviewed\n$/);

    const report = json((await rein(["check", "bash(git push origin main)", "--json"], dir)).stdout);
    expect(gateSteps(report)).toEqual([
      { hook: "toolGate", by: "@rein/tools-shell", answer: "no opinion" },
      { hook: "toolGate", by: "first:no-push", answer: "deny", reason: "pushes are reviewed" },
      {
        hook: "toolGate",
        by: "second:bash-ok",
        answer: "allow",
        reason: "bash is fine here",
        consulted: false,
      },
      { hook: "toolGate", by: "policy", answer: "no opinion", consulted: false },
      // @rein/plugin-permissions' gate: writes to instruction files (none here).
      { hook: "toolGate", by: "permissions", answer: "no opinion", consulted: false },
    ]);
    expect(report).toMatchObject({ decision: "deny", by: "first:no-push", exitCode: 1 });
    expect(report.notConsulted).toEqual(["second", "policy", "permissions"]);
  });

  it("with the allowing plugin first, the trail shows both, and the deny still wins", async () => {
    const result = await rein(
      ["-c", "allow-first.config.ts", "check", "bash(git push origin main)", "--json"],
      dir,
    );
    expect(result.code).toBe(1);
    const report = json(result.stdout);
    expect(gateSteps(report)).toEqual([
      { hook: "toolGate", by: "@rein/tools-shell", answer: "no opinion" },
      { hook: "toolGate", by: "second:bash-ok", answer: "allow", reason: "bash is fine here" },
      { hook: "toolGate", by: "first:no-push", answer: "deny", reason: "pushes are reviewed" },
      { hook: "toolGate", by: "policy", answer: "no opinion", consulted: false },
      // @rein/plugin-permissions' gate: writes to instruction files (none here).
      { hook: "toolGate", by: "permissions", answer: "no opinion", consulted: false },
    ]);
    expect(report).toMatchObject({ decision: "deny", by: "first:no-push", exitCode: 1 });
    expect(report.notConsulted).toEqual(["policy", "permissions"]);
  });

  it("a tap after the deny that throws is shown as an error that did not count; the deny decides, exit 1", async () => {
    const result = await rein(
      ["-c", "crash.config.ts", "check", "bash(git push origin main)", "--json"],
      dir,
    );
    expect(result.code).toBe(1);
    const report = json(result.stdout);
    expect(gateSteps(report)).toEqual([
      { hook: "toolGate", by: "@rein/tools-shell", answer: "no opinion" },
      { hook: "toolGate", by: "first:no-push", answer: "deny", reason: "pushes are reviewed" },
      {
        hook: "toolGate",
        by: "crash",
        answer: "error",
        reason: expect.stringMatching(
          /plugin "crash" failed in toolGate.*rules file missing.*failing closed: deny/,
        ),
        consulted: false,
      },
      {
        hook: "toolGate",
        by: "second:bash-ok",
        answer: "allow",
        reason: "bash is fine here",
        consulted: false,
      },
      { hook: "toolGate", by: "policy", answer: "no opinion", consulted: false },
      // @rein/plugin-permissions' gate: writes to instruction files (none here).
      { hook: "toolGate", by: "permissions", answer: "no opinion", consulted: false },
    ]);
    expect(report).toMatchObject({ decision: "deny", by: "first:no-push", exitCode: 1 });
    expect(report.notConsulted).toEqual(["crash", "second", "policy", "permissions"]);
    expect(result.stderr).toBe("");
  });

  it("a call refused before the gate (invalid arguments) asks no gate tap: all are named as not consulted", async () => {
    const text = await rein(["check", "write", "--arg", "path=src/x.ts"], dir);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain(
      "toolGate\n  not consulted: @rein/tools-shell, first, second, policy, permissions (the call was refused before the gate)\n",
    );
    expect(text.stdout).toMatch(/\nDENY by harness: invalid arguments\n$/);
    const report = json((await rein(["check", "write", "--arg", "path=src/x.ts", "--json"], dir)).stdout);
    expect(gateSteps(report)).toEqual([]);
    expect(report.notConsulted).toEqual(["@rein/tools-shell", "first", "second", "policy", "permissions"]);
  });

  it("shows a rewrite with its author, and the gates deciding on the rewritten command", async () => {
    const result = await rein(["check", "bash(git push --force origin main)", "--json"], dir);
    const report = json(result.stdout);
    expect(report.trail[0]).toEqual({
      hook: "toolCall",
      by: "rewriter",
      answer: "rewrite",
      args: { command: "git push origin main" },
    });
    expect(report.input).toEqual({ command: "git push --force origin main" });
    expect(report.args).toEqual({ command: "git push origin main" });
    expect(
      (report.facts as { command: { commands: { argv: string[] }[] } }).command.commands[0]?.argv,
    ).toEqual(["git", "push", "origin", "main"]);
    const text = await rein(["check", "bash(git push --force origin main)"], dir);
    expect(text.stdout).toMatch(/rewriter\s+rewrite\s+→ \{"command":"git push origin main"\}/);
    expect(text.stdout).toContain('argv   ["git","push","origin","main"]');
  });

  it("an ask with no terminal is reported, not answered: exit 2, the question, who it would go to", async () => {
    const result = await rein(["check", "write", "--arg", "path=src/../.env", "--arg", "content=x"], dir);
    expect(result.code).toBe(2);
    expect(result.stdout).toContain("would be put to: permissions");
    expect(result.stdout).toContain("not answered: no terminal");
    expect(result.stdout).toContain(
      `path "src/../.env" → ${join(realpathSync(dir), ".env")} (.env; inside the tool root)`,
    );
    expect(result.stdout).toMatch(/^ASK by policy:env: \.env files hold secrets/m);
  });

  it("--json output is pinned", async () => {
    const result = await rein(
      ["check", "write", "--arg", "path=src/../.env", "--arg", "content=x", "--json"],
      dir,
    );
    expect(result.code).toBe(2);
    const reason = '.env files hold secrets (write(**/.env*) matched "src/../.env (.env)")';
    expect(JSON.parse(result.stdout)).toEqual({
      tool: { name: "write", risk: "write", owner: "@rein/tools-fs", active: true, primary: "path" },
      input: { path: "src/../.env", content: "x" },
      decision: "ask",
      by: "policy:env",
      reason,
      args: { path: "src/../.env", content: "x" },
      trail: [
        { hook: "toolCall", by: "rewriter", answer: "no opinion" },
        { hook: "toolGate", by: "@rein/tools-shell", answer: "no opinion" },
        { hook: "toolGate", by: "first", answer: "no opinion" },
        { hook: "toolGate", by: "second", answer: "no opinion" },
        { hook: "toolGate", by: "policy:env", answer: "ask", reason },
        { hook: "toolGate", by: "permissions", answer: "no opinion" },
      ],
      notConsulted: [],
      facts: {
        paths: [
          {
            arg: "path",
            kind: "file",
            input: "src/../.env",
            absolute: join(realpathSync(dir), ".env"),
            relative: ".env",
            inside: true,
            lexical: join(dir, ".env"),
            root: realpathSync(dir),
          },
        ],
      },
      ask: { by: "policy:env", reason, taps: ["permissions"], answered: false },
      exitCode: 2,
    });
  });

  it("--json output of a deny is pinned: the taps after it with their answers, consulted: false", async () => {
    const result = await rein(["check", "bash(git push origin main)", "--json"], dir);
    expect(result.code).toBe(1);
    const { facts, ...report } = JSON.parse(result.stdout) as Record<string, unknown>;
    // The parsed command's full shape is tools-shell's, pinned there.
    expect(facts).toMatchObject({
      command: { source: "git push origin main", commands: [{ argv: ["git", "push", "origin", "main"] }] },
    });
    expect(report).toEqual({
      tool: { name: "bash", risk: "exec", owner: "@rein/tools-shell", active: true, primary: "command" },
      input: { command: "git push origin main" },
      decision: "deny",
      by: "first:no-push",
      reason: "pushes are reviewed",
      args: { command: "git push origin main" },
      trail: [
        { hook: "toolCall", by: "rewriter", answer: "no opinion" },
        { hook: "toolGate", by: "@rein/tools-shell", answer: "no opinion" },
        { hook: "toolGate", by: "first:no-push", answer: "deny", reason: "pushes are reviewed" },
        {
          hook: "toolGate",
          by: "second:bash-ok",
          answer: "allow",
          reason: "bash is fine here",
          consulted: false,
        },
        { hook: "toolGate", by: "policy", answer: "no opinion", consulted: false },
        { hook: "toolGate", by: "permissions", answer: "no opinion", consulted: false },
      ],
      notConsulted: ["second", "policy", "permissions"],
      ask: null,
      exitCode: 1,
    });
  });

  it("takes a JSON call on stdin", async () => {
    const input = JSON.stringify({ name: "bash", arguments: { command: "ls -la" } });
    const result = await rein(["check", "--json"], dir, { input });
    expect(result.code).toBe(0);
    expect(json(result.stdout)).toMatchObject({ decision: "allow", by: "second:bash-ok", exitCode: 0 });
  });

  it.each([
    [["check", "bsh(ls)"], 'unknown tool "bsh"; did you mean "bash"?'],
    [["check", "qqqq(ls)"], 'unknown tool "qqqq"\n'],
    [["check", "write", "--arg", "path"], "--arg"],
    [["check", "bash(ls)", "--arg", "command=pwd"], "already gives command"],
    [["check", "--frobnicate"], "unknown option"],
    [["check", "-"], "not JSON"],
  ])("exit 64 for usage errors: %j", async (args, message) => {
    const result = await rein(args, dir, { input: "{oops" });
    expect(result.code).toBe(64);
    expect(result.stderr).toContain(message);
    expect(result.stdout).toBe("");
  });

  it("exit 78 for a config error, exit 70 when the stack itself fails on the call", async () => {
    const broken = await rein(["-c", "broken.config.ts", "check", "bash(ls)"], dir);
    expect(broken.code).toBe(78);
    expect(broken.stderr).toContain('unknown option "trail"');
    const boom = await rein(["-c", "boom.config.ts", "check", "bash(ls)"], dir);
    expect(boom.code).toBe(70);
    expect(boom.stderr).toMatch(/plugin boom, toolCall.*rewrite table missing/);
  });
});

describe("rein check on an inactive tool", { timeout: 60_000 }, () => {
  it("denies by harness as a run would, before any tap", async () => {
    const dir = stack();
    const result = await rein(["-c", "inactive.config.ts", "check", "bash(ls)", "--json"], dir);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({
      tool: { name: "bash", active: false },
      decision: "deny",
      by: "harness",
      reason: expect.stringContaining("not active"),
      trail: [],
    });
  });
});

describe("decision trails in the record", { timeout: 90_000 }, () => {
  it("a run with decisions.trail records every tap; sessions show and the Markdown export display it", async () => {
    const dir = stack();
    expect((await rein(["run", "push it"], dir)).code).toBe(0);
    const [session] = new SessionStore(join(dir, ".rein/sessions")).list();
    const id = session?.id as string;
    const show = await rein(["sessions", "show", id], dir);
    expect(show.stdout).toContain("denied by first:no-push: pushes are reviewed");
    expect(show.stdout).toMatch(/toolCall\s+rewriter\s+no opinion/);
    expect(show.stdout).toMatch(/toolGate\s+first:no-push\s+deny\s+pushes are reviewed/);
    // A run stops at the deny: the taps after it are not asked (rein check's explain mode is check's alone).
    expect(show.stdout).not.toContain("second:bash-ok");
    expect(show.stdout).not.toContain("not consulted");
    const md = await rein(["sessions", "export", id], dir);
    expect(md.stdout).toContain("Decision trail:");
    expect(md.stdout).toMatch(/toolGate\s+@rein\/tools-shell\s+no opinion\ntoolGate\s+first:no-push\s+deny/);
  });
});
