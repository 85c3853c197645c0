/**
 * The hooks a plugin sees: each harness hook's own `withOptions` view with the
 * plugin as tap owner (`TapOwner`, a Rein tap option), so every tap is stamped
 * with the plugin's name by the harness itself.
 *
 * Why: the harness attributes every decision, failure and timeout to the tap's
 * name (`by: "<plugin>[:<rule>]"`, `plugin_error.plugin`). So the name cannot be
 * left to the author: whatever they pass (a string or `{ name, stage, before,
 * timeout }`) is kept for display as a label, and the registered name is the plugin's.
 *
 * Invariants: a tap registered here always carries the plugin's name (an owner
 * in the view's defaults is never overridden, `withOptions` views included); the
 * author's `stage`, `before` and `timeout` pass through untouched; the typing is
 * the harness's `HarnessHooks`; `intercept` is refused (an interceptor sees every
 * plugin's taps and could not be removed on dispose); tapping after dispose throws
 * `plugin_disposed`; every tap method returns a disposer removing exactly that tap,
 * and the scope keeps them all to remove on dispose.
 */
import { type HarnessHooks, HOOK_NAMES, type HookName, type OwnedTap, type TapOwner } from "@rein/harness";
import { invalidPlugin, pluginDisposed, unsupported } from "./errors.js";

/** One tap a plugin registered, as the host reports it (`rein plugins`). */
export type TapRecord = OwnedTap;

interface PluginTapScope {
  readonly name: string;
  readonly disposed: boolean;
  readonly taps: TapRecord[];
  /** Removers of every tap still registered, run on dispose. */
  readonly tapDisposers: Set<() => void>;
}

/** The plugin as the owner of its taps: checks each registration, keeps its record and disposer. */
function tapOwner(scope: PluginTapScope): TapOwner {
  return {
    name: scope.name,
    admit(hook, method, options, fn) {
      if (scope.disposed) throw pluginDisposed(scope.name, `tap ${hook}`);
      if (typeof fn !== "function") {
        throw invalidPlugin(`plugin "${scope.name}": ${hook}.${method} needs a function`, scope.name, {
          hook,
        });
      }
      if (typeof options !== "string" && (typeof options !== "object" || options === null)) {
        throw invalidPlugin(
          `plugin "${scope.name}": ${hook} tap options must be a name or { name, stage, timeout }`,
          scope.name,
          { hook },
        );
      }
    },
    registered(record, untap) {
      scope.taps.push(record);
      const dispose = () => {
        if (!scope.tapDisposers.delete(dispose)) return;
        untap();
        const index = scope.taps.indexOf(record);
        if (index >= 0) scope.taps.splice(index, 1);
      };
      scope.tapDisposers.add(dispose);
      return dispose;
    },
    intercept(hook: HookName): never {
      throw unsupported(
        scope.name,
        "hook interceptors are not available to plugins (tap the hook instead)",
        hook,
      );
    },
  };
}

/** Every harness hook, as one plugin registers on it. */
export function attributedHooks(hooks: HarnessHooks, scope: PluginTapScope): HarnessHooks {
  const owner = tapOwner(scope);
  const table: Partial<Record<HookName, unknown>> = {};
  for (const name of HOOK_NAMES) table[name] = hooks[name].withOptions({ owner });
  return Object.freeze(table) as HarnessHooks;
}
