/**
 * `rein init`: scaffolds a config, an example policy plugin and its test (plus a
 * tsconfig and package.json fields, so the folder typechecks and tests as
 * written); `--plugin` / `--tool-pack` scaffold a standalone package instead
 * (../scaffold/package-scaffold.ts). Never overwrites without --force.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { loadConfig } from "../config/load-config.js";
import { resolvePlugins } from "../config/resolve-plugins.js";
import { ExitCode, usageError } from "../errors.js";
import { type GlobalOptions, version } from "../globals.js";
import { packageScaffold } from "../scaffold/package-scaffold.js";
import { PROJECT_TSCONFIG, projectPackageJson } from "../scaffold/project-scaffold.js";
import { TRUST_ENV } from "../trust/project-trust.js";
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

/**
 * Denies every call that touches a protected file (any tool that declares path
 * arguments: read, write, grep, ...); adds a harmless \`note\` tool. It decides on
 * \`call.facts.paths\`: canonical paths the SDK resolved once (\`..\` collapsed,
 * symlinks followed), so \`src/../.env\` or a link to .env is still .env. Never
 * match raw argument strings: the model can spell a path many ways.
 */
export default definePlugin({
  name: "no-secrets",
  options: Type.Object({ names: Type.Array(Type.String(), { default: [".env", "id_rsa"] }) }),
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
      for (const path of call.facts.paths ?? []) {
        const hit = path.relative.split("/").find((name) => options.names.includes(name));
        if (hit) return { decision: "deny", reason: \`\${path.input} is \${path.relative}\`, rule: "protected-path" };
      }
      return undefined;
    });
  },
});
`;

const TEST = `import { defineTool, Type } from "@rein/sdk";
import { checkToolCall, createTestHarness } from "@rein/sdk/testing";
import { expect, it } from "vitest";
import noSecrets from "./no-secrets.ts";

// A read tool that declares its path argument, as @rein/tools-fs does.
const read = defineTool({
  name: "read",
  description: "Read a file",
  parameters: Type.Object({ path: Type.String() }),
  paths: { path: "file" },
  execute: async () => ({ content: [] }),
});

it("denies a call that touches .env under any spelling, naming the rule", async () => {
  const t = await createTestHarness({ plugins: [noSecrets], tools: [read] });
  for (const path of [".env", "src/../.env", "./config/../.env"]) {
    const verdict = await checkToolCall(t, { name: "read", args: { path } });
    expect(verdict).toMatchObject({ decision: "deny", by: "no-secrets:protected-path" });
  }
  expect((await checkToolCall(t, { name: "read", args: { path: "README.md" } })).decision).toBe("allow");
  await t.dispose();
});
`;

export interface InitOptions {
  force?: boolean;
  plugin?: boolean;
  toolPack?: boolean;
  name?: string;
}

const NPM_NAME = /^(@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*$/;

export async function initCommand(options: InitOptions, globals: GlobalOptions): Promise<number> {
  if (options.plugin && options.toolPack) throw usageError("choose one of --plugin and --tool-pack");
  if (options.plugin || options.toolPack) return initPackage(options, globals);
  const packageFile = join(globals.cwd, "package.json");
  const packageText = existsSync(packageFile) ? readFileSync(packageFile, "utf8") : undefined;
  let packageJson: string;
  try {
    packageJson = projectPackageJson(packageText, basename(globals.cwd), version());
  } catch (error) {
    throw usageError(`package.json: cannot read it as JSON (${(error as Error).message})`);
  }
  const files: [string, string][] = [
    [join(globals.cwd, "rein.config.ts"), CONFIG],
    [join(globals.cwd, "plugins", "no-secrets.ts"), PLUGIN],
    [join(globals.cwd, "plugins", "no-secrets.test.ts"), TEST],
    [join(globals.cwd, "tsconfig.json"), PROJECT_TSCONFIG],
  ];
  writeFiles(files, options, globals);
  // package.json is merged (fields it lacks are added), so it never blocks.
  writeFileSync(packageFile, packageJson);
  terminal().out.write(`${packageText === undefined ? "created" : "updated"} package.json\n`);
  // .gitignore likewise: the local layer (this machine's overrides and grants) and sessions stay out of git.
  const ignoreFile = join(globals.cwd, ".gitignore");
  const ignoreText = existsSync(ignoreFile) ? readFileSync(ignoreFile, "utf8") : undefined;
  const ignored = gitignoreWith(ignoreText);
  if (ignored !== ignoreText) {
    writeFileSync(ignoreFile, ignored);
    terminal().out.write(`${ignoreText === undefined ? "created" : "updated"} .gitignore\n`);
  }
  await recordTrust(globals);
  terminal().err.write(
    'next: npm install && npx rein trust && npx rein run "hello" (npm test runs the plugin\'s test; rein trust records the installed packages)\n',
  );
  return ExitCode.ok;
}

/**
 * The files `rein init` just wrote are the person's own: they are recorded as
 * trusted (trust/), as `rein trust --yes` would. A config that does not load yet
 * (packages not installed) is left for `rein trust`, with a warning.
 */
async function recordTrust(globals: GlobalOptions): Promise<void> {
  const env = { ...process.env };
  delete env[TRUST_ENV];
  try {
    const loaded = await loadConfig({ cwd: globals.cwd, configPath: globals.config, env, recordTrust: true });
    await resolvePlugins(loaded);
    const saved = loaded.trust.save();
    if (saved) terminal().err.write(`trusted the project's code (${saved})\n`);
  } catch (error) {
    terminal().err.write(
      `could not record the project as trusted: ${(error as Error).message}; run rein trust\n`,
    );
  }
}

/** Lines `rein init` keeps in .gitignore: the local config layer and the sessions. */
export const IGNORED = [".rein/local.json", ".rein/sessions/"];

/** `.gitignore` with the lines it lacks appended (unchanged when it has them all). */
export function gitignoreWith(text: string | undefined): string {
  const present = new Set((text ?? "").split(/\r?\n/).map((line) => line.trim()));
  const missing = IGNORED.filter((line) => !present.has(line) && !present.has(`/${line}`));
  if (missing.length === 0 && text !== undefined) return text;
  const before = text === undefined || text === "" ? "" : text.endsWith("\n") ? text : `${text}\n`;
  return `${before}# rein: this machine's config layer and grants, and sessions\n${missing.join("\n")}\n`;
}

async function initPackage(options: InitOptions, globals: GlobalOptions): Promise<number> {
  const packageName = options.name ?? basename(globals.cwd).toLowerCase();
  if (!NPM_NAME.test(packageName)) {
    throw usageError(
      `"${packageName}" is not a valid npm package name`,
      "pass one with --name (lowercase letters, digits, - . _; optionally @scope/)",
    );
  }
  const kind = options.plugin ? "plugin" : "tool-pack";
  const files = packageScaffold({ kind, packageName, reinVersion: version() }).map(
    ([file, text]): [string, string] => [join(globals.cwd, file), text],
  );
  writeFiles(files, options, globals);
  terminal().err.write("next: npm install && npm test && npm pack\n");
  return ExitCode.ok;
}

function writeFiles(files: [string, string][], options: InitOptions, globals: GlobalOptions): number {
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
  return files.length;
}
