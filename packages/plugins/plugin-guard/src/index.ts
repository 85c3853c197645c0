/**
 * @rein/plugin-guard: budgets per run and per session (turns, tool calls, tokens,
 * cost) and loop detection (the same tool call N times in a row).
 *
 * How a budget ends a run (see README):
 * - calls are decided one by one in call order; the first tool call past an
 *   exhausted budget is denied (`by: guard:<budget>`, e.g. `guard:max-tool-calls`)
 *   and the run is stopped with `context.stopRun(reason)`: the calls allowed
 *   before it still run, the later calls of the response are refused by the
 *   harness with the budget's reason, and no further request is made (a request
 *   about to start past a budget, after steering or a follow-up, is stopped in
 *   `beforeRequest`); the run ends with status `aborted` and the reason;
 * - a `custom` session entry `rein.guard-stop` records which budget stopped the
 *   run, its limit, what was used, and why (once per budget and run; for session
 *   budgets once per budget and session);
 * - `beforeStop` (stage first) answers `stop`, so no other plugin can extend a run
 *   past its budget;
 * - with a session budget exhausted, new runs are blocked in `beforeRun`.
 *
 * Invariants: counting comes from events and the session's own entries, never
 * from gate calls (a probe with `checkToolCall` counts nothing); per-session usage
 * is rebuilt from the session's entries on setup, so a resumed session keeps it.
 */
import {
  type AgentMessage,
  canonicalJson,
  definePlugin,
  type GateVerdict,
  type SessionEntry,
  Stage,
  type Static,
  Type,
} from "@rein/sdk";

/** The session entry's `customType` for a budget stop. */
export const STOP_ENTRY_TYPE = "rein.guard-stop";

const Limits = Type.Object(
  {
    /** Assistant responses. The response that reaches the limit may not run tools. */
    maxTurns: Type.Optional(Type.Integer({ minimum: 1 })),
    /** Tool calls that were allowed to run. */
    maxToolCalls: Type.Optional(Type.Integer({ minimum: 0 })),
    /** Tokens reported by the provider (`usage.totalTokens`: input, output and cache). */
    maxTokens: Type.Optional(Type.Integer({ minimum: 1 })),
    /** Cost reported by the provider (`usage.cost.total`, in the provider's currency, usually USD). */
    maxCost: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
  },
  { additionalProperties: false },
);

export const GuardOptions = Type.Object(
  {
    /** Limits for each run (one `prompt` until the agent stops). */
    perRun: Type.Optional(Limits),
    /** Limits for the whole session, including earlier runs (rebuilt from the session on resume). */
    perSession: Type.Optional(Limits),
    /** A tool call identical (same tool, same arguments) to the previous ones this many times in a row is denied; 0 turns it off. */
    maxRepeats: Type.Integer({ minimum: 0, default: 3 }),
  },
  { additionalProperties: false },
);
export type GuardOptions = Static<typeof GuardOptions>;
export type GuardLimits = Static<typeof Limits>;

export type Budget = "max-turns" | "max-tool-calls" | "max-tokens" | "max-cost";
export type Scope = "run" | "session";

export interface Usage {
  turns: number;
  toolCalls: number;
  tokens: number;
  cost: number;
}

/** What a `rein.guard-stop` entry's `data` holds. */
export interface GuardStop {
  scope: Scope;
  budget: Budget;
  limit: number;
  used: number;
  reason: string;
  runId?: string;
}

const emptyUsage = (): Usage => ({ turns: 0, toolCalls: 0, tokens: 0, cost: 0 });

const BUDGETS: { budget: Budget; option: keyof GuardLimits; usage: keyof Usage; unit: string }[] = [
  { budget: "max-turns", option: "maxTurns", usage: "turns", unit: "turns" },
  { budget: "max-tool-calls", option: "maxToolCalls", usage: "toolCalls", unit: "tool calls" },
  { budget: "max-tokens", option: "maxTokens", usage: "tokens", unit: "tokens" },
  { budget: "max-cost", option: "maxCost", usage: "cost", unit: "cost" },
];

/** Adds one message's usage: an assistant message is a turn with tokens and cost; an allowed tool result a call. */
export function addMessage(usage: Usage, message: AgentMessage): void {
  if (message.role === "assistant") {
    usage.turns++;
    const u = message.usage;
    if (u) {
      usage.tokens += u.totalTokens || u.input + u.output + (u.cacheRead ?? 0) + (u.cacheWrite ?? 0);
      usage.cost += u.cost?.total ?? 0;
    }
  } else if (
    message.role === "toolResult" &&
    "decision" in message &&
    message.decision?.decision === "allow"
  ) {
    usage.toolCalls++;
  }
}

/** The session's usage so far, from its message entries (every branch: all of it was spent). */
export function usageFrom(entries: readonly SessionEntry[]): Usage {
  const usage = emptyUsage();
  for (const entry of entries) if (entry.type === "message") addMessage(usage, entry.message);
  return usage;
}

/** The first exhausted budget, or undefined. */
export function exhausted(
  limits: GuardLimits | undefined,
  usage: Usage,
  scope: Scope,
): GuardStop | undefined {
  if (!limits) return undefined;
  for (const { budget, option, usage: key, unit } of BUDGETS) {
    const limit = limits[option];
    if (limit === undefined || usage[key] < limit) continue;
    const used = usage[key];
    const shown = key === "cost" ? `${round(used)} of max ${limit}` : `${used} of max ${limit}`;
    return {
      scope,
      budget,
      limit,
      used,
      reason: `${scope} budget exhausted: ${shown} ${unit} used (${scope === "run" ? "perRun" : "perSession"}.${option})`,
    };
  }
  return undefined;
}

const round = (n: number) => Math.round(n * 1e6) / 1e6;

const callKey = (name: string, args: unknown) => `${name}\u0000${canonicalJson(args)}`;

const STOPPED = "the run is stopped";

export default definePlugin({
  name: "guard",
  version: "0.1.0",
  description: "Run and session budgets (turns, tool calls, tokens, cost) and loop detection.",
  options: GuardOptions,
  // The budgets that are set (either scope) and loop detection when on, as `by` names them.
  rules: (options) => [
    ...BUDGETS.filter(({ option }) =>
      [options.perRun, options.perSession].some((l) => l?.[option] !== undefined),
    ).map(({ budget }) => budget),
    ...(options.maxRepeats > 0 ? ["loop"] : []),
  ],
  setup(rein, options) {
    const session = usageFrom(rein.session.entries());
    let run = emptyUsage();
    let runId: string | undefined;
    let recordedInRun = new Set<Budget>();
    // Session stops are recorded once per session, including ones recorded before a resume.
    const recordedInSession = new Set<Budget>(
      rein.session
        .entries()
        .flatMap((e) =>
          e.type === "custom" &&
          e.customType === STOP_ENTRY_TYPE &&
          (e.data as GuardStop)?.scope === "session"
            ? [(e.data as GuardStop).budget]
            : [],
        ),
    );
    let lastKey: string | undefined;
    let streak = 0;

    const check = () =>
      exhausted(options.perRun, run, "run") ?? exhausted(options.perSession, session, "session");

    /**
     * Writes the stop to the session (a pending write while the run is busy): once per
     * budget and run for run budgets, once per budget and session for session budgets.
     */
    const record = (stop: GuardStop) => {
      const seen = stop.scope === "run" ? recordedInRun : recordedInSession;
      if (seen.has(stop.budget)) return;
      seen.add(stop.budget);
      const data: GuardStop = runId === undefined ? stop : { ...stop, runId };
      rein.session.append({ type: "custom", customType: STOP_ENTRY_TYPE, data });
      rein.logger.warn(`${stop.reason}; ${STOPPED}`);
    };

    const resetRun = () => {
      run = emptyUsage();
      recordedInRun = new Set();
      lastKey = undefined;
      streak = 0;
    };

    rein.hooks.beforeRun.tap({ name: "guard", stage: Stage.first }, (payload, context) => {
      resetRun();
      runId = context.runId;
      const stop = exhausted(options.perSession, session, "session");
      if (!stop) return payload;
      record(stop);
      return { ...payload, block: { reason: stop.reason } };
    });

    rein.on("agent_start", (event) => {
      runId = event.runId;
    });
    rein.on("message_end", (event) => {
      if (event.message.role !== "assistant") return;
      addMessage(run, event.message);
      addMessage(session, event.message);
    });
    rein.on("tool_decision", (event) => {
      const key = callKey(event.toolName, event.args);
      streak = key === lastKey ? streak + 1 : 1;
      lastKey = key;
      if (event.decision === "allow") {
        run.toolCalls++;
        session.toolCalls++;
      }
    });

    // A child agent's spending is the parent's (shared budgets): its tokens and cost, and
    // the tool calls it was allowed, count here; its turns are its own, and its calls do
    // not take part in this agent's loop detection.
    rein.on("child_event", ({ event }) => {
      if (event.type === "message_end" && event.message.role === "assistant") {
        const spent = emptyUsage();
        addMessage(spent, event.message);
        for (const usage of [run, session]) {
          usage.tokens += spent.tokens;
          usage.cost += spent.cost;
        }
      } else if (event.type === "tool_decision" && event.decision === "allow") {
        run.toolCalls++;
        session.toolCalls++;
      }
    });

    // A request past a turn, token or cost budget is stopped before the model is asked; a
    // tool-call budget only limits calls (the model may still answer without tools).
    const requestCheck = () =>
      exhausted({ ...options.perRun, maxToolCalls: undefined }, run, "run") ??
      exhausted({ ...options.perSession, maxToolCalls: undefined }, session, "session");

    rein.hooks.beforeRequest.tap({ name: "guard", stage: Stage.first }, (payload, context) => {
      const stop = requestCheck();
      if (!stop) return payload;
      record(stop);
      context.stopRun(stop.reason);
      return payload;
    });

    rein.hooks.toolGate.tap(
      { name: "guard", stage: Stage.first },
      (call, context): GateVerdict | undefined => {
        const stop = check();
        if (stop) {
          record(stop);
          context.stopRun(stop.reason);
          return { decision: "deny", rule: stop.budget, reason: `${stop.reason}; ${STOPPED}` };
        }
        if (
          options.maxRepeats > 0 &&
          callKey(call.name, call.args) === lastKey &&
          streak + 1 >= options.maxRepeats
        ) {
          return {
            decision: "deny",
            rule: "loop",
            reason: `the same ${call.name} call (identical arguments) was made ${streak + 1} times in a row; this looks like a loop (maxRepeats ${options.maxRepeats}). Change approach or answer.`,
          };
        }
        return undefined;
      },
    );

    rein.hooks.beforeStop.tap({ name: "guard", stage: Stage.first }, () => {
      const stop = check();
      if (!stop) return undefined;
      record(stop);
      return { decision: "stop", reason: stop.reason };
    });
  },
});
