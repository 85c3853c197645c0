/**
 * Calls one tap: the single place where a hook tap's code runs. It catches
 * synchronous throws, awaits a promise only when the tap returned one (through
 * the PluginDriver, under the tap's own deadline and the run's abort signal),
 * validates the result against the hook table, applies the hook's failure
 * policy, and attributes the answer to the tap (its name). A tap cancelled by
 * an abort is not the plugin's failure: a gate or permission answer is a deny by
 * `harness`, a transform ends the run `aborted`; nothing is reported or skipped.
 *
 * It is also where a decision trail is written (`TapCall.trail`, given only by
 * the tool-decision pipeline): one step per tap that ran, with its answer, "no
 * opinion" or its failure. Without a trail nothing is allocated for it. In
 * explain mode (explain-gate.ts, `rein check` only) a registered trail also
 * keeps the gate's deciding deny: which tap gave it and under which call.
 *
 * Invariant: the result is what the reduction needs - the next payload
 * (waterfall), an attributed answer (bail, gate) or `undefined` (no opinion) -
 * and every failure that escapes is a `HarnessError` naming plugin and hook.
 */
import { HarnessError, HarnessErrorCode, pluginFailure } from "../errors.js";
import type { DecisionStep } from "../session/entries.js";
import { type HookName, type HookSpec, stricter } from "./hook-table.js";
import type { AttributedVerdict, GateDecision, HookContext, ToolHookContext } from "./hook-types.js";
import { isThenable, type PluginCallSite, type PluginDriver } from "./plugin-driver.js";

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

export function invoke(tap: RawTap, payload: unknown, context: unknown): unknown {
  if (tap.type !== "async") return tap.fn(payload, context);
  return new Promise((resolve, reject) => {
    tap.fn(payload, context, (error: unknown, result: unknown) => (error ? reject(error) : resolve(result)));
  });
}

export interface TapCall {
  name: HookName;
  spec: HookSpec<HookName>;
  env: HookEnvironment;
  /** For the gate: the running strictest verdict. */
  gate?: GateState;
  /** Where each tap's part goes, in order (tool decisions with `decisions.trail` only). */
  trail?: DecisionStep[] | undefined;
}

type TrailHook = DecisionStep["hook"];

/** The gate tap whose deny decided, and the call it ran under (explain mode). */
export interface GateDenial {
  call: TapCall;
  tap: RawTap;
}

/** Explain-mode trails (registered by explain-gate.ts), with their deciding deny once there is one. */
const explained = new WeakMap<DecisionStep[], GateDenial | null>();

/** Keep the deciding gate deny of the decision writing to `trail` (explain mode only). */
export function keepDenial(trail: DecisionStep[]): void {
  explained.set(trail, null);
}

/** The deciding gate deny kept for `trail`, if a tap denied. */
export function keptDenial(trail: DecisionStep[]): GateDenial | undefined {
  return explained.get(trail) ?? undefined;
}

/** Appends one step; `reason` and `args` only when there is one. */
function note(
  call: TapCall,
  by: string,
  answer: DecisionStep["answer"],
  reason?: string,
  args?: unknown,
): void {
  const step: DecisionStep = { hook: call.name as TrailHook, by, answer };
  if (reason !== undefined) step.reason = reason;
  if (args !== undefined) step.args = args;
  call.trail?.push(step);
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
  // The tap's own deadline (exact, whatever ran before it) and the run's signal bound the wait.
  const timeoutMs = tap.timeout ?? call.spec.timeoutMs ?? call.env.policy().tapTimeoutMs;
  // The continuation runs in the driver's own reaction (no second promise per tap).
  return call.env.driver.wait(
    site,
    value,
    { timeoutMs, signal: context?.signal },
    {
      value: (result) => onResult(call, tap, site, result, payload, context),
      failure: (error) => onFailure(call, tap, site, error, context),
    },
  );
}

export function onResult(
  call: TapCall,
  tap: RawTap,
  site: PluginCallSite,
  result: unknown,
  payload: unknown,
  context: HookContext,
): unknown {
  if (result === undefined || result === null) {
    if (call.trail) note(call, tap.name, "no opinion");
    return undefined;
  }
  const problem = call.spec.validate(result, payload as never);
  if (problem) {
    const malformed = new HarnessError(
      HarnessErrorCode.hook,
      `plugin "${tap.name}" returned a malformed result from ${call.name}: ${problem}`,
      { plugin: tap.name, hook: call.name, toolCallId: site.toolCallId, pluginCode: "malformed_result" },
    );
    return onFailure(call, tap, site, malformed, context);
  }
  if (call.spec.reduction === "waterfall") {
    if (call.trail) noteTransform(call, tap.name, payload, result);
    return result;
  }
  if (call.spec.reduction === "bail") {
    const answer = result as { decision?: unknown; reason?: unknown };
    if (call.trail) {
      const reason = typeof answer.reason === "string" ? answer.reason : undefined;
      note(call, tap.name, answer.decision as DecisionStep["answer"], reason);
    }
    return { ...(result as object), by: tap.name };
  }
  return reduceGate(call, result as AttributedVerdict, tap);
}

export function onFailure(
  call: TapCall,
  tap: RawTap,
  site: PluginCallSite,
  error: unknown,
  _context: HookContext,
): unknown {
  const failure: HarnessError = pluginFailure(error, site);
  const policy = call.env.policy();
  if (call.trail) note(call, tap.name, "error", failureOutcome(call, failure, policy));
  if (failure.code === HarnessErrorCode.aborted) {
    // The run was aborted while the tap waited: not the plugin's fault, never reported, never skipped.
    if (call.spec.failure !== "fail-closed") throw failure;
    // A deny bails out of the gate and answers a permission request: the call never runs.
    return {
      decision: "deny",
      reason: `the run was aborted while "${tap.name}" was deciding`,
      by: "harness",
    };
  }
  if (call.spec.failure === "fail-closed") {
    call.env.report(failure);
    const reason = `${failure.message} (failing closed)`;
    if (call.name === "permissionAsk") return { decision: "deny", reason, by: tap.name };
    // The failure is already in the trail as an `error` step.
    return reduceGate(call, { decision: policy.gate, reason, by: tap.name }, tap, false);
  }
  if (policy.transform === "skip-tap" && call.spec.reduction === "waterfall") {
    call.env.report(failure);
    return undefined;
  }
  throw failure;
}

/** A failure's step reason: what went wrong and what the hook's failure policy made of it. */
function failureOutcome(call: TapCall, failure: HarnessError, policy: FailurePolicy): string {
  if (call.spec.failure === "fail-closed") {
    const verdict =
      call.name === "permissionAsk" || failure.code === HarnessErrorCode.aborted ? "deny" : policy.gate;
    return `${failure.message} (failing closed: ${verdict})`;
  }
  if (
    failure.code !== HarnessErrorCode.aborted &&
    policy.transform === "skip-tap" &&
    call.spec.reduction === "waterfall"
  ) {
    return `${failure.message} (tap skipped)`;
  }
  return `${failure.message} (the run fails)`;
}

/** A `toolCall` tap's step: `rewrite` with the new arguments, or `no opinion` when it kept them. */
function noteTransform(call: TapCall, tapName: string, payload: unknown, result: unknown): void {
  const before = (payload as { args?: unknown }).args;
  const after = (result as { args?: unknown }).args;
  if (after === before) note(call, tapName, "no opinion");
  else note(call, tapName, "rewrite", undefined, after);
}

function reduceGate(
  call: TapCall,
  verdict: AttributedVerdict,
  tap: RawTap,
  step = true,
): AttributedVerdict | undefined {
  const by = verdict.rule ? `${tap.name}:${verdict.rule}` : tap.name;
  if (step && call.trail) note(call, by, verdict.decision, verdict.reason);
  const attributed: AttributedVerdict = { ...verdict, by };
  // Bail on deny: nothing after it can undo it, so nothing after it runs.
  if (attributed.decision === "deny") {
    if (call.trail && explained.has(call.trail)) explained.set(call.trail, { call, tap });
    return attributed;
  }
  if (call.gate) call.gate.strictest = stricter(call.gate.strictest, attributed);
  return undefined;
}
