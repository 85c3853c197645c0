/**
 * What a harness hands the child agents started from it: the parts of its state
 * that are not public (live config, failure policy, stream function, event bus).
 * Each harness registers itself once, in its constructor; `startChild` reads it.
 */
import type { HarnessEvent } from "../events/event-types.js";
import type { LiveConfig } from "../harness/live-config.js";
import type { FailurePolicy } from "../hooks/create-hooks.js";
import type { StreamFunction } from "../loop/loop-types.js";

export interface ParentInternals {
  config: LiveConfig;
  failurePolicy: FailurePolicy;
  streamFn: StreamFunction;
  emit(event: HarnessEvent): Promise<void>;
}

const parents = new WeakMap<object, ParentInternals>();

export function registerParent(
  harness: object,
  config: LiveConfig,
  failurePolicy: FailurePolicy,
  streamFn: StreamFunction,
  emit: (event: HarnessEvent) => Promise<void>,
): void {
  parents.set(harness, { config, failurePolicy, streamFn, emit });
}

export function parentInternals(harness: object): ParentInternals | undefined {
  return parents.get(harness);
}
