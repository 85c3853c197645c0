/**
 * house-rules: a small policy plugin.
 *
 * - A tool with `risk: "write"` may only write inside the writable roots
 *   (default `src/`, relative to the working directory). Anything else, a path
 *   escaping with `..`, or a write tool with no path argument, is denied.
 * - A `bash` call that runs `git push` needs permission: the gate answers `ask`
 *   and whoever handles `permissionAsk` (the terminal, a web UI, another policy)
 *   decides. Nobody answering means deny.
 *
 * Every verdict carries a `rule`, so the harness records `by: "house-rules:<rule>"`.
 * Calls it has no opinion on get no verdict: the harness default applies.
 */
import path from "node:path";
import { definePlugin, type GateVerdict, type Static, type ToolGateCall, Type } from "@rein/sdk";

const Options = Type.Object({
  /** Directories (relative to the working directory) a write tool may touch. */
  writableRoots: Type.Array(Type.String(), { default: ["src"] }),
  /** Shell commands (as regular expressions) that need permission. */
  askBefore: Type.Array(Type.String(), { default: ["\\bgit\\s+push\\b"] }),
  /** The shell tool's name. */
  shellTool: Type.String({ default: "bash" }),
});
export type HouseRulesOptions = Static<typeof Options>;

/** Argument names write tools use for their target file. */
const PATH_ARGS = ["path", "file_path", "filePath", "file"] as const;

function targetPath(call: ToolGateCall): string | undefined {
  for (const key of PATH_ARGS) {
    const value = call.args[key];
    if (typeof value === "string" && value !== "") return value;
  }
  return undefined;
}

function isInside(root: string, target: string): boolean {
  const relative = path.relative(root, target);
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}

export default definePlugin({
  name: "house-rules",
  version: "0.1.0",
  description: "Deny writes outside src/, ask before git push.",
  options: Options,
  setup(rein, options) {
    const askPatterns = options.askBefore.map((source) => new RegExp(source));

    rein.hooks.toolGate.tap("house-rules", (call, context): GateVerdict | undefined => {
      const cwd = context.config.cwd;
      if (call.risk === "write") {
        const target = targetPath(call);
        if (target === undefined) {
          return {
            decision: "deny",
            rule: "write-without-path",
            reason: `${call.name} names no file to write`,
          };
        }
        const absolute = path.resolve(cwd, target);
        const roots = options.writableRoots.map((root) => path.resolve(cwd, root));
        if (!roots.some((root) => isInside(root, absolute))) {
          return {
            decision: "deny",
            rule: "outside-writable-roots",
            reason: `${target} is outside ${options.writableRoots.join(", ")}`,
          };
        }
        return undefined;
      }
      if (call.name === options.shellTool) {
        const command = call.args.command;
        if (typeof command === "string" && askPatterns.some((pattern) => pattern.test(command))) {
          return { decision: "ask", rule: "ask-before", reason: `"${command}" publishes commits` };
        }
      }
      return undefined;
    });

    rein.logger.debug(`writable roots: ${options.writableRoots.join(", ")}`);
  },
});
