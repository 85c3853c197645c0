/**
 * Agent Skills through the built `rein`: a scripted model loads a skill with the
 * `skill` tool and follows it (its allowed-tools narrow the next turn: a call it
 * excludes is refused); the invocation is recorded (name, path, sha256) and shows
 * in `rein export`; `rein run /name args` invokes one; `rein skills
 * list|show|validate` report sources, precedence and bad skills (one line each,
 * skipped); `.claude/skills` only when configured; `rein init --skill` scaffolds
 * a skill that validates.
 */
import { createHash } from "node:crypto";
import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, project, rein, scriptedConfig, spawnRein, TOOLS_PLUGIN } from "./support/rein-process.js";

afterAll(cleanup);

/** The SDK's fixture: a skills repository in the public layout (skills/<name>/SKILL.md, scripts/, references/, assets/). */
const REPO = fileURLToPath(new URL("../../sdk/test/fixtures/skills-repo", import.meta.url));

const SHIP = `---
name: ship-check
description: Check a change is ready to ship. Use when asked whether something can be released.
allowed-tools: echo
---
Call the echo tool with the text "ship check for $ARGUMENTS", then answer "ready".
`;

function entries(dir: string) {
  const folder = join(dir, ".rein/sessions");
  const [file] = readdirSync(folder).filter((f) => f.endsWith(".jsonl"));
  return readFileSync(join(folder, file as string), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));
}

const toolResults = (dir: string) =>
  entries(dir)
    .filter((e) => e.type === "message" && e.message.role === "toolResult")
    .map((e) => ({
      tool: e.message.toolName,
      error: e.message.isError,
      text: e.message.content[0]?.text as string,
    }));

describe("skills end to end", { timeout: 90_000 }, () => {
  it("the model loads a skill through the skill tool and follows it; allowed-tools refuses a call it excludes; the export shows it", async () => {
    const script = [
      { toolCalls: [{ name: "skill", args: { name: "ship-check", arguments: "v2" } }] },
      {
        toolCalls: [
          { name: "push", args: { remote: "origin" } },
          { name: "echo", args: { text: "ship check for v2" } },
        ],
      },
      "ready",
    ];
    const dir = project({
      "rein.config.ts": scriptedConfig(script, 'plugins: ["./plugins/tools.ts"],'),
      "plugins/tools.ts": TOOLS_PLUGIN,
      ".agents/skills/ship-check/SKILL.md": SHIP,
    });
    const result = await rein(["run", "is it ready?"], dir);
    expect(result.stderr).not.toContain("rein:");
    expect(result.code).toBe(0);
    const results = toolResults(dir);
    expect(results[0]).toMatchObject({ tool: "skill", error: false });
    expect(results[0]?.text).toContain('Call the echo tool with the text "ship check for v2"');
    expect(results.find((r) => r.tool === "push")).toMatchObject({
      error: true,
      text: expect.stringMatching(/not available in this turn/),
    });
    expect(results.find((r) => r.tool === "echo")).toMatchObject({
      error: false,
      text: "echo: ship check for v2",
    });
    const record = entries(dir).find((e) => e.type === "custom" && e.customType === "rein.skill");
    expect(record?.data).toEqual({
      name: "ship-check",
      path: join(dir, ".agents/skills/ship-check/SKILL.md"),
      sha256: createHash("sha256").update(SHIP).digest("hex"),
      args: ["v2"],
      via: "tool",
      runId: expect.any(String),
      allowedTools: ["echo"],
    });
    const id = entries(dir)[0].id as string;
    const md = await rein(["export", id], dir);
    expect(md.code).toBe(0);
    expect(md.stdout).toContain("skill ship-check (loaded by the model) v2");
    expect(md.stdout).toContain(createHash("sha256").update(SHIP).digest("hex").slice(0, 12));
    // Replay loads the skill again, so the narrowing (and the refused push) is the same decision.
    const replay = await rein(["replay", id], dir);
    expect(replay.stdout).toMatch(/#2 push .* recorded deny → now deny by harness: unknown tool/);
    expect(replay.stderr).toContain("3 tool calls replayed, 0 changed");
    expect(replay.code).toBe(0);
    const isolated = await rein(["replay", "--isolated", id], dir);
    expect(isolated.stdout).toMatch(
      /#2 push .* recorded deny → now deny by harness: not available in its turn/,
    );
    expect(isolated.code).toBe(0);
  });

  it("rein run /name args invokes a skill: its body is the prompt and the session records it", async () => {
    const dir = project({
      "rein.config.ts": scriptedConfig(["ready"]),
      ".rein/skills/ship-check/SKILL.md": SHIP,
    });
    const result = await rein(["run", "/ship-check", "v3"], dir);
    expect(result.code).toBe(0);
    const user = entries(dir).find((e) => e.type === "message" && e.message.role === "user");
    expect(user.message.content).toContain('the text "ship check for v3"');
    const record = entries(dir).find((e) => e.type === "custom" && e.customType === "rein.skill");
    expect(record?.data).toMatchObject({ name: "ship-check", args: ["v3"], via: "invoke" });
    const unknown = await rein(["run", "/ship-chek"], dir);
    expect(unknown.code).toBe(2);
  });

  it("in chat: /name args runs the skill, /help lists the skills", async () => {
    const dir = project({
      "rein.config.ts": scriptedConfig(["ready"]),
      ".rein/skills/ship-check/SKILL.md": SHIP,
    });
    const result = await rein(["run", "--chat"], dir, { input: "/help\n/ship-check 'v 4'\n/exit\n" });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain("skills: /ship-check");
    const user = entries(dir).find((e) => e.type === "message" && e.message.role === "user");
    expect(user.message.content).toContain('the text "ship check for v 4"');
    expect(entries(dir).find((e) => e.customType === "rein.skill")?.data).toMatchObject({
      args: ["v 4"],
      via: "invoke",
    });
  });

  it("/reload in chat reads the skills again", async () => {
    const dir = project({ "rein.config.ts": scriptedConfig(["unused"]) });
    const child = spawnRein(["run", "--chat"], dir);
    let output = "";
    child.stderr?.on("data", (chunk) => {
      output += chunk;
    });
    const waitFor = async (text: string) => {
      const deadline = Date.now() + 30_000;
      while (!output.includes(text)) {
        if (Date.now() > deadline)
          throw new Error(`timed out waiting for ${JSON.stringify(text)}\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    const exited = new Promise((resolve) => child.on("close", resolve));
    child.stdin?.write("/help\n");
    await waitFor("/exit ");
    expect(output).not.toContain("skills:");
    mkdirSync(join(dir, ".rein/skills/later"), { recursive: true });
    writeFileSync(
      join(dir, ".rein/skills/later/SKILL.md"),
      "---\nname: later\ndescription: Added later.\n---\nBody.\n",
    );
    child.stdin?.write("/reload\n");
    await waitFor("↻ reloaded");
    child.stdin?.write("/help\n");
    await waitFor("skills: /later");
    child.stdin?.end("/exit\n");
    expect(await exited).toBe(0);
  });

  it("rein skills list / show / validate: a public repository layout, precedence and bad skills", async () => {
    const dir = project({
      "rein.config.ts": scriptedConfig(["x"], 'skills: { paths: ["./vendor/skills"] },'),
      ".rein/skills/release-notes/SKILL.md":
        "---\nname: release-notes\ndescription: The project's own release notes.\n---\nOurs.\n",
    });
    cpSync(REPO, join(dir, "vendor"), { recursive: true });
    const list = await rein(["skills", "list"], dir);
    expect(list.code).toBe(0);
    expect(list.stdout.split("\n").filter(Boolean)).toEqual([
      expect.stringMatching(/^release-notes\s+\[project\] The project's own release notes\.$/),
      expect.stringMatching(/^csv-summary\s+\[config\] Summarise a CSV file/),
    ]);
    expect(list.stderr).toContain(
      `shadowed: release-notes at ${join(dir, "vendor/skills/release-notes/SKILL.md")} [config]`,
    );
    expect(list.stderr).toMatch(/Broken_Name\/SKILL\.md: name "Broken_Name" must be lowercase.*\(skipped\)/);
    const show = await rein(["skills", "show", "csv-summary"], dir);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain("files: assets/report.md");
    expect(show.stdout).toContain("Read the CSV named in $ARGUMENTS");
    const validate = await rein(["skills", "validate", "vendor/skills"], dir);
    expect(validate.code).toBe(1);
    expect(validate.stderr.split("\n").filter((l) => l.startsWith("✗"))).toHaveLength(2);
    expect(validate.stderr).toContain("2 of 4 skills valid");
    // Skills are read only from a trusted project: the trust check comes first.
    const untrusted = await rein(["skills", "list"], dir, { env: { REIN_TRUST_PROJECT: "" } });
    expect(untrusted.code).toBe(2);
    expect(untrusted.stderr).toContain("rein trust");
    expect(untrusted.stdout).toBe("");
    const one = await rein(["skills", "validate", "vendor/skills/csv-summary"], dir);
    expect(one.code).toBe(0);
    expect(one.stderr).toContain("1 of 1 skill valid");
  });

  it(".claude/skills is read only with skills.claude; user skills come after the project's", async () => {
    const claudeSkill = "---\nname: from-claude\ndescription: A Claude Code skill.\n---\nBody.\n";
    const off = project({
      "rein.config.ts": scriptedConfig(["x"]),
      ".claude/skills/from-claude/SKILL.md": claudeSkill,
    });
    expect((await rein(["skills", "list"], off)).stdout).not.toContain("from-claude");
    const on = project({
      "rein.config.ts": scriptedConfig(["x"], "skills: { claude: true },"),
      ".claude/skills/from-claude/SKILL.md": claudeSkill,
    });
    const config = join(on, "xdg");
    mkdirSync(join(config, "rein/skills/from-claude"), { recursive: true });
    mkdirSync(join(config, "rein/skills/mine"), { recursive: true });
    writeFileSync(
      join(config, "rein/skills/from-claude/SKILL.md"),
      claudeSkill.replace("A Claude Code", "My own"),
    );
    writeFileSync(
      join(config, "rein/skills/mine/SKILL.md"),
      "---\nname: mine\ndescription: My skill.\n---\nBody.\n",
    );
    const list = await rein(["skills", "list", "--json"], on, { env: { XDG_CONFIG_HOME: config } });
    const listed = JSON.parse(list.stdout) as {
      skills: { name: string; source: string }[];
      shadowed: { name: string }[];
    };
    expect(listed.skills.map((s) => [s.name, s.source])).toEqual([
      ["from-claude", "claude"],
      ["mine", "user"],
    ]);
    expect(listed.shadowed.map((s) => s.name)).toEqual(["from-claude"]);
  });

  it("a tool pack ships skills in its package's skills/ folder; the model can load them", async () => {
    const dir = project({
      "rein.config.ts": scriptedConfig(
        [{ toolCalls: [{ name: "skill", args: { name: "pack-skill" } }] }, "done"],
        'plugins: ["rein-pack-demo"],',
      ),
      "node_modules/rein-pack-demo/package.json":
        '{ "name": "rein-pack-demo", "version": "1.0.0", "type": "module", "main": "index.js" }',
      "node_modules/rein-pack-demo/index.js":
        'export default [{ name: "demo", description: "A demo tool", parameters: { type: "object", properties: {} }, execute: async () => ({ content: [{ type: "text", text: "demo ran" }] }) }];\n',
      "node_modules/rein-pack-demo/skills/pack-skill/SKILL.md":
        "---\nname: pack-skill\ndescription: A skill shipped inside a tool pack.\n---\nUse the demo tool.\n",
    });
    const list = await rein(["skills", "list"], dir);
    expect(list.stdout).toMatch(
      /^pack-skill\s+\[plugin:rein-pack-demo\] A skill shipped inside a tool pack\.$/m,
    );
    const result = await rein(["run", "go"], dir);
    expect(result.code).toBe(0);
    expect(toolResults(dir)[0]).toMatchObject({
      tool: "skill",
      error: false,
      text: expect.stringContaining("Use the demo tool."),
    });
  });

  it("rein init --skill scaffolds a skill that validates; a bad name is exit 2", async () => {
    const dir = project({ "rein.config.ts": scriptedConfig(["x"]) });
    const init = await rein(["init", "--skill", "tidy-up"], dir);
    expect(init.code).toBe(0);
    expect(init.stdout).toContain("created .rein/skills/tidy-up/SKILL.md");
    const validate = await rein(["skills", "validate"], dir);
    expect(validate.code).toBe(0);
    expect(validate.stdout).toContain(join(dir, ".rein/skills/tidy-up/SKILL.md"));
    expect((await rein(["init", "--skill", "Tidy_Up"], dir)).code).toBe(2);
  });
});
