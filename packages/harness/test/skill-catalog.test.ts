/**
 * The skills catalog of a system prompt: names and descriptions only (never the
 * body), escaped, within a token budget; what does not fit is still named.
 */
import { describe, expect, it } from "vitest";
import { skillCatalog } from "../src/resources/catalog.js";
import { allowedToolNames, parseAllowedTools } from "../src/resources/invocation.js";
import type { SkillResource } from "../src/resources/resource-types.js";

const skill = (name: string, description: string): SkillResource => ({
  name,
  description,
  body: `SECRET BODY OF ${name}`,
  path: `/s/${name}/SKILL.md`,
  dir: `/s/${name}`,
  sha256: "0".repeat(64),
});

describe("skill catalog", () => {
  it("lists names and descriptions, escaped, never the bodies", () => {
    const text = skillCatalog([skill("a", "Use for <xml> & such"), skill("b", "Second")]);
    expect(text).toContain(
      "<skill><name>a</name><description>Use for &lt;xml&gt; &amp; such</description></skill>",
    );
    expect(text).toContain("<name>b</name>");
    expect(text).toContain("`skill` tool");
    expect(text).not.toContain("SECRET BODY");
  });

  it("is empty without skills", () => {
    expect(skillCatalog([])).toBe("");
  });

  it("keeps within the budget and names the skills left out", () => {
    const many = Array.from({ length: 50 }, (_, i) => skill(`s${i}`, "d".repeat(200)));
    const text = skillCatalog(many, { budgetTokens: 400 });
    const listed = text.match(/<skill>/g)?.length ?? 0;
    expect(listed).toBeGreaterThan(0);
    expect(listed).toBeLessThan(50);
    expect(text.length / 4).toBeLessThanOrEqual(400 + 200);
    expect(text).toMatch(new RegExp(`More skills \\(no room for their descriptions\\): s${listed}, `));
  });
});

describe("allowed-tools entries", () => {
  it("split on spaces (commas tolerated), a (scope) kept whole, matched case-insensitively with aliases", () => {
    const entries = parseAllowedTools("Read, Bash(git log:*) Glob  grep");
    expect(entries).toEqual(["Read", "Bash(git log:*)", "Glob", "grep"]);
    expect([...allowedToolNames(entries)]).toEqual(["read", "bash", "find", "grep"]);
  });
});
