/**
 * Builds the Tapable instances from HOOK_TABLE and runs them.
 *
 * Tapable is the registration surface (named taps, `stage`, `before`, `tap` /
 * `tapPromise` / `tapAsync`, interceptors): it keeps `hook.taps` in order. A Rein
 * hook is made the way Tapable makes its own hook types - a Tapable hook with its
 * own `compile` and tap methods (as `SyncHook` sets its own `tapAsync`):
 * - `compile` returns the hook's runner, which walks the *live* `hook.taps`
 *   (hook-run.ts, the one walker), so `hook.promise(...)` / `hook.callAsync(...)`
 *   and the harness's own calls give the same reduction;
 * - `tap` / `tapPromise` / `tapAsync` register through Tapable's own `tap` with a
 *   `registration` tap option and return a disposer removing the tap that
 *   carries it (a `register` interceptor that replaces the tap object keeps its
 *   options, as Tapable's do); dispatch reads `hook.taps` live, so a removal
 *   needs no recompilation and touches nothing private of Tapable.
 * The environment (driver, failure policy, reporting) is the hook's own field.
 * See ../../../../../shared/spec/harness.md (hook table, failure policy).
 */
import { AsyncSeriesBailHook, AsyncSeriesWaterfallHook } from "tapable";
import type { DecisionStep } from "../session/entries.js";
import { type FailurePolicy, type HookEnvironment, HookRun, type RawTap } from "./hook-run.js";
import {
  type HarnessHook,
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

export type { FailurePolicy, HookEnvironment } from "./hook-run.js";

export const DEFAULT_FAILURE_POLICY: FailurePolicy = {
  tapTimeoutMs: 30_000,
  gate: "deny",
  transform: "fail-run",
};

/** A bail answer with the name of the tap that gave it. */
export type Attributed<T> = T & { by: string };

/** Removes the tap it was returned for; calling it again does nothing. */
export type TapDisposer = () => void;

/** How a call of the hook runs: the trail and explain mode are the tool-decision pipeline's. */
type Runner = (
  payload: unknown,
  context: HookContext,
  trail?: DecisionStep[],
  explain?: boolean,
) => Promise<unknown>;

type TapType = RawTap["type"];
type TapOptionsObject = { name?: unknown; registration?: number; [option: string]: unknown };

/** The parts of a Tapable hook a Rein hook type sets (Tapable's d.ts leaves `compile` out). */
interface HookType {
  taps: RawTap[];
  compile(options: { type: TapType }): unknown;
  tap(options: unknown, fn: unknown): unknown;
  tapPromise(options: unknown, fn: unknown): unknown;
  tapAsync(options: unknown, fn: unknown): unknown;
}

/** A Rein hook: a Tapable hook whose runner is the harness's (`run`). */
type ReinHook = HarnessHook<HookName> & HookType & { readonly run: Runner };

let registrations = 0;

function createHook(name: HookName, env: HookEnvironment): ReinHook {
  const spec = HOOK_TABLE[name] as HookSpec<HookName>;
  const tapable =
    spec.reduction === "waterfall"
      ? new AsyncSeriesWaterfallHook<[unknown, unknown]>(spec.args, name)
      : new AsyncSeriesBailHook<[unknown, unknown], unknown>(spec.args, name);
  const hook = tapable as typeof tapable & HookType & { run?: Runner };
  const run: Runner = (payload, context, trail, explain) => {
    const taps = hook.taps;
    if (taps.length === 0) return Promise.resolve(spec.reduction === "waterfall" ? payload : undefined);
    return new HookRun({ name, spec, env, trail, explain }, taps, payload, context).start();
  };
  // Tapable's own `tap`, kept before the tap methods are replaced below.
  const tapableTap = { tap: hook.tap, tapPromise: hook.tapPromise, tapAsync: hook.tapAsync };
  const register =
    (method: keyof typeof tapableTap) =>
    (options: unknown, fn: unknown): TapDisposer => {
      const registration = ++registrations;
      const given: TapOptionsObject =
        typeof options === "string" ? { name: options } : (options as TapOptionsObject);
      tapableTap[method].call(hook, { ...given, registration }, fn);
      return () => {
        const index = hook.taps.findIndex(
          (tap) => (tap as { registration?: number }).registration === registration,
        );
        if (index >= 0) hook.taps = [...hook.taps.slice(0, index), ...hook.taps.slice(index + 1)];
      };
    };
  hook.tap = register("tap");
  hook.tapPromise = register("tapPromise");
  hook.tapAsync = register("tapAsync");
  hook.compile = ({ type }) => {
    if (type === "promise") return (payload: unknown, context: HookContext) => run(payload, context);
    if (type === "async") {
      return (
        payload: unknown,
        context: HookContext,
        callback: (error: unknown, result?: unknown) => void,
      ) => {
        run(payload, context).then(
          (result) => callback(null, result),
          (error) => callback(error),
        );
      };
    }
    throw new TypeError(`${name} is an async hook: use promise() or callAsync()`);
  };
  hook.run = run;
  return hook as ReinHook;
}

export function createHooks(env: HookEnvironment): HarnessHooks {
  const hooks: Partial<Record<HookName, ReinHook>> = {};
  for (const name of HOOK_NAMES) hooks[name] = createHook(name, env);
  return hooks as HarnessHooks;
}

/** Removes every tap registered under `name` (a plugin's taps carry its name). */
export function removeTaps(hooks: HarnessHooks, name: string): number {
  let removed = 0;
  for (const hookName of HOOK_NAMES) {
    const hook = hooks[hookName];
    const kept = hook.taps.filter((tap) => tap.name !== name);
    removed += hook.taps.length - kept.length;
    if (kept.length !== hook.taps.length) hook.taps = kept;
  }
  return removed;
}

/** The runner of a hook `createHooks` made; a hook from anywhere else is refused. */
function runnerOf(hooks: HarnessHooks, name: HookName): Runner {
  const run = (hooks[name] as HarnessHook<HookName> & { run?: unknown }).run;
  if (typeof run !== "function") throw new TypeError("hooks were not created by createHooks");
  return run as Runner;
}

// ---- runners: how the harness (and the SDK's testing kit) calls each kind of hook ----

export function runWaterfall<K extends HookName>(
  hooks: HarnessHooks,
  name: K,
  payload: HookPayload<K>,
  context: HookContextOf<K>,
  trail?: DecisionStep[],
): Promise<HookPayload<K>> {
  return runnerOf(hooks, name)(payload, context, trail) as Promise<HookPayload<K>>;
}

export function runBail<K extends HookName>(
  hooks: HarnessHooks,
  name: K,
  payload: HookPayload<K>,
  context: HookContextOf<K>,
  trail?: DecisionStep[],
): Promise<Attributed<HookResult<K>> | undefined> {
  return runnerOf(hooks, name)(payload, context, trail) as Promise<Attributed<HookResult<K>> | undefined>;
}

/**
 * Runs the gate stack for one call: the strictest verdict with its author, or
 * `undefined` when no tap had an opinion (the caller applies its default).
 * With a `trail`, one step per tap that ran; with `explain` (`rein check`), the
 * taps after the deciding deny are asked too (hook-run.ts).
 */
export function runToolGate(
  hooks: HarnessHooks,
  gateCall: ToolGateCall,
  context: ToolHookContext,
  trail?: DecisionStep[],
  explain?: boolean,
): Promise<AttributedVerdict | undefined> {
  return runnerOf(hooks, "toolGate")(gateCall, context, trail, explain) as Promise<
    AttributedVerdict | undefined
  >;
}
