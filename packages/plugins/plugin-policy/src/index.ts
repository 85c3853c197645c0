/**
 * @rein/plugin-policy: declarative tool-call rules as plugin options.
 *
 * `{ rule: "bash(git push *)", decision: "ask", reason: "pushing publishes commits" }`
 * - strictest wins across matching rules, paths are normalised against a root,
 * shell commands are parsed (`@rein/sdk/shell`), and each rule's examples are checked
 * when the plugin loads (a failing example is an `invalid_options` error naming
 * the rule). Verdicts carry `rule` = the rule's id or `rules[<index>]`, so the
 * harness records `by: "policy:rules[3]"`. See README.md.
 */
import path from "node:path";
import {
  definePlugin,
  SdkError,
  type Static,
  type ToolCallFacts,
  Type,
  textMasks,
  walkExclusions,
} from "@rein/sdk";
import type { ShellCommandFacts } from "@rein/sdk/shell";
import { WhenSchema } from "./condition.js";
import { parseSpec } from "./grammar.js";
import { type Where, walkExclusion } from "./paths.js";
import {
  type CallLike,
  type CompiledRule,
  compileRule,
  evaluateRules,
  kindOf,
  type PolicyVerdict,
  ruleMatches,
  type ToolKinds,
} from "./rules.js";

export { type Boundary, boundaryOf, type When, WhenSchema, whenHolds } from "./condition.js";
export { factUnits, pathCandidates, type Where, walkExclusion } from "./paths.js";
export {
  type CallLike,
  type CompiledRule,
  commandMatcher,
  compileRule,
  type Decision,
  evaluateRules,
  type PolicyVerdict,
  type RuleInput,
  ruleMatches,
  type ToolKinds,
} from "./rules.js";
export {
  allowCandidates,
  denyCandidates,
  evaluateShell,
  prefixMatcher,
  shellRuleMatches,
} from "./shell-rules.js";

export const PATH_TOOLS = ["read", "write", "edit", "ls", "find", "grep"] as const;
export const SHELL_TOOLS = ["bash"] as const;

const RuleSchema = Type.Object(
  {
    /** Names the rule in `by` (`policy:<id>`); default `rules[<index>]`. */
    id: Type.Optional(Type.String({ pattern: "^[^:\\s]+$" })),
    /** `tool(pattern)` or `tool`: `bash(git push *)`, `write(src/**)`, `read(.env)`, `fetch`, `*`. */
    rule: Type.String({ minLength: 1 }),
    decision: Type.Union([Type.Literal("allow"), Type.Literal("ask"), Type.Literal("deny")]),
    /** Why: shown to the model (deny), the person asked (ask) and in every decision record. */
    reason: Type.Optional(Type.String()),
    /** Calls in the same grammar that must (`match`) or must not (`notMatch`) match; checked at load. */
    examples: Type.Optional(
      Type.Object(
        {
          match: Type.Optional(Type.Array(Type.String())),
          notMatch: Type.Optional(Type.Array(Type.String())),
        },
        { additionalProperties: false },
      ),
    ),
    /** The rule counts only when this holds: `{ sandbox: "workspace-write" }` (see condition.ts). */
    when: Type.Optional(WhenSchema),
  },
  { additionalProperties: false },
);

export const PolicyOptions = Type.Object(
  {
    rules: Type.Array(RuleSchema, { default: [] }),
    /** Paths are matched relative to this directory (relative to the working directory); default the working directory. */
    root: Type.Optional(Type.String()),
    /** Tools whose `path` argument is matched as a glob. */
    pathTools: Type.Array(Type.String(), { default: [...PATH_TOOLS] }),
    /** Tools whose `command` argument is a bash command line, parsed and matched as command patterns. */
    shellTools: Type.Array(Type.String(), { default: [...SHELL_TOOLS] }),
  },
  { additionalProperties: false },
);
export type PolicyOptions = Static<typeof PolicyOptions>;
export type PolicyRule = Static<typeof RuleSchema>;

const PLUGIN_NAME = "policy";

/** Turns an example such as `bash(git push origin main)` into the call it stands for. */
export function exampleCall(example: string, kinds: ToolKinds): CallLike | string {
  const parsed = parseSpec(example);
  if (typeof parsed === "string") return parsed;
  if (parsed.tool.includes("*")) return `example ${JSON.stringify(example)} must name a tool, not a pattern`;
  if (parsed.pattern === undefined) return { name: parsed.tool, args: {} };
  const kind = kindOf(parsed.tool, kinds);
  const key = kind === "shell" ? "command" : kind === "path" ? "path" : "value";
  return { name: parsed.tool, args: { [key]: parsed.pattern } };
}

interface Problem {
  path: string;
  message: string;
}

/**
 * The parsed command of a shell call: the tool's own analysis (`facts.command`, from its
 * `inspect`) when it is about this very command, else the policy's own.
 */
export async function shellFactsOf(
  call: CallLike & { facts?: Readonly<ToolCallFacts> },
): Promise<ShellCommandFacts> {
  const command = call.args.command;
  const supplied = call.facts?.command;
  if (supplied && supplied.source === command) return supplied;
  const { analyzeShell } = await loadShellModule();
  return analyzeShell(typeof command === "string" ? command : "");
}

/** The shell analysis is imported on first need: a policy without shell rules never loads it. */
function loadShellModule(): Promise<typeof import("@rein/sdk/shell")> {
  return import("@rein/sdk/shell");
}

/**
 * Compiles the rules and checks their examples (paths resolved as `where` says). Throws `SdkError`
 * `invalid_options` naming the plugin, the option path of the first problem, and
 * in the message every problem with the rule's id or index.
 */
export async function compilePolicy(
  options: Pick<PolicyOptions, "rules" | "pathTools" | "shellTools">,
  where: Where,
  pluginName = PLUGIN_NAME,
): Promise<CompiledRule[]> {
  const kinds: ToolKinds = { pathTools: options.pathTools, shellTools: options.shellTools };
  const compiled: CompiledRule[] = [];
  const problems: Problem[] = [];
  for (const [index, input] of options.rules.entries()) {
    const label = input.id ?? `rules[${index}]`;
    const rule = compileRule(input, index);
    if (typeof rule === "string") {
      problems.push({ path: `/rules/${index}/rule`, message: `rule ${label}: ${rule}` });
      continue;
    }
    compiled.push(rule);
    for (const [field, expected] of [
      ["match", true],
      ["notMatch", false],
    ] as const) {
      for (const [j, example] of (input.examples?.[field] ?? []).entries()) {
        const optionPath = `/rules/${index}/examples/${field}/${j}`;
        const call = exampleCall(example, kinds);
        if (typeof call === "string") {
          problems.push({ path: optionPath, message: `rule ${label} (${input.rule}): ${call}` });
          continue;
        }
        const shell = kindOf(call.name, kinds) === "shell" ? await shellFactsOf(call) : undefined;
        if (ruleMatches(rule, call, kinds, where, shell) !== expected) {
          problems.push({
            path: optionPath,
            message: `rule ${label} (${input.rule}) ${expected ? "should match" : "should not match"} example ${JSON.stringify(example)}, but ${expected ? "does not" : "does"}`,
          });
        }
      }
    }
  }
  const [first] = problems;
  if (first) {
    throw new SdkError(
      "invalid_options",
      `plugin "${pluginName}": option ${first.path}: ${problems.map((p) => p.message).join("; ")}`,
      { plugin: pluginName, path: first.path },
    );
  }
  return compiled;
}

export default definePlugin({
  name: PLUGIN_NAME,
  version: "0.1.0",
  description: "Declarative allow / ask / deny rules over tool calls.",
  options: PolicyOptions,
  // As `by` names them: the rule's id, else `rules[<index>]`.
  rules: (options) => options.rules.map((rule, index) => rule.id ?? `rules[${index}]`),
  async setup(rein, options) {
    const where = (cwd: string): Where => ({
      cwd,
      root: options.root === undefined ? cwd : path.resolve(cwd, options.root),
    });
    const rules = await compilePolicy(options, where(rein.config.cwd), rein.plugin.name);
    const kinds: ToolKinds = { pathTools: options.pathTools, shellTools: options.shellTools };
    if (rules.length === 0) return;
    const masks = textMasks(rein);
    // A reason quotes the call; a redaction plugin's mask keeps secrets in it from the model.
    const masked = (verdict: PolicyVerdict | undefined) =>
      verdict && masks.size > 0 ? { ...verdict, reason: masks.mask(verdict.reason) } : verdict;
    // Shell rules need the parser (WASM, ~0.1-0.2 s to compile): start loading it now, in the
    // background, so the first shell call rarely waits. A failed load is retried by that call.
    if (options.shellTools.some((tool) => rules.some((rule) => rule.appliesTo(tool)))) {
      loadShellModule()
        .then((shell) => shell.loadShellParser())
        .catch(() => undefined);
    }
    rein.hooks.toolGate.tapPromise(PLUGIN_NAME, async (call, context) => {
      if (kindOf(call.name, kinds, call) !== "shell" || !rules.some((rule) => rule.appliesTo(call.name))) {
        return masked(evaluateRules(rules, call, kinds, where(context.config.cwd)));
      }
      return masked(evaluateRules(rules, call, kinds, where(context.config.cwd), await shellFactsOf(call)));
    });
    // The same rules reach inside walks: grep, find and ls leave out what they deny.
    rein.onDispose(
      walkExclusions(rein).add(
        rein.plugin.name,
        walkExclusion(rules, () => where(rein.config.cwd)),
      ),
    );
    rein.logger.debug(`${rules.length} rule(s) loaded`);
  },
});
