/**
 * The command-line config layer: `--model`, `--allow`, `--deny`, `--ask`,
 * `--permission-mode` and `--sandbox` as a config, merged between the local and
 * the managed layers (merge-config.ts).
 *
 * Invariants: `--allow/--ask/--deny` become `@rein/plugin-policy` rules (ids
 * `flag-allow-1`, ...), so they meet every other layer's rules in one list and
 * strictest wins (a flag can never undo a deny); `--permission-mode` is
 * `@rein/plugin-permissions`'s `mode`; `--sandbox` only changes a shell the
 * config already loads (`@rein/tools-shell`), it never adds one.
 */
import type { ReinConfig } from "@rein/sdk";
import { type Command, Option } from "commander";
import { usageError } from "../errors.js";

export const PERMISSION_MODES = ["default", "acceptEdits", "plan", "sandboxed"] as const;
export const SANDBOX_MODES = ["workspace-write", "read-only", "off"] as const;
export const SHELL_PLUGIN = "@rein/tools-shell";

export interface ConfigFlags {
  model?: string | undefined;
  allow?: string[] | undefined;
  ask?: string[] | undefined;
  deny?: string[] | undefined;
  permissionMode?: string | undefined;
  sandbox?: string | undefined;
}

/** Commander's collector for a repeatable option. */
export const collect = (value: string, previous: string[] = []) => [...previous, value];

/** Adds the config flags to a command (`rein run`, `rein dev`). */
export function addConfigFlags(command: Command): Command {
  return command
    .option("-m, --model <id>", "the model (provider/id or a custom model id), over the config's")
    .option(
      "--allow <rule>",
      'allow calls matching a policy rule, e.g. "bash(git status)" (repeatable)',
      collect,
    )
    .option("--ask <rule>", "ask before calls matching a rule (repeatable)", collect)
    .option("--deny <rule>", 'deny calls matching a rule, e.g. "bash(rm *)" (repeatable)', collect)
    .addOption(
      new Option(
        "--permission-mode <mode>",
        "default | acceptEdits (edits inside the project run) | plan (read-only) | sandboxed (what runs inside the sandbox runs)",
      ).choices(PERMISSION_MODES),
    )
    .addOption(
      new Option("--sandbox <mode>", "the shell's OS sandbox (@rein/tools-shell)").choices(SANDBOX_MODES),
    );
}

/** The flags layer's config; undefined when no config flag was given. */
export function flagsLayer(flags: ConfigFlags): ReinConfig | undefined {
  const config: ReinConfig = {};
  const plugins: NonNullable<ReinConfig["plugins"]> = [];
  if (flags.model !== undefined) {
    if (flags.model.trim() === "")
      throw usageError("--model: expected a model id such as anthropic/claude-sonnet-4-5");
    config.model = flags.model;
  }
  const rules = (["deny", "ask", "allow"] as const).flatMap((decision) =>
    (flags[decision] ?? []).map((rule, i) => {
      if (rule.trim() === "") throw usageError(`--${decision}: expected a rule such as "bash(git status)"`);
      return {
        id: `flag-${decision}-${i + 1}`,
        rule,
        decision,
        reason: `--${decision} ${rule} on the command line`,
      };
    }),
  );
  if (rules.length > 0) plugins.push(["@rein/plugin-policy", { rules }]);
  if (flags.permissionMode !== undefined) {
    if (!(PERMISSION_MODES as readonly string[]).includes(flags.permissionMode)) {
      throw usageError(
        `--permission-mode: unknown mode "${flags.permissionMode}"`,
        `one of ${PERMISSION_MODES.join(", ")}`,
      );
    }
    plugins.push(["@rein/plugin-permissions", { mode: flags.permissionMode }]);
  }
  if (flags.sandbox !== undefined) {
    if (!(SANDBOX_MODES as readonly string[]).includes(flags.sandbox)) {
      throw usageError(`--sandbox: unknown mode "${flags.sandbox}"`, `one of ${SANDBOX_MODES.join(", ")}`);
    }
    plugins.push([SHELL_PLUGIN, { sandbox: { mode: flags.sandbox } }]);
  }
  if (plugins.length > 0) config.plugins = plugins;
  return Object.keys(config).length > 0 ? config : undefined;
}
