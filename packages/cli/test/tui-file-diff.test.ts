/**
 * The diff the terminal UI shows under an edit or write is the file's own change on
 * disk: a new file from /dev/null, an edit as its hunks, nothing when nothing
 * changed, nothing for a file too large to diff.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { editedFile, fileDiff, snapshot } from "../src/tui/file-diff.js";
import { colorsFor } from "../src/ui/terminal.js";

const c = colorsFor({ isTTY: false } as NodeJS.WriteStream);
const dir = mkdtempSync(join(tmpdir(), "rein-diff-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the edit's diff", () => {
  it("a new file is a diff from /dev/null; an edit is its hunk; no change, no lines", () => {
    const file = editedFile({ path: "src/new.ts" }, dir) as string;
    expect(file).toBe(join(dir, "src/new.ts"));
    expect(snapshot(file)).toBeNull();
    expect(fileDiff(file, dir, null, "a\nb\n", c)).toEqual([
      "--- /dev/null",
      "+++ b/src/new.ts",
      "@@ -0,0 +1,2 @@",
      "+a",
      "+b",
    ]);
    const edited = fileDiff(file, dir, "one\ntwo\nthree\n", "one\n2\nthree\n", c);
    expect(edited).toEqual([
      "--- a/src/new.ts",
      "+++ b/src/new.ts",
      "@@ -1,3 +1,3 @@",
      " one",
      "-two",
      "+2",
      " three",
    ]);
    expect(fileDiff(file, dir, "same\n", "same\n", c)).toEqual([]);
  });

  it("reads the file as it is on disk, skips one too large, and takes path or file_path", () => {
    const file = join(dir, "big.txt");
    writeFileSync(file, "x".repeat((1 << 20) + 1));
    expect(snapshot(file)).toBeUndefined();
    writeFileSync(file, "small\n");
    expect(snapshot(file)).toBe("small\n");
    expect(editedFile({ file_path: "/abs/x.ts" }, dir)).toBe("/abs/x.ts");
    expect(editedFile({ content: "no path" }, dir)).toBeUndefined();
  });
});
