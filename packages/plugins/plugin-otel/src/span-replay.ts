/**
 * The worker's half of `span-ops.ts`: replays recorded operations on the
 * OpenTelemetry SDK, so every span it exports has the ids the harness's thread
 * chose (and already handed out as `traceparent`).
 *
 * Invariant: the SDK takes a span's ids from `PresetIds` only inside `replay`'s
 * synchronous `startSpan` call that asked for them, so no other span can pick
 * them up; an operation naming a span that is not open (already ended, or never
 * started) is dropped.
 */
import {
  type Attributes,
  type Histogram,
  type Meter,
  ROOT_CONTEXT,
  type Span,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import type { IdGenerator } from "@opentelemetry/sdk-trace";
import { DURATION_BUCKETS, METRIC, TOKEN_BUCKETS } from "./conventions.js";
import type { SpanOp } from "./span-ops.js";

/** An id generator that returns the ids the next span was recorded with. */
export class PresetIds implements IdGenerator {
  traceId = "";
  spanId = "";
  generateTraceId(): string {
    return this.traceId;
  }
  generateSpanId(): string {
    return this.spanId;
  }
}

export class SpanReplay {
  private readonly open = new Map<string, Span>();
  private readonly histograms: Record<"tokenUsage" | "duration", Histogram> | undefined;

  constructor(
    private readonly tracer: Tracer,
    meter: Meter | undefined,
    private readonly ids: PresetIds,
  ) {
    this.histograms = meter && {
      tokenUsage: meter.createHistogram(METRIC.tokenUsage, {
        unit: "{token}",
        description: "Tokens used per model request, by token type.",
        advice: { explicitBucketBoundaries: TOKEN_BUCKETS },
      }),
      duration: meter.createHistogram(METRIC.operationDuration, {
        unit: "s",
        description: "Duration of runs, model requests and tool executions.",
        advice: { explicitBucketBoundaries: DURATION_BUCKETS },
      }),
    };
  }

  replay(ops: readonly SpanOp[]): void {
    for (const op of ops) this.apply(op);
  }

  /** Ends what is still open (the harness's thread went away mid-run). */
  endAll(): void {
    for (const span of this.open.values()) span.end();
    this.open.clear();
  }

  private apply(op: SpanOp): void {
    switch (op.op) {
      case "start": {
        let parent = ROOT_CONTEXT;
        const local = op.parent === undefined ? undefined : this.open.get(op.parent);
        if (local) parent = trace.setSpan(ROOT_CONTEXT, local);
        else if (op.remote || op.parent) {
          // A remote parent, or a local one that already ended: link by ids.
          parent = trace.setSpanContext(ROOT_CONTEXT, {
            traceId: op.traceId,
            spanId: op.remote?.spanId ?? (op.parent as string),
            traceFlags: op.remote?.traceFlags ?? 1,
            isRemote: op.remote !== undefined,
          });
        }
        this.ids.traceId = op.traceId;
        this.ids.spanId = op.id;
        const span = this.tracer.startSpan(
          op.name,
          { kind: op.kind, startTime: op.time, attributes: op.attributes },
          parent,
        );
        this.open.set(op.id, span);
        return;
      }
      case "attributes":
        this.open.get(op.id)?.setAttributes(op.attributes);
        return;
      case "event":
        this.open.get(op.id)?.addEvent(op.name, op.attributes, op.time);
        return;
      case "status":
        this.open.get(op.id)?.setStatus({ code: SpanStatusCode.ERROR, message: op.error });
        return;
      case "end":
        this.open.get(op.id)?.end(op.time);
        this.open.delete(op.id);
        return;
      case "record":
        this.histograms?.[op.metric].record(op.value, op.attributes as Attributes);
        return;
    }
  }
}
