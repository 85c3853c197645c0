import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { call, fsTools, tempDir, textOf, writeFiles } from "./helpers.js";

describe("write", () => {
  it("creates a file and its missing parent directories", async () => {
    const root = tempDir();
    const result = await call(fsTools().write, { path: "deep/er/new.txt", content: "hello\n" }, root);
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe("Created deep/er/new.txt (6 B)");
    expect(result.details).toEqual({ path: "deep/er/new.txt", bytes: 6, created: true });
    expect(readFileSync(join(root, "deep/er/new.txt"), "utf8")).toBe("hello\n");
  });

  it("replaces an existing file whole", async () => {
    const root = tempDir();
    writeFiles(root, { "a.txt": "old content that is longer" });
    const result = await call(fsTools().write, { path: "a.txt", content: "new" }, root);
    expect(textOf(result)).toBe("Wrote a.txt (3 B)");
    expect(result.details).toMatchObject({ created: false });
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("new");
  });

  it("refuses to write over a directory", async () => {
    const root = tempDir();
    writeFiles(root, { "dir/x.txt": "" });
    const result = await call(fsTools().write, { path: "dir", content: "x" }, root);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe('path "dir" is a directory');
  });
});

describe("edit", () => {
  const source = ["function greet() {", '  return "hi";', "}", "", "greet();", ""].join("\n");

  it("replaces text that occurs once and puts a unified diff in details", async () => {
    const root = tempDir();
    writeFiles(root, { "src/a.ts": source });
    const result = await call(
      fsTools().edit,
      { path: "src/a.ts", oldText: '  return "hi";', newText: '  return "hello";' },
      root,
    );
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe("Edited src/a.ts: replaced 1 occurrence (line 2)");
    expect(readFileSync(join(root, "src/a.ts"), "utf8")).toBe(source.replace('"hi"', '"hello"'));
    const details = result.details as { diff: string; replacements: number; firstChangedLine: number };
    expect(details.replacements).toBe(1);
    expect(details.firstChangedLine).toBe(2);
    expect(details.diff).toBe(
      [
        "--- a/src/a.ts",
        "+++ b/src/a.ts",
        "@@ -1,5 +1,5 @@",
        " function greet() {",
        '-  return "hi";',
        '+  return "hello";',
        " }",
        " ",
        " greet();",
        "",
      ].join("\n"),
    );
  });

  it("says when the old text is not found, and leaves the file alone", async () => {
    const root = tempDir();
    writeFiles(root, { "a.ts": source });
    const result = await call(fsTools().edit, { path: "a.ts", oldText: 'return "hey";', newText: "x" }, root);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(
      "oldText was not found in a.ts; read the file again and copy the text exactly, including whitespace and indentation",
    );
    expect(readFileSync(join(root, "a.ts"), "utf8")).toBe(source);
  });

  it("refuses ambiguous old text, naming the lines, unless replaceAll is set", async () => {
    const root = tempDir();
    writeFiles(root, { "a.txt": "x = 1\ny = 2\nx = 1\n" });
    const ambiguous = await call(fsTools().edit, { path: "a.txt", oldText: "x = 1", newText: "x = 3" }, root);
    expect(ambiguous.isError).toBe(true);
    expect(textOf(ambiguous)).toBe(
      "oldText occurs 2 times in a.txt (lines 1, 3); include more surrounding lines to make it unique, " +
        "or set replaceAll to true to replace every occurrence",
    );
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("x = 1\ny = 2\nx = 1\n");

    const all = await call(
      fsTools().edit,
      { path: "a.txt", oldText: "x = 1", newText: "x = 3", replaceAll: true },
      root,
    );
    expect(textOf(all)).toBe("Edited a.txt: replaced 2 occurrences (lines 1, 3)");
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("x = 3\ny = 2\nx = 3\n");
  });

  it("keeps CRLF line endings when the model sends LF", async () => {
    const root = tempDir();
    writeFiles(root, { "w.txt": "one\r\ntwo\r\nthree\r\n" });
    const result = await call(fsTools().edit, { path: "w.txt", oldText: "one\ntwo", newText: "1\n2" }, root);
    expect(result.isError).toBeFalsy();
    expect(readFileSync(join(root, "w.txt"), "utf8")).toBe("1\r\n2\r\nthree\r\n");
  });

  it("inserts replacement text literally ($ patterns are not special)", async () => {
    const root = tempDir();
    writeFiles(root, { "a.txt": "price\n" });
    await call(fsTools().edit, { path: "a.txt", oldText: "price", newText: "$& $1 $$" }, root);
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("$& $1 $$\n");
  });

  it("refuses an empty or unchanged oldText, and a missing file", async () => {
    const root = tempDir();
    writeFiles(root, { "a.txt": "abc" });
    const empty = await call(fsTools().edit, { path: "a.txt", oldText: "", newText: "x" }, root);
    expect(textOf(empty)).toContain("oldText is empty");
    const same = await call(fsTools().edit, { path: "a.txt", oldText: "a", newText: "a" }, root);
    expect(textOf(same)).toContain("nothing to change");
    const missing = await call(fsTools().edit, { path: "b.txt", oldText: "a", newText: "b" }, root);
    expect(textOf(missing)).toBe('path "b.txt" does not exist');
  });
});
