/**
 * What people type first gets them there (issue 30), through the built binary: a
 * misspelt command or option prints commander's "(Did you mean run?)"; `rein chat`
 * is the chat `rein run` opens with no prompt; `rein export` is `rein sessions
 * export`; an unknown model id names the closest catalog (or custom) ids.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, project, rein, scriptedConfig } from "./support/rein-process.js";

afterAll(cleanup);

const plain = () => project({ "rein.config.ts": scriptedConfig(["unused"]) });

describe("a misspelt command or option", { timeout: 60_000 }, () => {
  it.each([
    [["rnu", "hi"], "unknown command 'rnu' (Did you mean run?)", "see rein --help"],
    [["sesions", "list"], "unknown command 'sesions' (Did you mean sessions?)", "see rein --help"],
    [
      ["sessions", "exprt", "abc"],
      "unknown command 'exprt' (Did you mean export?)",
      "see rein sessions --help",
    ],
    [
      ["run", "--modle", "x", "hi"],
      "unknown option '--modle' (Did you mean --model?)",
      "see rein run --help",
    ],
  ])("rein %j prints the suggestion and exits 2", async (args, said, help) => {
    const result = await rein(args, plain());
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`rein: ${said}`);
    expect(result.stderr).toContain(help);
  });

  it("a word close to no command gets no suggestion", async () => {
    const result = await rein(["frobnicate"], plain());
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("rein: unknown command 'frobnicate'\n");
  });
});

describe("rein chat and rein export", { timeout: 90_000 }, () => {
  it("rein chat is the chat: one prompt per line, the session kept, --continue resumes it", async () => {
    const dir = project({ "rein.config.ts": scriptedConfig(["first answer", "second answer"]) });
    const first = await rein(["chat"], dir, { input: "first question\n/exit\n" });
    expect(first.code).toBe(0);
    expect(first.stdout).toContain("first answer");
    const sessions = readdirSync(join(dir, ".rein", "sessions")).filter((f) => f.endsWith(".jsonl"));
    expect(sessions).toHaveLength(1);

    const again = await rein(["chat", "--continue"], dir, { input: "second question\n/exit\n" });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("second answer");
    expect(readdirSync(join(dir, ".rein", "sessions")).filter((f) => f.endsWith(".jsonl"))).toEqual(sessions);
  });

  it("rein export <id> writes exactly what rein sessions export <id> writes, in every format", async () => {
    const dir = project({ "rein.config.ts": scriptedConfig(["the answer"]) });
    expect((await rein(["run", "a question"], dir)).code).toBe(0);
    const [file] = readdirSync(join(dir, ".rein", "sessions")).filter((f) => f.endsWith(".jsonl"));
    // Session files are `<timestamp>_<id>.jsonl`.
    const id = (file as string).replace(/^.*_/, "").replace(/\.jsonl$/, "");
    for (const format of ["md", "html", "jsonl"]) {
      const short = await rein(["export", id, "--format", format], dir);
      const long = await rein(["sessions", "export", id, "--format", format], dir);
      expect(short.code).toBe(0);
      expect(short.stdout).not.toBe("");
      expect(short.stdout).toBe(long.stdout);
    }
    const help = await rein(["--help"], dir);
    expect(help.stdout).toMatch(/\n {2}chat \[options\]/);
    expect(help.stdout).toMatch(/\n {2}export \[options\] <id>/);
  });
});

describe("an unknown model id", { timeout: 60_000 }, () => {
  it.each([
    [
      "anthropic/claude-sonet-4-5",
      'unknown model "anthropic/claude-sonet-4-5"; did you mean "anthropic/claude-sonnet-4-5"',
    ],
    [
      "antropic/claude-sonnet-4-5",
      'unknown provider "antropic" in model "antropic/claude-sonnet-4-5"; did you mean "anthropic/claude-sonnet-4-5"',
    ],
    [
      "claude-sonnet-4-5",
      'model "claude-sonnet-4-5" is not "provider/id" and no custom model has that id; did you mean "anthropic/claude-sonnet-4-5"',
    ],
    ["openai/gpt-4o-mni", 'unknown model "openai/gpt-4o-mni"; did you mean "openai/gpt-4o-mini"'],
  ])("--model %s names the closest catalog ids", async (model, said) => {
    const result = await rein(["run", "--model", model, "hi"], plain());
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`rein: ${said}`);
  });

  it("the config's model gets the same suggestion, and a custom model's id is suggested too", async () => {
    const dir = project({
      "rein.config.ts": `import { defineConfig } from "@rein/sdk";
export default defineConfig({
  model: "local-lama",
  models: [{ id: "local-llama", baseUrl: "http://127.0.0.1:9/v1" }],
});
`,
    });
    const result = await rein(["run", "hi"], dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `rein: ${join(dir, "rein.config.ts")}:3: model "local-lama" is not "provider/id" and no custom model has that id; did you mean "local-llama"`,
    );
    expect(result.stderr.split("\n")[0]).toMatch(/"local-llama"(,| or|\?)/);
  });

  it("an id close to nothing known gets no suggestion", async () => {
    const result = await rein(["run", "--model", "zzqq/xxyyzz-unrelated", "hi"], plain());
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('unknown provider "zzqq"');
    expect(result.stderr).not.toContain("did you mean");
  });
});
