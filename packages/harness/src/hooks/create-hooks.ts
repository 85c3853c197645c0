/**
 * Builds the Tapable instances from HOOK_TABLE and wraps every tap, at
 * registration, into an async function run through the PluginDriver.
 *
 * Why wrap: tapable hangs forever (and Node dies of an unhandled rejection) when a
 * second `tapPromise` throws synchronously or returns a non-promise, its errors
 * carry no plugin name, and it has no timeouts or abort. After wrapping, every tap
 * is a `promise` tap that (1) never throws synchronously, (2) is attributed to its
 * plugin (the tap name), (3) honours the per-tap timeout, (4) has its result
 * validated, and (5) applies the hook's reduction and failure policy:
 * see ../../../../../shared/spec/harness.md (hook table, failure policy).
 */
import { AsyncSeriesBailHook, AsyncSeriesWaterfallHook } from "tapable";
import { HarnessError, HarnessErrorCode, pluginFailure } from "../errors.js";
import {
  type HarnessHooks,
  HOOK_NAMES,
  HOOK_TABLE,
  type HookContextOf,
  type HookName,
  type HookPayload,
  type HookResult,
  type HookSpec,
  stricter,
} from "./hook-table.js";
import type {
  AttributedVerdict,
  GateDecision,
  HookContext,
  ToolGateCall,
  ToolHookContext,
} from "./hook-types.js";
import type { PluginCallSite, PluginDriver } from "./plugin-driver.js";

export interface FailurePolicy {
  /** Default per-tap timeout in ms (hooks may override it in the table; taps with `timeout`). Default 30 000. */
  tapTimeoutMs: number;
  /** What a throwing or timed-out gate tap answers. Default `deny`; never `allow`. */
  gate: Exclude<GateDecision, "allow">;
  /** `fail-run` (default): a throwing transform fails the run. `skip-tap`: report it and keep the payload. */
  transform: "fail-run" | "skip-tap";
}

export const DEFAULT_FAILURE_POLICY: FailurePolicy = {
  tapTimeoutMs: 30_000,
  gate: "deny",
  transform: "fail-run",
};

export interface HookEnvironment {
  driver: PluginDriver;
  policy(): FailurePolicy;
  /** Surfaces a plugin failure that was absorbed by policy (a `plugin_error` event). */
  report(failure: HarnessError): void;
}

interface RawTap {
  name: string;
  type: "sync" | "async" | "promise";
  // biome-ignore lint/complexity/noBannedTypes: tapable's own type for tap functions.
  fn: Function;
  stage?: number;
  timeout?: number;
}

/** A bail answer with the name of the tap that gave it. */
export type Attributed<T> = T & { by: string };

interface GateState {
  strictest?: AttributedVerdict;
}
const gateStates = new WeakMap<object, GateState>();

export function createHooks(env: HookEnvironment): HarnessHooks {
  const hooks: Record<string, unknown> = {};
  for (const name of HOOK_NAMES) {
    const spec = HOOK_TABLE[name] as HookSpec<HookName>;
    const hook =
      spec.reduction === "waterfall"
        ? new AsyncSeriesWaterfallHook<[unknown, unknown]>(spec.args, name)
        : new AsyncSeriesBailHook<[unknown, unknown], unknown>(spec.args, name);
    hook.intercept({
      name: "rein",
      register: (tap) => wrapTap(name, spec, tap as unknown as RawTap, env) as never,
    });
    hooks[name] = hook;
  }
  return hooks as unknown as HarnessHooks;
}

/** Removes every tap registered under `name` (a plugin's taps carry its name). */
export function removeTaps(hooks: HarnessHooks, name: string): number {
  let removed = 0;
  for (const hookName of HOOK_NAMES) {
    const hook = hooks[hookName] as unknown as { taps: RawTap[]; _resetCompilation(): void };
    const kept = hook.taps.filter((tap) => tap.name !== name);
    removed += hook.taps.length - kept.length;
    if (kept.length !== hook.taps.length) {
      hook.taps = kept;
      hook._resetCompilation();
    }
  }
  return removed;
}

function invokeOriginal(tap: RawTap, args: unknown[]): unknown {
  if (tap.type !== "async") return tap.fn(...args);
  return new Promise((resolve, reject) => {
    tap.fn(...args, (error: unknown, result: unknown) => (error ? reject(error) : resolve(result)));
  });
}

function wrapTap(name: HookName, spec: HookSpec<HookName>, tap: RawTap, env: HookEnvironment): RawTap {
  const original = { ...tap };
  const fn = async (payload: unknown, context: HookContext) => {
    // A block stops the beforeRun chain: later taps never see (or undo) it.
    if (name === "beforeRun" && (payload as { block?: unknown } | undefined)?.block) return undefined;
    const site: PluginCallSite = { plugin: tap.name, hook: name };
    const call = (context as Partial<ToolHookContext> | undefined)?.call;
    if (call) site.toolCallId = call.id;
    const timeoutMs = tap.timeout ?? spec.timeoutMs ?? env.policy().tapTimeoutMs;
    let result: unknown;
    try {
      result = await env.driver.run(site, () => invokeOriginal(original, [payload, context]), { timeoutMs });
      if (result !== undefined && result !== null) {
        const problem = spec.validate(result, payload as never);
        if (problem) {
          throw new HarnessError(
            HarnessErrorCode.hook,
            `plugin "${tap.name}" returned a malformed result from ${name}: ${problem}`,
            { plugin: tap.name, hook: name, toolCallId: site.toolCallId, pluginCode: "malformed_result" },
          );
        }
      }
    } catch (error) {
      const failure = pluginFailure(error, site);
      if (spec.failure === "fail-closed") {
        env.report(failure);
        return failClosed(name, payload, context, tap.name, failure, env.policy());
      }
      if (env.policy().transform === "skip-tap" && spec.reduction === "waterfall") {
        env.report(failure);
        return undefined;
      }
      throw failure;
    }
    if (result === undefined || result === null) return undefined;
    if (spec.reduction === "waterfall") return result;
    if (spec.reduction === "bail") return { ...(result as object), by: tap.name };
    return reduceGate(result as AttributedVerdict, tap.name, context);
  };
  return { ...tap, type: "promise", fn };
}

function attribute(verdict: { decision: GateDecision; reason: string; rule?: string }, tapName: string) {
  const by = verdict.rule ? `${tapName}:${verdict.rule}` : tapName;
  return { ...verdict, by } as AttributedVerdict;
}

function reduceGate(
  verdict: AttributedVerdict,
  tapName: string,
  context: HookContext,
): AttributedVerdict | undefined {
  const attributed = attribute(verdict, tapName);
  // Bail on deny: nothing after it can undo it, so nothing after it runs.
  if (attributed.decision === "deny") return attributed;
  const state = gateStates.get(context);
  if (state) state.strictest = stricter(state.strictest, attributed);
  return undefined;
}

function failClosed(
  name: HookName,
  _payload: unknown,
  context: HookContext,
  tapName: string,
  failure: HarnessError,
  policy: FailurePolicy,
): unknown {
  const reason = `${failure.message} (failing closed)`;
  if (name === "permissionAsk") return { decision: "deny", reason, by: tapName };
  return reduceGate({ decision: policy.gate, reason, by: tapName }, tapName, context);
}

// ---- runners: how the harness (and the SDK's testing kit) calls each kind of hook ----

export async function runWaterfall<K extends HookName>(
  hooks: HarnessHooks,
  name: K,
  payload: HookPayload<K>,
  context: HookContextOf<K>,
): Promise<HookPayload<K>> {
  const hook = hooks[name] as unknown as AsyncSeriesWaterfallHook<[unknown, unknown]>;
  if (hook.taps.length === 0) return payload;
  const result = await hook.promise(payload, context);
  return (result ?? payload) as HookPayload<K>;
}

export async function runBail<K extends HookName>(
  hooks: HarnessHooks,
  name: K,
  payload: HookPayload<K>,
  context: HookContextOf<K>,
): Promise<Attributed<HookResult<K>> | undefined> {
  const hook = hooks[name] as unknown as AsyncSeriesBailHook<[unknown, unknown], unknown>;
  if (hook.taps.length === 0) return undefined;
  return ((await hook.promise(payload, context)) ?? undefined) as Attributed<HookResult<K>> | undefined;
}

/**
 * Runs the gate stack for one call: the strictest verdict with its author, or
 * `undefined` when no tap had an opinion (the caller applies its default).
 */
export async function runToolGate(
  hooks: HarnessHooks,
  call: ToolGateCall,
  context: ToolHookContext,
): Promise<AttributedVerdict | undefined> {
  const hook = hooks.toolGate as unknown as AsyncSeriesBailHook<[unknown, unknown], unknown>;
  if (hook.taps.length === 0) return undefined;
  const state: GateState = {};
  gateStates.set(context, state);
  const denied = (await hook.promise(call, context)) as AttributedVerdict | undefined;
  return denied ?? state.strictest;
}
