import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { definePlugin, defineTool, type ToolCallFacts, Type } from "@rein/sdk";
import { checkToolCall, createTestHarness, type TestHarness } from "@rein/sdk/testing";
import { afterEach, describe, expect, it } from "vitest";
import houseRules from "../src/index.js";

const written: string[] = [];
const writeFile = defineTool({
  name: "write",
  description: "Write a file",
  risk: "write",
  parameters: Type.Object({ path: Type.String(), content: Type.String() }),
  paths: { path: "file" },
  execute: (args) => {
    written.push(args.path);
    return { content: [{ type: "text", text: `wrote ${args.path}` }] };
  },
});
/**
 * A bash stand-in whose `inspect` gives `facts.command` in the shape @rein/sdk/shell
 * produces (split on ; && || |, `sudo` unwrapped, `$(` or backticks unknown), so
 * these tests pin the plugin, not a parser.
 */
const bash = defineTool({
  name: "bash",
  description: "Run a shell command",
  risk: "exec",
  parameters: Type.Object({ command: Type.String() }),
  inspect: (args) => {
    const unknown = /\$\(|`/.test(args.command)
      ? [{ reason: "command substitution", text: args.command }]
      : [];
    const commands = args.command
      .split(/&&|\|\||;|\|/)
      .map((part) => part.trim().split(/\s+/).filter(Boolean))
      .filter((argv) => argv.length > 0)
      .map((argv) => {
        const wrappers = argv[0] === "sudo" ? [argv.shift() as string] : [];
        return { argv, assignments: [], redirections: [], wrappers };
      });
    return { command: { source: args.command, commands, unknown } } as unknown as ToolCallFacts;
  },
  execute: (args) => ({ content: [{ type: "text", text: `ran ${args.command}` }] }),
});

/** Stands in for the operator answering the permission prompt. */
const operator = (decision: "allow" | "deny") =>
  definePlugin({
    name: "operator",
    setup(rein) {
      rein.hooks.permissionAsk.tap("operator", () => ({ decision, reason: `operator said ${decision}` }));
    },
  });

let t: TestHarness | undefined;
afterEach(async () => {
  await t?.dispose();
  t = undefined;
  written.length = 0;
});

describe("house-rules", () => {
  it("declares every rule its verdicts can carry (for rein plugins and coverage)", async () => {
    t = await createTestHarness({ plugins: [houseRules], tools: [writeFile] });
    expect(t.host.plugins[0]?.rules).toEqual([
      "house-rules:write-without-path",
      "house-rules:outside-writable-roots",
      "house-rules:not-understood",
      "house-rules:ask-before",
    ]);
  });

  it("has no opinion on writes inside src/, so the harness default (allow) applies", async () => {
    t = await createTestHarness({ plugins: [houseRules], tools: [writeFile] });
    const verdict = await checkToolCall(t, { name: "write", args: { path: "src/a.ts", content: "" } });
    expect(verdict).toMatchObject({ decision: "allow", by: "harness:default" });
  });

  it("denies writes outside src/, naming the rule", async () => {
    t = await createTestHarness({ plugins: [houseRules], tools: [writeFile] });
    const verdict = await checkToolCall(t, { name: "write", args: { path: "package.json", content: "" } });
    expect(verdict).toMatchObject({ decision: "deny", by: "house-rules:outside-writable-roots" });
  });

  it("denies a path that escapes src/ with ..", async () => {
    t = await createTestHarness({ plugins: [houseRules], tools: [writeFile] });
    const verdict = await checkToolCall(t, { name: "write", args: { path: "src/../.env", content: "" } });
    expect(verdict.decision).toBe("deny");
  });

  it("decides on canonical paths: a link inside src/ to ../.env is outside", async () => {
    const cwd = realpathSync(mkdtempSync(join(tmpdir(), "house-rules-")));
    mkdirSync(join(cwd, "src"));
    writeFileSync(join(cwd, ".env"), "");
    symlinkSync("../.env", join(cwd, "src/cfg"));
    t = await createTestHarness({ plugins: [houseRules], tools: [writeFile], config: { cwd } });
    const verdict = await t.checkToolCall({ name: "write", args: { path: "src/cfg", content: "" } });
    expect(verdict).toMatchObject({ decision: "deny", by: "house-rules:outside-writable-roots" });
    expect(verdict.facts.paths?.[0]).toMatchObject({ input: "src/cfg", relative: ".env" });
    expect(verdict.reason).toBe("src/cfg (really .env) is outside src");
  });

  it("asks about git push wherever it hides in a compound command or behind sudo", async () => {
    t = await createTestHarness({ plugins: [houseRules], tools: [bash] });
    for (const command of ["git status && git push", "sudo git push", "/usr/bin/git -C x push origin"]) {
      const verdict = await t.checkToolCall({ name: "bash", args: { command } }, { skipPermission: true });
      expect(verdict, command).toMatchObject({ decision: "ask", by: "house-rules:ask-before" });
    }
    const hidden = await t.checkToolCall(
      { name: "bash", args: { command: "echo $(git push)" } },
      { skipPermission: true },
    );
    expect(hidden).toMatchObject({ decision: "ask", by: "house-rules:not-understood" });
  });

  it("honours configured writable roots", async () => {
    t = await createTestHarness({ plugins: [[houseRules, { writableRoots: ["docs"] }]], tools: [writeFile] });
    expect(
      (await t.checkToolCall({ name: "write", args: { path: "docs/x.md", content: "" } })).decision,
    ).toBe("allow");
    expect((await t.checkToolCall({ name: "write", args: { path: "src/x.ts", content: "" } })).decision).toBe(
      "deny",
    );
  });

  it("asks before git push, and denies when nobody answers", async () => {
    t = await createTestHarness({ plugins: [houseRules], tools: [bash] });
    const probe = { name: "bash", args: { command: "git push origin main" } };
    expect(await t.checkToolCall(probe, { skipPermission: true })).toMatchObject({
      decision: "ask",
      by: "house-rules:ask-before",
    });
    expect(await t.checkToolCall(probe)).toMatchObject({ decision: "deny", by: "house-rules:ask-before" });
  });

  it("lets the permission handler answer the ask", async () => {
    t = await createTestHarness({ plugins: [houseRules, operator("allow")], tools: [bash] });
    const verdict = await t.checkToolCall({ name: "bash", args: { command: "git push" } });
    expect(verdict).toMatchObject({ decision: "allow", by: "operator", askedBy: "house-rules:ask-before" });
  });

  it("leaves other shell commands alone", async () => {
    t = await createTestHarness({ plugins: [houseRules], tools: [bash] });
    expect((await t.checkToolCall({ name: "bash", args: { command: "git status" } })).by).toBe(
      "harness:default",
    );
  });

  it("blocks a denied write in a real run: the tool never executes and the model reads why", async () => {
    t = await createTestHarness({
      plugins: [houseRules],
      tools: [writeFile],
      script: [
        { toolCalls: [{ name: "write", args: { path: "/etc/passwd", content: "x" } }] },
        { toolCalls: [{ name: "write", args: { path: "src/ok.ts", content: "x" } }] },
        "done",
      ],
    });
    const outcome = await t.prompt("edit files");
    expect(outcome.status).toBe("completed");
    expect(written).toEqual(["src/ok.ts"]);
    expect(t.decisions().map((d) => [d.decision, d.by])).toEqual([
      ["deny", "house-rules:outside-writable-roots"],
      ["allow", "harness:default"],
    ]);
    const secondRequest = t.requests[1];
    expect(JSON.stringify(secondRequest?.context.messages.at(-1))).toContain("outside src");
  });

  it("rejects options of the wrong type at load time", async () => {
    await expect(
      createTestHarness({ plugins: [[houseRules, { writableRoots: "src" }]] }),
    ).rejects.toMatchObject({
      code: "invalid_options",
      plugin: "house-rules",
      path: "/writableRoots",
    });
  });
});
