/**
 * house-rules: a small policy plugin, written on the facts the SDK resolves for
 * every call - never on the raw argument strings the model typed.
 *
 * - A tool with `risk: "write"` may only touch paths inside the writable roots
 *   (default `src`, relative to the working directory). Decided on
 *   `call.facts.paths`: canonical (`..` collapsed, symlinks resolved), so
 *   `src/../.env` and a link `src/cfg -> ../.env` are both outside. A write tool
 *   that declares no path arguments cannot be checked, so it is denied.
 * - A shell call asks for permission when any simple command anywhere in it is
 *   `git push` (`call.facts.command.commands`: words unquoted, wrappers such as
 *   `sudo` or `env` unwrapped), and also when the command could not be fully
 *   understood (`unknown` parts, or a shell tool that gives no facts).
 *
 * Every verdict carries a `rule`, so the harness records `by: "house-rules:<rule>"`.
 * Calls it has no opinion on get no verdict: the harness default applies.
 */
import { definePlugin, type GateVerdict, type Static, type ToolGateCall, Type } from "@rein/sdk";

const Options = Type.Object({
  /** Directories (relative to the working directory) a write tool may touch. */
  writableRoots: Type.Array(Type.String(), { default: ["src"] }),
  /** Programs whose subcommand needs permission, as "program subcommand". */
  askBefore: Type.Array(Type.String(), { default: ["git push"] }),
  /** The shell tool's name. */
  shellTool: Type.String({ default: "bash" }),
});
export type HouseRulesOptions = Static<typeof Options>;

/**
 * The shape of `call.facts.command` (declared by `@rein/sdk/shell`), read
 * structurally so this file compiles against any SDK that has the facts.
 */
interface CommandFactsView {
  commands: readonly { argv: readonly string[] }[];
  unknown: readonly { reason: string; text: string }[];
}

/** Whether a canonical project-relative path is one of the roots or below it. */
function isUnder(relative: string, roots: readonly string[]): boolean {
  return roots.some((root) => {
    const clean = root.replace(/^\.\/+/, "").replace(/\/+$/, "");
    return relative === clean || relative.startsWith(`${clean}/`);
  });
}

/** The first `program subcommand` pattern a simple command matches (`git -C x push` matches `git push`). */
function asked(argv: readonly string[], patterns: readonly string[][]): string | undefined {
  const program = (argv[0] ?? "").split("/").at(-1);
  for (const [name, sub] of patterns) {
    if (program === name && (sub === undefined || argv.slice(1).includes(sub)))
      return `${name} ${sub ?? ""}`.trim();
  }
  return undefined;
}

function checkWrite(call: ToolGateCall, roots: readonly string[]): GateVerdict | undefined {
  const paths = call.facts.paths ?? [];
  if (paths.length === 0) {
    return { decision: "deny", rule: "write-without-path", reason: `${call.name} declares no path to check` };
  }
  for (const fact of paths) {
    if (!isUnder(fact.relative, roots)) {
      const shown = fact.input === fact.relative ? fact.input : `${fact.input} (really ${fact.relative})`;
      return {
        decision: "deny",
        rule: "outside-writable-roots",
        reason: `${shown} is outside ${roots.join(", ")}`,
      };
    }
  }
  return undefined;
}

function checkShell(call: ToolGateCall, patterns: readonly string[][]): GateVerdict | undefined {
  const command = (call.facts as { command?: CommandFactsView }).command;
  if (!command || command.unknown.length > 0) {
    const why = command?.unknown[0]?.reason ?? "the shell tool gave no parsed command";
    return { decision: "ask", rule: "not-understood", reason: `cannot tell what this command runs (${why})` };
  }
  for (const simple of command.commands) {
    const hit = asked(simple.argv, patterns);
    if (hit) return { decision: "ask", rule: "ask-before", reason: `"${simple.argv.join(" ")}" runs ${hit}` };
  }
  return undefined;
}

export default definePlugin({
  name: "house-rules",
  version: "0.1.0",
  description: "Deny writes outside src/, ask before git push.",
  options: Options,
  // Every `rule` a verdict below can carry: `rein plugins` lists them, coverage counts them.
  rules: ["write-without-path", "outside-writable-roots", "not-understood", "ask-before"],
  setup(rein, options) {
    const patterns = options.askBefore.map((text) => text.trim().split(/\s+/));
    rein.hooks.toolGate.tap("house-rules", (call): GateVerdict | undefined => {
      if (call.risk === "write") return checkWrite(call, options.writableRoots);
      if (call.name === options.shellTool) return checkShell(call, patterns);
      return undefined;
    });
    rein.logger.debug(`writable roots: ${options.writableRoots.join(", ")}`);
  },
});
