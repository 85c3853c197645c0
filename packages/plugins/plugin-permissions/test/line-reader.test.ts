import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { LineReader } from "../src/line-reader.js";

describe("LineReader", () => {
  it.each([
    ["\\n", ["y\n", "n\n"]],
    ["\\r (Enter on a raw terminal)", ["y\r", "n\r"]],
    ["\\r\\n", ["y\r\n", "n\r\n"]],
    ["\\r and \\n split across chunks", ["y\r", "\nn", "\r", "\n"]],
  ])("a line ends at %s, and the next read gets the next line", async (_name, chunks) => {
    const input = new PassThrough({ encoding: "utf8" });
    const reader = new LineReader(input);
    const first = reader.readLine();
    for (const chunk of chunks) input.write(chunk);
    expect(await first).toBe("y");
    expect(await reader.readLine()).toBe("n");
  });
});
