/**
 * The hooks a plugin sees: the harness's own Tapable instances behind a proxy
 * that stamps every tap with the plugin's name.
 *
 * Why: the harness attributes every decision, failure and timeout to the tap's
 * name (`by: "<plugin>[:<rule>]"`, `plugin_error.plugin`). So the name cannot be
 * left to the author: whatever
 * they pass (a string or `{ name, stage, before, timeout }`) is kept for display as
 * a label, and the registered name is the plugin's.
 *
 * Invariants: a tap registered here always carries the plugin's name; the author's
 * `stage`, `before` and `timeout` pass through untouched; the typing is the
 * harness's `HarnessHooks`, so payloads and results autocomplete; `intercept` is
 * refused (an interceptor sees every plugin's taps and could not be removed on
 * dispose); tapping after dispose throws `plugin_disposed`; every tap method
 * returns a disposer removing exactly that tap (by identity, through the
 * harness's own disposer), and the scope keeps them all to remove on dispose.
 */
import { type HarnessHooks, HOOK_NAMES, type HookName } from "@rein/harness";
import { invalidPlugin, pluginDisposed, unsupported } from "./errors.js";

/** One tap a plugin registered, as the host reports it (`rein plugins`). */
export interface TapRecord {
  hook: HookName;
  /** Tapable tap type: `sync` (`tap`), `promise` (`tapPromise`) or `async` (`tapAsync`). */
  type: "sync" | "promise" | "async";
  /** Lower runs first; default 0. */
  stage: number;
  /** The name the author passed, when it differs from the plugin's name. */
  label?: string;
}

interface TapOptionsLike {
  name?: unknown;
  stage?: number;
  before?: string | string[];
  timeout?: number;
  [option: string]: unknown;
}

interface PluginTapScope {
  readonly name: string;
  readonly disposed: boolean;
  readonly taps: TapRecord[];
  /** Removers of every tap still registered, run on dispose. */
  readonly tapDisposers: Set<() => void>;
}

type TapMethod = "tap" | "tapPromise" | "tapAsync";
const TAP_TYPES: Record<TapMethod, TapRecord["type"]> = {
  tap: "sync",
  tapPromise: "promise",
  tapAsync: "async",
};

function normalise(
  scope: PluginTapScope,
  hook: HookName,
  options: unknown,
): TapOptionsLike & { name: string } {
  if (typeof options === "string") return { name: scope.name, label: options };
  if (typeof options !== "object" || options === null) {
    throw invalidPlugin(
      `plugin "${scope.name}": ${hook} tap options must be a name or { name, stage, timeout }`,
      scope.name,
      { hook },
    );
  }
  const given = options as TapOptionsLike;
  return { ...given, name: scope.name, label: given.name };
}

function wrapHook<K extends HookName>(
  scope: PluginTapScope,
  name: K,
  hook: HarnessHooks[K],
): HarnessHooks[K] {
  const target = hook as unknown as Record<string, (...args: unknown[]) => unknown>;
  const register = (method: TapMethod) => (options: unknown, fn: unknown) => {
    if (scope.disposed) throw pluginDisposed(scope.name, `tap ${name}`);
    if (typeof fn !== "function") {
      throw invalidPlugin(`plugin "${scope.name}": ${name}.${method} needs a function`, scope.name, {
        hook: name,
      });
    }
    const { label, ...tapOptions } = normalise(scope, name, options);
    const record: TapRecord = { hook: name, type: TAP_TYPES[method], stage: tapOptions.stage ?? 0 };
    if (typeof label === "string" && label !== scope.name) record.label = label;
    const untap = target[method]?.call(hook, tapOptions, fn) as (() => void) | undefined;
    scope.taps.push(record);
    const dispose = () => {
      if (!scope.tapDisposers.delete(dispose)) return;
      untap?.();
      const index = scope.taps.indexOf(record);
      if (index >= 0) scope.taps.splice(index, 1);
    };
    scope.tapDisposers.add(dispose);
    return dispose;
  };
  const overrides: Record<string | symbol, unknown> = {
    tap: register("tap"),
    tapPromise: register("tapPromise"),
    tapAsync: register("tapAsync"),
    // Tapable's withOptions would call the raw hook's tap methods; route it through ours.
    withOptions: (defaults: TapOptionsLike) => {
      const merge = (options: unknown) =>
        typeof options === "string"
          ? { ...defaults, name: options }
          : { ...defaults, ...(options as object) };
      return {
        tap: (options: unknown, fn: unknown) => register("tap")(merge(options), fn),
        tapPromise: (options: unknown, fn: unknown) => register("tapPromise")(merge(options), fn),
        tapAsync: (options: unknown, fn: unknown) => register("tapAsync")(merge(options), fn),
        isUsed: () => hook.isUsed(),
        intercept: () => {
          throw unsupported(scope.name, "hook interceptors are not available to plugins", name);
        },
      };
    },
    intercept: () => {
      throw unsupported(
        scope.name,
        "hook interceptors are not available to plugins (tap the hook instead)",
        name,
      );
    },
  };
  return new Proxy(hook, {
    get(hookTarget, property) {
      if (Object.hasOwn(overrides, property)) return overrides[property];
      const value = Reflect.get(hookTarget, property, hookTarget);
      // Bind to the real hook: Tapable compiles and caches state on `this`.
      return typeof value === "function" ? value.bind(hookTarget) : value;
    },
    set() {
      return false;
    },
  });
}

/** Every harness hook, wrapped for one plugin. */
export function attributedHooks(hooks: HarnessHooks, scope: PluginTapScope): HarnessHooks {
  const wrapped: Partial<Record<HookName, unknown>> = {};
  for (const name of HOOK_NAMES) wrapped[name] = wrapHook(scope, name, hooks[name]);
  return Object.freeze(wrapped) as HarnessHooks;
}
