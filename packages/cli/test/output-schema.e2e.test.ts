/**
 * `rein run --output-schema` through the built binary: a matching answer is the
 * only thing on stdout and typed in the `--json` end event; a wrong answer gets
 * exactly one repair turn that tells the model what was wrong; still wrong exits
 * 3; a bad schema file is a usage error (exit 2) naming the file, before any run.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, project, rein } from "./support/rein-process.js";

afterAll(cleanup);

const SCHEMA = JSON.stringify({
  type: "object",
  properties: { title: { type: "string" }, count: { type: "integer", minimum: 0 } },
  required: ["title", "count"],
  additionalProperties: false,
});

/** A config whose scripted model records each request's system prompt and last user text. */
const recordingConfig = (replies: string[]) => `import { appendFileSync } from "node:fs";
const replies = ${JSON.stringify(replies)};
export default {
  model: {
    script: replies.map((reply) => (request) => {
      const last = request.context.messages.at(-1);
      const text = typeof last.content === "string" ? last.content : last.content.map((b) => b.text ?? "").join("");
      appendFileSync("requests.jsonl", JSON.stringify({ system: request.context.systemPrompt, user: text }) + "\\n");
      return reply;
    }),
  },
};
`;

const requests = (dir: string) =>
  readFileSync(join(dir, "requests.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { system: string; user: string });

const userMessages = (dir: string) => {
  const folder = join(dir, ".rein/sessions");
  const [file] = readdirSync(folder).filter((f) => f.endsWith(".jsonl"));
  return readFileSync(join(folder, file as string), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line))
    .filter((e) => e.type === "message" && e.message.role === "user")
    .map((e) => e.message.content as string);
};

describe("rein run --output-schema", { timeout: 60_000 }, () => {
  it("a matching answer: stdout is the JSON alone, the model was told the schema, exit 0", async () => {
    const dir = project({
      "rein.config.ts": recordingConfig(['```json\n{"title": "report", "count": 2}\n```']),
      "schema.json": SCHEMA,
    });
    const result = await rein(["run", "--output-schema", "schema.json", "summarise"], dir);
    expect(result.stderr).not.toContain("rein:");
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ title: "report", count: 2 });
    expect(result.stdout.trim().split("\n")).toHaveLength(1);
    const [first] = requests(dir);
    expect(first?.system).toContain("must be exactly one JSON value that matches this JSON Schema");
    expect(first?.system).toContain('"additionalProperties": false');
  });

  it("--json: the parsed result is typed in the end event", async () => {
    const dir = project({
      "rein.config.ts": recordingConfig(['{"title": "t", "count": 7}']),
      "schema.json": SCHEMA,
    });
    const result = await rein(["run", "--json", "--output-schema", "schema.json", "go"], dir);
    expect(result.code).toBe(0);
    const end = JSON.parse(result.stdout.trimEnd().split("\n").at(-1) as string);
    expect(end).toMatchObject({
      type: "end",
      status: "completed",
      exitCode: 0,
      output: { title: "t", count: 7 },
    });
    expect(typeof end.output.count).toBe("number");
  });

  it("a wrong answer gets one repair turn naming what was wrong; a right repair exits 0", async () => {
    const dir = project({
      "rein.config.ts": recordingConfig(['{"title": "t", "count": -1}', '{"title": "t", "count": 1}']),
      "schema.json": SCHEMA,
    });
    const result = await rein(["run", "--output-schema", "schema.json", "count things"], dir);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ title: "t", count: 1 });
    expect(result.stderr).toContain("does not match");
    const sent = requests(dir);
    expect(sent).toHaveLength(2);
    expect(sent[1]?.user).toContain("/count: must be >= 0");
    expect(sent[1]?.user).toContain("Reply again with only the corrected JSON value");
    expect(userMessages(dir)).toEqual(["count things", sent[1]?.user]);
  });

  it("still wrong after the repair turn: exit 3, errors on stderr, nothing on stdout", async () => {
    const dir = project({
      "rein.config.ts": recordingConfig([
        "not json at all",
        '{"title": 5, "count": 1, "extra": true}',
        "unused",
      ]),
      "schema.json": SCHEMA,
    });
    const result = await rein(["run", "--output-schema", "schema.json", "go"], dir);
    expect(result.code).toBe(3);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("/title: must be string");
    expect(result.stderr).toContain("must NOT have additional properties");
    const sent = requests(dir);
    expect(sent).toHaveLength(2); // one repair turn, no more
    expect(sent[1]?.user).toContain("the answer is not JSON");

    const json = await rein(
      ["run", "--json", "--output-schema", "schema.json", "go"],
      project({
        "rein.config.ts": recordingConfig(['{"title": 1}', '{"title": 2}']),
        "schema.json": SCHEMA,
      }),
    );
    expect(json.code).toBe(3);
    const end = JSON.parse(json.stdout.trimEnd().split("\n").at(-1) as string);
    expect(end).toMatchObject({ type: "end", status: "completed", exitCode: 3 });
    expect(end.output).toBeUndefined();
    expect(end.outputErrors).toContain("/title: must be string");
  });

  it.each([
    ["missing.json", undefined, /--output-schema missing\.json: ENOENT/],
    ["bad.json", "{ not json", /--output-schema bad\.json: .*JSON/],
    ["typo.json", '{ "type": "strin" }', /--output-schema typo\.json: not a valid JSON Schema/],
    ["keyword.json", '{ "type": "object", "propertees": {} }', /not a valid JSON Schema: .*propertees/],
  ])("a bad schema file (%s) is exit 2 naming it, before the model is asked", async (name, text, message) => {
    const files: Record<string, string> = { "rein.config.ts": recordingConfig(["{}"]) };
    if (text !== undefined) files[name] = text;
    const dir = project(files);
    const result = await rein(["run", "--output-schema", name, "go"], dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(readdirSync(dir)).not.toContain("requests.jsonl");
  });
});
