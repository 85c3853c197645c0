/**
 * Project instruction rules, in process: a file over 32 KiB is cut with a note
 * naming it; AGENTS.md wins over CLAUDE.md in the same folder; the working
 * directory's chain loads at the start, a folder outside the project never; the
 * config's system prompt comes first, then the instructions, then the appendix.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { projectInstructions } from "../src/agent/project-instructions.js";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "rein-instructions-"));
  made.push(dir);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, ".."), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

const prompt = async (root: string, cwd = root, base = "", enabled?: boolean) => {
  const instructions = projectInstructions({
    root,
    cwd,
    base,
    warn: () => undefined,
    ...(enabled === undefined ? {} : { enabled }),
  });
  instructions.appendix = ["APPENDIX"];
  const source = instructions.systemPrompt;
  const text =
    typeof source === "string"
      ? source
      : await source({ model: {} as never, tools: [], resources: {}, skills: [], templates: [] });
  return { text, files: instructions.files() };
};

describe("project instructions", () => {
  it("cuts a file over 32 KiB with a note, hashing the whole file", async () => {
    const root = tree({ "AGENTS.md": `${"x".repeat(40_000)}TAIL` });
    const { text, files } = await prompt(root);
    expect(text).not.toContain("TAIL");
    expect(text).toContain("[AGENTS.md cut at 32768 of 40004 bytes]");
    expect(files).toEqual([expect.objectContaining({ path: "AGENTS.md", bytes: 40_004, truncated: true })]);
  });

  it("AGENTS.md wins over CLAUDE.md; the cwd chain loads; order is base, instructions, appendix", async () => {
    const root = tree({
      "AGENTS.md": "root agents",
      "CLAUDE.md": "root claude",
      "a/b/CLAUDE.md": "b claude",
      "c/AGENTS.md": "not on the way",
    });
    const { text, files } = await prompt(root, join(root, "a", "b"), "BASE");
    expect(files.map((f) => f.path)).toEqual(["AGENTS.md", "a/b/CLAUDE.md"]);
    expect(text).not.toContain("root claude");
    expect(text).not.toContain("not on the way");
    expect(text.indexOf("BASE")).toBeLessThan(text.indexOf("root agents"));
    expect(text.indexOf("b claude")).toBeLessThan(text.indexOf("APPENDIX"));
    expect(text).toContain("## a/b/CLAUDE.md (applies to a/b/ and below)");
  });

  it("a working directory outside the project adds nothing from there", async () => {
    const root = tree({ "AGENTS.md": "inside" });
    const elsewhere = tree({ "AGENTS.md": "outside" });
    const { text, files } = await prompt(root, elsewhere);
    expect(text).toContain("inside");
    expect(text).not.toContain("outside");
    expect(files.map((f) => f.path)).toEqual(["AGENTS.md"]);
  });

  it("instructions turned off: no file is loaded, the prompt is the base and the appendix", async () => {
    const root = tree({ "AGENTS.md": "root agents", "a/AGENTS.md": "a agents" });
    const off = await prompt(root, join(root, "a"), "BASE", false);
    expect(off.text).toBe("BASE\n\nAPPENDIX");
    expect(off.files).toEqual([]);
    const on = await prompt(root, join(root, "a"), "BASE", true);
    expect(on.files.map((f) => f.path)).toEqual(["AGENTS.md", "a/AGENTS.md"]);
  });

  it("no files: just the base and appendix, no empty heading", async () => {
    const { text } = await prompt(tree({}), undefined, "BASE");
    expect(text).toBe("BASE\n\nAPPENDIX");
  });
});
