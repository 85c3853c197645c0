/**
 * One applied plugin: the `rein` object its setup receives, and everything it
 * registered through it.
 *
 * Invariants: every tap carries the plugin's name and every listener has the
 * plugin as `owner` (so `plugin_error` and gate decisions name it); `dispose()` runs the plugin's cleanups in reverse registration order, then
 * removes its taps, listeners and tools and restores the default verdict it set,
 * attempting every step even when one fails, and returns the failures instead of
 * throwing halfway. Once disposed, the `rein` object refuses new registrations.
 * `rein.hooks.<name>` for a hook that does not exist throws at once, naming the
 * plugin, where in its source the access was, and the closest real hook, instead
 * of `Cannot read properties of undefined (reading 'tap')` a line later.
 */
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import type {
  AgentHarness,
  AnyAgentTool,
  DefaultToolVerdict,
  EventListener,
  EventType,
  HarnessHooks,
} from "@rein/harness";
import { HOOK_NAMES } from "@rein/harness";
import { attributedHooks, type TapRecord } from "./attributed-hooks.js";
import { didYouMean } from "./closest-name.js";
import {
  invalidTool,
  pluginCause,
  pluginCleanupFailed,
  pluginDisposed,
  type SdkError,
  unknownHook,
} from "./errors.js";
import { bindRein } from "./harness-services.js";
import { createPluginLogger, type LogSink } from "./logger.js";
import type { Cleanup, Rein } from "./plugin.js";
import { isAgentToolLike } from "./tool.js";
import { addTool, removeTool } from "./tool-ownership.js";

const SDK_DIR = dirname(fileURLToPath(import.meta.url));
/** Names that generic code probes on any object (await, JSON, test matchers): never a typo. */
const PROBED = new Set(["then", "toJSON", "asymmetricMatch", "$$typeof", "nodeType"]);

/** `file:line:col` of the first stack frame outside the SDK and Node: the plugin's own code. */
export function callerLocation(stack: string | undefined): string | undefined {
  for (const line of (stack ?? "").split("\n").slice(1)) {
    const match = /\(?((?:file:\/\/)?[^\s()]+):(\d+):(\d+)\)?\s*$/.exec(line);
    if (!match?.[1]) continue;
    const file = match[1].startsWith("file://") ? fileURLToPath(match[1]) : match[1];
    if (file.startsWith("node:") || file.startsWith(SDK_DIR) || file.includes("/node_modules/jiti/"))
      continue;
    return `${file}:${match[2]}:${match[3]}`;
  }
  return undefined;
}

/** The hooks, refusing any name the harness does not have. */
function guardHookNames(hooks: HarnessHooks, plugin: string): HarnessHooks {
  const known = new Set<string>(HOOK_NAMES);
  return new Proxy(hooks, {
    get(target, property, receiver) {
      if (
        typeof property === "string" &&
        !known.has(property) &&
        !PROBED.has(property) &&
        !(property in target)
      ) {
        const where = callerLocation(new Error().stack);
        throw unknownHook(
          plugin,
          property,
          `${didYouMean(property, HOOK_NAMES)}${where ? ` (at ${where})` : ""}`,
        );
      }
      return Reflect.get(target, property, receiver);
    },
  });
}

export class PluginScope {
  readonly taps: TapRecord[] = [];
  readonly tapDisposers = new Set<() => void>();
  readonly tools: AnyAgentTool[] = [];
  readonly rein: Rein;
  private readonly cleanups: Cleanup[] = [];
  private readonly unsubscribers = new Set<() => void>();
  private verdictSet: { previous: DefaultToolVerdict; set: DefaultToolVerdict } | undefined;
  private disposedFlag = false;

  constructor(
    private readonly harness: AgentHarness,
    readonly name: string,
    readonly version: string | undefined,
    sink: LogSink,
    /** How long `setup` and each cleanup may take. */
    private readonly timeoutMs: number,
  ) {
    this.rein = this.createRein(sink);
  }

  /** Runs this plugin's code (setup, rules, a cleanup) through the harness's plugin driver. */
  runPluginCode(
    hook: "setup" | "rules" | "cleanup",
    timeoutMs: number | undefined,
    fn: (...args: never[]) => unknown,
    self?: unknown,
    a?: unknown,
    b?: unknown,
  ): Promise<unknown> {
    return this.harness.plugins.run({ plugin: this.name, hook }, { timeoutMs }, fn, self, a, b);
  }

  get disposed(): boolean {
    return this.disposedFlag;
  }

  /** Number of event listeners still registered. */
  get listenerCount(): number {
    return this.unsubscribers.size;
  }

  /** A cleanup returned from `setup` (or given to `onDispose`). */
  addCleanup(cleanup: Cleanup): void {
    this.cleanups.push(cleanup);
  }

  /** Adds a tool for this scope (also used for tool packs, which have no setup). */
  registerTool(tool: AnyAgentTool): () => void {
    this.assertLive("register tools");
    if (!isAgentToolLike(tool)) {
      throw invalidTool(
        typeof (tool as { name?: unknown } | undefined)?.name === "string"
          ? (tool as { name: string }).name
          : undefined,
        `plugin "${this.name}" registered something that is not a tool (use defineTool)`,
      );
    }
    const owned = addTool(this.harness, tool, this.name);
    this.tools.push(owned);
    return () => {
      const index = this.tools.indexOf(owned);
      if (index < 0) return;
      this.tools.splice(index, 1);
      removeTool(this.harness, owned);
    };
  }

  async dispose(): Promise<SdkError[]> {
    if (this.disposedFlag) return [];
    this.disposedFlag = true;
    const failures: SdkError[] = [];
    const attempt = async (step: () => unknown) => {
      try {
        await step();
      } catch (error) {
        failures.push(pluginCleanupFailed(this.name, pluginCause(error)));
      }
    };
    for (const cleanup of this.cleanups.splice(0).reverse()) {
      await attempt(() => this.runPluginCode("cleanup", this.timeoutMs, cleanup));
    }
    for (const untap of [...this.tapDisposers]) await attempt(untap);
    for (const unsubscribe of [...this.unsubscribers]) await attempt(unsubscribe);
    this.unsubscribers.clear();
    for (const tool of this.tools.splice(0).reverse()) await attempt(() => removeTool(this.harness, tool));
    const verdict = this.verdictSet;
    // Restore only if nobody replaced our verdict since: a later plugin's choice wins.
    if (verdict && this.harness.defaultToolVerdict === verdict.set) {
      await attempt(() => this.harness.setDefaultToolVerdict(verdict.previous));
    }
    return failures;
  }

  private assertLive(what: string): void {
    if (this.disposedFlag) throw pluginDisposed(this.name, what);
  }

  private listen(add: () => () => void): () => void {
    this.assertLive("listen to events");
    const unsubscribe = add();
    const remove = () => {
      if (this.unsubscribers.delete(remove)) unsubscribe();
    };
    this.unsubscribers.add(remove);
    return remove;
  }

  private createRein(sink: LogSink): Rein {
    const harness = this.harness;
    const owner = { owner: this.name };
    const rein: Rein = Object.freeze({
      plugin: Object.freeze({ name: this.name, version: this.version }),
      hooks: guardHookNames(attributedHooks(harness.hooks, this), this.name),
      on: <K extends EventType>(
        type: K,
        listener: EventListener<Extract<Parameters<EventListener>[0], { type: K }>>,
      ) => this.listen(() => harness.on(type, listener, owner)),
      subscribe: (listener: EventListener) => this.listen(() => harness.subscribe(listener, owner)),
      registerTool: (tool: AnyAgentTool) => this.registerTool(tool),
      config: harness.configView,
      session: harness.sessionFacade,
      logger: createPluginLogger(this.name, sink),
      setDefaultToolVerdict: (verdict: DefaultToolVerdict) => {
        this.assertLive("set the default tool verdict");
        const previous = this.verdictSet?.previous ?? harness.defaultToolVerdict;
        harness.setDefaultToolVerdict(verdict, { owner: this.name });
        this.verdictSet = { previous, set: verdict };
      },
      onDispose: (cleanup: Cleanup) => {
        this.assertLive("register cleanups");
        if (typeof cleanup !== "function") throw new TypeError("onDispose expects a function");
        this.addCleanup(cleanup);
      },
    });
    bindRein(rein, harness);
    return rein;
  }
}
