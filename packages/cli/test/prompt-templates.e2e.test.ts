/**
 * Prompt templates (`.rein/prompts/<name>.md`) through the built binary:
 * `rein run /name args` and `/name args` in chat send the expanded text ($1..,
 * $ARGUMENTS), the session records which template (file, sha256, arguments), an
 * unknown `/name` is a usage error listing the templates; `/cost` in chat reports
 * the last run's and the session's usage.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, project, rein, scriptedConfig } from "./support/rein-process.js";

afterAll(cleanup);

const REVIEW = `---
description: Review a file
argument-hint: <file> [focus]
---
Review $1 with a focus on $2.
Everything given: $ARGUMENTS
`;

function entries(dir: string) {
  const folder = join(dir, ".rein/sessions");
  const [file] = readdirSync(folder).filter((f) => f.endsWith(".jsonl"));
  return readFileSync(join(folder, file as string), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));
}

const users = (dir: string) =>
  entries(dir)
    .filter((e) => e.type === "message" && e.message.role === "user")
    .map((e) => e.message.content as string);

describe("prompt templates", { timeout: 60_000 }, () => {
  it("rein run /name args sends the expanded template and records which one", async () => {
    const dir = project({
      "rein.config.ts": scriptedConfig(["reviewed"]),
      ".rein/prompts/review.md": REVIEW,
    });
    const result = await rein(["run", "/review", "src/a.ts", "error handling"], dir);
    expect(result.stderr).not.toContain("rein:");
    expect(result.code).toBe(0);
    expect(users(dir)).toEqual([
      "Review src/a.ts with a focus on error handling.\nEverything given: src/a.ts error handling",
    ]);
    const recorded = entries(dir).find((e) => e.type === "custom" && e.customType === "rein.prompt_template");
    expect(recorded?.data).toEqual({
      name: "review",
      file: ".rein/prompts/review.md",
      sha256: createHash("sha256").update(REVIEW).digest("hex"),
      args: ["src/a.ts", "error handling"],
    });
  });

  it("a template without placeholders gets the arguments appended; a missing $2 is empty", async () => {
    const dir = project({
      "rein.config.ts": scriptedConfig(["a", "b"]),
      ".rein/prompts/plain.md": "Summarise the changes.",
      ".rein/prompts/review.md": REVIEW,
    });
    expect((await rein(["run", "/plain", "in", "detail"], dir)).code).toBe(0);
    expect((await rein(["run", "--continue", "/review x.ts"], dir)).code).toBe(0);
    expect(users(dir)).toEqual([
      "Summarise the changes.\n\nin detail",
      "Review x.ts with a focus on .\nEverything given: x.ts",
    ]);
  });

  it("an unknown /name is exit 2 listing the templates, and nothing is sent", async () => {
    const dir = project({
      "rein.config.ts": scriptedConfig(["never"]),
      ".rein/prompts/review.md": REVIEW,
      ".rein/prompts/plain.md": "x",
    });
    const result = await rein(["run", "/reveiw", "a.ts"], dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('no prompt template "/reveiw"');
    expect(result.stderr).toContain("templates: /plain, /review");
    // It failed before a session was created.
    expect(existsSync(join(dir, ".rein/sessions"))).toBe(false);
    // A path is not a template call: it is sent as written.
    const path = await rein(["run", "/etc/hosts looks odd"], dir);
    expect(path.code).toBe(0);
  });

  it("in chat: /name args prompts, /help lists templates, /cost reports the usage", async () => {
    const dir = project({
      "rein.config.ts": scriptedConfig(["first answer", "second answer"]),
      ".rein/prompts/review.md": REVIEW,
    });
    const result = await rein(["run", "--chat"], dir, {
      input: '/review "my file.ts" speed\n/help\n/cost\nthanks\n/exit\n',
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("first answer");
    expect(result.stderr).toContain("templates: /review");
    expect(result.stderr).toMatch(/\/review <file> \[focus\] +Review a file/);
    expect(users(dir)).toEqual([
      "Review my file.ts with a focus on speed.\nEverything given: my file.ts speed",
      "thanks",
    ]);
    const assistant = entries(dir).filter((e) => e.type === "message" && e.message.role === "assistant");
    const firstUsage = assistant[0].message.usage;
    const tokensIn = (firstUsage.input + firstUsage.cacheRead + firstUsage.cacheWrite).toLocaleString(
      "en-US",
    );
    expect(result.stdout).toMatch(new RegExp(`last run  ${tokensIn} in`));
    expect(result.stdout).toContain("session   ");
    expect(result.stdout).toContain("(1 request)");
    // Every prompt ends with the usage line on stderr.
    expect(
      result.stderr.match(/run [^\n]* · session [^\n]*resume with rein run --continue[^\n]*\n/g),
    ).toHaveLength(2);
  });
});
