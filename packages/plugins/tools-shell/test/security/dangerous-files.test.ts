/**
 * Files that run code outside the sandbox later (shell rc files, git hooks and
 * config, editor settings) stay unwritable inside the writable root, also when
 * they appear BETWEEN two sandboxed commands: the runtime's scan for them (a
 * ripgrep run of @anthropic-ai/sandbox-runtime's own) runs again for every command,
 * nothing is carried over from the first call. The runtime scans its process's working directory, so
 * these tests run with the process in the tool root, as `rein` runs.
 */
import {
  appendFileSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { releaseRuntimeIfIdle } from "../../src/index.js";
import { run, tempDir, textOf } from "../helpers.js";

afterAll(() => releaseRuntimeIfIdle());

let root: string;
let before: string;
beforeEach(() => {
  before = process.cwd();
  root = tempDir();
  process.chdir(root);
});
afterEach(() => process.chdir(before));

/** Creates `relative` (and its directories) on the host with `content`. */
function plant(relative: string, content: string): string {
  const path = join(root, relative);
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, content);
  return path;
}

const ORIGINAL = "# original\n";

describe("dangerous files that appear between two sandboxed commands are protected", () => {
  const ROWS: [label: string, file: string][] = [
    ["a nested shell rc file", "sub/.bashrc"],
    ["a nested rc file in odd case", "sub/.BashRC"],
    ["a repository initialised meanwhile: its hook", ".git/hooks/pre-commit"],
    ["a cloned repo's git config", "vendor/.git/config"],
    ["editor settings", "app/.vscode/settings.json"],
    ["a .mcp.json two levels down", "a/b/.mcp.json"],
  ];
  it.each(ROWS)("%s (%s)", async (_label, file) => {
    // The first command sees a tree without it.
    const first = await run("echo first > ok.txt", root);
    expect(first.isError, textOf(first)).toBe(false);
    const path = plant(file, ORIGINAL);
    const second = await run(`echo pwned >> '${file}'; echo pwned > '${file}'; rm -f '${file}'`, root);
    expect(readFileSync(path, "utf8"), textOf(second)).toBe(ORIGINAL);
    // The rest of the root stays writable.
    expect(readFileSync(join(root, "ok.txt"), "utf8")).toBe("first\n");
  });

  it("a directory swapped for a symlink between commands: the rc file it leads to is protected under either name", async () => {
    const rc = plant("real/.bashrc", ORIGINAL);
    mkdirSync(join(root, "sub"));
    const first = await run("true", root);
    expect(first.isError, textOf(first)).toBe(false);
    rmSync(join(root, "sub"), { recursive: true });
    symlinkSync(join(root, "real"), join(root, "sub"));
    const second = await run("echo pwned >> sub/.bashrc; echo pwned >> real/.bashrc", root);
    expect(readFileSync(rc, "utf8"), textOf(second)).toBe(ORIGINAL);
    expect(lstatSync(join(root, "sub")).isSymbolicLink()).toBe(true);
  });

  it("Rein's state swapped for a symlink between commands: the command is refused, nothing is written", async () => {
    mkdirSync(join(root, ".rein", "sessions"), { recursive: true });
    mkdirSync(join(root, "elsewhere"));
    const first = await run("true", root);
    expect(first.isError, textOf(first)).toBe(false);
    rmSync(join(root, ".rein"), { recursive: true });
    symlinkSync(join(root, "elsewhere"), join(root, ".rein"));
    const second = await run("rm -f .rein; mkdir .rein; echo pwned > .rein/grants.json", root);
    expect(second.isError).toBe(true);
    expect(textOf(second)).toMatch(/symbolic link/);
    expect(lstatSync(join(root, ".rein")).isSymbolicLink()).toBe(true);
    expect(readdirSync(join(root, "elsewhere"))).toEqual([]);
  });

  it("a tree of 600 directories: the scan still finds the rc file and protects it", async () => {
    for (let i = 0; i < 600; i++) mkdirSync(join(root, "many", `d${i}`), { recursive: true });
    const rc = plant("many/d599/.zshrc", ORIGINAL);
    const result = await run("echo pwned >> many/d599/.zshrc", root);
    expect(readFileSync(rc, "utf8"), textOf(result)).toBe(ORIGINAL);
  });

  it("the command's own new files, and rc files deeper than the scan, are ordinary files", async () => {
    const deep = plant("a/b/c/.bashrc", ORIGINAL);
    const result = await run("echo more >> a/b/c/.bashrc; mkdir -p x && echo fine > x/y.txt", root);
    expect(result.isError, textOf(result)).toBe(false);
    // Depth 4 is past the runtime's scan depth (3).
    expect(readFileSync(deep, "utf8")).toBe(`${ORIGINAL}more\n`);
    expect(readFileSync(join(root, "x", "y.txt"), "utf8")).toBe("fine\n");
    appendFileSync(deep, ""); // still an ordinary file on the host
  });
});
