/**
 * Builds the Tapable instances from HOOK_TABLE and runs them.
 *
 * Tapable is the registration surface (named taps, `stage`, `before`, `tap` /
 * `tapPromise` / `tapAsync`): it keeps `hook.taps` in order. Dispatch is ours:
 * each hook's `compile` (Tapable's extension point for a hook type) returns the
 * runners below, which walk the *live* `hook.taps` in order (hook-run.ts) and
 * call each tap through tap-call.ts: it catches synchronous throws, validates
 * results, applies the failure policy and attributes answers; each tap's own
 * timeout and the run's abort signal are enforced through the PluginDriver.
 *
 * Invariants:
 * - `hook.promise(...)` / `hook.callAsync(...)` and the harness's own calls run
 *   the same runner, so a direct caller gets the same reduction (a gate's
 *   strictest verdict, allow and ask included);
 * - every `tap` / `tapPromise` / `tapAsync` returns a disposer that removes
 *   exactly that tap (by identity); because dispatch reads `hook.taps` live, a
 *   removal needs no recompilation and touches nothing private of Tapable.
 * See ../../../../../shared/spec/harness.md (hook table, failure policy).
 */
import { AsyncSeriesBailHook, AsyncSeriesWaterfallHook } from "tapable";
import type { DecisionStep } from "../session/entries.js";
import { HookRun } from "./hook-run.js";
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
import type { FailurePolicy, HookEnvironment, RawTap, TapCall } from "./tap-call.js";

export type { FailurePolicy, HookEnvironment } from "./tap-call.js";

export const DEFAULT_FAILURE_POLICY: FailurePolicy = {
  tapTimeoutMs: 30_000,
  gate: "deny",
  transform: "fail-run",
};

/** A bail answer with the name of the tap that gave it. */
export type Attributed<T> = T & { by: string };

/** Removes the tap it was returned for; calling it again does nothing. */
export type TapDisposer = () => void;

const environments = new WeakMap<object, HookEnvironment>();

type TapMethod = "tap" | "tapPromise" | "tapAsync";
const TAP_METHODS: readonly TapMethod[] = ["tap", "tapPromise", "tapAsync"];

interface MutableHook {
  taps: RawTap[];
  compile: (options: { type: "sync" | "async" | "promise" }) => unknown;
  [method: string]: unknown;
}

export function createHooks(env: HookEnvironment): HarnessHooks {
  const hooks: Record<string, unknown> = {};
  for (const name of HOOK_NAMES) {
    const spec = HOOK_TABLE[name] as HookSpec<HookName>;
    const hook = (spec.reduction === "waterfall"
      ? new AsyncSeriesWaterfallHook<[unknown, unknown]>(spec.args, name)
      : new AsyncSeriesBailHook<[unknown, unknown], unknown>(spec.args, name)) as unknown as MutableHook;
    const run = (payload: unknown, context: unknown) =>
      start(hooks as unknown as HarnessHooks, name, payload, context as HookContext, undefined);
    hook.compile = ({ type }) => {
      if (type === "promise") return run;
      if (type === "async") {
        return (payload: unknown, context: unknown, callback: (error: unknown, result?: unknown) => void) => {
          run(payload, context).then(
            (result) => callback(null, result),
            (error) => callback(error),
          );
        };
      }
      throw new TypeError(`${name} is an async hook: use promise() or callAsync()`);
    };
    for (const method of TAP_METHODS) {
      const original = hook[method] as (options: unknown, fn: unknown) => void;
      hook[method] = (options: unknown, fn: unknown): TapDisposer => {
        // The tap object Tapable stored (after any `register` interceptor) is what the disposer removes.
        const before = new Set(hook.taps);
        original.call(hook, options, fn);
        const tap = hook.taps.find((candidate) => !before.has(candidate));
        return () => {
          const index = tap === undefined ? -1 : hook.taps.indexOf(tap);
          if (index >= 0) hook.taps = [...hook.taps.slice(0, index), ...hook.taps.slice(index + 1)];
        };
      };
    }
    hooks[name] = hook;
  }
  environments.set(hooks, env);
  return hooks as unknown as HarnessHooks;
}

/** Removes every tap registered under `name` (a plugin's taps carry its name). */
export function removeTaps(hooks: HarnessHooks, name: string): number {
  let removed = 0;
  for (const hookName of HOOK_NAMES) {
    const hook = hooks[hookName] as unknown as MutableHook;
    const kept = hook.taps.filter((tap) => tap.name !== name);
    removed += hook.taps.length - kept.length;
    if (kept.length !== hook.taps.length) hook.taps = kept;
  }
  return removed;
}

// ---- runners: how the harness (and the SDK's testing kit) calls each kind of hook ----

export function runWaterfall<K extends HookName>(
  hooks: HarnessHooks,
  name: K,
  payload: HookPayload<K>,
  context: HookContextOf<K>,
  trail?: DecisionStep[],
): Promise<HookPayload<K>> {
  return start(hooks, name, payload, context as HookContext, trail) as Promise<HookPayload<K>>;
}

export function runBail<K extends HookName>(
  hooks: HarnessHooks,
  name: K,
  payload: HookPayload<K>,
  context: HookContextOf<K>,
  trail?: DecisionStep[],
): Promise<Attributed<HookResult<K>> | undefined> {
  return start(hooks, name, payload, context as HookContext, trail) as Promise<
    Attributed<HookResult<K>> | undefined
  >;
}

/**
 * Runs the gate stack for one call: the strictest verdict with its author, or
 * `undefined` when no tap had an opinion (the caller applies its default).
 * With a `trail`, each runner appends one step per tap that ran (tap-call.ts).
 */
export function runToolGate(
  hooks: HarnessHooks,
  gateCall: ToolGateCall,
  context: ToolHookContext,
  trail?: DecisionStep[],
): Promise<AttributedVerdict | undefined> {
  return start(hooks, "toolGate", gateCall, context, trail) as Promise<AttributedVerdict | undefined>;
}

/** One hook call (hook-run.ts); the reduction is the hook table's. No tap: the payload, or no answer. */
function start(
  hooks: HarnessHooks,
  name: HookName,
  payload: unknown,
  context: HookContext,
  trail: DecisionStep[] | undefined,
): Promise<unknown> {
  const taps = (hooks[name] as unknown as { taps: RawTap[] }).taps;
  const env = environments.get(hooks);
  if (!env) return Promise.reject(new TypeError("hooks were not created by createHooks"));
  const spec = HOOK_TABLE[name] as HookSpec<HookName>;
  if (taps.length === 0) return Promise.resolve(spec.reduction === "waterfall" ? payload : undefined);
  // One literal shape for every hook (a gate's running reduction included).
  const call: TapCall = { name, spec, env, gate: spec.reduction === "gate" ? {} : undefined, trail };
  return new HookRun(call, taps, payload, context).start();
}
