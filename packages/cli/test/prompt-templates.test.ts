/**
 * Prompt template expansion rules: positional `$1`..`$N` (empty when missing),
 * `$ARGUMENTS` / `$@` for all of them, arguments appended when the body has no
 * placeholder, quoted chat arguments kept together, front matter parsed as YAML
 * (and a bad one an error naming the file).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  expandTemplate,
  readTemplate,
  splitArguments,
  templateNames,
} from "../src/agent/prompt-templates.js";

const root = mkdtempSync(join(tmpdir(), "rein-templates-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function template(name: string, text: string) {
  mkdirSync(join(root, ".rein/prompts"), { recursive: true });
  writeFileSync(join(root, ".rein/prompts", `${name}.md`), text);
  return readTemplate(root, name);
}

describe("prompt templates", () => {
  it.each([
    ["$1 and $2", ["a", "b c"], "a and b c"],
    ["$1 and $3", ["a"], "a and "],
    ["all: $ARGUMENTS; again: $@", ["x", "y"], "all: x y; again: x y"],
    ["tenth: $10", ["1", "2", "3", "4", "5", "6", "7", "8", "9", "ten"], "tenth: ten"],
    ["no placeholder", ["extra", "words"], "no placeholder\n\nextra words"],
    ["no placeholder", [], "no placeholder"],
    ["price is $5 for $1", ["you"], "price is  for you"],
  ])("%s with %j gives %j", (body, args, expected) => {
    const t = template("t", body);
    expect(t && expandTemplate(t, args)).toBe(expected);
  });

  it("reads YAML front matter (colons and quotes) and leaves it out of the body", () => {
    const t = template(
      "fm",
      '---\ndescription: "Review: carefully"\nargument-hint: <file>\nmodel: x\n---\nBody $1\n',
    );
    expect(t).toMatchObject({ description: "Review: carefully", argumentHint: "<file>", body: "Body $1" });
  });

  it("a bad front matter is a usage error naming the file", () => {
    expect(() => template("bad", "---\ndescription: [unclosed\n---\nx")).toThrow(
      expect.objectContaining({ code: "usage", message: expect.stringContaining("bad.md: front matter") }),
    );
  });

  it("names are the .md files with plain names; others are not templates", () => {
    template("ok-name", "x");
    writeFileSync(join(root, ".rein/prompts", "notes.txt"), "x");
    expect(templateNames(root)).toContain("ok-name");
    expect(templateNames(root)).not.toContain("notes");
    expect(readTemplate(root, "../escape")).toBeUndefined();
  });

  it("splits chat arguments on spaces, keeping quoted groups", () => {
    expect(splitArguments(`a "b c" 'd e' f`)).toEqual(["a", "b c", "d e", "f"]);
    expect(splitArguments("")).toEqual([]);
  });
});
