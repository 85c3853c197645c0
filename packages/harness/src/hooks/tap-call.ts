/**
 * Calls one tap: the single place where a hook tap's code runs. It catches
 * synchronous throws, awaits a promise only when the tap returned one, enforces
 * the tap's timeout, validates the result against the hook table, applies the
 * hook's failure policy, and attributes the answer to the tap (its name).
 *
 * Invariant: the result is what the reduction needs - the next payload
 * (waterfall), an attributed answer (bail, gate) or `undefined` (no opinion) -
 * and every failure that escapes is a `HarnessError` naming plugin and hook.
 */
import { HarnessError, HarnessErrorCode, pluginFailure } from "../errors.js";
import { type HookName, type HookSpec, stricter } from "./hook-table.js";
import type { AttributedVerdict, GateDecision, HookContext, ToolHookContext } from "./hook-types.js";
import type { PluginCallSite, PluginDriver } from "./plugin-driver.js";

export interface FailurePolicy {
  /** Default per-tap timeout in ms (hooks may override it in the table; taps with `timeout`). Default 30 000. */
  tapTimeoutMs: number;
  /** What a throwing or timed-out gate tap answers. Default `deny`; never `allow`. */
  gate: Exclude<GateDecision, "allow">;
  /** `fail-run` (default): a throwing transform fails the run. `skip-tap`: report it and keep the payload. */
  transform: "fail-run" | "skip-tap";
}

export interface HookEnvironment {
  driver: PluginDriver;
  policy(): FailurePolicy;
  /** Surfaces a plugin failure that was absorbed by policy (a `plugin_error` event). */
  report(failure: HarnessError): void;
}

/** A registered tap as tapable stores it. */
export interface RawTap {
  name: string;
  type: "sync" | "async" | "promise";
  // biome-ignore lint/complexity/noBannedTypes: tapable's own type for tap functions.
  fn: Function;
  stage?: number;
  timeout?: number;
}

/** The gate's running reduction for one call: the strictest non-deny verdict so far. */
export interface GateState {
  strictest?: AttributedVerdict;
}

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  value !== null &&
  (typeof value === "object" || typeof value === "function") &&
  typeof (value as { then?: unknown }).then === "function";

function invoke(tap: RawTap, payload: unknown, context: unknown): unknown {
  if (tap.type !== "async") return tap.fn(payload, context);
  return new Promise((resolve, reject) => {
    tap.fn(payload, context, (error: unknown, result: unknown) => (error ? reject(error) : resolve(result)));
  });
}

/**
 * Times the async taps of one hook call with a single timer: each tap gets its
 * own deadline, but a timer is armed once per call and re-armed only when it
 * fires early, so a fast tap costs no timer work.
 */
export class TapWatch {
  private timer: NodeJS.Timeout | undefined;
  private deadline = Number.POSITIVE_INFINITY;
  private current:
    | { site: PluginCallSite; value: PromiseLike<unknown>; timeoutMs: number; expire(error: unknown): void }
    | undefined;

  constructor(private readonly driver: PluginDriver) {}

  /**
   * Settles with `onSettled(result)` / `onFailed(error)` of the tap's promise, or
   * with `onFailed(timeout)` once its deadline passes. One promise per async tap.
   */
  wait(
    value: PromiseLike<unknown>,
    site: PluginCallSite,
    timeoutMs: number,
    onSettled: (result: unknown) => unknown,
    onFailed: (error: unknown) => unknown,
  ): Promise<unknown> {
    if (!Number.isFinite(timeoutMs)) {
      return Promise.resolve(this.driver.watch(site, value)).then(onSettled, onFailed);
    }
    return new Promise((resolve, reject) => {
      let done = false;
      const finish = (handler: (input: unknown) => unknown, input: unknown) => {
        if (done) return;
        done = true;
        try {
          resolve(handler(input));
        } catch (error) {
          reject(error);
        }
      };
      this.current = {
        site,
        value,
        timeoutMs,
        expire: (error) => finish(onFailed, error),
      };
      this.deadline = Date.now() + timeoutMs;
      if (this.timer === undefined) this.arm(timeoutMs);
      value.then(
        (result) => finish(onSettled, result),
        (error) => finish(onFailed, error),
      );
    });
  }

  /** Ends the hook call: no timer outlives it. */
  finish(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(ms: number): void {
    this.timer = setTimeout(() => this.fire(), Math.max(0, ms));
  }

  private fire(): void {
    this.timer = undefined;
    const remaining = this.deadline - Date.now();
    if (remaining > 0) {
      this.arm(remaining);
      return;
    }
    const current = this.current;
    this.current = undefined;
    if (!current) return;
    this.driver.markHung(current.site, current.value);
    current.expire(
      new HarnessError(
        HarnessErrorCode.hook,
        `plugin "${current.site.plugin}" timed out in ${current.site.hook} after ${current.timeoutMs} ms`,
        {
          plugin: current.site.plugin,
          hook: current.site.hook,
          toolCallId: current.site.toolCallId,
          pluginCode: "timeout",
        },
      ),
    );
  }
}

export interface TapCall {
  name: HookName;
  spec: HookSpec<HookName>;
  env: HookEnvironment;
  watch: TapWatch;
  /** For the gate: the running strictest verdict. */
  gate?: GateState;
}

/** Runs one tap; returns (or resolves to) what the reduction takes from it. */
export function callTap(call: TapCall, tap: RawTap, payload: unknown, context: HookContext): unknown {
  const site: PluginCallSite = { plugin: tap.name, hook: call.name };
  const toolCall = (context as Partial<ToolHookContext> | undefined)?.call;
  if (toolCall) site.toolCallId = toolCall.id;
  let value: unknown;
  try {
    value = invoke(tap, payload, context);
  } catch (error) {
    return onFailure(call, tap, site, error, context);
  }
  if (!isThenable(value)) return onResult(call, tap, site, value, payload, context);
  const timeoutMs = tap.timeout ?? call.spec.timeoutMs ?? call.env.policy().tapTimeoutMs;
  return call.watch.wait(
    value,
    site,
    timeoutMs,
    (result) => onResult(call, tap, site, result, payload, context),
    (error) => onFailure(call, tap, site, error, context),
  );
}

function onResult(
  call: TapCall,
  tap: RawTap,
  site: PluginCallSite,
  result: unknown,
  payload: unknown,
  context: HookContext,
): unknown {
  if (result === undefined || result === null) return undefined;
  const problem = call.spec.validate(result, payload as never);
  if (problem) {
    const malformed = new HarnessError(
      HarnessErrorCode.hook,
      `plugin "${tap.name}" returned a malformed result from ${call.name}: ${problem}`,
      { plugin: tap.name, hook: call.name, toolCallId: site.toolCallId, pluginCode: "malformed_result" },
    );
    return onFailure(call, tap, site, malformed, context);
  }
  if (call.spec.reduction === "waterfall") return result;
  if (call.spec.reduction === "bail") return { ...(result as object), by: tap.name };
  return reduceGate(call, result as AttributedVerdict, tap.name);
}

function onFailure(
  call: TapCall,
  tap: RawTap,
  site: PluginCallSite,
  error: unknown,
  _context: HookContext,
): unknown {
  const failure = pluginFailure(error, site);
  const policy = call.env.policy();
  if (call.spec.failure === "fail-closed") {
    call.env.report(failure);
    const reason = `${failure.message} (failing closed)`;
    if (call.name === "permissionAsk") return { decision: "deny", reason, by: tap.name };
    return reduceGate(call, { decision: policy.gate, reason, by: tap.name }, tap.name);
  }
  if (policy.transform === "skip-tap" && call.spec.reduction === "waterfall") {
    call.env.report(failure);
    return undefined;
  }
  throw failure;
}

function reduceGate(
  call: TapCall,
  verdict: AttributedVerdict,
  tapName: string,
): AttributedVerdict | undefined {
  const by = verdict.rule ? `${tapName}:${verdict.rule}` : tapName;
  const attributed: AttributedVerdict = { ...verdict, by };
  // Bail on deny: nothing after it can undo it, so nothing after it runs.
  if (attributed.decision === "deny") return attributed;
  if (call.gate) call.gate.strictest = stricter(call.gate.strictest, attributed);
  return undefined;
}
