/**
 * `rein init --plugin` / `--tool-pack`: a standalone npm package that builds,
 * tests and packs outside any monorepo. Invariant: every file here is complete as
 * written (the packaging test installs, tests and packs a fresh scaffold), and
 * `@rein/sdk` is a peer dependency (the CLI provides its own copy) plus a dev
 * dependency (for types, build and tests).
 */

export type PackageKind = "plugin" | "tool-pack";

export interface PackageScaffoldInput {
  kind: PackageKind;
  /** npm package name, e.g. `rein-plugin-house-rules` or `@acme/rein-tools`. */
  packageName: string;
  /** The version of @rein/sdk (and the CLI) to depend on. */
  reinVersion: string;
  /** The dev dependency spec for `@rein/<name>` (rein-source.ts); `^reinVersion` when unset. */
  specOf?: (name: string) => string;
}

/** The unscoped part of a package name: the plugin's name. */
export const pluginNameOf = (packageName: string) => packageName.replace(/^@[^/]+\//, "");

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

function packageJson({ kind, packageName, reinVersion, specOf }: PackageScaffoldInput): string {
  const sdk = specOf?.("@rein/sdk") ?? `^${reinVersion}`;
  // From a tarball, @rein/sdk's own dependency on @rein/harness must come from one too (not on the registry yet).
  const harness = sdk.startsWith("file:") ? { "@rein/harness": specOf?.("@rein/harness") ?? "" } : {};
  return json({
    name: packageName,
    version: "0.1.0",
    description:
      kind === "plugin" ? "A Rein policy plugin." : "A Rein tool pack: tools any rein.config.ts can list.",
    type: "module",
    license: "MIT",
    keywords: ["rein", kind === "plugin" ? "rein-plugin" : "rein-tool-pack"],
    engines: { node: ">=22.19" },
    main: "./dist/index.js",
    types: "./dist/index.d.ts",
    exports: {
      ".": { types: "./dist/index.d.ts", import: "./dist/index.js" },
      "./package.json": "./package.json",
    },
    files: ["dist", "README.md"],
    scripts: {
      build: "tsc -p tsconfig.build.json",
      typecheck: "tsc",
      test: "vitest run",
      prepack: "npm run build",
      changeset: "changeset",
      release: "npm run build && changeset publish",
    },
    peerDependencies: { "@rein/sdk": `^${reinVersion}` },
    devDependencies: {
      "@changesets/cli": "^2.31.1",
      ...harness,
      "@rein/sdk": sdk,
      "@types/node": "^24.0.0",
      typescript: "~5.9.3",
      vitest: "^5.1.2",
    },
  });
}

const TSCONFIG = json({
  compilerOptions: {
    target: "ES2022",
    lib: ["ES2023"],
    module: "NodeNext",
    moduleResolution: "NodeNext",
    strict: true,
    noUncheckedIndexedAccess: true,
    isolatedModules: true,
    verbatimModuleSyntax: true,
    skipLibCheck: true,
    types: ["node"],
    noEmit: true,
  },
  include: ["src", "test"],
});

const TSCONFIG_BUILD = json({
  extends: "./tsconfig.json",
  compilerOptions: { noEmit: false, rootDir: "src", outDir: "dist", declaration: true },
  include: ["src"],
});

const CHANGESET_CONFIG = json({
  $schema: "https://unpkg.com/@changesets/config@3.1.1/schema.json",
  changelog: "@changesets/cli/changelog",
  commit: false,
  fixed: [],
  linked: [],
  access: "public",
  baseBranch: "main",
  updateInternalDependencies: "patch",
  ignore: [],
});

const CHANGESET_README = `# Changesets

Describe each change with \`npx changeset\`; \`npx changeset version\` bumps the
version and writes CHANGELOG.md; \`npm run release\` builds and publishes
(access is public, see config.json).
`;

const GITIGNORE = "node_modules\ndist\n*.tgz\n";

function pluginSource(name: string): string {
  return `import { definePlugin, Type } from "@rein/sdk";

/**
 * Denies every call that touches a protected file or folder (any tool that declares
 * path arguments: read, write, grep, ...). It decides on \`call.facts\`: canonical
 * paths the SDK resolved once (\`..\` collapsed, symlinks followed), so
 * \`src/../.env\` or a link to .env is still .env. Never match raw argument strings:
 * the model can spell a path many ways.
 */
export default definePlugin({
  name: "${name}",
  options: Type.Object({
    protect: Type.Array(Type.String(), { default: [".env", ".git"] }),
  }),
  setup(rein, options) {
    rein.hooks.toolGate.tapPromise("${name}", async (call) => {
      // Declared path arguments, and paths a tool pack found in other arguments (MCP tools).
      for (const path of [...(call.facts.paths ?? []), ...(call.facts.mentionedPaths ?? [])]) {
        const hit = path.relative.split("/").find((segment) => options.protect.includes(segment));
        if (hit) return { decision: "deny", reason: \`\${path.input} is \${path.relative}\`, rule: "protected-path" };
      }
      return undefined;
    });
  },
});
`;
}

function pluginTest(name: string): string {
  return `import { defineTool, Type } from "@rein/sdk";
import { checkToolCall, createTestHarness } from "@rein/sdk/testing";
import { expect, it } from "vitest";
import plugin from "../src/index.js";

// The gate is tested against a registered tool that declares its path argument, as a
// real file tool does: the SDK then resolves every spelling to one canonical path.
const readFile = defineTool({
  name: "read_file",
  description: "Read a file",
  parameters: Type.Object({ path: Type.String() }),
  paths: { path: "file" },
  risk: "read",
  execute: async () => ({ content: [{ type: "text", text: "" }] }),
});

it("denies a call that touches a protected path under any spelling, naming the rule", async () => {
  const t = await createTestHarness({ plugins: [plugin], tools: [readFile] });
  for (const path of [".env", "src/../.env", "./config/../.env", ".git/config"]) {
    const verdict = await checkToolCall(t, { name: "read_file", args: { path } });
    expect(verdict, path).toMatchObject({ decision: "deny", by: "${name}:protected-path", registered: true });
  }
  await t.dispose();
});

it("leaves other calls to the rest of the stack, also names that only contain a protected one", async () => {
  const t = await createTestHarness({ plugins: [[plugin, { protect: ["secrets"] }]], tools: [readFile] });
  for (const path of ["src/index.ts", "docs/secrets-management.md"]) {
    const verdict = await checkToolCall(t, { name: "read_file", args: { path } });
    expect(verdict, path).toMatchObject({ decision: "allow", by: "harness:default" });
  }
  await t.dispose();
});
`;
}

const TOOL_PACK_SOURCE = `import { defineTool, Type, truncateOutput } from "@rein/sdk";

/** Counts words in a text and lists the most frequent ones. */
export const countWords = defineTool({
  name: "count_words",
  label: "Count words",
  description: "Count the words in a text and list the most frequent ones, most frequent first.",
  parameters: Type.Object({
    text: Type.String({ description: "the text to count" }),
    top: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 1000, description: "how many words to list (default 10)" }),
    ),
  }),
  risk: "read",
  idempotent: true,
  execute: async ({ text, top = 10 }) => {
    const counts = new Map<string, number>();
    for (const word of text.toLowerCase().match(/[\\p{L}\\p{N}']+/gu) ?? []) {
      counts.set(word, (counts.get(word) ?? 0) + 1);
    }
    const total = [...counts.values()].reduce((sum, n) => sum + n, 0);
    const lines = [...counts.entries()]
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .map(([word, n]) => \`\${word} \${n}\`);
    // Keep what the model reads small, and say what was cut.
    const listed = truncateOutput(lines.join("\\n"), { maxLines: top, maxBytes: 8_000 });
    const body = [\`\${total} words\`, listed.text.trimEnd(), listed.note].filter(Boolean).join("\\n");
    return { content: [{ type: "text", text: body }], details: { total, distinct: counts.size } };
  },
});

export default [countWords];
`;

const TOOL_PACK_TEST = `import { createTestHarness, toolContext } from "@rein/sdk/testing";
import { expect, it } from "vitest";
import tools, { countWords } from "../src/index.js";

const text = (result: { content: { type: string; text?: string }[] }) => result.content[0]?.text ?? "";

it("counts words and lists the most frequent first", async () => {
  const result = await countWords.execute({ text: "the cat and the hat", top: 2 }, toolContext());
  expect(text(result)).toBe("5 words\\nthe 2\\nand 1\\n[output truncated: kept 2 of 4 lines (12 B of 23 B)]");
  expect(result.details).toEqual({ total: 5, distinct: 4 });
});

it("runs in an agent: the model's call is validated and answered", async () => {
  const t = await createTestHarness({
    tools,
    script: [
      { toolCalls: [{ name: "count_words", args: { text: "one two two" } }] },
      "Two words, one repeated.",
    ],
  });
  await t.prompt("count");
  const results = t.messages().filter((message) => message.role === "toolResult");
  expect(results.map((message) => message.content[0]?.type === "text" && message.content[0].text)).toEqual([
    "3 words\\ntwo 2\\none 1",
  ]);
  await t.dispose();
});
`;

function readme({ kind, packageName }: PackageScaffoldInput): string {
  const what =
    kind === "plugin"
      ? "A [Rein](https://github.com/rein-dev/rein) policy plugin: it denies tool calls that touch a protected path."
      : "A [Rein](https://github.com/rein-dev/rein) tool pack: `count_words`.";
  const entry =
    kind === "plugin" ? `["${packageName}", { protect: [".env", "secrets/"] }]` : `"${packageName}"`;
  return `# ${packageName}

${what}

## Use it

\`\`\`sh
npm install -D ${packageName}
\`\`\`

and list it in \`rein.config.ts\`: \`plugins: [${entry}]\`. \`rein ${kind === "plugin" ? "plugins" : "tools"}\` shows it.

## Develop

\`\`\`sh
npm install
npm test            # vitest, offline: a scripted model, no API key
npm run typecheck   # tsc over src and test
npm run build       # dist/ (also run by npm pack / npm publish)
npx changeset       # describe a change; npx changeset version; npm run release
\`\`\`

\`@rein/sdk\` is a peer dependency: the \`rein\` command provides its own copy.
`;
}

/** Files of the scaffold, relative to its folder. */
export function packageScaffold(input: PackageScaffoldInput): [string, string][] {
  const name = pluginNameOf(input.packageName);
  return [
    ["package.json", packageJson(input)],
    ["tsconfig.json", TSCONFIG],
    ["tsconfig.build.json", TSCONFIG_BUILD],
    ["src/index.ts", input.kind === "plugin" ? pluginSource(name) : TOOL_PACK_SOURCE],
    ["test/index.test.ts", input.kind === "plugin" ? pluginTest(name) : TOOL_PACK_TEST],
    [".changeset/config.json", CHANGESET_CONFIG],
    [".changeset/README.md", CHANGESET_README],
    [".gitignore", GITIGNORE],
    ["README.md", readme(input)],
  ];
}
