/** `rein init`: scaffolds a config, an example policy plugin and its test. Never overwrites without --force. */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { ExitCode, usageError } from "../errors.js";
import type { GlobalOptions } from "../program.js";
import { terminal } from "../ui/terminal.js";

const CONFIG = `import { defineConfig } from "@rein/sdk";

export default defineConfig({
  // A scripted model runs offline; replace it with "anthropic/claude-sonnet-4-5" (see \`rein models\`).
  model: {
    script: [
      { toolCalls: [{ name: "note", args: { text: "hello from rein" } }] },
      "I wrote a note. Edit rein.config.ts to use a real model.",
    ],
  },
  plugins: [
    "./plugins/no-secrets.ts",
    // bash in an OS sandbox: writes only here and to a private temp dir, no network,
    // no ~/.ssh or ~/.aws (needs bubblewrap and socat; \`rein doctor\` checks).
    ["@rein/tools-shell", { sandbox: { mode: "workspace-write", network: { allowedDomains: [] } } }],
  ],
  session: { dir: ".rein/sessions" },
});
`;

const PLUGIN = `import { definePlugin, defineTool, Type } from "@rein/sdk";

/** Denies tool calls whose arguments mention a protected path; adds a harmless \`note\` tool. */
export default definePlugin({
  name: "no-secrets",
  options: Type.Object({ paths: Type.Array(Type.String(), { default: [".env", "id_rsa"] }) }),
  setup(rein, options) {
    rein.registerTool(
      defineTool({
        name: "note",
        description: "Remember a short note",
        parameters: Type.Object({ text: Type.String() }),
        risk: "read",
        execute: async (args) => ({ content: [{ type: "text", text: \`noted: \${args.text}\` }] }),
      }),
    );
    rein.hooks.toolGate.tapPromise("no-secrets", async (call) => {
      const text = JSON.stringify(call.args);
      const hit = options.paths.find((path) => text.includes(path));
      return hit ? { decision: "deny", reason: \`touches \${hit}\`, rule: "protected-path" } : undefined;
    });
  },
});
`;

const TEST = `import { checkToolCall, createTestHarness } from "@rein/sdk/testing";
import { expect, it } from "vitest";
import noSecrets from "./no-secrets.ts";

it("denies a call that touches .env, naming the rule", async () => {
  const t = await createTestHarness({ plugins: [noSecrets] });
  const verdict = await checkToolCall(t, { name: "read", args: { path: ".env" } });
  expect(verdict).toMatchObject({ decision: "deny", by: "no-secrets:protected-path" });
  await t.dispose();
});
`;

export async function initCommand(options: { force?: boolean }, globals: GlobalOptions): Promise<number> {
  const files: [string, string][] = [
    [join(globals.cwd, "rein.config.ts"), CONFIG],
    [join(globals.cwd, "plugins", "no-secrets.ts"), PLUGIN],
    [join(globals.cwd, "plugins", "no-secrets.test.ts"), TEST],
  ];
  const existing = files.filter(([file]) => existsSync(file)).map(([file]) => relative(globals.cwd, file));
  if (existing.length > 0 && !options.force) {
    throw usageError(
      `${existing.join(", ")} already exist${existing.length === 1 ? "s" : ""}`,
      "use --force to overwrite",
    );
  }
  const term = terminal();
  for (const [file, text] of files) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    term.out.write(`created ${relative(globals.cwd, file)}\n`);
  }
  term.err.write(
    'next: npm install -D @rein/cli @rein/sdk @rein/tools-shell vitest && npx rein run "hello"\n',
  );
  return ExitCode.ok;
}
