import { describe, expect, it } from "vitest";
import { truncateOutput } from "../src/index.js";

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n");

describe("truncateOutput keeps whole head lines within both limits and says what it cut", () => {
  it("returns short text untouched, with no note", () => {
    expect(truncateOutput("a\nb\n", { maxLines: 2 })).toEqual({
      text: "a\nb\n",
      truncated: false,
      note: undefined,
      totalLines: 2,
      totalBytes: 4,
    });
  });

  it("cuts at the line limit", () => {
    const out = truncateOutput(numbered(10), { maxLines: 3 });
    expect(out.text).toBe("line 1\nline 2\nline 3\n");
    expect(out.truncated).toBe(true);
    expect(out.note).toBe("[output truncated: kept 3 of 10 lines (21 B of 70 B)]");
  });

  it("cuts at the byte limit on a line boundary and names where the full output is", () => {
    const out = truncateOutput(numbered(10), { maxBytes: 20, fullOutputAt: "/tmp/full.txt" });
    expect(out.text).toBe("line 1\nline 2\n");
    expect(out.note).toContain("kept 2 of 10 lines");
    expect(out.note).toContain("full output in /tmp/full.txt");
  });

  it("cuts one over-long line at a character boundary, never inside a UTF-8 sequence", () => {
    const out = truncateOutput("é".repeat(100), { maxBytes: 7 });
    expect(out.text).toBe("ééé");
    expect(Buffer.byteLength(out.text)).toBeLessThanOrEqual(7);
  });

  it("refuses negative limits", () => {
    expect(() => truncateOutput("x", { maxBytes: -1 })).toThrow(RangeError);
  });
});
