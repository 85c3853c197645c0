/**
 * The harness's options and their rules, in one table used by both the
 * constructor and the live setters, so the two can never disagree.
 *
 * Invariant: every problem is an `invalid_argument` naming the option (or the
 * setter) and what was expected, never a TypeError from deep inside.
 */
import type { Model, Models } from "@earendil-works/pi-ai";
import type { CompactionSettings } from "../compaction/compaction-settings.js";
import { invalidArgument } from "../errors.js";
import type { FailurePolicy } from "../hooks/create-hooks.js";
import type { AgentInfo, RequestOptions } from "../hooks/hook-types.js";
import type { StreamFunction } from "../loop/loop-types.js";
import type { RetrySettings } from "../loop/retry.js";
import {
  type SkillResource,
  type TemplateResource,
  validateSkills,
  validateTemplates,
} from "../resources/resource-types.js";
import type { ThinkingLevel } from "../session/entries.js";
import type { Session } from "../session/session.js";
import type { AnyAgentTool } from "../tools.js";
import {
  type DefaultToolVerdict,
  type LiveConfig,
  type SystemPromptSource,
  validateActiveTools,
  validateThinkingLevel,
  validateTools,
} from "./live-config.js";
import type { QueueModes } from "./message-queues.js";

export type Durability = "save-point" | "group" | "strict" | "none";

export interface AgentHarnessOptions {
  session: Session;
  // biome-ignore lint/suspicious/noExplicitAny: any provider API.
  model: Model<any>;
  thinkingLevel?: ThinkingLevel;
  tools?: readonly AnyAgentTool[];
  /** Names of the active tools; default all registered tools. */
  activeTools?: readonly string[];
  systemPrompt?: SystemPromptSource;
  resources?: Record<string, unknown>;
  /** Agent Skills the model may load (`skill` tool) or a person may invoke (`skill()`). */
  skills?: readonly SkillResource[];
  /** Prompt templates `template()` may invoke. */
  templates?: readonly TemplateResource[];
  requestOptions?: RequestOptions;
  queueModes?: Partial<QueueModes>;
  /** Working directory handed to tools. Default `process.cwd()`. */
  cwd?: string;
  /** Verdict when no gate has an opinion. Default `allow`. */
  defaultToolVerdict?: DefaultToolVerdict;
  /**
   * What an `ask` that no `permissionAsk` tap answers becomes: `deny` (default), or
   * `park`: the call is recorded in the session, the run ends `parked`, and a person
   * answers later (`resolveApproval`, `rein approvals`) before `resume()` runs it.
   */
  onUnanswered?: "deny" | "park";
  failurePolicy?: Partial<FailurePolicy>;
  /** Bound on how many extra turns `beforeStop` may ask for in one run. Default 8. */
  maxStopContinuations?: number;
  /**
   * When the session is flushed to stable storage (every append is in the OS at once either way):
   * - `save-point` (default): an fsync starts at every save point without blocking the next turn
   *   (consecutive ones coalesce), and settle waits for it;
   * - `group`: as `save-point`, but settle does not wait either: the run's end is in the OS
   *   when `settled` is emitted (a crash of this process loses nothing) and on disk once
   *   the fsync under way completes, which overlapping runs share (group commit); only a
   *   power or kernel failure in that window (one fsync, milliseconds) can lose it;
   * - `strict`: every save point waits for its fsync;
   * - `none`: left to the OS.
   */
  durability?: Durability;
  /**
   * The pi-ai model collection requests go through (`createModels()` with the providers
   * of the models you use; a faux provider in tests). Default: pi-ai's built-in
   * providers, each loaded on the first request to one of its models.
   */
  models?: Models;
  /** Replaces `models.streamSimple` (tests, proxies). Summaries are written through it too. */
  streamFn?: StreamFunction;
  /** Automatic compaction: `enabled` (default true), `reserveTokens` (16 384), `keepRecentTokens` (20 000). */
  compaction?: Partial<CompactionSettings>;
  /** Retry of transient provider errors: `enabled` (default true), `maxAttempts` (4), `baseDelayMs` (2 000), `maxDelayMs` (60 000). */
  retry?: Partial<RetrySettings>;
  /**
   * Recover what a crash left open when the harness opens its session (default true):
   * close an unfinished run as `interrupted`, synthesize missing tool results, commit
   * pending writes, restore queued messages. See `harness.recovery`.
   */
  recover?: boolean;
  /**
   * What tool decisions record. `trail: true`: every persisted decision (and
   * `tool_decision` event) carries the per-tap trail (`DecisionRecord.trail`).
   * Default off: nothing is collected.
   */
  decisions?: DecisionOptions;
  /**
   * Makes this harness a child agent (what `startChild` sets): taps see it as
   * `context.agent`, and every decision's `by` ends with ` in <path>`.
   */
  agent?: AgentInfo;
}

export interface DecisionOptions {
  trail?: boolean;
}

type OptionKey = Exclude<keyof AgentHarnessOptions, "session" | "model">;

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const shown = (value: unknown) =>
  typeof value === "function" ? "a function" : (JSON.stringify(value) ?? String(value));

const mustBe = (where: string, expected: string, value: unknown) =>
  invalidArgument(`${where} must be ${expected}, not ${shown(value)}`);

/** A rule: what is expected (for the message) and the check; `deep` checks inside a well-shaped value. */
interface OptionRule {
  expected: string;
  ok(value: unknown): boolean;
  deep?(value: never, where: string, options: Partial<AgentHarnessOptions>): void;
}

const oneOf =
  (...values: unknown[]) =>
  (value: unknown) =>
    values.includes(value);

function checkQueueModes(modes: Record<string, unknown>, where: string): void {
  for (const [queue, mode] of Object.entries(modes)) {
    if (queue !== "steer" && queue !== "followUp")
      throw mustBe(`${where}.${queue}`, "absent (unknown queue)", mode);
    if (mode !== "one-at-a-time" && mode !== "all") {
      throw mustBe(`${where}.${queue}`, '"one-at-a-time" or "all"', mode);
    }
  }
}

function checkFailurePolicy(policy: Partial<FailurePolicy>, where: string): void {
  const { tapTimeoutMs, gate, transform } = policy;
  if (tapTimeoutMs !== undefined && !(typeof tapTimeoutMs === "number" && tapTimeoutMs > 0)) {
    throw mustBe(`${where}.tapTimeoutMs`, "a number > 0", tapTimeoutMs);
  }
  if (gate !== undefined && gate !== "ask" && gate !== "deny") {
    throw mustBe(`${where}.gate`, '"deny" or "ask" (gates fail closed, never allow)', gate);
  }
  if (transform !== undefined && transform !== "fail-run" && transform !== "skip-tap") {
    throw mustBe(`${where}.transform`, '"fail-run" or "skip-tap"', transform);
  }
}

function checkDecisions(decisions: Record<string, unknown>, where: string): void {
  for (const [key, value] of Object.entries(decisions)) {
    if (key !== "trail") throw mustBe(`${where}.${key}`, "absent (the only decision option is trail)", value);
    if (typeof value !== "boolean") throw mustBe(`${where}.trail`, "a boolean", value);
  }
}

export const OPTION_RULES: { readonly [K in OptionKey]: OptionRule } = {
  thinkingLevel: {
    expected: "a thinking level",
    ok: (v) => typeof v === "string",
    deep: validateThinkingLevel,
  },
  tools: { expected: "an array of tool definitions", ok: Array.isArray, deep: validateTools },
  activeTools: {
    expected: "an array of tool names",
    ok: Array.isArray,
    deep: (names: readonly string[], _where, options) => validateActiveTools(names, options.tools ?? []),
  },
  systemPrompt: {
    expected: "a string or a function",
    ok: (v) => typeof v === "string" || typeof v === "function",
  },
  resources: { expected: "an object", ok: isPlainObject },
  skills: {
    expected: "an array of skills",
    ok: Array.isArray,
    deep: (skills: readonly SkillResource[], where) => validateSkills(skills, where),
  },
  templates: {
    expected: "an array of prompt templates",
    ok: Array.isArray,
    deep: (templates: readonly TemplateResource[], where) => validateTemplates(templates, where),
  },
  requestOptions: { expected: "an object", ok: isPlainObject },
  queueModes: { expected: "an object", ok: isPlainObject, deep: checkQueueModes },
  cwd: { expected: "a string", ok: (v) => typeof v === "string" },
  defaultToolVerdict: {
    expected: '"allow", "ask", "deny" or a function',
    ok: (v) => typeof v === "function" || v === "allow" || v === "ask" || v === "deny",
  },
  onUnanswered: { expected: '"deny" or "park"', ok: oneOf("deny", "park") },
  failurePolicy: { expected: "an object", ok: isPlainObject, deep: checkFailurePolicy },
  maxStopContinuations: {
    expected: "an integer >= 0",
    ok: (v) => typeof v === "number" && Number.isInteger(v) && v >= 0,
  },
  durability: {
    expected: '"save-point", "group", "strict" or "none"',
    ok: oneOf("save-point", "group", "strict", "none"),
  },
  models: {
    expected: "a pi-ai Models collection (createModels())",
    ok: (v) => isPlainObject(v) && typeof (v as { streamSimple?: unknown }).streamSimple === "function",
  },
  streamFn: { expected: "a function", ok: (v) => typeof v === "function" },
  compaction: { expected: "an object", ok: isPlainObject },
  retry: { expected: "an object", ok: isPlainObject },
  recover: { expected: "a boolean", ok: (v) => typeof v === "boolean" },
  decisions: { expected: "an object", ok: isPlainObject, deep: checkDecisions },
  agent: {
    expected: "{ path, parentSessionId, parentToolCallId, inheritGrants }",
    ok: (v) =>
      isPlainObject(v) &&
      typeof v.path === "string" &&
      v.path !== "" &&
      typeof v.parentSessionId === "string" &&
      typeof v.parentToolCallId === "string" &&
      typeof v.inheritGrants === "boolean",
  },
};

/**
 * Checks one option's value against its rule. `where` names it in the message:
 * `options.<key>` for the constructor, the setter's name for a setter.
 * `options` gives the context a rule may need (the tools, for active tools).
 */
export function checkOption<K extends OptionKey>(
  key: K,
  value: unknown,
  where = `options.${key}`,
  options: Partial<AgentHarnessOptions> = {},
): void {
  const rule = OPTION_RULES[key];
  if (!rule.ok(value)) throw mustBe(where, rule.expected, value);
  rule.deep?.(value as never, where, options);
}

/** The constructor's check: session, model, then every option present, by the table. */
export function validateOptions(options: AgentHarnessOptions): void {
  if (!isPlainObject(options)) throw invalidArgument("AgentHarness needs an options object");
  const session = options.session as unknown;
  if (!session || typeof (session as { buildContext?: unknown }).buildContext !== "function") {
    throw invalidArgument("AgentHarness needs a session (options.session)");
  }
  checkModel(options.model, "AgentHarness needs a model: a pi-ai Model with provider and id (options.model)");
  for (const key of Object.keys(OPTION_RULES) as OptionKey[]) {
    if (options[key] !== undefined) checkOption(key, options[key], `options.${key}`, options);
  }
}

export function checkModel(model: unknown, message: string): void {
  if (!isPlainObject(model) || typeof model.id !== "string" || typeof model.provider !== "string") {
    throw invalidArgument(message);
  }
}

/** The live config a harness starts from: the options, with their defaults filled in. */
export function initialLiveConfig(options: AgentHarnessOptions): LiveConfig {
  return {
    model: options.model,
    thinkingLevel: options.thinkingLevel ?? "off",
    tools: [...(options.tools ?? [])],
    activeToolNames: options.activeTools ? [...options.activeTools] : undefined,
    systemPrompt: options.systemPrompt ?? "",
    resources: { ...options.resources },
    skills: [...(options.skills ?? [])],
    templates: [...(options.templates ?? [])],
    requestOptions: { ...options.requestOptions },
    queueModes: { steer: "one-at-a-time", followUp: "one-at-a-time", ...options.queueModes },
    defaultToolVerdict: options.defaultToolVerdict ?? "allow",
    onUnanswered: options.onUnanswered ?? "deny",
    cwd: options.cwd ?? process.cwd(),
    decisionTrail: options.decisions?.trail === true,
    agent: options.agent === undefined ? undefined : Object.freeze({ ...options.agent }),
  };
}
