/**
 * Rein's reins must stay out of the agent's reach (security invariants 4 and
 * 9): a call the agent makes through a hook may not write Rein's config,
 * plugins or state (`rein.config.*`, `.rein/`, `.rein-plugins/`, `.git/`, every
 * file the stack loaded), nor the agent settings that hold Rein's hook
 * (`.claude/settings*.json`, `.codex/config.toml`, `.codex/hooks.json`,
 * `.gemini/settings.json`, and the user-level ones), nor the user's Rein config
 * dir (the user layer, the trust records, the grant key, the hook daemon's
 * sockets and tokens), nor Rein's cache dir (transpiled config and plugins: they
 * run at the next start): an agent that could edit them could take its reins off. Checked on the canonical paths the gates saw
 * (file tools) and on the shell's redirection targets, resolved the same way;
 * what a shell command does to a file by other means is the sandbox's to stop.
 */
import { homedir } from "node:os";
import { isAbsolute, join, resolve, sep } from "node:path";
import type { AgentHarness } from "@rein/harness";
import { protectedFiles, realpathLoose, reinCacheDir, reinConfigDir, type ToolCallFacts } from "@rein/sdk";

const STATE_DIRS = new Set([".rein", ".rein-plugins", ".git"]);
const CONFIG_NAME = /^rein\.config\.[^/]*$/;
const AGENT_SETTINGS = [
  [".claude", /^settings(\.local)?\.json$/],
  [".codex", /^(config\.toml|hooks\.json)$/],
  [".gemini", /^settings\.json$/],
] as const;

function userSettings(): string[] {
  const env = process.env;
  const claude = env.CLAUDE_CONFIG_DIR ?? join(homedir(), ".claude");
  const codex = env.CODEX_HOME ?? join(homedir(), ".codex");
  return [
    join(claude, "settings.json"),
    join(claude, "settings.local.json"),
    join(codex, "config.toml"),
    join(codex, "hooks.json"),
    join(homedir(), ".gemini", "settings.json"),
  ].map((file) => realpathLoose(file));
}

/** Why `absolute` (canonical) is off limits to the agent, or undefined. */
export function protectedReason(harness: AgentHarness, absolute: string): string | undefined {
  const owner = protectedFiles(harness).protectedBy(absolute);
  if (owner !== undefined) return `${absolute} is Rein's own config or plugin code (loaded by ${owner})`;
  const segments = absolute.split(sep);
  const state = segments.find((segment) => STATE_DIRS.has(segment));
  if (state !== undefined) return `${absolute} is in ${state}, Rein's or git's own state`;
  const name = segments.at(-1) ?? "";
  if (CONFIG_NAME.test(name)) return `${absolute} is a Rein config file`;
  const parent = segments.at(-2) ?? "";
  if (AGENT_SETTINGS.some(([dir, file]) => dir === parent && file.test(name)))
    return `${absolute} holds the agent's hooks, Rein's among them`;
  if (userSettings().includes(absolute)) return `${absolute} holds the agent's hooks, Rein's among them`;
  const configDir = realpathLoose(reinConfigDir());
  if (absolute === configDir || absolute.startsWith(`${configDir}${sep}`))
    return `${absolute} is in Rein's user config dir (trust records, grant key, the hook daemon)`;
  const cacheRoot = realpathLoose(reinCacheDir());
  if (absolute === cacheRoot || absolute.startsWith(`${cacheRoot}${sep}`))
    return `${absolute} is in Rein's cache (transpiled config and plugins Rein runs at its next start)`;
  return undefined;
}

const WRITES = /^(>|>>|>\||&>|&>>|<>|>&)$/;
const DIRECTORY_CHANGES = new Set(["cd", "pushd", "popd"]);

/**
 * Every directory a relative redirection target could be resolved from: the hook's
 * `cwd`, the directory the call names for itself, and each place a `cd` / `pushd`
 * in the same command could have moved to (literal arguments, chained). A directory
 * change Rein cannot follow (`cd -`, `popd`, a word it did not resolve) makes the
 * place unknown: `undefined`.
 */
function candidateDirectories(facts: Readonly<ToolCallFacts>, cwds: readonly string[]): string[] | undefined {
  const dirs = new Set(cwds);
  for (const simple of facts.command?.commands ?? []) {
    const [program, ...args] = simple.argv;
    if (program === undefined || !DIRECTORY_CHANGES.has(program)) continue;
    const operands = args.filter((arg) => !/^-[LPe@]+$/.test(arg));
    if (program === "popd" || operands.length > 1) return undefined;
    const target = operands[0] ?? homedir();
    if (target === "-" || target.startsWith("~") || /^[+-]\d+$/.test(target)) return undefined;
    for (const dir of [...dirs]) dirs.add(isAbsolute(target) ? target : resolve(dir, target));
  }
  return [...dirs];
}

/**
 * The first write target of a call that is off limits, with why. `cwds`: the
 * directories a relative path could be resolved from (the hook's `cwd` first).
 */
export function protectedTarget(
  harness: AgentHarness,
  risk: string | undefined,
  facts: Readonly<ToolCallFacts>,
  cwds: readonly string[],
): string | undefined {
  if (risk === "write") {
    for (const fact of facts.paths ?? []) {
      const reason = protectedReason(harness, fact.absolute);
      if (reason) return reason;
    }
  }
  const targets = (facts.command?.commands ?? []).flatMap((simple) =>
    simple.redirections.filter((r) => WRITES.test(r.op) && !/^&?\d*-?$/.test(r.target)).map((r) => r.target),
  );
  if (targets.length === 0) return undefined;
  const dirs = candidateDirectories(facts, cwds);
  if (dirs === undefined && targets.some((target) => !isAbsolute(target)))
    return "the command changes directory in a way Rein cannot follow and then writes a relative path";
  for (const target of targets) {
    for (const dir of isAbsolute(target) ? [""] : (dirs ?? [])) {
      const reason = protectedReason(
        harness,
        realpathLoose(isAbsolute(target) ? target : resolve(dir, target)),
      );
      if (reason) return reason;
    }
  }
  return undefined;
}

/**
 * For a tool Rein has no schema for (an MCP tool, an unmapped one): the first string
 * in its input that reads as a path and lands on something off limits.
 */
export function protectedLeaf(
  harness: AgentHarness,
  leaves: readonly { key: string; text: string }[],
  cwds: readonly string[],
): string | undefined {
  for (const leaf of leaves) {
    const text = leaf.text.startsWith("~/") ? join(homedir(), leaf.text.slice(2)) : leaf.text;
    if (text === "" || /[\n\0]/.test(text)) continue;
    for (const dir of isAbsolute(text) ? [""] : cwds) {
      const reason = protectedReason(harness, realpathLoose(isAbsolute(text) ? text : resolve(dir, text)));
      if (reason) return `its "${leaf.key}" names ${reason}`;
    }
  }
  return undefined;
}
