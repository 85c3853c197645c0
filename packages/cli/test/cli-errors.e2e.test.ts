/**
 * The CLI README's error rules, through the built binary: every bad input below
 * prints one line (`rein: ...`) plus at most one hint line, no stack trace, exits
 * with the documented code, and names the config file and line where there is one.
 */
import { join } from "node:path";
import { SessionStore } from "@rein/harness";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, project, rein, scriptedConfig, TOOLS_PLUGIN } from "./support/rein-process.js";

afterAll(cleanup);

const OPTIONS_PLUGIN = `import { definePlugin, Type } from "@rein/sdk";
export default definePlugin({ name: "limits", options: Type.Object({ max: Type.Number() }), setup() {} });
`;
const THROWING_PLUGIN = `import { definePlugin } from "@rein/sdk";
export default definePlugin({ name: "vault", setup() { throw new Error("cannot reach the vault\\nsecond line"); } });
`;
const TOOL_PACK = (name: string) => `import { defineTool, Type } from "@rein/sdk";
export default [defineTool({ name: "${name}", description: "x", parameters: Type.Object({}), risk: "read", execute: async () => ({ content: [] }) })];
`;

interface BadInput {
  name: string;
  files: Record<string, string>;
  args: string[];
  /** Holds the lock of the project's only session while rein runs. */
  lockSession?: boolean;
  code: number;
  /** `file:line` the message must name (relative to the project). */
  at?: string;
  /** Further text the one line must contain. */
  says: string[];
}

const sessionFiles = { "rein.config.ts": scriptedConfig(["hi", "again"]) };

const BAD_INPUTS: BadInput[] = [
  {
    name: "unknown command",
    files: {},
    args: ["frobnicate"],
    code: 2,
    says: ["unknown command 'frobnicate'"],
  },
  {
    name: "unknown flag",
    files: {},
    args: ["run", "--frob", "x"],
    code: 2,
    says: ["unknown option '--frob'"],
  },
  {
    name: "JSON config syntax error",
    files: { "rein.config.json": '{\n  "model": { "script": ["hi"] },,\n}\n' },
    args: ["run", "hi"],
    code: 2,
    at: "rein.config.json:2",
    says: ["invalid JSON at column 33"],
  },
  {
    name: "TypeScript config syntax error",
    files: { "rein.config.ts": 'export default {\n  model: { script: ["hi"] },,\n};\n' },
    args: ["run", "hi"],
    code: 2,
    at: "rein.config.ts:2",
    says: ["cannot load the config"],
  },
  {
    name: "plugin option of the wrong type",
    files: {
      "rein.config.ts":
        'export default {\n  model: { script: ["hi"] },\n  plugins: [\n    "./tools.ts",\n    ["./limits.ts", { max: "ten" }],\n  ],\n};\n',
      "tools.ts": TOOLS_PLUGIN,
      "limits.ts": OPTIONS_PLUGIN,
    },
    args: ["run", "hi"],
    code: 2,
    at: "rein.config.ts:5",
    says: ["plugins[1]", 'plugin "limits"', "max"],
  },
  {
    name: "plugin setup that throws",
    files: {
      "rein.config.ts":
        'export default {\n  model: { script: ["hi"] },\n  plugins: [\n    "./vault.ts",\n  ],\n};\n',
      "vault.ts": THROWING_PLUGIN,
    },
    args: ["run", "hi"],
    code: 2,
    at: "rein.config.ts:4",
    says: ["plugins[0]", 'plugin "vault" failed in setup: cannot reach the vault'],
  },
  {
    name: "tool packs registering the same tool",
    files: {
      "rein.config.ts":
        'export default {\n  model: { script: ["hi"] },\n  plugins: [\n    "./a.ts",\n    "./b.ts",\n  ],\n};\n',
      "a.ts": TOOL_PACK("same"),
      "b.ts": TOOL_PACK("same"),
    },
    args: ["run", "hi"],
    code: 2,
    at: "rein.config.ts:5",
    says: ['tool pack "./a.ts"', 'tool pack "./b.ts"'],
  },
  {
    name: "retry option out of range",
    files: {
      "rein.config.ts": 'export default {\n  model: { script: ["hi"] },\n  retry: { maxAttempts: 0 },\n};\n',
    },
    args: ["run", "hi"],
    code: 2,
    at: "rein.config.ts:3",
    says: ["retry.maxAttempts: expected an integer >= 1, got number 0"],
  },
  {
    name: "config with only a named export",
    files: { "rein.config.ts": 'export const config = { model: { script: ["hi"] } };\n' },
    args: ["run", "hi"],
    code: 2,
    at: "rein.config.ts",
    says: ['no default export (found "config")'],
  },
  {
    name: "session in use, by --session",
    files: sessionFiles,
    args: ["run", "--session", "SESSION", "again"],
    lockSession: true,
    code: 2,
    says: ["session in use"],
  },
  {
    name: "session in use, by --continue",
    files: sessionFiles,
    args: ["run", "--continue", "again"],
    lockSession: true,
    code: 2,
    says: ["session in use"],
  },
];

describe("CLI errors: one line and a hint, naming the file and line", { timeout: 60_000 }, () => {
  it.each(BAD_INPUTS)("$name", async (bad) => {
    const dir = project(bad.files);
    let args = bad.args;
    let release: () => void = () => {};
    if (bad.lockSession) {
      expect((await rein(["run", "first"], dir)).code).toBe(0);
      const store = new SessionStore(join(dir, ".rein/sessions"));
      const id = store.list()[0]?.id as string;
      const held = store.open(id); // this test process holds the lock, as a live run would
      release = () => held.close();
      args = args.map((arg) => (arg === "SESSION" ? id : arg));
    }
    try {
      const result = await rein(args, dir);
      expect(result.code).toBe(bad.code);
      expect(result.stdout).toBe("");
      const lines = result.stderr.trimEnd().split("\n");
      expect(lines.length, result.stderr).toBeLessThanOrEqual(2);
      expect(lines[0]).toMatch(/^rein: /);
      if (lines[1] !== undefined) expect(lines[1]).toMatch(/^ {2}\S/);
      expect(result.stderr).not.toMatch(/^\s+at /m);
      // `<dir>/rein.config.ts:5: ...`, or `<dir>/rein.config.ts: ...` where no line applies.
      if (bad.at) expect(lines[0]).toContain(`${join(dir, bad.at)}: `);
      for (const text of bad.says) expect(lines[0]).toContain(text);
    } finally {
      release();
    }
  });
});
