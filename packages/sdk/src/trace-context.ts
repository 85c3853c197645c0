/**
 * Trace context across process boundaries, without a tracer in the SDK: a host
 * says where a harness's traces continue from (`setParent`: a worker job's
 * submitter, the agent that called `rein hook`), a tracing plugin publishes how
 * to reach a tool call's span (`provide`), and a tool that calls out (MCP's
 * `params._meta.traceparent`) asks for it (`traceparentFor`); a host deciding
 * outside a run (`rein hook`) reports its decisions for tracers (`observeDecision`).
 *
 * Invariants: only well-formed W3C `traceparent` values (version 00, non-zero
 * ids) are ever stored or handed out, so a malformed value from a job or an
 * agent is dropped, never forwarded; with no tracer loaded every answer is
 * `undefined` and nothing is added to outgoing calls.
 */
import { sharedService } from "./harness-services.js";
import { OwnedEntries } from "./owned-entries.js";

/** A tracer's answer for one tool call: its span's `traceparent`, or nothing. */
export type TraceparentSource = (toolCallId: string) => string | undefined;

/**
 * A decision made outside a run (`rein hook` deciding another agent's tool call):
 * no run emits events for it, so the host reports it here for tracers to record.
 */
export interface ObservedDecision {
  toolCallId: string;
  toolName: string;
  decision: "allow" | "deny" | "ask";
  by: string;
  reason: string;
  /** Whose call it was (`claude-code`, `codex`, `gemini`). */
  agent?: string;
}

export interface TraceContext {
  /** Where this harness's runs continue a trace from, if a host said so. */
  readonly parent: string | undefined;
  /** Sets (or clears) the parent; a malformed value clears it and returns `false`. */
  setParent(traceparent: string | undefined): boolean;
  /** A tracer publishes its tool-call spans. Returns a disposer. */
  provide(owner: string, source: TraceparentSource): () => void;
  /** The `traceparent` of the span of this tool call, from the first tracer that knows it. */
  traceparentFor(toolCallId: string): string | undefined;
  /** A tracer listens for decisions made outside a run. Returns a disposer. */
  onDecision(owner: string, listener: (decision: ObservedDecision) => void): () => void;
  /** A host reports a decision made outside a run; a failing listener never fails the host. */
  observeDecision(decision: ObservedDecision): void;
}

const TRACEPARENT = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;

/** Whether `value` is a W3C trace-context `traceparent` this SDK forwards. */
export function isTraceparent(value: unknown): value is string {
  return typeof value === "string" && TRACEPARENT.test(value);
}

const KEY = Symbol("rein.trace-context");

function createTraceContext(): TraceContext {
  const sources = new OwnedEntries<TraceparentSource>();
  const decisionListeners = new OwnedEntries<(decision: ObservedDecision) => void>();
  let parent: string | undefined;
  return {
    get parent() {
      return parent;
    },
    setParent(traceparent) {
      parent = isTraceparent(traceparent) ? traceparent : undefined;
      return traceparent === undefined || parent !== undefined;
    },
    provide: (owner, source) => sources.add(owner, source),
    traceparentFor(toolCallId) {
      for (const { value: source } of sources) {
        let found: string | undefined;
        try {
          found = source(toolCallId);
        } catch {
          continue; // tracing never fails a call: a broken tracer just adds no context
        }
        if (isTraceparent(found)) return found;
      }
      return undefined;
    },
    onDecision: (owner, listener) => decisionListeners.add(owner, listener),
    observeDecision(decision) {
      for (const { value: listener } of decisionListeners) {
        try {
          listener(decision);
        } catch {
          // tracing never fails a decision
        }
      }
    },
  };
}

/** The trace context of the harness `owner` (a plugin's `rein`, or a harness) belongs to. */
export function traceContext(owner: object): TraceContext {
  return sharedService(owner, KEY, createTraceContext);
}
