import { existsSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { call, fsTools, tempDir, textOf, writeFiles } from "./helpers.js";

/** A root with a.txt, and a separate directory outside it holding secret.txt. */
function setup() {
  const root = tempDir("rein-root-");
  const outside = tempDir("rein-outside-");
  writeFiles(root, { "a.txt": "inside\n", "sub/b.txt": "b\n" });
  writeFiles(outside, { "secret.txt": "top secret\n" });
  return { root, outside, tools: fsTools() };
}

describe("confinement to the root", () => {
  it("refuses a relative path that climbs out with ..", async () => {
    const { root, tools } = setup();
    const result = await call(tools.read, { path: "../x" }, root);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(`path "../x" is outside the root ${root}`);
  });

  it("refuses .. hidden in the middle of a path", async () => {
    const { root, tools } = setup();
    const result = await call(tools.read, { path: "sub/../../a.txt" }, root);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("is outside the root");
  });

  it("refuses an absolute path outside the root, for every tool", async () => {
    const { root, outside, tools } = setup();
    const secret = join(outside, "secret.txt");
    const attempts: [string, Record<string, unknown>][] = [
      ["read", { path: secret }],
      ["write", { path: join(outside, "new.txt"), content: "x" }],
      ["edit", { path: secret, oldText: "top", newText: "no" }],
      ["ls", { path: outside }],
      ["find", { pattern: "*", path: outside }],
      ["grep", { pattern: "secret", path: outside }],
    ];
    for (const [name, args] of attempts) {
      const result = await call(tools[name], args, root);
      expect(result.isError, name).toBe(true);
      expect(textOf(result), name).toContain(`is outside the root ${root}`);
    }
    expect(existsSync(join(outside, "new.txt"))).toBe(false);
    expect(readFileSync(secret, "utf8")).toBe("top secret\n");
  });

  it("accepts an absolute path inside the root", async () => {
    const { root, tools } = setup();
    const result = await call(tools.read, { path: join(root, "a.txt") }, root);
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe("inside");
  });

  it("refuses a symlinked file that points outside, for reading and writing", async () => {
    const { root, outside, tools } = setup();
    symlinkSync(join(outside, "secret.txt"), join(root, "link.txt"));
    const read = await call(tools.read, { path: "link.txt" }, root);
    expect(read.isError).toBe(true);
    expect(textOf(read)).toContain(`resolves through a symbolic link to ${join(outside, "secret.txt")}`);
    expect(textOf(read)).toContain(`outside the root ${root}`);
    expect(textOf(read)).not.toContain("top secret");

    const write = await call(tools.write, { path: "link.txt", content: "overwritten" }, root);
    expect(write.isError).toBe(true);
    const edit = await call(tools.edit, { path: "link.txt", oldText: "top", newText: "no" }, root);
    expect(edit.isError).toBe(true);
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("top secret\n");
  });

  it("refuses a path through a symlinked directory that points outside, even for a new file", async () => {
    const { root, outside, tools } = setup();
    symlinkSync(outside, join(root, "out"));
    const read = await call(tools.read, { path: "out/secret.txt" }, root);
    expect(read.isError).toBe(true);
    expect(textOf(read)).toContain("outside the root");

    const write = await call(tools.write, { path: "out/new/deeper.txt", content: "x" }, root);
    expect(write.isError).toBe(true);
    expect(textOf(write)).toContain("outside the root");
    expect(existsSync(join(outside, "new"))).toBe(false);

    for (const [name, args] of [
      ["ls", { path: "out" }],
      ["find", { pattern: "*", path: "out" }],
      ["grep", { pattern: "secret", path: "out" }],
    ] as const) {
      const result = await call(tools[name], args, root);
      expect(result.isError, name).toBe(true);
      expect(textOf(result), name).toContain("outside the root");
    }
  });

  it("refuses to write through a dangling symlink whose target would be outside", async () => {
    const { root, outside, tools } = setup();
    symlinkSync(join(outside, "not-yet.txt"), join(root, "dangling.txt"));
    const write = await call(tools.write, { path: "dangling.txt", content: "x" }, root);
    expect(write.isError).toBe(true);
    expect(textOf(write)).toContain("outside the root");
    expect(existsSync(join(outside, "not-yet.txt"))).toBe(false);
  });

  it("follows symlinks that stay inside the root", async () => {
    const { root, tools } = setup();
    symlinkSync(join(root, "sub"), join(root, "alias"));
    const result = await call(tools.read, { path: "alias/b.txt" }, root);
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe("b");
  });

  it("accepts absolute paths in either spelling when the root itself is reached through a symlink", async () => {
    const { root, tools } = setup();
    const holder = tempDir("rein-holder-");
    const linkedRoot = join(holder, "project");
    symlinkSync(root, linkedRoot);
    for (const path of [join(linkedRoot, "a.txt"), join(root, "a.txt"), "a.txt"]) {
      const result = await call(tools.read, { path }, linkedRoot);
      expect(result.isError, path).toBeFalsy();
      expect(textOf(result)).toBe("inside");
    }
  });

  it("confines to the configured root, relative to the working directory", async () => {
    const { root } = setup();
    const tools = fsTools({ root: "sub" });
    const escaped = await call(tools.read, { path: "../a.txt" }, root);
    expect(escaped.isError).toBe(true);
    expect(textOf(escaped)).toBe(`path "../a.txt" is outside the root ${join(root, "sub")}`);
    const ok = await call(tools.read, { path: "b.txt" }, root);
    expect(textOf(ok)).toBe("b");
  });

  it("says so when the root does not exist", async () => {
    const { root } = setup();
    const result = await call(fsTools({ root: "missing" }).ls, {}, root);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(`the root directory ${join(root, "missing")} does not exist`);
  });

  it("never leaks file contents through grep or find via symlinks leading outside", async () => {
    const { root, outside, tools } = setup();
    symlinkSync(join(outside, "secret.txt"), join(root, "link.txt"));
    symlinkSync(outside, join(root, "out"));
    const grep = await call(tools.grep, { pattern: "secret" }, root);
    expect(textOf(grep)).not.toContain("top secret");
    expect(grep.details).toMatchObject({ matches: 0 });
    const find = await call(tools.find, { pattern: "*.txt" }, root);
    expect(textOf(find).split("\n")).not.toContain("out/secret.txt");
  });

  it("refuses glob patterns that leave the search directory", async () => {
    const { root, tools } = setup();
    for (const pattern of ["../*", "sub/../../*", "/etc/*"]) {
      const result = await call(tools.find, { pattern }, root);
      expect(result.isError, pattern).toBe(true);
    }
    const grep = await call(tools.grep, { pattern: "x", glob: "../**" }, root);
    expect(grep.isError).toBe(true);
  });
});
