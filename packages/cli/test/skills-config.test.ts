/**
 * The `skills` config option (`{ enabled?, claude?, paths?, budgetTokens? }`,
 * every other shape a config error naming the option), and the system prompt's
 * skills catalog: present only while Rein's `skill` tool is active, after the
 * configured prompt.
 */
import type { AnyAgentTool, SkillResource, SystemPromptInput } from "@rein/harness";
import { describe, expect, it } from "vitest";
import { validateConfig } from "../src/config/validate-config.js";
import { withSkillCatalog } from "../src/skills/attach-skills.js";

const source = (skills: string) => ({
  file: "/p/rein.config.ts",
  text: `export default {\n  model: "x/y",\n  skills: ${skills},\n};\n`,
});

describe("skills option", () => {
  it("accepts every documented field", () => {
    const skills = { enabled: true, claude: true, paths: ["./vendor/skills"], budgetTokens: 500 };
    expect(validateConfig({ model: "x/y", skills }, source(JSON.stringify(skills))).skills).toEqual(skills);
  });

  it.each([
    [true, "skills: expected { enabled?, claude?, paths?, budgetTokens? }"],
    [{ claude: "yes" }, "skills.claude: expected a boolean"],
    [{ paths: "./skills" }, "skills.paths: expected an array of folder paths"],
    [{ paths: [""] }, "skills.paths[0]: expected a folder path"],
    [{ budgetTokens: -1 }, "skills.budgetTokens: expected a non-negative integer"],
    [{ dirs: [] }, "skills.dirs: expected one of enabled, claude, paths, budgetTokens"],
  ])("refuses %j", (skills, message) => {
    expect(() => validateConfig({ model: "x/y", skills }, source(JSON.stringify(skills)))).toThrow(
      expect.objectContaining({ code: "config", message: expect.stringContaining(message) }),
    );
  });
});

const skill: SkillResource = {
  name: "deploy",
  description: "Deploy the app",
  body: "BODY",
  path: "/s/deploy/SKILL.md",
  dir: "/s/deploy",
  sha256: "0".repeat(64),
};
const tool = (name: string, owner?: string) => ({ name, owner }) as unknown as AnyAgentTool;
const input = (tools: AnyAgentTool[]): SystemPromptInput => ({
  model: {} as never,
  tools,
  resources: {},
  skills: [skill],
  templates: [],
});

describe("the skills catalog in the system prompt", () => {
  it("follows the configured prompt while Rein's skill tool is active", async () => {
    const prompt = withSkillCatalog("Be brief.") as (i: SystemPromptInput) => Promise<string>;
    const text = await prompt(input([tool("read"), tool("skill", "rein")]));
    expect(text.startsWith("Be brief.\n\n")).toBe(true);
    expect(text).toContain("<name>deploy</name><description>Deploy the app</description>");
    expect(text).not.toContain("BODY");
  });

  it("is left out when the skill tool is inactive, or is another plugin's tool", async () => {
    const prompt = withSkillCatalog(() => "Base") as (i: SystemPromptInput) => Promise<string>;
    expect(await prompt(input([tool("read")]))).toBe("Base");
    expect(await prompt(input([tool("skill", "some-plugin")]))).toBe("Base");
  });
});
