/**
 * The single source of truth for decision hooks: name, payload, context, result,
 * reduction, failure policy and result validation. The Tapable instances
 * (`createHooks`) and the SDK's types derive from this table; a hook missing from
 * `HOOK_TABLE` is a compile error. Semantics: spec "Hooks (decide) versus events".
 */
import type { AsyncSeriesBailHook, AsyncSeriesWaterfallHook } from "tapable";
import type {
  AttributedVerdict,
  BeforeRunPayload,
  BranchRequest,
  CompactRequest,
  GateVerdict,
  HookContext,
  PermissionAnswer,
  PermissionRequest,
  RequestPayload,
  RetryDecision,
  RetryRequest,
  StopDecision,
  StopRequest,
  SummaryDecision,
  ToolCallPayload,
  ToolGateCall,
  ToolHookContext,
  ToolResultPayload,
} from "./hook-types.js";

/**
 * - `waterfall`: each tap's result replaces the payload for the next; `undefined` keeps it.
 * - `bail`: the first tap that answers (not `undefined`) wins; the rest are skipped.
 * - `gate`: strictest verdict wins (deny > ask > allow > no opinion); a deny skips the rest.
 */
export type Reduction = "waterfall" | "bail" | "gate";

interface Shape<R extends Reduction, P, C, Res> {
  reduction: R;
  payload: P;
  context: C;
  result: Res;
}

export interface HookShapes {
  beforeRun: Shape<"waterfall", BeforeRunPayload, HookContext, BeforeRunPayload>;
  beforeRequest: Shape<"waterfall", RequestPayload, HookContext, RequestPayload>;
  providerPayload: Shape<"waterfall", unknown, HookContext, unknown>;
  toolCall: Shape<"waterfall", ToolCallPayload, ToolHookContext, ToolCallPayload>;
  toolGate: Shape<"gate", ToolGateCall, ToolHookContext, GateVerdict>;
  permissionAsk: Shape<"bail", PermissionRequest, ToolHookContext, PermissionAnswer>;
  toolResult: Shape<"waterfall", ToolResultPayload, ToolHookContext, ToolResultPayload>;
  toolUpdate: Shape<"waterfall", ToolResultPayload, ToolHookContext, ToolResultPayload>;
  beforeRetry: Shape<"bail", RetryRequest, HookContext, RetryDecision>;
  beforeStop: Shape<"bail", StopRequest, HookContext, StopDecision>;
  beforeCompact: Shape<"bail", CompactRequest, HookContext, SummaryDecision>;
  beforeBranch: Shape<"bail", BranchRequest, HookContext, SummaryDecision>;
}

export type HookName = keyof HookShapes;
export type HookPayload<K extends HookName> = HookShapes[K]["payload"];
export type HookContextOf<K extends HookName> = HookShapes[K]["context"];
export type HookResult<K extends HookName> = HookShapes[K]["result"];

/** Extra tap options Rein understands: `hook.tapPromise({ name, stage, timeout }, fn)`. */
export interface ReinTapOptions {
  /** Milliseconds before this tap counts as failed; overrides the harness default. */
  timeout?: number;
  /** Registers through an owner (see `TapOwner`); set by `withOptions({ owner })`. */
  owner?: TapOwner;
}

type Args<K extends HookName> = [HookPayload<K>, HookContextOf<K>];
// `void` lets a tap with no opinion simply not return.
// biome-ignore lint/suspicious/noConfusingVoidType: deliberate, see above.
type TapReturn<K extends HookName> = HookResult<K> | undefined | void;

type TapableHook<K extends HookName> = HookShapes[K]["reduction"] extends "waterfall"
  ? AsyncSeriesWaterfallHook<Args<K>, TapReturn<K>, ReinTapOptions>
  : AsyncSeriesBailHook<Args<K>, TapReturn<K>, ReinTapOptions>;

/** Tap options: the plugin's name, and optionally `stage`, `before` and `timeout`. */
export type HarnessTapOptions = string | ({ name: string; before?: string; stage?: number } & ReinTapOptions);

/** Removes the tap it was returned for (by identity); calling it twice does nothing. */
export type Disposer = () => void;

/** One tap as its owner sees it (`rein plugins`). */
export interface OwnedTap {
  hook: HookName;
  /** Tapable tap type: `sync` (`tap`), `promise` (`tapPromise`) or `async` (`tapAsync`). */
  type: "sync" | "promise" | "async";
  /** Lower runs first; default 0. */
  stage: number;
  /** The name the author passed, when it differs from the owner's. */
  label?: string;
}

/**
 * Who registers taps through a hook view, `hook.withOptions({ owner })` (how
 * @rein/sdk gives each plugin its hooks): every tap registered through the view
 * carries the owner's name whatever name the author passed (kept as `label`),
 * the owner may refuse a registration (throw from `admit`) or an interceptor,
 * and it learns of each tap with its disposer (what it returns is the view's disposer).
 */
export interface TapOwner {
  readonly name: string;
  admit(hook: HookName, method: "tap" | "tapPromise" | "tapAsync", options: unknown, fn: unknown): void;
  registered(tap: OwnedTap, dispose: Disposer): Disposer;
  intercept(hook: HookName): never;
}

/**
 * A Tapable hook whose tap methods return a disposer. Dispatch (`promise`,
 * `callAsync`) runs the harness's own runner: same reduction, timeouts and
 * failure policy as a run.
 */
export type HarnessHook<K extends HookName> = Omit<TapableHook<K>, "tap" | "tapAsync" | "tapPromise"> & {
  tap(options: HarnessTapOptions, fn: (...args: Args<K>) => TapReturn<K>): Disposer;
  tapPromise(options: HarnessTapOptions, fn: (...args: Args<K>) => Promise<TapReturn<K>>): Disposer;
  tapAsync(
    options: HarnessTapOptions,
    fn: (
      payload: HookPayload<K>,
      context: HookContextOf<K>,
      callback: (error?: Error | null | false, result?: TapReturn<K>) => void,
    ) => void,
  ): Disposer;
};

export type HarnessHooks = { readonly [K in HookName]: HarnessHook<K> };

/** Tap order: lower stages run first, then registration order (webpack's convention). */
export const Stage = {
  first: -1000,
  early: -100,
  normal: 0,
  late: 100,
  last: 1000,
} as const;

/**
 * - `fail-closed`: a throw or timeout becomes the safe answer (a gate denies, an
 *   unanswered permission is denied) with a reason naming the plugin.
 * - `fail-operation`: a throw or timeout fails the run (or compaction / navigation)
 *   with `HarnessError` code `hook` naming plugin and hook.
 */
export type FailureMode = "fail-closed" | "fail-operation";

export interface HookSpec<K extends HookName> {
  reduction: HookShapes[K]["reduction"];
  args: [string, string];
  failure: FailureMode;
  /** Default per-tap timeout for this hook; `undefined` uses the harness default. */
  timeoutMs?: number;
  /** Describes what is wrong with a tap's (non-undefined) result, or returns undefined when it is well-formed. */
  validate(result: unknown, payload: HookPayload<K>): string | undefined;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const isString = (value: unknown): value is string => typeof value === "string";
const hasMessages = (value: Record<string, unknown>) => Array.isArray(value.messages);

function validateSummaryDecision(result: unknown): string | undefined {
  if (!isObject(result)) return "expected { cancel: { reason } } or { summary }";
  if ("cancel" in result) {
    return isObject(result.cancel) && isString(result.cancel.reason)
      ? undefined
      : "cancel needs a string reason";
  }
  return isString(result.summary) ? undefined : "expected { cancel: { reason } } or { summary: string }";
}

export const HOOK_TABLE: { readonly [K in HookName]: HookSpec<K> } = {
  beforeRun: {
    reduction: "waterfall",
    args: ["payload", "context"],
    failure: "fail-operation",
    validate: (r) =>
      isObject(r) &&
      isString(r.systemPrompt) &&
      hasMessages(r) &&
      (r.block === undefined || isObject(r.block))
        ? undefined
        : "expected { systemPrompt: string, messages: AgentMessage[], block?: { reason } }",
  },
  beforeRequest: {
    reduction: "waterfall",
    args: ["payload", "context"],
    failure: "fail-operation",
    validate: (r) =>
      isObject(r) && hasMessages(r) && isObject(r.options)
        ? undefined
        : "expected { messages: AgentMessage[], options: object }",
  },
  providerPayload: {
    reduction: "waterfall",
    args: ["payload", "context"],
    failure: "fail-operation",
    validate: () => undefined,
  },
  toolCall: {
    reduction: "waterfall",
    args: ["call", "context"],
    failure: "fail-operation",
    validate: (r, call) => {
      if (!isObject(r) || !isObject(r.args)) return "expected { id, name, args: object }";
      if (r.id !== call.id || r.name !== call.name)
        return "a toolCall tap may rewrite args, never the call's id or name";
      return undefined;
    },
  },
  toolGate: {
    reduction: "gate",
    args: ["call", "context"],
    failure: "fail-closed",
    validate: (r) =>
      isObject(r) &&
      (r.decision === "allow" || r.decision === "ask" || r.decision === "deny") &&
      isString(r.reason) &&
      (r.rule === undefined || isString(r.rule))
        ? undefined
        : 'expected { decision: "allow" | "ask" | "deny", reason: string, rule?: string }',
  },
  permissionAsk: {
    reduction: "bail",
    args: ["request", "context"],
    failure: "fail-closed",
    // A person may be answering: no timeout unless the harness or the tap sets one.
    timeoutMs: Number.POSITIVE_INFINITY,
    validate: (r) =>
      isObject(r) &&
      (r.decision === "allow" || r.decision === "deny") &&
      (r.reason === undefined || isString(r.reason))
        ? undefined
        : 'expected { decision: "allow" | "deny", reason?: string }',
  },
  toolResult: {
    reduction: "waterfall",
    args: ["result", "context"],
    failure: "fail-operation",
    validate: (r) =>
      isObject(r) && Array.isArray(r.content) && typeof r.isError === "boolean"
        ? undefined
        : "expected { content: (TextContent | ImageContent)[], details?, isError: boolean }",
  },
  toolUpdate: {
    reduction: "waterfall",
    args: ["partial", "context"],
    failure: "fail-operation",
    validate: (r) =>
      isObject(r) && Array.isArray(r.content) && typeof r.isError === "boolean"
        ? undefined
        : "expected { content: (TextContent | ImageContent)[], details?, isError: boolean }",
  },
  beforeRetry: {
    reduction: "bail",
    args: ["request", "context"],
    failure: "fail-operation",
    validate: (r) => {
      if (!isObject(r)) return 'expected { decision: "retry", delayMs? } or { decision: "stop", reason? }';
      if (r.decision === "stop")
        return r.reason === undefined || isString(r.reason) ? undefined : "reason must be a string";
      if (r.decision === "retry") {
        const ok =
          r.delayMs === undefined ||
          (typeof r.delayMs === "number" && r.delayMs >= 0 && Number.isFinite(r.delayMs));
        return ok ? undefined : "delayMs must be a finite number >= 0";
      }
      return 'expected { decision: "retry", delayMs? } or { decision: "stop", reason? }';
    },
  },
  beforeStop: {
    reduction: "bail",
    args: ["request", "context"],
    failure: "fail-operation",
    validate: (r) => {
      if (!isObject(r)) return 'expected { decision: "stop" } or { decision: "continue", message }';
      if (r.decision === "stop") return undefined;
      if (r.decision === "continue" && (isString(r.message) || isObject(r.message))) return undefined;
      return 'expected { decision: "stop" } or { decision: "continue", message }';
    },
  },
  beforeCompact: {
    reduction: "bail",
    args: ["request", "context"],
    failure: "fail-operation",
    validate: validateSummaryDecision,
  },
  beforeBranch: {
    reduction: "bail",
    args: ["request", "context"],
    failure: "fail-operation",
    validate: validateSummaryDecision,
  },
};

export const HOOK_NAMES = Object.keys(HOOK_TABLE) as HookName[];

const GATE_RANK: Record<GateVerdict["decision"], number> = { allow: 1, ask: 2, deny: 3 };

/** Strictest wins: deny > ask > allow. Ties keep the earlier verdict (its author decided first). */
export function stricter(a: AttributedVerdict | undefined, b: AttributedVerdict): AttributedVerdict {
  return a === undefined || GATE_RANK[b.decision] > GATE_RANK[a.decision] ? b : a;
}
