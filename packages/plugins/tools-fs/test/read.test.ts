import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { call, fsTools, tempDir, textOf, writeFiles } from "./helpers.js";

const numbered = (count: number) => Array.from({ length: count }, (_, i) => `line ${i + 1}`).join("\n");

/** A 1x1 transparent PNG. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=",
  "base64",
);

describe("read", () => {
  it("returns a small text file whole, without line numbers", async () => {
    const root = tempDir();
    writeFiles(root, { "a.txt": "alpha\nbeta\n" });
    const result = await call(fsTools().read, { path: "a.txt" }, root);
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe("alpha\nbeta");
    expect(result.details).toMatchObject({ path: "a.txt", startLine: 1, endLine: 2, totalLines: 2 });
  });

  it("reads a line range with offset and limit, and says where to continue", async () => {
    const root = tempDir();
    writeFiles(root, { "n.txt": `${numbered(10)}\n` });
    const result = await call(fsTools().read, { path: "n.txt", offset: 3, limit: 3 }, root);
    expect(textOf(result)).toBe(
      "line 3\nline 4\nline 5\n\n[showing lines 3-5 of 10; use offset=6 to read more]",
    );
    expect(result.details).toMatchObject({ startLine: 3, endLine: 5, totalLines: 10, truncated: false });

    const tail = await call(fsTools().read, { path: "n.txt", offset: 9 }, root);
    expect(textOf(tail)).toBe("line 9\nline 10");
  });

  it("refuses an offset past the end of the file", async () => {
    const root = tempDir();
    writeFiles(root, { "n.txt": numbered(4) });
    const result = await call(fsTools().read, { path: "n.txt", offset: 9 }, root);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe("offset 9 is past the end of n.txt (4 lines)");
  });

  it("truncates a long file at the line limit with a note on how to read more", async () => {
    const root = tempDir();
    writeFiles(root, { "big.txt": numbered(9000) });
    const result = await call(fsTools().read, { path: "big.txt" }, root);
    const text = textOf(result);
    expect(text.startsWith("line 1\nline 2\n")).toBe(true);
    expect(text).toContain("\nline 2000\n\n[truncated: showing lines 1-2000 of 9000 (2000-line limit)");
    expect(text).toContain("use offset=2001 to read more]");
    expect(text).not.toContain("line 2001");
    expect(result.details).toMatchObject({ endLine: 2000, totalLines: 9000, truncated: true });

    const next = await call(fsTools().read, { path: "big.txt", offset: 2001, limit: 2 }, root);
    expect(textOf(next)).toBe(
      "line 2001\nline 2002\n\n[showing lines 2001-2002 of 9000; use offset=2003 to read more]",
    );
  });

  it("truncates at the byte limit, keeping whole lines", async () => {
    const root = tempDir();
    writeFiles(root, { "wide.txt": numbered(100) });
    const result = await call(fsTools({ maxBytes: 30 }).read, { path: "wide.txt" }, root);
    // "line 1\n...line 4" is 27 bytes; adding "\nline 5" would pass 30.
    expect(textOf(result)).toBe(
      "line 1\nline 2\nline 3\nline 4\n\n[truncated: showing lines 1-4 of 100 (30 B limit); use offset=5 to read more]",
    );
  });

  it("shows the beginning of a single line longer than the byte limit", async () => {
    const root = tempDir();
    writeFiles(root, { "one.txt": `${"x".repeat(500)}\nnext\n` });
    const result = await call(fsTools({ maxBytes: 100 }).read, { path: "one.txt" }, root);
    const text = textOf(result);
    expect(text.startsWith(`${"x".repeat(100)}\n\n[truncated: line 1 is 500 B, over the 100 B limit`)).toBe(
      true,
    );
    expect(text).toContain("use offset=2 to read the lines after it]");
  });

  it("returns PNG, JPEG, GIF and WebP files as image content with base64 data and a MIME type", async () => {
    const root = tempDir();
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0]);
    const gif = Buffer.concat([Buffer.from("GIF89a"), Buffer.from([1, 0, 1, 0, 0, 0, 0])]);
    const webp = Buffer.concat([Buffer.from("RIFF"), Buffer.from([26, 0, 0, 0]), Buffer.from("WEBPVP8 ")]);
    writeFiles(root, { "dot.png": PNG, "photo.jpg": jpeg, "anim.gif": gif, "pic.webp": webp });
    const cases = [
      ["dot.png", "image/png", PNG],
      ["photo.jpg", "image/jpeg", jpeg],
      ["anim.gif", "image/gif", gif],
      ["pic.webp", "image/webp", webp],
    ] as const;
    for (const [path, mimeType, bytes] of cases) {
      const result = await call(fsTools().read, { path }, root);
      expect(result.isError, path).toBeFalsy();
      expect(result.content[1]).toEqual({ type: "image", mimeType, data: bytes.toString("base64") });
      expect(textOf(result)).toContain(`Read image ${path} (${mimeType}`);
    }
  });

  it("refuses an image over the image size limit", async () => {
    const root = tempDir();
    writeFiles(root, { "dot.png": PNG });
    const result = await call(fsTools({ maxImageBytes: 10 }).read, { path: "dot.png" }, root);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("over the 10 B limit for images");
  });

  it("does not dump binary files", async () => {
    const root = tempDir();
    writeFiles(root, { "blob.bin": Buffer.from([1, 2, 0, 3, 4]) });
    const result = await call(fsTools().read, { path: "blob.bin" }, root);
    expect(textOf(result)).toBe("blob.bin is a binary file (5 B); its content is not shown");
  });

  it("says when a file does not exist or is a directory", async () => {
    const root = tempDir();
    mkdirSync(join(root, "dir"));
    const missing = await call(fsTools().read, { path: "nope.txt" }, root);
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toBe('path "nope.txt" does not exist');
    const dir = await call(fsTools().read, { path: "dir" }, root);
    expect(textOf(dir)).toBe('path "dir" is a directory; use ls to list it');
  });

  it("reports an empty file as empty", async () => {
    const root = tempDir();
    writeFiles(root, { "empty.txt": "" });
    expect(textOf(await call(fsTools().read, { path: "empty.txt" }, root))).toBe("(empty.txt is empty)");
  });
});
