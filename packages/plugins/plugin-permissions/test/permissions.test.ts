import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { definePlugin, defineTool, Type } from "@rein/sdk";
import { checkToolCall, createTestHarness, type TestHarness } from "@rein/sdk/testing";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import permissions, { createPermissionsPlugin, GRANT_ENTRY_TYPE, type PromptIO } from "../src/index.js";

const executed: string[] = [];
const bash = defineTool({
  name: "bash",
  description: "Run a shell command",
  risk: "exec",
  parameters: Type.Object({ command: Type.String() }),
  execute: (args) => {
    executed.push(args.command);
    return { content: [{ type: "text", text: `ran ${args.command}` }] };
  },
});
const tool = (name: string, risk?: "read" | "write" | "network") =>
  defineTool({
    name,
    description: name,
    ...(risk ? { risk } : {}),
    parameters: Type.Object({ path: Type.Optional(Type.String()) }),
    execute: () => ({ content: [{ type: "text", text: "ok" }] }),
  });
const tools = [bash, tool("read", "read"), tool("write", "write"), tool("fetch", "network"), tool("misc")];

/** A terminal: a PassThrough pair flagged as TTY; what the user typed is written ahead. */
function terminal(typed: string, isTTY = true) {
  const input = Object.assign(new PassThrough(), { isTTY });
  const output = Object.assign(new PassThrough(), { isTTY });
  let shown = "";
  output.setEncoding("utf8");
  output.on("data", (chunk: string) => {
    shown += chunk;
  });
  input.write(typed);
  const io: PromptIO = { input, output };
  return { io, shown: () => shown, input };
}

/** A gate that asks about every bash call, with a rule of its own. */
const askPush = definePlugin({
  name: "house",
  setup(rein) {
    rein.hooks.toolGate.tap("house", (call) =>
      call.name === "bash"
        ? { decision: "ask", rule: "push", reason: "pushing publishes commits" }
        : undefined,
    );
  },
});

const push = (id: string, command = "git push origin main") => ({
  toolCalls: [{ id, name: "bash", args: { command } }],
});

// Grant keys go to a temp config dir, never the user's.
beforeAll(() => {
  process.env.REIN_CONFIG_DIR = mkdtempSync(join(tmpdir(), "rein-config-"));
});

let t: TestHarness | undefined;
let t2: TestHarness | undefined;
afterEach(async () => {
  await t?.dispose();
  await t2?.dispose();
  t = t2 = undefined;
  executed.length = 0;
});

describe("terminal prompt", () => {
  it("allow once: shows the reason, the decider and the exact arguments, and asks again next time", async () => {
    const term = terminal("y\nn\n");
    t = await createTestHarness({
      plugins: [askPush, createPermissionsPlugin({ io: term.io })],
      tools,
      script: [push("c1"), push("c2"), "done"],
    });
    expect((await t.prompt("push")).status).toBe("completed");
    expect(executed).toEqual(["git push origin main"]);
    const shown = term.shown();
    expect(shown).toContain("Permission needed: bash (risk: exec)");
    expect(shown).toContain("reason: pushing publishes commits");
    expect(shown).toContain("asked by: house:push");
    expect(shown).toContain('"command": "git push origin main"');
    expect(shown).toContain("[y] allow once   [s] allow for this session");
    expect(shown.match(/Permission needed/g)).toHaveLength(2);
    expect(t.decisions().map((d) => [d.decision, d.by, d.askedBy, d.reason])).toEqual([
      ["allow", "permissions", "house:push", "allowed once at the prompt"],
      ["deny", "permissions", "house:push", "denied at the prompt: pushing publishes commits"],
    ]);
  });

  it("allow for this session: the same call later passes without a prompt, and a signed grant is recorded", async () => {
    const term = terminal("s\n");
    t = await createTestHarness({
      plugins: [askPush, createPermissionsPlugin({ io: term.io })],
      tools,
      script: [push("c1"), push("c2"), "done"],
    });
    await t.prompt("push");
    expect(executed).toEqual(["git push origin main", "git push origin main"]);
    expect(term.shown().match(/Permission needed/g)).toHaveLength(1);
    expect(t.decisions().map((d) => d.reason)).toEqual([
      "allowed for this session at the prompt",
      expect.stringMatching(/^allowed for this session \(granted \d{4}-/),
    ]);
    const grants = t.session
      .entries()
      .filter((e) => e.type === "custom" && e.customType === GRANT_ENTRY_TYPE);
    expect(grants).toHaveLength(1);
    expect(grants[0]).toMatchObject({
      data: {
        tool: "bash",
        askedBy: "house:push",
        scope: "exact",
        mac: expect.stringMatching(/^[0-9a-f]{64}$/),
      },
    });
  });

  it("deny: the tool does not run and the model reads why", async () => {
    const term = terminal("n\n");
    t = await createTestHarness({
      plugins: [askPush, createPermissionsPlugin({ io: term.io })],
      tools,
      script: [push("c1"), "ok, not pushing"],
    });
    await t.prompt("push");
    expect(executed).toEqual([]);
    expect(t.decisions()[0]).toMatchObject({ decision: "deny", by: "permissions", askedBy: "house:push" });
    expect(JSON.stringify(t.requests[1]?.context.messages.at(-1))).toContain("denied at the prompt");
  });

  it("re-asks on an unclear answer, and treats closed input as a deny", async () => {
    const term = terminal("maybe\n");
    t = await createTestHarness({ plugins: [askPush, createPermissionsPlugin({ io: term.io })], tools });
    const pending = t.checkToolCall({ name: "bash", args: { command: "git push" } });
    term.input.end();
    const verdict = await pending;
    expect(term.shown()).toContain('please answer y (once), s (session) or n (deny); got "maybe"');
    expect(verdict).toMatchObject({ decision: "deny", by: "permissions" });
    expect(verdict.reason).toContain("input closed");
  });

  it("exact grant scope covers only the same arguments", async () => {
    const term = terminal("s\nn\n");
    t = await createTestHarness({
      plugins: [askPush, [createPermissionsPlugin({ io: term.io }), { grantScope: "exact" }]],
      tools,
    });
    expect((await t.checkToolCall({ name: "bash", args: { command: "git push" } })).decision).toBe("allow");
    expect((await t.checkToolCall({ name: "bash", args: { command: "git push" } })).reason).toMatch(
      /^allowed for this session \(granted/,
    );
    expect((await t.checkToolCall({ name: "bash", args: { command: "git push -f" } })).decision).toBe("deny");
    expect(term.shown().match(/Permission needed/g)).toHaveLength(2);
  });
});

describe("without a terminal", () => {
  it("denies with a reason that says how to allow the call", async () => {
    const term = terminal("y\n", false);
    t = await createTestHarness({ plugins: [createPermissionsPlugin({ io: term.io })], tools });
    const verdict = await checkToolCall(t, { name: "bash", args: { command: "git push origin main" } });
    expect(verdict).toMatchObject({ decision: "deny", by: "permissions", askedBy: "harness:default" });
    expect(verdict.reason).toContain("there is no terminal to ask");
    expect(verdict.reason).toContain('rule: "bash(git push origin main)", decision: "allow"');
    expect(verdict.reason).toContain('defaults: { exec: "allow" }');
    expect(term.shown()).toBe("");
  });

  it("leaves the ask unanswered when the harness parks unanswered asks: the run parks for a person", async () => {
    const term = terminal("y\n", false);
    t = await createTestHarness({
      plugins: [askPush, createPermissionsPlugin({ io: term.io })],
      tools,
      config: { onUnanswered: "park" },
      script: [push("c1")],
    });
    const outcome = await t.prompt("push");
    expect(outcome.status).toBe("parked");
    expect(outcome.parked).toMatchObject([{ toolCallId: "c1", askedBy: "house:push" }]);
    expect(executed).toEqual([]);
    expect(term.shown()).toBe("");
  });

  it("never prompts with prompt: never, even on a terminal (the default export, on process.stdin)", async () => {
    t = await createTestHarness({ plugins: [[permissions, { prompt: "never" }]], tools });
    expect(await t.checkToolCall({ name: "write", args: { path: "a" } })).toMatchObject({
      decision: "deny",
      by: "permissions",
      reason: expect.stringContaining('prompting is off (prompt: "never"), so it is denied'),
    });
  });
});

describe("session grants persist", () => {
  it("restores grants from the session's entries when a session is resumed", async () => {
    t = await createTestHarness({
      plugins: [askPush, createPermissionsPlugin({ io: terminal("s\n").io })],
      tools,
      script: [push("c1"), "done"],
    });
    await t.prompt("push");
    const session = t.session;
    await t.dispose();
    t = undefined;

    // Resumed without a terminal: the grant answers, nobody is asked.
    const term = terminal("", false);
    t2 = await createTestHarness({
      plugins: [askPush, createPermissionsPlugin({ io: term.io })],
      tools,
      session,
    });
    expect(await t2.checkToolCall({ name: "bash", args: { command: "git push origin main" } })).toMatchObject(
      {
        decision: "allow",
        by: "permissions",
        askedBy: "house:push",
        reason: expect.stringMatching(/^allowed for this session/),
      },
    );
    expect(term.shown()).toBe("");
  });
});

describe("default verdict by risk", () => {
  it("allows read and asks for write, exec, network and undeclared risk", async () => {
    const h = await createTestHarness({
      plugins: [createPermissionsPlugin({ io: terminal("", false).io })],
      tools,
    });
    t = h;
    const gate = (name: string) => h.checkToolCall({ name, args: {} }, { skipPermission: true });
    expect(await gate("read")).toMatchObject({ decision: "allow", by: "harness:default" });
    for (const name of ["write", "fetch", "misc"]) {
      expect((await gate(name)).decision, name).toBe("ask");
    }
    expect(
      (await h.checkToolCall({ name: "bash", args: { command: "ls" } }, { skipPermission: true })).reason,
    ).toBe('bash has risk "exec"; the default for exec tools is ask');
  });

  it("is configurable per risk, and can be left to the harness", async () => {
    t = await createTestHarness({
      plugins: [
        [
          createPermissionsPlugin({ io: terminal("", false).io }),
          { defaults: { read: "deny", exec: "allow" } },
        ],
      ],
      tools,
    });
    expect((await t.checkToolCall({ name: "read", args: {} })).decision).toBe("deny");
    expect((await t.checkToolCall({ name: "bash", args: { command: "ls" } })).decision).toBe("allow");
    expect((await t.checkToolCall({ name: "write", args: {} }, { skipPermission: true })).decision).toBe(
      "ask",
    );
    await t.dispose();

    t = await createTestHarness({
      plugins: [[createPermissionsPlugin({ io: terminal("", false).io }), { setDefaultVerdict: false }]],
      tools,
    });
    expect((await t.checkToolCall({ name: "write", args: {} })).decision).toBe("allow");
  });
});

describe("always in this project", () => {
  it("offered with a grantsFile: the grant is saved there and a later harness given it as projectGrants needs no prompt", async () => {
    const grantsFile = join(mkdtempSync(join(tmpdir(), "rein-project-")), ".rein", "local.json");
    const term = terminal("a\n");
    t = await createTestHarness({
      plugins: [askPush, [createPermissionsPlugin({ io: term.io }), { grantsFile }]],
      tools,
      script: [push("c1"), "done"],
    });
    expect((await t.prompt("push")).status).toBe("completed");
    expect(term.shown()).toContain("[a] always in this project (these exact arguments only; saved in ");
    const saved = JSON.parse(readFileSync(grantsFile, "utf8")) as {
      plugins: [string, { projectGrants: unknown[] }][];
    };
    const [[specifier, options]] = saved.plugins as [[string, { projectGrants: unknown[] }]];
    expect(specifier).toBe("@rein/plugin-permissions");
    expect(options.projectGrants).toHaveLength(1);

    const later = terminal("", false);
    t2 = await createTestHarness({
      plugins: [askPush, [createPermissionsPlugin({ io: later.io }), { grantsFile, ...options }]],
      tools,
      script: [push("c2"), push("c3", "git push origin other"), "done"],
    });
    await t2.prompt("push again");
    expect(later.shown()).toBe("");
    expect(t2.decisions().map((d) => [d.decision, d.reason.split(" (")[0]])).toEqual([
      ["allow", "allowed in this project"],
      ["deny", "pushing publishes commits"],
    ]);
  });

  it("without a grantsFile the prompt offers no 'always', and 'a' keeps meaning this session", async () => {
    const term = terminal("a\n");
    t = await createTestHarness({
      plugins: [askPush, createPermissionsPlugin({ io: term.io })],
      tools,
      script: [push("c1"), push("c2"), "done"],
    });
    await t.prompt("push");
    expect(term.shown()).not.toContain("[a] always");
    expect(t.decisions().map((d) => d.reason)).toEqual([
      "allowed for this session at the prompt",
      expect.stringMatching(/^allowed for this session \(granted /),
    ]);
  });
});

describe("modes mean what they say, whatever the other gates allow", () => {
  /** A gate with allow rules for everything, as a project's policy can have. */
  const allowAll = definePlugin({
    name: "project-policy",
    setup(rein) {
      rein.hooks.toolGate.tap("project-policy", () => ({
        decision: "allow",
        rule: "all",
        reason: "allowed",
      }));
    },
  });
  const denyAll = definePlugin({
    name: "house-deny",
    setup(rein) {
      rein.hooks.toolGate.tap("house-deny", () => ({ decision: "deny", rule: "no", reason: "denied" }));
    },
  });

  it("plan: an allow rule does not run a write, an exec or an unknown-risk call; reads still run", async () => {
    t = await createTestHarness({
      plugins: [allowAll, [permissions, { mode: "plan" }]],
      tools,
      script: [
        {
          toolCalls: [
            { id: "a", name: "bash", args: { command: "touch pwned" } },
            { id: "b", name: "write", args: { path: "x" } },
            { id: "c", name: "misc", args: {} },
            { id: "d", name: "read", args: { path: "x" } },
          ],
        },
        "done",
      ],
    });
    await t.prompt("go");
    expect(executed).toEqual([]);
    expect(t.decisions().map((d) => [d.decision, d.by])).toEqual([
      ["deny", "permissions"],
      ["deny", "permissions"],
      ["deny", "permissions"],
      ["allow", "project-policy:all"],
    ]);
    expect(t.decisions()[0]?.reason).toContain('permission mode "plan" is read-only');
  });

  it.each(["acceptEdits", "sandboxed"] as const)("%s never loosens a gate's deny", async (mode) => {
    t = await createTestHarness({
      plugins: [denyAll, [permissions, { mode }]],
      tools,
      script: [{ toolCalls: [{ id: "a", name: "bash", args: { command: "echo hi" } }] }, "done"],
    });
    await t.prompt("go");
    expect(executed).toEqual([]);
    expect(t.decisions()[0]).toMatchObject({ decision: "deny" });
  });
});
