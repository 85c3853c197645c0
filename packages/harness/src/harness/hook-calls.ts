/**
 * Hook calls of a harness: the one place that builds hook contexts for the
 * run's call sites. A call site names the hook, the payload and the signal
 * (and the tool call, for tool hooks); the context - live config view, session
 * facade, queues, ids, `stopRun` - comes from here, never from the call site.
 */
import { runBail, runWaterfall } from "../hooks/create-hooks.js";
import type { HarnessHooks, HookName, HookPayload, HookResult } from "../hooks/hook-table.js";
import type { HookContext, ToolCallInfo, ToolHookContext } from "../hooks/hook-types.js";
import type { HookViews } from "./hook-views.js";

export class HookCalls {
  constructor(
    readonly hooks: HarnessHooks,
    private readonly views: HookViews,
  ) {}

  /** Whether anyone tapped the hook (call sites skip building a payload otherwise). */
  tapped(name: HookName): boolean {
    return (this.hooks[name] as { taps: unknown[] }).taps.length > 0;
  }

  context(signal: AbortSignal): HookContext {
    return this.views.context(signal);
  }

  toolContext(signal: AbortSignal, call: ToolCallInfo): ToolHookContext {
    return this.views.toolContext(signal, call);
  }

  waterfall<K extends HookName>(
    name: K,
    payload: HookPayload<K>,
    signal: AbortSignal,
    call?: ToolCallInfo,
  ): Promise<HookPayload<K>> {
    const context = call === undefined ? this.views.context(signal) : this.views.toolContext(signal, call);
    return runWaterfall(this.hooks, name, payload, context as never);
  }

  bail<K extends HookName>(
    name: K,
    payload: HookPayload<K>,
    signal: AbortSignal,
  ): Promise<(HookResult<K> & { by: string }) | undefined> {
    return runBail(this.hooks, name, payload, this.views.context(signal) as never);
  }
}
