/**
 * Builds the Tapable instances from HOOK_TABLE and runs them.
 *
 * Tapable is the registration surface (named taps, `stage`, `before`, `tap` /
 * `tapPromise` / `tapAsync`): it keeps `hook.taps` in order. Dispatch is ours:
 * each hook's `compile` (Tapable's extension point for a hook type) returns the
 * runners below, which walk the *live* `hook.taps` in a plain loop and call each
 * tap through `callTap` (tap-call.ts): it catches synchronous throws, enforces
 * each tap's own timeout and the run's abort signal (through the PluginDriver),
 * validates results, applies the failure policy and attributes answers.
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
import { isThenable } from "./plugin-driver.js";
import { callTap, type FailurePolicy, type HookEnvironment, type RawTap, type TapCall } from "./tap-call.js";

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
      dispatch(hooks as unknown as HarnessHooks, name, payload, context as HookContext);
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

function dispatch(hooks: HarnessHooks, name: HookName, payload: unknown, context: HookContext) {
  const spec = HOOK_TABLE[name];
  if (spec.reduction === "waterfall") return runWaterfall(hooks, name, payload as never, context as never);
  if (spec.reduction === "gate")
    return runToolGate(hooks, payload as ToolGateCall, context as ToolHookContext);
  return runBail(hooks, name, payload as never, context as never);
}

// ---- runners: how the harness (and the SDK's testing kit) calls each kind of hook ----

function prepare(hooks: HarnessHooks, name: HookName) {
  const taps = (hooks[name] as unknown as { taps: RawTap[] }).taps;
  const env = environments.get(hooks);
  if (!env) throw new TypeError("hooks were not created by createHooks");
  return { taps, env, spec: HOOK_TABLE[name] as HookSpec<HookName> };
}

export async function runWaterfall<K extends HookName>(
  hooks: HarnessHooks,
  name: K,
  payload: HookPayload<K>,
  context: HookContextOf<K>,
  trail?: DecisionStep[],
): Promise<HookPayload<K>> {
  const { taps, env, spec } = prepare(hooks, name);
  if (taps.length === 0) return payload;
  const call: TapCall = { name, spec, env, trail };
  let current: unknown = payload;
  for (const tap of taps) {
    if (name === "beforeRun" && (current as { block?: unknown }).block) break;
    let next = callTap(call, tap, current, context as HookContext);
    if (isThenable(next)) next = await next;
    if (next !== undefined) current = next;
  }
  return current as HookPayload<K>;
}

export async function runBail<K extends HookName>(
  hooks: HarnessHooks,
  name: K,
  payload: HookPayload<K>,
  context: HookContextOf<K>,
  trail?: DecisionStep[],
): Promise<Attributed<HookResult<K>> | undefined> {
  const { taps, env, spec } = prepare(hooks, name);
  if (taps.length === 0) return undefined;
  const call: TapCall = { name, spec, env, trail };
  for (const tap of taps) {
    let answer = callTap(call, tap, payload, context as HookContext);
    if (isThenable(answer)) answer = await answer;
    if (answer !== undefined) return answer as Attributed<HookResult<K>>;
  }
  return undefined;
}

/**
 * Runs the gate stack for one call: the strictest verdict with its author, or
 * `undefined` when no tap had an opinion (the caller applies its default).
 * With a `trail`, each runner appends one step per tap that ran (tap-call.ts).
 */
export async function runToolGate(
  hooks: HarnessHooks,
  gateCall: ToolGateCall,
  context: ToolHookContext,
  trail?: DecisionStep[],
): Promise<AttributedVerdict | undefined> {
  const { taps, env, spec } = prepare(hooks, "toolGate");
  if (taps.length === 0) return undefined;
  const call: TapCall = { name: "toolGate", spec, env, gate: {}, trail };
  for (const tap of taps) {
    let denied = callTap(call, tap, gateCall, context);
    if (isThenable(denied)) denied = await denied;
    if (denied !== undefined) return denied as AttributedVerdict;
  }
  return call.gate?.strictest;
}
