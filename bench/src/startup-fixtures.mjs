/**
 * Generates the plugin fixtures of benchmark 4 into a temp folder: 30 Rein
 * plugins (`rein/plugins/pNN.ts`, listed by `rein/rein.config.ts`) and 30
 * equivalent pi extensions (`pi/.pi/extensions/pNN.ts`, pi's project-local
 * discovery folder). Each file is about 100 lines of TypeScript with the same
 * logic: one typebox tool (`lookup_NN`), a gate on tool calls (deny rules), and a
 * result rewrite (redaction and truncation). Only the wiring differs:
 * `definePlugin` + `defineTool` + `toolGate` / `toolResult` taps for Rein, a
 * factory with `registerTool` + `tool_call` / `tool_result` handlers for pi.
 * Every file differs (its number is in names and constants) so no two share a
 * cache entry.
 */
import fs from "node:fs";
import path from "node:path";

const pad = (n) => String(n).padStart(2, "0");

/** The framework-neutral part: types, constants and helpers both variants share. */
function shared(n) {
  const id = pad(n);
  return `// Fixture plugin ${id}: one tool and two taps, about 100 lines like a small real plugin.
interface Rule {
  readonly name: string;
  readonly tool: string | RegExp;
  readonly argument: string;
  readonly pattern: RegExp;
  readonly reason: string;
}

const PLUGIN_NAME = "fixture-${id}";
const MAX_RESULT_CHARS = ${4000 + n * 10};
const SECRET = /(api[_-]?key|token|password)\\s*[:=]\\s*\\S+/gi;

const RULES: readonly Rule[] = [
  { name: "env-${id}", tool: /^(read|write|edit)$/, argument: "path", pattern: /\\.env(\\..*)?$/, reason: "touches an env file" },
  { name: "keys-${id}", tool: "read", argument: "path", pattern: /id_(rsa|ed25519)/, reason: "reads a private key" },
  { name: "rm-${id}", tool: "bash", argument: "command", pattern: /\\brm\\s+-rf\\s+\\//, reason: "deletes from the root" },
  { name: "push-${id}", tool: "bash", argument: "command", pattern: /git\\s+push\\s+.*--force/, reason: "force-pushes" },
];

const TABLE: Record<string, string> = {
  alpha: "first entry of table ${id}",
  beta: "second entry of table ${id}",
  gamma: "third entry of table ${id}",
};

function matchesTool(rule: Rule, tool: string): boolean {
  return typeof rule.tool === "string" ? rule.tool === tool : rule.tool.test(tool);
}

function firstViolation(tool: string, args: Record<string, unknown>): Rule | undefined {
  for (const rule of RULES) {
    if (!matchesTool(rule, tool)) continue;
    const value = args[rule.argument];
    if (typeof value === "string" && rule.pattern.test(value)) return rule;
  }
  return undefined;
}

function redact(text: string): string {
  const clean = text.replace(SECRET, (_match, key: string) => \`\${key}=[redacted by \${PLUGIN_NAME}]\`);
  return clean.length > MAX_RESULT_CHARS ? \`\${clean.slice(0, MAX_RESULT_CHARS)}\\n[truncated]\` : clean;
}

type Content = { type: "text"; text: string } | { type: "image"; data: string; mimeType: string };

function redactAll(content: readonly Content[]): { content: Content[]; changed: boolean } {
  let changed = false;
  const out = content.map((part) => {
    if (part.type !== "text") return part;
    const text = redact(part.text);
    if (text !== part.text) changed = true;
    return text === part.text ? part : { ...part, text };
  });
  return { content: out, changed };
}

function lookup(key: string, limit: number): string {
  const hits = Object.entries(TABLE)
    .filter(([name]) => name.startsWith(key.toLowerCase()))
    .slice(0, limit)
    .map(([name, value]) => \`\${name}: \${value}\`);
  return hits.length > 0 ? hits.join("\\n") : \`no entry for "\${key}" in table ${id}\`;
}
`;
}

function reinPlugin(n) {
  const id = pad(n);
  return `import { definePlugin, defineTool, Type } from "@rein/sdk";

${shared(n)}
const Options = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 10, default: 3 }),
  strict: Type.Boolean({ default: true }),
});

export default definePlugin({
  name: PLUGIN_NAME,
  version: "1.0.${n}",
  description: "Benchmark fixture ${id}: a lookup tool, a deny gate and a redacting result tap.",
  options: Options,
  setup(rein, options) {
    rein.registerTool(
      defineTool({
        name: "lookup_${id}",
        label: "Lookup ${id}",
        description: "Looks a key up in fixture table ${id}",
        parameters: Type.Object({
          key: Type.String({ minLength: 1, description: "the key (prefix) to look up" }),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })),
        }),
        risk: "read",
        execute: async (args) => ({
          content: [{ type: "text", text: lookup(args.key, args.limit ?? options.limit) }],
          details: { table: ${n} },
        }),
      }),
    );
    rein.hooks.toolGate.tapPromise(PLUGIN_NAME, async (call) => {
      const rule = firstViolation(call.name, call.args);
      if (!rule) return undefined;
      return { decision: options.strict ? "deny" : "ask", reason: rule.reason, rule: rule.name };
    });
    rein.hooks.toolResult.tapPromise(PLUGIN_NAME, async (result) => {
      const { content, changed } = redactAll(result.content as Content[]);
      return changed ? { ...result, content } : undefined;
    });
  },
});
`;
}

function piExtension(n) {
  const id = pad(n);
  return `import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";

${shared(n)}
const OPTIONS = { limit: 3, strict: true };

/** Benchmark fixture ${id}: a lookup tool, a blocking tool_call handler and a redacting tool_result handler. */
export default function fixture${id}(pi: ExtensionAPI) {
  pi.registerTool({
    name: "lookup_${id}",
    label: "Lookup ${id}",
    description: "Looks a key up in fixture table ${id}",
    parameters: Type.Object({
      key: Type.String({ minLength: 1, description: "the key (prefix) to look up" }),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })),
    }),
    async execute(_toolCallId, params) {
      return {
        content: [{ type: "text", text: lookup(params.key, params.limit ?? OPTIONS.limit) }],
        details: { table: ${n} },
      };
    },
  });
  pi.on("tool_call", async (event) => {
    const rule = firstViolation(event.toolName, event.input as Record<string, unknown>);
    if (!rule) return undefined;
    return OPTIONS.strict ? { block: true, reason: \`\${rule.name}: \${rule.reason}\` } : undefined;
  });
  pi.on("tool_result", async (event) => {
    const { content, changed } = redactAll(event.content as Content[]);
    return changed ? { content } : undefined;
  });
}
`;
}

/**
 * Writes both fixture sets under `dir`; returns `{ reinDir, piDir, count }`.
 * `reinDir` holds `rein.config.ts` (a scripted model, the 30 plugins), `piDir`
 * holds `.pi/extensions/` (discovered by pi as a project's own extensions).
 */
export function writeFixtures(dir, count = 30) {
  const reinDir = path.join(dir, "rein");
  const piDir = path.join(dir, "pi");
  fs.mkdirSync(path.join(reinDir, "plugins"), { recursive: true });
  fs.mkdirSync(path.join(piDir, ".pi", "extensions"), { recursive: true });
  const names = [];
  for (let n = 1; n <= count; n++) {
    const file = `p${pad(n)}.ts`;
    names.push(file);
    fs.writeFileSync(path.join(reinDir, "plugins", file), reinPlugin(n));
    fs.writeFileSync(path.join(piDir, ".pi", "extensions", file), piExtension(n));
  }
  const config = `import { defineConfig } from "@rein/sdk";

export default defineConfig({
  model: { script: ["ok"] },
  plugins: [
${names.map((file) => `    "./plugins/${file}",`).join("\n")}
  ],
});
`;
  fs.writeFileSync(path.join(reinDir, "rein.config.ts"), config);
  return { reinDir, piDir, count };
}
