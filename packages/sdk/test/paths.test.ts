/** The one canonical path resolver and `defineTool({ paths })` (security invariant 2). */
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { defineTool, inspectPaths, isSdkError, pathRoot, resolvePath, Type } from "../src/index.js";

function tree() {
  const real = realpathSync(mkdtempSync(join(tmpdir(), "rein-paths-")));
  const outside = realpathSync(mkdtempSync(join(tmpdir(), "rein-paths-out-")));
  mkdirSync(join(real, "app/src"), { recursive: true });
  writeFileSync(join(real, ".env"), "");
  writeFileSync(join(real, "app/.env"), "");
  symlinkSync(".env", join(real, "env-link"));
  symlinkSync("../../.env", join(real, "app/src/up"));
  symlinkSync(join(outside, "later.txt"), join(real, "dangling"));
  symlinkSync("loop-b", join(real, "loop-a"));
  symlinkSync("loop-a", join(real, "loop-b"));
  const holder = realpathSync(mkdtempSync(join(tmpdir(), "rein-paths-link-")));
  symlinkSync(real, join(holder, "work"));
  return { real, outside, linked: join(holder, "work") };
}

describe("resolvePath: every spelling of a file gives one canonical answer", () => {
  const w = tree();
  const CASES: [string, string, string | undefined, string, boolean][] = [
    // label, cwd, tool root, input -> relative, inside
    ["the file", w.real, undefined, ".env", true],
    ["a symlink to it", w.real, undefined, "env-link", true],
    ["dot-dot", w.real, undefined, "app/../.env", true],
    ["a symlink climbing two levels", w.real, undefined, "app/src/up", true],
    ["the symlinked cwd's spelling", w.linked, undefined, ".env", true],
    ["the real path from a symlinked cwd", w.linked, undefined, join(w.real, ".env"), true],
    ["a root in a subfolder: its own .env", w.real, "app", ".env", true],
    ["a root in a subfolder: climbing out", w.real, "app", "../.env", false],
  ];
  const expected: Record<string, string> = {
    "a root in a subfolder: its own .env": "app/.env",
  };
  it.each(CASES)("%s", (label, cwd, root, input, inside) => {
    const [fact] = inspectPaths({ path: input }, { path: "file" }, { cwd, root });
    const relative = expected[label] ?? ".env";
    expect(fact).toMatchObject({
      arg: "path",
      kind: "file",
      input,
      relative,
      inside,
      absolute: join(w.real, relative),
    });
  });

  it("follows a dangling symlink to where it would lead", () => {
    const fact = resolvePath(pathRoot(w.real), "dangling");
    expect(fact).toMatchObject({ absolute: join(w.outside, "later.txt"), inside: false });
  });

  it("walks without a path resolve to the root itself", () => {
    expect(inspectPaths({}, { path: "walk" }, { cwd: w.real })).toEqual([
      {
        arg: "path",
        kind: "walk",
        input: ".",
        absolute: w.real,
        relative: ".",
        inside: true,
        lexical: w.real,
        root: w.real,
      },
    ]);
    expect(inspectPaths({}, { path: "file" }, { cwd: w.real })).toEqual([]);
  });

  it("an array of paths gives one canonical fact per element, in order; a non-string element is invalid_path", () => {
    const facts = inspectPaths(
      { paths: ["env-link", "app/src/up", "app/.env"] },
      { paths: "file" },
      { cwd: w.real },
    );
    expect(facts.map((fact) => [fact.arg, fact.input, fact.relative, fact.inside])).toEqual([
      ["paths", "env-link", ".env", true],
      ["paths", "app/src/up", ".env", true],
      ["paths", "app/.env", "app/.env", true],
    ]);
    let caught: unknown;
    try {
      inspectPaths({ paths: ["ok", 7] }, { paths: "file" }, { cwd: w.real });
    } catch (error) {
      caught = error;
    }
    expect(isSdkError(caught, "invalid_path")).toBe(true);
  });

  const ODD: [string, unknown][] = [
    ["a 5,000-character path", "a/".repeat(2500)],
    ["a 300-byte name", "x".repeat(300)],
    ["a NUL byte", "a\u0000b"],
    ["a symlink loop", "loop-a/x"],
    ["not a string", 42],
  ];
  it.each(ODD)("refuses %s with invalid_path", (_label, input) => {
    let caught: unknown;
    try {
      resolvePath(pathRoot(w.real), input);
    } catch (error) {
      caught = error;
    }
    expect(isSdkError(caught, "invalid_path")).toBe(true);
    expect((caught as Error).message).not.toMatch(/ENAMETOOLONG|ELOOP/);
  });
});

describe("defineTool({ paths })", () => {
  const base = {
    name: "open",
    description: "Open a file",
    parameters: Type.Object({ path: Type.String(), mode: Type.Optional(Type.String()) }),
    execute: () => ({ content: [] }),
  };

  it("generates an inspect that resolves the declared arguments, merged with the tool's own facts", async () => {
    const w = tree();
    const tool = defineTool({ ...base, paths: { path: "file" }, inspect: () => ({ extra: 1 }) as never });
    const facts = (await tool.inspect?.({ path: "env-link" }, { cwd: w.real, sessionId: "s" })) as Record<
      string,
      unknown
    >;
    expect(facts.extra).toBe(1);
    expect(facts.paths).toEqual([
      {
        arg: "path",
        kind: "file",
        input: "env-link",
        absolute: join(w.real, ".env"),
        relative: ".env",
        inside: true,
        // As the tool resolved it (no symlink followed), and the root rules are also matched against.
        lexical: join(w.real, "env-link"),
        root: w.real,
      },
    ]);
  });

  const BAD: [string, Record<string, unknown>][] = [
    ["a kind that is neither file nor walk", { paths: { path: "dir" } }],
    ["an argument the schema does not have", { paths: { target: "file" } }],
    ["paths that are not an object", { paths: "path" }],
    ["a non-string pathRoot", { paths: { path: "file" }, pathRoot: 3 }],
  ];
  it.each(BAD)("refuses %s", (_label, extra) => {
    expect(() => defineTool({ ...base, ...extra } as never)).toThrow(
      expect.objectContaining({ code: "invalid_tool", tool: "open" }),
    );
  });
});
