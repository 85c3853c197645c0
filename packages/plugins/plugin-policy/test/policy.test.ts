import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineTool, SdkError, Type } from "@rein/sdk";
import { analyzeShell } from "@rein/sdk/shell";
import { checkToolCall, createTestHarness, type TestHarness } from "@rein/sdk/testing";
import { afterEach, describe, expect, it } from "vitest";
import policy, { compilePolicy, type PolicyRule } from "../src/index.js";

const ROOT = "/abs/root";

const executed: string[] = [];
const pathTool = (name: string, risk: "read" | "write") =>
  defineTool({
    name,
    description: `${name} a file`,
    risk,
    parameters: Type.Object({ path: Type.String(), content: Type.Optional(Type.String()) }),
    execute: (args) => {
      executed.push(`${name} ${args.path}`);
      return { content: [{ type: "text", text: `${name} ${args.path}: ok` }] };
    },
  });
const bash = defineTool({
  name: "bash",
  description: "Run a shell command",
  risk: "exec",
  parameters: Type.Object({ command: Type.String() }),
  execute: (args) => {
    executed.push(`bash ${args.command}`);
    return { content: [{ type: "text", text: `ran ${args.command}` }] };
  },
});
const fetchTool = defineTool({
  name: "fetch",
  description: "Fetch a URL",
  risk: "network",
  parameters: Type.Object({ url: Type.String() }),
  execute: (args) => ({ content: [{ type: "text", text: `fetched ${args.url}` }] }),
});
const tools = [pathTool("read", "read"), pathTool("write", "write"), bash, fetchTool];

let t: TestHarness | undefined;
afterEach(async () => {
  await t?.dispose();
  t = undefined;
  executed.length = 0;
});

async function withRules(rules: PolicyRule[], extra: Record<string, unknown> = {}) {
  t = await createTestHarness({
    plugins: [[policy, { rules, ...extra }]],
    tools,
    config: { cwd: ROOT },
  });
  return t;
}

describe("strictest wins", () => {
  it("denies when an allow and a deny rule both match, whatever their order, and names the deny rule", async () => {
    const h = await withRules([
      { rule: "write(src/**)", decision: "allow", reason: "source is fair game" },
      { rule: "write(src/**/*.env)", decision: "ask", reason: "env-like files" },
      { id: "no-secrets", rule: "write(**/secret*)", decision: "deny", reason: "secrets stay put" },
    ]);
    expect(await checkToolCall(h, { name: "write", args: { path: "src/secret.env" } })).toMatchObject({
      decision: "deny",
      by: "policy:no-secrets",
    });
    expect(
      await checkToolCall(h, { name: "write", args: { path: "src/a.env" } }, { skipPermission: true }),
    ).toMatchObject({ decision: "ask", by: "policy:rules[1]" });
    expect(await checkToolCall(h, { name: "write", args: { path: "src/a.ts" } })).toMatchObject({
      decision: "allow",
      by: "policy:rules[0]",
      reason: expect.stringContaining("source is fair game"),
    });
  });

  it("has no opinion when no rule matches, so the harness default applies", async () => {
    const h = await withRules([{ rule: "write(src/**)", decision: "deny", reason: "frozen" }]);
    expect(await checkToolCall(h, { name: "write", args: { path: "docs/a.md" } })).toMatchObject({
      decision: "allow",
      by: "harness:default",
    });
    expect(await checkToolCall(h, { name: "read", args: { path: "src/a.ts" } })).toMatchObject({
      by: "harness:default",
    });
  });

  it("matches every call of a tool with a bare name or tool(*), and every tool with *", async () => {
    const h = await withRules([
      { rule: "fetch", decision: "ask", reason: "network" },
      { rule: "read(*)", decision: "allow", reason: "reads are fine" },
      { rule: "*(/etc/**)", decision: "deny", reason: "system files" },
    ]);
    expect(
      await checkToolCall(h, { name: "fetch", args: { url: "https://x.test" } }, { skipPermission: true }),
    ).toMatchObject({ decision: "ask", by: "policy:rules[0]" });
    expect((await checkToolCall(h, { name: "read", args: { path: "anything/at/all" } })).by).toBe(
      "policy:rules[1]",
    );
    expect(await checkToolCall(h, { name: "read", args: { path: "/etc/passwd" } })).toMatchObject({
      decision: "deny",
      by: "policy:rules[2]",
    });
  });

  it("matches a bare rule even when the call has no command or no string arguments", async () => {
    const h = await withRules([
      { rule: "bash", decision: "deny", reason: "no shell" },
      { rule: "ping(*)", decision: "deny", reason: "no network" },
    ]);
    expect((await checkToolCall(h, { name: "bash", args: { command: "" } })).decision).toBe("deny");
    const ping = await checkToolCall(
      h,
      { name: "ping", args: {}, risk: "network" },
      { unregistered: "evaluate" },
    );
    expect(ping.by).toBe("policy:rules[1]");
  });

  it("matches other tools' string arguments with * wildcards", async () => {
    const h = await withRules([{ rule: "fetch(https://internal.*)", decision: "deny", reason: "intranet" }]);
    expect(
      (await checkToolCall(h, { name: "fetch", args: { url: "https://internal.corp/x" } })).decision,
    ).toBe("deny");
    expect((await checkToolCall(h, { name: "fetch", args: { url: "https://example.com" } })).decision).toBe(
      "allow",
    );
  });
});

describe("shell commands", () => {
  it("denies git status && git push with bash(git push *): each part is checked", async () => {
    const h = await withRules([
      { rule: "bash(git status)", decision: "allow", reason: "read-only" },
      { id: "no-push", rule: "bash(git push *)", decision: "deny", reason: "pushing publishes commits" },
    ]);
    const verdict = await checkToolCall(h, { name: "bash", args: { command: "git status && git push" } });
    expect(verdict).toMatchObject({ decision: "deny", by: "policy:no-push" });
    expect(verdict.reason).toContain("pushing publishes commits");
    expect(verdict.reason).toContain('"git push"');
    expect((await checkToolCall(h, { name: "bash", args: { command: "git status" } })).decision).toBe(
      "allow",
    );
  });

  it("splits on &&, ||, ;, | and checks command substitutions too", async () => {
    const h = await withRules([{ rule: "bash(git push *)", decision: "deny", reason: "no pushing" }]);
    for (const command of [
      "make || git push origin main",
      "echo hi; git push",
      "cat x | git push --force",
      "echo $(git push)",
      "FOO=1 git push",
      "(cd repo && git push)",
    ]) {
      expect((await checkToolCall(h, { name: "bash", args: { command } })).decision, command).toBe("deny");
    }
    for (const command of ["git pushx", "git status", 'echo "git push"', "echo 'a; git push'"]) {
      expect((await checkToolCall(h, { name: "bash", args: { command } })).decision, command).toBe("allow");
    }
  });

  it("allows a compound command only when every part is allowed", async () => {
    const h = await withRules(
      [
        { rule: "bash(git status)", decision: "allow", reason: "read-only git" },
        { rule: "bash(npm test *)", decision: "allow", reason: "tests" },
      ],
      {},
    );
    h.harness.setDefaultToolVerdict("deny");
    expect(
      await checkToolCall(h, { name: "bash", args: { command: "git status && npm test" } }),
    ).toMatchObject({
      decision: "allow",
      by: "policy:rules[0]",
    });
    expect(
      await checkToolCall(h, { name: "bash", args: { command: "git status && rm -rf ~" } }),
    ).toMatchObject({ decision: "deny", by: "harness:default" });
  });

  it("parses commands like bash: quotes and redirections are not separators", async () => {
    const argvs = async (command: string) =>
      (await analyzeShell(command)).commands.map((c) => c.argv.join(" "));
    expect(await argvs("git status && git push")).toEqual(["git status", "git push"]);
    expect(await argvs("a || b; c | d |& e")).toEqual(["a", "b", "c", "d", "e"]);
    expect(await argvs('echo "a && b" > out 2>&1')).toEqual(["echo a && b"]);
    expect(await argvs("sleep 1 & echo  done")).toEqual(["sleep 1", "echo done"]);
    expect(await argvs("echo $(git   push) `rm x`")).toEqual([
      "echo $(git   push) `rm x`",
      "git push",
      "rm x",
    ]);
  });
});

describe("path normalisation", () => {
  it("matches ./src/a.ts, src/a.ts and /abs/root/src/a.ts with write(src/**)", async () => {
    const h = await withRules([{ rule: "write(src/**)", decision: "deny", reason: "frozen sources" }]);
    for (const p of ["./src/a.ts", "src/a.ts", "/abs/root/src/a.ts", "src/deep/./x/../b.ts"]) {
      expect(await checkToolCall(h, { name: "write", args: { path: p } }), p).toMatchObject({
        decision: "deny",
        by: "policy:rules[0]",
      });
    }
    for (const p of ["/other/src/a.ts", "src/../lib/a.ts", "srcx/a.ts"]) {
      expect((await checkToolCall(h, { name: "write", args: { path: p } })).decision, p).toBe("allow");
    }
  });

  it("normalises src/../.env to .env, so read(.env) catches it", async () => {
    const h = await withRules([{ rule: "read(.env)", decision: "deny", reason: "secrets" }]);
    for (const p of ["src/../.env", ".env", "./.env", "/abs/root/.env"]) {
      expect((await checkToolCall(h, { name: "read", args: { path: p } })).decision, p).toBe("deny");
    }
    expect((await checkToolCall(h, { name: "read", args: { path: "config/.env" } })).decision).toBe("allow");
  });

  it("matches dot files with ** (picomatch dot: true) and absolute patterns against absolute paths", async () => {
    const h = await withRules([
      { rule: "read(**/.env*)", decision: "deny", reason: "env files anywhere" },
      { rule: "write(/abs/root/build/**)", decision: "deny", reason: "generated" },
    ]);
    expect((await checkToolCall(h, { name: "read", args: { path: "pkg/.env.local" } })).decision).toBe(
      "deny",
    );
    expect((await checkToolCall(h, { name: "write", args: { path: "build/out.js" } })).decision).toBe("deny");
  });

  it("resolves the root option against the working directory", async () => {
    const h = await withRules([{ rule: "write(src/**)", decision: "deny", reason: "frozen" }], {
      root: "packages/app",
    });
    expect(
      (await checkToolCall(h, { name: "write", args: { path: "packages/app/src/a.ts" } })).decision,
    ).toBe("deny");
    expect((await checkToolCall(h, { name: "write", args: { path: "src/a.ts" } })).decision).toBe("allow");
  });
});

describe("examples checked at load", () => {
  it("loads when every example holds", async () => {
    const h = await withRules([
      {
        id: "no-push",
        rule: "bash(git push *)",
        decision: "deny",
        reason: "no pushing",
        examples: {
          match: ["bash(git push origin main)", "bash(git status && git push)"],
          notMatch: ["bash(git pull)"],
        },
      },
      {
        rule: "write(src/**)",
        decision: "allow",
        reason: "sources",
        examples: {
          match: ["write(./src/a.ts)", "write(/abs/root/src/a.ts)"],
          notMatch: ["write(src/../.env)"],
        },
      },
    ]);
    expect(h.host.plugins.map((p) => p.name)).toEqual(["policy"]);
  });

  it("fails to load naming the rule id when an example that should match does not", async () => {
    const failure = withRules([
      { rule: "read(.env)", decision: "deny", reason: "secrets" },
      {
        id: "no-push",
        rule: "bash(git push *)",
        decision: "deny",
        reason: "no pushing",
        examples: { match: ["bash(git pull origin main)"] },
      },
    ]);
    await expect(failure).rejects.toBeInstanceOf(SdkError);
    await expect(failure).rejects.toMatchObject({
      code: "invalid_options",
      plugin: "policy",
      path: "/rules/1/examples/match/0",
      message: expect.stringContaining(
        'rule no-push (bash(git push *)) should match example "bash(git pull origin main)"',
      ),
    });
  });

  it("fails to load naming the rule index when an example that should not match does", async () => {
    await expect(
      withRules([
        { rule: "read(.env)", decision: "deny", reason: "secrets" },
        { rule: "read(.env)", decision: "deny", reason: "x" },
        { rule: "read(.env)", decision: "deny", reason: "x" },
        {
          rule: "write(src/**)",
          decision: "deny",
          reason: "x",
          examples: { notMatch: ["write(./src/x.ts)"] },
        },
      ]),
    ).rejects.toMatchObject({
      code: "invalid_options",
      plugin: "policy",
      path: "/rules/3/examples/notMatch/0",
      message: expect.stringMatching(/rule rules\[3\] \(write\(src\/\*\*\)\) should not match .* but does/),
    });
  });

  it("rejects a malformed rule and an unknown decision at load", async () => {
    await expect(withRules([{ rule: "bash(git push", decision: "deny", reason: "x" }])).rejects.toMatchObject(
      {
        code: "invalid_options",
        plugin: "policy",
        path: "/rules/0/rule",
      },
    );
    await expect(
      withRules([{ rule: "bash", decision: "maybe" as "deny", reason: "x" }]),
    ).rejects.toMatchObject({ code: "invalid_options", plugin: "policy" });
  });

  it("takes parentheses inside a command pattern literally; a glob needs them escaped (README: Quoting)", async () => {
    const rules = await compilePolicy(
      {
        rules: [
          { rule: "bash(echo (hi))", decision: "deny", examples: { match: ['bash(echo "(hi)")'] } },
          {
            rule: 'bash(python -c "print(1)")',
            decision: "deny",
            examples: { match: ['bash(python -c "print(1)")'], notMatch: ['bash(python -c "print(2)")'] },
          },
          {
            rule: "bash(ls \\*)",
            decision: "deny",
            examples: { match: ["bash(ls *)"], notMatch: ["bash(ls a)"] },
          },
          {
            rule: "write(docs/\\(draft\\).md)",
            decision: "deny",
            examples: { match: ["write(docs/(draft).md)"], notMatch: ["write(docs/draft.md)"] },
          },
          {
            rule: "write(src/(a|b).ts)",
            decision: "deny",
            examples: { match: ["write(src/a.ts)", "write(src/b.ts)"], notMatch: ["write(src/c.ts)"] },
          },
        ],
        pathTools: ["write"],
        shellTools: ["bash"],
      },
      { cwd: ROOT, root: ROOT },
    );
    expect(rules.map((r) => r.label)).toEqual(["rules[0]", "rules[1]", "rules[2]", "rules[3]", "rules[4]"]);
  });
});

describe("in a run", () => {
  it("blocks the denied part of a script and records policy:<rule> as the decider", async () => {
    t = await createTestHarness({
      plugins: [
        [
          policy,
          { rules: [{ id: "no-push", rule: "bash(git push *)", decision: "deny", reason: "no pushing" }] },
        ],
      ],
      tools,
      config: { cwd: ROOT },
      script: [
        { toolCalls: [{ name: "bash", args: { command: "git commit -m x && git push" } }] },
        { toolCalls: [{ name: "bash", args: { command: "git commit -m x" } }] },
        "done",
      ],
    });
    const outcome = await t.prompt("ship it");
    expect(outcome.status).toBe("completed");
    expect(executed).toEqual(["bash git commit -m x"]);
    expect(t.decisions().map((d) => [d.decision, d.by])).toEqual([
      ["deny", "policy:no-push"],
      ["allow", "harness:default"],
    ]);
    expect(JSON.stringify(t.requests[1]?.context.messages.at(-1))).toContain("no pushing");
  });
});

describe("path rules on canonical facts", () => {
  const opener = (name: string, risk: "read" | "write") =>
    defineTool({
      name,
      description: name,
      risk,
      parameters: Type.Object({ path: Type.Optional(Type.String()) }),
      paths: { path: risk === "read" && name !== "read" ? "walk" : "file" },
      execute: () => ({ content: [] }),
    });

  it("a read rule with a path holds for every tool touching the path; a bare read rule only for read", async () => {
    const cwd = realpathSync(mkdtempSync(join(tmpdir(), "rein-policy-")));
    writeFileSync(join(cwd, ".env"), "");
    symlinkSync(".env", join(cwd, "link"));
    t = await createTestHarness({
      plugins: [[policy, { rules: [{ id: "env", rule: "read(.env)", decision: "deny" }] }]],
      tools: [opener("read", "read"), opener("grep", "read"), opener("write", "write")],
      config: { cwd },
    });
    for (const [name, path] of [
      ["read", "link"],
      ["grep", ".env"],
      ["write", "./link"],
    ] as const) {
      expect(await t.checkToolCall({ name, args: { path } }), `${name} ${path}`).toMatchObject({
        decision: "deny",
        by: "policy:env",
      });
    }
    await t.dispose();
    t = await createTestHarness({
      plugins: [[policy, { rules: [{ id: "no-read", rule: "read", decision: "deny" }] }]],
      tools: [opener("read", "read"), opener("grep", "read")],
      config: { cwd },
    });
    expect((await t.checkToolCall({ name: "read", args: { path: "a" } })).by).toBe("policy:no-read");
    expect((await t.checkToolCall({ name: "grep", args: {} })).by).toBe("harness:default");
  });

  it("an allow rule counts on the canonical path only: src/** never allows a link out of src", async () => {
    const cwd = realpathSync(mkdtempSync(join(tmpdir(), "rein-policy-")));
    mkdirSync(join(cwd, "src"));
    symlinkSync("../package.json", join(cwd, "src/pkg"));
    t = await createTestHarness({
      plugins: [[policy, { rules: [{ rule: "write(src/**)", decision: "allow" }] }]],
      tools: [opener("write", "write")],
      config: { cwd },
    });
    expect((await t.checkToolCall({ name: "write", args: { path: "src/a.ts" } })).by).toBe("policy:rules[0]");
    expect((await t.checkToolCall({ name: "write", args: { path: "src/pkg" } })).by).toBe("harness:default");
  });
});

describe("declared rules (for coverage)", () => {
  it("lists every rule as `by` names it: the id, else rules[<index>]", async () => {
    t = await createTestHarness({
      plugins: [
        [
          policy,
          {
            rules: [
              { id: "no-push", rule: "bash(git push *)", decision: "deny" },
              { rule: "read(**)", decision: "allow" },
            ],
          },
        ],
      ],
    });
    expect(t.host.plugins.find((p) => p.name === "policy")?.rules).toEqual([
      "policy:no-push",
      "policy:rules[1]",
    ]);
  });
});
