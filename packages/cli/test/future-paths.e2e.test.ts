/**
 * What Rein or git reads later as code or config, attacked through the built
 * binary with the sandboxed shell and the file tools in the permissive modes
 * (`sandboxed`, `acceptEdits`): `.git` redirection (`commondir`, `config`, a
 * worktree's `.git` file), reading the grant key through `REIN_CONFIG_DIR` /
 * `XDG_CONFIG_HOME`, and `plan` mode against allow rules. Each asserts the real
 * effect on the host: nothing planted, no secret in any output, no marker.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, project, rein } from "./support/rein-process.js";

afterAll(cleanup);

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd, encoding: "utf8" });

/** A config (JSON) whose scripted model makes these tool calls, with the shell and file tools. */
const config = (calls: { name: string; args: Record<string, unknown> }[], extra: unknown[] = []) =>
  JSON.stringify({
    model: { script: [{ toolCalls: calls }, "done"] },
    plugins: [["@rein/tools-shell", {}], FS_TOOLS, ...extra],
  });

/** @rein/tools-fs is not a dependency of the CLI: loaded from the workspace by path. */
const FS_TOOLS = join(dirname(fileURLToPath(import.meta.url)), "../../plugins/tools-fs/dist/index.js");

/** `tool:decision` of every call in a `--json` run. */
const decisionsOf = (stdout: string) =>
  stdout
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { type: string; decision?: string; toolName?: string })
    .filter((event) => event.type === "tool_decision")
    .map((event) => `${event.toolName}:${event.decision}`);

const bash = (command: string) => ({ name: "bash", args: { command } });
const FSMONITOR = "[core]\n\tfsmonitor = touch pwned\n";

describe("what git reads later is not writable, in every mode", { timeout: 90_000 }, () => {
  it.each(["sandboxed", "acceptEdits"])(
    "%s: commondir, config and hooks stay as they were; the next git runs nothing",
    async (mode) => {
      const dir = project({});
      git(dir, "init", "-q");
      const before = readFileSync(join(dir, ".git/config"), "utf8");
      mkdirSync(join(dir, "evil"));
      writeFileSync(join(dir, "evil/config"), FSMONITOR);
      writeFileSync(
        join(dir, "rein.config.json"),
        config([
          bash("echo evil > .git/commondir"),
          bash(`printf '${FSMONITOR.replace(/\n/g, "\\n").replace(/\t/g, "\\t")}' >> .git/config`),
          bash("mv .git .git-old && mkdir .git && cp evil/config .git/config"),
          { name: "write", args: { path: ".git/config", content: FSMONITOR } },
          { name: "write", args: { path: ".git/hooks/pre-commit", content: "#!/bin/sh\ntouch pwned\n" } },
          { name: "edit", args: { path: ".git/config", oldText: "[core]", newText: FSMONITOR } },
        ]),
      );
      const result = await rein(["run", "--json", "--permission-mode", mode, "go"], dir);
      expect(result.code, result.stderr).toBe(0);
      // Every call ran (the shell in its sandbox in "sandboxed"; in "acceptEdits" only the
      // file tools run, the shell is asked and denied): the refusals are the boundaries'.
      expect(decisionsOf(result.stdout)).toEqual(
        mode === "sandboxed"
          ? ["bash:allow", "bash:allow", "bash:allow", "write:allow", "write:allow", "edit:allow"]
          : ["bash:deny", "bash:deny", "bash:deny", "write:allow", "write:allow", "edit:allow"],
      );
      expect(result.stdout).toContain("is protected (.git is Rein's or git's own state");
      if (mode === "sandboxed")
        expect(result.stdout).toContain(`Rein removed ${join(dir, ".git/commondir")}`);
      expect(readFileSync(join(dir, ".git/config"), "utf8")).toBe(before);
      expect(existsSync(join(dir, ".git/commondir"))).toBe(false);
      expect(existsSync(join(dir, ".git/hooks/pre-commit"))).toBe(false);
      expect(existsSync(join(dir, ".git-old"))).toBe(false);
      git(dir, "status", "--short");
      expect(existsSync(join(dir, "pwned"))).toBe(false);
    },
  );

  it("a worktree's .git file is read-only through the shell and the file tools", async () => {
    const main = project({ "a.txt": "a\n" });
    git(main, "init", "-q");
    git(main, "add", "a.txt");
    git(main, "commit", "-qm", "one");
    const tree = join(mkdtempSync(join(tmpdir(), "rein-wt-")), "w");
    git(main, "worktree", "add", "-q", tree);
    const pointer = readFileSync(join(tree, ".git"), "utf8");
    mkdirSync(join(tree, "evil"));
    writeFileSync(join(tree, "evil/config"), FSMONITOR);
    writeFileSync(
      join(tree, "rein.config.json"),
      config([
        bash(`echo "gitdir: ${join(tree, "evil")}" > .git`),
        bash(`rm -f .git; echo "gitdir: ${join(tree, "evil")}" > .git`),
        { name: "write", args: { path: ".git", content: `gitdir: ${join(tree, "evil")}\n` } },
      ]),
    );
    const result = await rein(["run", "--json", "--permission-mode", "sandboxed", "go"], tree);
    expect(result.code, result.stderr).toBe(0);
    expect(decisionsOf(result.stdout)).toEqual(["bash:allow", "bash:allow", "write:allow"]);
    expect(readFileSync(join(tree, ".git"), "utf8")).toBe(pointer);
    git(tree, "status", "--short");
    expect(existsSync(join(tree, "pwned"))).toBe(false);
  });
});

describe("the grant key is unreadable from the sandbox, wherever the config dir is", {
  timeout: 90_000,
}, () => {
  it.each([
    ["REIN_CONFIG_DIR", (base: string) => ({ REIN_CONFIG_DIR: join(base, "rein-dir") }), "rein-dir"],
    ["XDG_CONFIG_HOME", (base: string) => ({ XDG_CONFIG_HOME: base, REIN_CONFIG_DIR: "" }), "rein"],
  ])("%s", async (_label, envOf, sub) => {
    const base = mkdtempSync(join(tmpdir(), "rein-cfg-"));
    const configDir = join(base, sub);
    mkdirSync(configDir, { recursive: true });
    writeFileSync(join(configDir, "grant-key"), "SECRET-GRANT-KEY-0123\n");
    const dir = project({});
    writeFileSync(
      join(dir, "rein.config.json"),
      config([
        bash(`cat '${configDir}/grant-key'; ls -la '${configDir}'; grep -r SECRET '${base}'`),
        bash(`echo forged > '${configDir}/grant-key'`),
      ]),
    );
    const result = await rein(["run", "--json", "--permission-mode", "sandboxed", "go"], dir, {
      env: envOf(base),
    });
    expect(result.code, result.stderr).toBe(0);
    expect(decisionsOf(result.stdout)).toEqual(["bash:allow", "bash:allow"]);
    expect(result.stdout + result.stderr).not.toContain("SECRET-GRANT-KEY");
    expect(readFileSync(join(configDir, "grant-key"), "utf8")).toBe("SECRET-GRANT-KEY-0123\n");
  });
});

describe("plan is read-only whatever the lower layers allow", { timeout: 90_000 }, () => {
  const allowEverything = [
    "@rein/plugin-policy",
    {
      rules: [
        { id: "touch", rule: "bash(touch *)", decision: "allow", reason: "project allows touch" },
        { id: "rm", rule: "bash(rm *)", decision: "allow", reason: "project allows rm" },
        { id: "write", rule: "write(**)", decision: "allow", reason: "project allows writes" },
      ],
    },
  ];
  const calls = [
    bash("touch marker"),
    bash("rm keep.txt"),
    { name: "write", args: { path: "written.txt", content: "x" } },
    { name: "read", args: { path: "keep.txt" } },
  ];

  it.each([
    ["--permission-mode plan", ["--permission-mode", "plan"], undefined],
    ["a managed mode: plan", [], { plugins: [["@rein/plugin-permissions", { mode: "plan" }]] }],
  ])("%s", async (_label, flags, managed) => {
    const dir = project({ "keep.txt": "kept\n" });
    writeFileSync(
      join(dir, "rein.config.json"),
      config(calls, [allowEverything, ["@rein/plugin-permissions", { mode: "acceptEdits" }]]),
    );
    const env: Record<string, string> = {};
    if (managed !== undefined) {
      const file = join(mkdtempSync(join(tmpdir(), "rein-managed-")), "managed.json");
      writeFileSync(file, JSON.stringify(managed));
      env.REIN_MANAGED_CONFIG = file;
    }
    const result = await rein(["run", "--json", ...flags, "go"], dir, { env });
    expect(result.code, result.stderr).toBe(0);
    expect(existsSync(join(dir, "marker"))).toBe(false);
    expect(existsSync(join(dir, "written.txt"))).toBe(false);
    expect(readFileSync(join(dir, "keep.txt"), "utf8")).toBe("kept\n");
    expect(decisionsOf(result.stdout)).toEqual(["bash:deny", "bash:deny", "write:deny", "read:allow"]);
  });
});
