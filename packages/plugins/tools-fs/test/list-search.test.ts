import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { call, fsTools, tempDir, textOf, writeFiles } from "./helpers.js";

function project() {
  const root = tempDir();
  writeFiles(root, {
    "README.md": "# Demo\n",
    ".env.example": "KEY=\n",
    "src/index.ts": 'export const a = 1;\nexport function hello() {\n  return "Hello";\n}\n',
    "src/util/strings.ts": "// TODO: trim\nexport const pad = (s: string) => s;\n",
    "src/util/strings.test.ts": 'import { pad } from "./strings.js";\n',
    "docs/guide.md": "Intro\nsee TODO list\n",
    "node_modules/dep/index.ts": "// TODO: dependency\n",
    ".git/config": "TODO\n",
  });
  mkdirSync(join(root, "empty"));
  return root;
}

describe("ls", () => {
  it("lists a directory sorted, hidden entries included, directories marked with /", async () => {
    const root = project();
    const result = await call(fsTools().ls, {}, root);
    expect(textOf(result)).toBe(
      [".env.example", ".git/", "README.md", "docs/", "empty/", "node_modules/", "src/"].join("\n"),
    );
    expect(textOf(await call(fsTools().ls, { path: "src/util" }, root))).toBe("strings.test.ts\nstrings.ts");
    expect(textOf(await call(fsTools().ls, { path: "empty" }, root))).toBe("(empty is empty)");
  });

  it("caps the listing and notes how many entries were left out", async () => {
    const root = project();
    const result = await call(fsTools().ls, { limit: 2 }, root);
    expect(textOf(result)).toBe(
      ".env.example\n.git/\n\n[truncated: showing 2 of 7 entries (limit 2 entries); raise limit or use find with a pattern]",
    );
    expect(result.details).toMatchObject({ total: 7, shown: 2, truncated: true });
  });

  it("refuses to list a file", async () => {
    const root = project();
    const result = await call(fsTools().ls, { path: "README.md" }, root);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("is not a directory");
  });
});

describe("find", () => {
  it("matches a bare name glob at any depth, skipping .git and node_modules", async () => {
    const root = project();
    const result = await call(fsTools().find, { pattern: "*.ts" }, root);
    expect(textOf(result)).toBe(
      ["src/index.ts", "src/util/strings.test.ts", "src/util/strings.ts"].join("\n"),
    );
  });

  it("matches path globs with ** and braces, relative to the search path", async () => {
    const root = project();
    expect(textOf(await call(fsTools().find, { pattern: "src/**/*.test.ts" }, root))).toBe(
      "src/util/strings.test.ts",
    );
    expect(textOf(await call(fsTools().find, { pattern: "**/*.{md,example}" }, root))).toBe(
      [".env.example", "README.md", "docs/guide.md"].join("\n"),
    );
    expect(textOf(await call(fsTools().find, { pattern: "util/*.ts", path: "src" }, root))).toBe(
      ["src/util/strings.test.ts", "src/util/strings.ts"].join("\n"),
    );
  });

  it("caps the results with a note of how many matched", async () => {
    const root = tempDir();
    writeFiles(root, Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`f${100 + i}.txt`, ""])));
    const result = await call(fsTools().find, { pattern: "*.txt", limit: 5 }, root);
    const text = textOf(result);
    expect(text.split("\n").slice(0, 5)).toEqual([
      "f100.txt",
      "f101.txt",
      "f102.txt",
      "f103.txt",
      "f104.txt",
    ]);
    expect(text).toContain("[truncated: showing 5 of 30 files (limit 5 results)");
    expect(result.details).toMatchObject({ total: 30, shown: 5, truncated: true });
  });

  it("says when nothing matches", async () => {
    const root = project();
    const result = await call(fsTools().find, { pattern: "*.rs" }, root);
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe('No files match "*.rs" in .');
  });
});

describe("grep", () => {
  it("finds regex matches across files as path:line:text, skipping .git and node_modules", async () => {
    const root = project();
    const result = await call(fsTools().grep, { pattern: "TODO" }, root);
    expect(textOf(result)).toBe(
      ["docs/guide.md:2:see TODO list", "src/util/strings.ts:1:// TODO: trim"].join("\n"),
    );
    expect(result.details).toMatchObject({ matches: 2, files: 2, truncated: false });
  });

  it("shows context lines before and after, with -- between separate groups", async () => {
    const root = tempDir();
    writeFiles(root, {
      "log.txt": ["a", "b", "MATCH one", "c", "d", "e", "f", "MATCH two", "g", "MATCH three", "h"].join("\n"),
    });
    const result = await call(fsTools().grep, { pattern: "^MATCH", context: 1 }, root);
    expect(textOf(result)).toBe(
      [
        "log.txt-2-b",
        "log.txt:3:MATCH one",
        "log.txt-4-c",
        "--",
        "log.txt-7-f",
        "log.txt:8:MATCH two",
        "log.txt-9-g",
        "log.txt:10:MATCH three",
        "log.txt-11-h",
      ].join("\n"),
    );
    const beforeOnly = await call(fsTools().grep, { pattern: "three", before: 2, after: 0 }, root);
    expect(textOf(beforeOnly)).toBe(
      ["log.txt-8-MATCH two", "log.txt-9-g", "log.txt:10:MATCH three"].join("\n"),
    );
  });

  it("supports ignoreCase, literal text, a glob filter and a single file path", async () => {
    const root = project();
    expect(
      textOf(await call(fsTools().grep, { pattern: "hello", ignoreCase: true, glob: "*.ts" }, root)),
    ).toBe(["src/index.ts:2:export function hello() {", 'src/index.ts:3:  return "Hello";'].join("\n"));
    expect(textOf(await call(fsTools().grep, { pattern: "(s: string)", literal: true }, root))).toBe(
      "src/util/strings.ts:2:export const pad = (s: string) => s;",
    );
    expect(textOf(await call(fsTools().grep, { pattern: "Intro", path: "docs/guide.md" }, root))).toBe(
      "docs/guide.md:1:Intro",
    );
  });

  it("stops at the match limit with a note", async () => {
    const root = tempDir();
    writeFiles(root, { "many.txt": Array.from({ length: 50 }, (_, i) => `hit ${i + 1}`).join("\n") });
    const result = await call(fsTools().grep, { pattern: "hit", limit: 3 }, root);
    expect(textOf(result)).toBe(
      [
        "many.txt:1:hit 1",
        "many.txt:2:hit 2",
        "many.txt:3:hit 3",
        "",
        "[truncated: stopped at the limit of 3 matching lines; there may be more: narrow the pattern, path or glob, or raise limit]",
      ].join("\n"),
    );
    expect(result.details).toMatchObject({ matches: 3, truncated: true });
  });

  it("cuts output at the byte limit with a note", async () => {
    const root = tempDir();
    writeFiles(root, { "many.txt": Array.from({ length: 50 }, (_, i) => `hit ${i + 1}`).join("\n") });
    const result = await call(fsTools({ maxBytes: 40 }).grep, { pattern: "hit" }, root);
    expect(textOf(result)).toBe(
      [
        "many.txt:1:hit 1",
        "many.txt:2:hit 2",
        "",
        "[truncated: output cut at the 40 B limit after 2 of 50 lines; narrow the search]",
      ].join("\n"),
    );
  });

  it("reports an invalid regular expression and suggests literal", async () => {
    const root = project();
    const result = await call(fsTools().grep, { pattern: "foo(" }, root);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('invalid regular expression "foo("');
    expect(textOf(result)).toContain("set literal to true");
  });

  it("skips binary files and says when nothing matches", async () => {
    const root = tempDir();
    writeFiles(root, { "bin.dat": Buffer.from([0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65, 0, 1]) });
    const result = await call(fsTools().grep, { pattern: "needle" }, root);
    expect(textOf(result)).toBe('No matches for "needle" in .');
    expect(result.details).toMatchObject({ matches: 0, skipped: 1 });
  });
});
