/**
 * Agent Skills discovery and validation: every front matter rule of the
 * specification as a table (one problem line naming the file, the skill
 * skipped), the fixture repository in the public skills-repository layout, the
 * documented precedence of sources, and the path rules (a symlink out of a
 * source, a SKILL.md pointing elsewhere, Rein's own state: refused, never read).
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { checkSkillFile, discoverSkills } from "../src/index.js";

const repo = fileURLToPath(new URL("./fixtures/skills-repo", import.meta.url));
const temp = mkdtempSync(join(tmpdir(), "rein-skills-"));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

const front = (fields: string, body = "Body.") => `---\n${fields}\n---\n${body}\n`;
const file = (folder: string) => `/x/skills/${folder}/SKILL.md`;

describe("SKILL.md front matter, by the specification", () => {
  const bad: [string, string, string, RegExp][] = [
    ["no front matter", "a", "# Just a title\n", /no YAML front matter/],
    ["invalid YAML", "a", front("name: [a\ndescription: x"), /not valid YAML/],
    ["front matter a list", "a", front("- a\n- b"), /key: value pairs/],
    ["name missing", "a", front("description: d"), /name is missing/],
    ["name not a string", "a", front("name: 12\ndescription: d"), /name is missing/],
    [
      "name uppercase",
      "Abc",
      front("name: Abc\ndescription: d"),
      /lowercase letters, digits and single hyphens/,
    ],
    ["name with underscore", "a_b", front("name: a_b\ndescription: d"), /lowercase/],
    ["name starting with a hyphen", "-ab", front("name: -ab\ndescription: d"), /not starting or ending/],
    ["name ending with a hyphen", "ab-", front("name: ab-\ndescription: d"), /not starting or ending/],
    ["consecutive hyphens", "a--b", front("name: a--b\ndescription: d"), /single hyphens/],
    [
      "name of 65 characters",
      "a".repeat(65),
      front(`name: ${"a".repeat(65)}\ndescription: d`),
      /65 characters \(at most 64\)/,
    ],
    [
      "name not the folder's",
      "folder",
      front("name: other\ndescription: d"),
      /must match its folder's name "folder"/,
    ],
    ["description missing", "a", front("name: a"), /description is missing/],
    ["description blank", "a", front('name: a\ndescription: "  "'), /description is missing/],
    [
      "description of 1025 characters",
      "a",
      front(`name: a\ndescription: ${"d".repeat(1025)}`),
      /1025 characters \(at most 1024\)/,
    ],
    [
      "license not a string",
      "a",
      front("name: a\ndescription: d\nlicense: [MIT]"),
      /license must be a string/,
    ],
    [
      "compatibility empty",
      "a",
      front('name: a\ndescription: d\ncompatibility: ""'),
      /compatibility must be a non-empty string/,
    ],
    [
      "compatibility of 501 characters",
      "a",
      front(`name: a\ndescription: d\ncompatibility: ${"c".repeat(501)}`),
      /501 characters \(at most 500\)/,
    ],
    ["metadata a list", "a", front("name: a\ndescription: d\nmetadata: [x]"), /metadata must be a map/],
    [
      "metadata value a number",
      "a",
      front("name: a\ndescription: d\nmetadata:\n  version: 2"),
      /metadata\.version must be a string/,
    ],
    [
      "allowed-tools a map",
      "a",
      front("name: a\ndescription: d\nallowed-tools: { read: true }"),
      /allowed-tools must be/,
    ],
  ];
  it.each(bad)("%s: one problem line naming the file", (_case, folder, text, rule) => {
    const result = checkSkillFile(file(folder), text);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problem.startsWith(`${file(folder)}: `)).toBe(true);
    expect(result.problem).toMatch(rule);
    expect(result.problem.split("\n")).toHaveLength(1);
  });

  const good: [string, string, string][] = [
    ["the smallest skill", "a", front("name: a\ndescription: d")],
    [
      "64 characters, digits and hyphens",
      `${"a1-".repeat(21)}b`,
      front(`name: ${"a1-".repeat(21)}b\ndescription: d`),
    ],
    ["a 1024-character description", "a", front(`name: a\ndescription: ${"d".repeat(1024)}`)],
    [
      "every optional field",
      "a",
      front(
        "name: a\ndescription: d\nlicense: MIT\ncompatibility: Node 22\nmetadata:\n  author: me\nallowed-tools: read grep",
      ),
    ],
  ];
  it.each(good)("%s: accepted", (_case, folder, text) => {
    expect(checkSkillFile(file(folder), text)).toMatchObject({ ok: true, warnings: [] });
  });

  it("reads the optional fields; allowed-tools is split on spaces and keeps a (scope) whole", () => {
    const result = checkSkillFile(
      file("a"),
      front(
        "name: a\ndescription: '  Does a.  '\nmetadata:\n  author: me\nallowed-tools: Read Bash(git log:*) grep",
        "\n# A\nSteps.\n",
      ),
    );
    expect(result).toMatchObject({
      ok: true,
      fields: {
        name: "a",
        description: "Does a.",
        body: "# A\nSteps.",
        metadata: { author: "me" },
        allowedTools: ["Read", "Bash(git log:*)", "grep"],
      },
    });
  });

  it("a field the specification does not define is a warning naming the file; the skill still loads", () => {
    const result = checkSkillFile(file("a"), front("name: a\ndescription: d\nuser-invocable: true"));
    expect(result).toMatchObject({
      ok: true,
      warnings: [`${file("a")}: field "user-invocable" is not in the Agent Skills specification (ignored)`],
    });
  });
});

describe("discovering skills", () => {
  it("the fixture repository: its good skills with their files; its two bad ones reported and skipped", () => {
    const found = discoverSkills([{ label: "repo", dir: join(repo, "skills") }]);
    expect(found.skills.map((s) => s.name)).toEqual(["csv-summary", "release-notes"]);
    const notes = found.skills.find((s) => s.name === "release-notes");
    expect(notes).toMatchObject({
      source: "repo",
      dir: join(repo, "skills/release-notes"),
      path: join(repo, "skills/release-notes/SKILL.md"),
      license: "MIT",
      allowedTools: ["read", "bash(git:*)"],
      files: ["references/style.md", "scripts/collect.sh"],
    });
    expect(notes?.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(found.problems).toEqual([
      expect.stringMatching(/skills\/Broken_Name\/SKILL\.md: name "Broken_Name" must be lowercase/),
      expect.stringMatching(
        /skills\/wrong-folder\/SKILL\.md: name "right-name" must match its folder's name "wrong-folder"/,
      ),
    ]);
  });

  it("name clashes: the first source wins, the later one is reported as shadowed", () => {
    const first = join(temp, "clash/first");
    const second = join(temp, "clash/second");
    for (const [dir, text] of [
      [first, "first"],
      [second, "second"],
    ] as const) {
      mkdirSync(join(dir, "deploy"), { recursive: true });
      writeFileSync(join(dir, "deploy/SKILL.md"), front(`name: deploy\ndescription: ${text}`));
    }
    const found = discoverSkills([
      { label: "project", dir: first },
      { label: "user", dir: second },
    ]);
    expect(found.skills.map((s) => [s.name, s.description, s.source])).toEqual([
      ["deploy", "first", "project"],
    ]);
    expect(found.shadowed).toEqual([
      {
        name: "deploy",
        path: join(second, "deploy/SKILL.md"),
        source: "user",
        by: join(first, "deploy/SKILL.md"),
      },
    ]);
  });

  it("refuses a skill folder or SKILL.md that is a symlink out of its source, and Rein's own state", () => {
    const root = join(temp, "links");
    const outside = join(temp, "outside");
    mkdirSync(join(outside, "escape"), { recursive: true });
    writeFileSync(join(outside, "escape/SKILL.md"), front("name: escape\ndescription: d"));
    writeFileSync(join(outside, "secret.md"), front("name: pointer\ndescription: d"));
    mkdirSync(join(root, "skills/pointer"), { recursive: true });
    symlinkSync(join(outside, "escape"), join(root, "skills/escape"));
    symlinkSync(join(outside, "secret.md"), join(root, "skills/pointer/SKILL.md"));
    mkdirSync(join(root, "state/skills/kept"), { recursive: true });
    writeFileSync(join(root, "state/skills/kept/SKILL.md"), front("name: kept\ndescription: d"));
    const found = discoverSkills(
      [
        { label: "project", dir: join(root, "skills"), boundary: root },
        { label: "config", dir: join(root, "state/skills"), boundary: root },
      ],
      { refuse: [join(root, "state")] },
    );
    expect(found.skills).toEqual([]);
    expect(found.problems).toEqual([
      expect.stringMatching(/skills\/escape\/SKILL\.md: the folder resolves to .*outside/),
      expect.stringMatching(/skills\/pointer\/SKILL\.md: resolves outside its skill folder/),
      expect.stringMatching(/state\/skills\/kept\/SKILL\.md: is inside Rein's own state/),
    ]);
  });

  it("a missing source is no problem; an oversized SKILL.md is reported", () => {
    const dir = join(temp, "big");
    mkdirSync(join(dir, "huge"), { recursive: true });
    writeFileSync(join(dir, "huge/SKILL.md"), front("name: huge\ndescription: d", "x".repeat(2000)));
    const found = discoverSkills(
      [
        { label: "none", dir: join(temp, "does-not-exist") },
        { label: "big", dir },
      ],
      { maxBytes: 1000 },
    );
    expect(found.skills).toEqual([]);
    expect(found.problems).toEqual([expect.stringMatching(/huge\/SKILL\.md: is \d+ bytes \(at most 1000\)/)]);
  });
});
