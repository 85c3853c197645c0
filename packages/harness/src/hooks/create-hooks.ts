/**
 * Builds the Tapable instances from HOOK_TABLE and runs them. A Rein hook is made
 * the way Tapable makes its own hook types (as `SyncHook` sets its own `tapAsync`):
 * a Tapable hook with its own `compile`, returning the runner that walks the live
 * `hook.taps` (hook-run.ts), so `hook.promise(...)` gives a run's reduction; tap
 * methods that register through Tapable's `tap` with a `registration` tap option
 * and return a disposer removing the tap carrying it (touching nothing private of
 * Tapable); and a `withOptions` whose `owner` tap option attributes every tap (how
 * the SDK gives plugins their hooks). The environment is the runner's own closure.
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
  type OwnedTap,
  type TapOwner,
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
type TapOptionsObject = { name?: unknown; owner?: TapOwner; stage?: unknown; [option: string]: unknown };

/** The parts of a Tapable hook a Rein hook type sets (Tapable's d.ts leaves `compile` out). */
interface HookType {
  readonly name: string | undefined;
  taps: RawTap[];
  interceptors: unknown[];
  intercept(interceptor: unknown): void;
  isUsed(): boolean;
  callAsync(payload: unknown, context: unknown, callback: unknown): void;
  compile(options: { type: TapType }): unknown;
  withOptions(options: TapOptionsObject): unknown;
  tap(options: unknown, fn: unknown): unknown;
  tapPromise(options: unknown, fn: unknown): unknown;
  tapAsync(options: unknown, fn: unknown): unknown;
}

/** A Rein hook: a Tapable hook whose runner is the harness's (`run`). */
type ReinHook = HarnessHook<HookName> & HookType & { readonly run: Runner };

let registrations = 0;

const TAP_TYPES = { tap: "sync", tapPromise: "promise", tapAsync: "async" } as const;

function tapOptions(options: unknown): TapOptionsObject {
  if (typeof options === "string") return { name: options };
  // Tapable refuses anything else itself ("Invalid tap options"), naming nothing: an owner names itself first.
  return typeof options === "object" && options !== null ? (options as TapOptionsObject) : {};
}

/** What `withOptions` returns: Tapable's view of a hook with preset tap options, plus the hook's reads. */
interface HookView {
  readonly name: string | undefined;
  readonly taps: RawTap[];
  readonly interceptors: unknown[];
  tap(options: unknown, fn: unknown): unknown;
  tapPromise(options: unknown, fn: unknown): unknown;
  tapAsync(options: unknown, fn: unknown): unknown;
  withOptions(options: unknown): HookView;
  intercept(interceptor: unknown): void;
  isUsed(): boolean;
  promise(payload: unknown, context: unknown): Promise<unknown>;
  callAsync(payload: unknown, context: unknown, callback: unknown): void;
}

function createHook(name: HookName, env: HookEnvironment): ReinHook {
  const spec = HOOK_TABLE[name] as HookSpec<HookName>;
  const tapable =
    spec.reduction === "waterfall"
      ? new AsyncSeriesWaterfallHook<[unknown, unknown]>(spec.args, name)
      : new AsyncSeriesBailHook<[unknown, unknown], unknown>(spec.args, name);
  const hook: HookType & { run?: Runner } = tapable as typeof tapable & HookType;
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
      const given = tapOptions(options);
      const { owner, ...rest } = given;
      let registered: TapOptionsObject = rest;
      if (owner !== undefined) {
        owner.admit(name, method, options, fn);
        // The owner's name is the tap's (attribution); what the author called it is its label.
        registered = { ...rest, name: owner.name, label: rest.name };
      }
      const registration = ++registrations;
      tapableTap[method].call(hook, { ...registered, registration }, fn);
      const dispose = () => {
        const index = hook.taps.findIndex(
          (tap) => (tap as { registration?: number }).registration === registration,
        );
        if (index >= 0) hook.taps = [...hook.taps.slice(0, index), ...hook.taps.slice(index + 1)];
      };
      if (owner === undefined) return dispose;
      const tap: OwnedTap = {
        hook: name,
        type: TAP_TYPES[method],
        stage: typeof rest.stage === "number" ? rest.stage : 0,
      };
      if (typeof rest.name === "string" && rest.name !== owner.name) tap.label = rest.name;
      return owner.registered(tap, dispose);
    };
  /** Tapable's `withOptions` view, except that an `owner` in the defaults is never overridden (attribution). */
  const withOptions = (defaults: TapOptionsObject): HookView => {
    const merge = (options: unknown): TapOptionsObject => {
      const merged = { ...defaults, ...tapOptions(options) };
      return defaults.owner === undefined ? merged : { ...merged, owner: defaults.owner };
    };
    const owner = defaults.owner;
    // An owner checks what the author passed, before it is merged with the defaults.
    const viewTap = (method: keyof typeof tapableTap) => (options: unknown, fn: unknown) => {
      owner?.admit(name, method, options, fn);
      return hook[method](merge(options), fn);
    };
    return {
      name: hook.name,
      get taps() {
        return hook.taps;
      },
      get interceptors() {
        return hook.interceptors;
      },
      tap: viewTap("tap"),
      tapPromise: viewTap("tapPromise"),
      tapAsync: viewTap("tapAsync"),
      withOptions: (options) => withOptions(merge(options)),
      intercept: (interceptor) => (owner ? owner.intercept(name) : hook.intercept(interceptor)),
      isUsed: () => hook.isUsed(),
      promise: (payload, context) => run(payload, context as HookContext),
      callAsync: (payload, context, callback) => hook.callAsync(payload, context, callback),
    };
  };
  hook.tap = register("tap");
  hook.tapPromise = register("tapPromise");
  hook.tapAsync = register("tapAsync");
  hook.withOptions = withOptions;
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
