/**
 * The real agents the hook tests run, from packages/cli's devDependencies
 * (pinned: @anthropic-ai/claude-code 2.1.332, @openai/codex 0.171.0,
 * @google/gemini-cli 0.61.0, a Node bundle). The first two
 * npm packages ship native binaries in per-platform packages; Claude Code's
 * postinstall (which would copy it to bin/claude.exe) does not run under pnpm's
 * build policy, so the platform package's binary is used directly.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

const require = createRequire(import.meta.url);

function packageDir(name: string, from?: string): string {
  const resolver = from ? createRequire(join(from, "package.json")) : require;
  return dirname(resolver.resolve(`${name}/package.json`));
}

/** Claude Code's native binary for this platform. */
export function claudeBinary(): string {
  const platform = `@anthropic-ai/claude-code-${process.platform}-${process.arch}`;
  const file = join(packageDir(platform, packageDir("@anthropic-ai/claude-code")), "claude");
  if (!existsSync(file)) throw new Error(`no Claude Code binary at ${file}`);
  return file;
}

/** Codex's launcher (a Node script that finds its platform binary). */
export function codexLauncher(): string {
  return join(packageDir("@openai/codex"), "bin", "codex.js");
}

/** Codex's native binary for this platform (its output schemas are embedded in it). */
export function codexBinary(): string {
  const triple = process.arch === "arm64" ? "aarch64-unknown-linux-musl" : "x86_64-unknown-linux-musl";
  const platform = packageDir("@openai/codex-linux-x64", packageDir("@openai/codex"));
  const file = join(platform, "vendor", triple, "bin", "codex");
  if (!existsSync(file)) throw new Error(`no Codex binary at ${file}`);
  return file;
}

/** Gemini CLI's bundle (run with this Node). */
export function geminiBundle(): string {
  return join(packageDir("@google/gemini-cli"), "bundle", "gemini.js");
}
