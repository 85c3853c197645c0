/**
 * The task pack's options: how many children run at once, whether the parent's
 * session grants reach them, and named child configs (`agents`) that narrow.
 *
 * Invariant: an option that could loosen a parent decision is refused at load
 * (`looseningRefused`), never silently dropped: an `allow` rule (it could beat the
 * parent's default verdict), a sandbox mode `off`, a tool name repeated or empty.
 * Whether `tools` is a subset of the parent's active tools is known only when a
 * child starts (tools come and go with plugins): a wider list refuses that task.
 */
import { type Static, Type } from "@rein/sdk";
import { looseningRefused } from "./errors.js";

const ChildRule = Type.Object(
  {
    id: Type.Optional(Type.String({ pattern: "^[^:\\s]+$" })),
    /** plugin-policy's grammar: `bash(git push *)`, `write(src/**)`, `read(.env)`. */
    rule: Type.String({ minLength: 1 }),
    /** `deny` or `ask`; `allow` is refused (a child's rules only narrow). */
    decision: Type.Union([Type.Literal("allow"), Type.Literal("ask"), Type.Literal("deny")]),
    reason: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

const SANDBOX_MODES = ["off", "workspace-write", "read-only"] as const;

export const ChildAgentSpec = Type.Object(
  {
    /** Shown to the model in the task tool's description. */
    description: Type.Optional(Type.String()),
    /** The child's system prompt; default the parent's. */
    systemPrompt: Type.Optional(Type.String()),
    /** The child's active tools: a subset of the parent's (default all but `task`). */
    tools: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    /** Extra deny / ask rules, on top of every parent gate. */
    rules: Type.Optional(Type.Array(ChildRule)),
    /** The least strict shell sandbox the child's bash calls may run in: `workspace-write` or `read-only`. */
    sandbox: Type.Optional(Type.Union(SANDBOX_MODES.map((mode) => Type.Literal(mode)))),
  },
  { additionalProperties: false },
);
export type ChildAgentSpec = Static<typeof ChildAgentSpec>;

export const TaskOptions = Type.Object(
  {
    /** Children of one agent running at the same time; more `task` calls wait their turn. */
    maxConcurrent: Type.Integer({ minimum: 1, maximum: 16, default: 2 }),
    /** Whether the parent's "allow for this session" grants answer a child's asks. */
    inheritGrants: Type.Boolean({ default: false }),
    /** Named child configs (the task tool's `agent` argument); `default` is used without one. */
    agents: Type.Record(Type.String({ pattern: "^[A-Za-z0-9_-]{1,64}$" }), ChildAgentSpec, { default: {} }),
  },
  { additionalProperties: false },
);
export type TaskOptions = Static<typeof TaskOptions>;

export const SANDBOX_RANK: Record<(typeof SANDBOX_MODES)[number], number> = {
  off: 0,
  "workspace-write": 1,
  "read-only": 2,
};

/** Refuses what would loosen; see the module comment. */
export function checkNarrowing(plugin: string, options: TaskOptions): void {
  for (const [name, spec] of Object.entries(options.agents)) {
    const at = `/agents/${name}`;
    for (const [index, rule] of (spec.rules ?? []).entries()) {
      if (rule.decision === "allow") {
        throw looseningRefused(
          plugin,
          `${at}/rules/${index}/decision`,
          `a child agent's rule cannot allow (${rule.rule}): a parent deny binds it anyway, and an allow could beat the parent's default verdict; use deny or ask`,
        );
      }
    }
    if (spec.sandbox === "off") {
      throw looseningRefused(
        plugin,
        `${at}/sandbox`,
        `a child agent cannot turn the sandbox off: its bash runs in the parent's sandbox, or a stricter one ("workspace-write", "read-only")`,
      );
    }
    const tools = spec.tools ?? [];
    const repeated = tools.find((tool, i) => tools.indexOf(tool) !== i);
    if (repeated !== undefined) {
      throw looseningRefused(plugin, `${at}/tools`, `tool "${repeated}" is listed twice`);
    }
  }
}
