/**
 * Builds the Tapable instances from HOOK_TABLE and runs them.
 *
 * Tapable is the registration surface (named taps, `stage`, `before`, `tap` /
 * `tapPromise` / `tapAsync`): it keeps `hook.taps` in order. Dispatch is ours:
 * the runners below walk `hook.taps` in a plain loop and call each tap through
 * `callTap` (tap-call.ts), which catches synchronous throws, enforces timeouts,
 * validates results, applies the failure policy and attributes answers. That
 * avoids tapable's hazards (a second `tapPromise` that throws synchronously hangs
 * its promise forever) and costs about what a hand-written loop does.
 *
 * Code that calls a hook directly (`hook.promise(...)`) still gets the same
 * semantics: a `register` interceptor wraps every tap in the same `callTap`.
 * See ../../../../../shared/spec/harness.md (hook table, failure policy).
 */
import { AsyncSeriesBailHook, AsyncSeriesWaterfallHook } from "tapable";
import {
  type HarnessHooks,
  HOOK_NAMES,
  HOOK_TABLE,
  type HookContextOf,
  type HookName,
  type HookPayload,
  type HookResult,
  type HookSpec,
} from "./hook-table.js";
import type { AttributedVerdict, HookContext, ToolGateCall, ToolHookContext } from "./hook-types.js";
import {
  callTap,
  type FailurePolicy,
  type GateState,
  type HookEnvironment,
  type RawTap,
  type TapCall,
  TapWatch,
} from "./tap-call.js";

export type { FailurePolicy, HookEnvironment } from "./tap-call.js";

export const DEFAULT_FAILURE_POLICY: FailurePolicy = {
  tapTimeoutMs: 30_000,
  gate: "deny",
  transform: "fail-run",
};

/** A bail answer with the name of the tap that gave it. */
export type Attributed<T> = T & { by: string };

/** The tap as registered, kept on the wrapped tap tapable stores. */
const ORIGINAL = Symbol("rein.originalTap");
type StoredTap = RawTap & { [ORIGINAL]: RawTap };

const environments = new WeakMap<object, HookEnvironment>();

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
  environments.set(hooks, env);
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

/** For direct `hook.promise()` callers: the same semantics through tapable's own dispatch. */
function wrapTap(name: HookName, spec: HookSpec<HookName>, tap: RawTap, env: HookEnvironment): StoredTap {
  const original: RawTap = { ...tap };
  const fn = (payload: unknown, context: HookContext) => {
    // A block stops the beforeRun chain: later taps never see (or undo) it.
    if (name === "beforeRun" && (payload as { block?: unknown } | undefined)?.block)
      return Promise.resolve(undefined);
    const watch = new TapWatch(env.driver);
    const call: TapCall = { name, spec, env, watch };
    const gate = gateStates.get(context);
    if (gate) call.gate = gate;
    return Promise.resolve()
      .then(() => callTap(call, original, payload, context))
      .finally(() => watch.finish());
  };
  return { ...tap, type: "promise", fn, [ORIGINAL]: original };
}

/** Gate reductions of `hook.promise()` callers, keyed by their context object. */
const gateStates = new WeakMap<object, GateState>();

// ---- runners: how the harness (and the SDK's testing kit) calls each kind of hook ----

function prepare(hooks: HarnessHooks, name: HookName) {
  const taps = (hooks[name] as unknown as { taps: StoredTap[] }).taps;
  const env = environments.get(hooks);
  if (!env) throw new TypeError("hooks were not created by createHooks");
  return { taps, env, spec: HOOK_TABLE[name] as HookSpec<HookName> };
}

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  value !== null &&
  (typeof value === "object" || typeof value === "function") &&
  typeof (value as { then?: unknown }).then === "function";

export async function runWaterfall<K extends HookName>(
  hooks: HarnessHooks,
  name: K,
  payload: HookPayload<K>,
  context: HookContextOf<K>,
): Promise<HookPayload<K>> {
  const { taps, env, spec } = prepare(hooks, name);
  if (taps.length === 0) return payload;
  const call: TapCall = { name, spec, env, watch: new TapWatch(env.driver) };
  let current: unknown = payload;
  try {
    for (const tap of taps) {
      if (name === "beforeRun" && (current as { block?: unknown }).block) break;
      let next = callTap(call, tap[ORIGINAL], current, context as HookContext);
      if (isThenable(next)) next = await next;
      if (next !== undefined) current = next;
    }
  } finally {
    call.watch.finish();
  }
  return current as HookPayload<K>;
}

export async function runBail<K extends HookName>(
  hooks: HarnessHooks,
  name: K,
  payload: HookPayload<K>,
  context: HookContextOf<K>,
): Promise<Attributed<HookResult<K>> | undefined> {
  const { taps, env, spec } = prepare(hooks, name);
  if (taps.length === 0) return undefined;
  const call: TapCall = { name, spec, env, watch: new TapWatch(env.driver) };
  try {
    for (const tap of taps) {
      let answer = callTap(call, tap[ORIGINAL], payload, context as HookContext);
      if (isThenable(answer)) answer = await answer;
      if (answer !== undefined) return answer as Attributed<HookResult<K>>;
    }
  } finally {
    call.watch.finish();
  }
  return undefined;
}

/**
 * Runs the gate stack for one call: the strictest verdict with its author, or
 * `undefined` when no tap had an opinion (the caller applies its default).
 */
export async function runToolGate(
  hooks: HarnessHooks,
  gateCall: ToolGateCall,
  context: ToolHookContext,
): Promise<AttributedVerdict | undefined> {
  const { taps, env, spec } = prepare(hooks, "toolGate");
  if (taps.length === 0) return undefined;
  const call: TapCall = { name: "toolGate", spec, env, watch: new TapWatch(env.driver), gate: {} };
  try {
    for (const tap of taps) {
      let denied = callTap(call, tap[ORIGINAL], gateCall, context);
      if (isThenable(denied)) denied = await denied;
      if (denied !== undefined) return denied as AttributedVerdict;
    }
  } finally {
    call.watch.finish();
  }
  return call.gate?.strictest;
}
