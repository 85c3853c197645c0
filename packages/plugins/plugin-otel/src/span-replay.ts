/**
 * The worker's half of `span-ops.ts`: each finished span's record becomes the
 * SDK's `ReadableSpan` (what span processors and exporters read) and goes
 * straight to the batch processor; histogram values go to the meter. No Tracer
 * or Span objects are built: the span already ended on the harness's thread,
 * with the ids it chose there (and handed out as `traceparent`).
 *
 * Invariants: a span's content is what the SDK's own Span would have exported
 * for the same calls: attributes the SDK accepts (primitives and arrays of
 * them; `null` and `undefined` dropped), an end before the start clamped to the
 * start, status error with the message when the span failed; a malformed batch
 * ends where it breaks (the worker drops the rest of it).
 */
import {
  type Attributes,
  type Histogram,
  type HrTime,
  type Meter,
  type SpanContext,
  SpanStatusCode,
} from "@opentelemetry/api";
import type { InstrumentationScope } from "@opentelemetry/core";
import type { Resource } from "@opentelemetry/resources";
import type { ReadableSpan, SpanProcessor, TimedEvent } from "@opentelemetry/sdk-trace";
import { ATTR, DURATION_BUCKETS, METRIC, TOKEN_BUCKETS } from "./conventions.js";
import type { Batch, SpanRecord } from "./span-ops.js";

/** Epoch milliseconds to the SDK's `[seconds, nanoseconds]` (as `millisToHrTime` in @opentelemetry/core). */
const hrTime = (epochMillis: number): HrTime => [
  Math.trunc(epochMillis / 1e3),
  Math.round((epochMillis % 1e3) * 1e6),
];

const duration = (start: HrTime, end: HrTime): HrTime => {
  let seconds = end[0] - start[0];
  let nanos = end[1] - start[1];
  if (nanos < 0) {
    seconds -= 1;
    nanos += 1e9;
  }
  return [seconds, nanos];
};

const isPrimitive = (value: unknown): boolean =>
  typeof value === "string" || typeof value === "number" || typeof value === "boolean";

/** The attributes the SDK's `sanitizeAttributes` keeps: primitives, and arrays of them (nulls allowed inside). */
function clean(attributes: Attributes): Attributes {
  for (const key in attributes) {
    const value: unknown = attributes[key];
    if (isPrimitive(value)) continue;
    if (Array.isArray(value) && value.every((item) => item === null || isPrimitive(item))) continue;
    delete attributes[key];
  }
  return attributes;
}

const OK = { code: SpanStatusCode.UNSET } as const;
const NO_LINKS: ReadableSpan["links"] = [];

export class SpanReplay {
  private readonly histograms: { tokenUsage: Histogram; duration: Histogram } | undefined;

  constructor(
    private readonly processor: SpanProcessor,
    private readonly resource: Resource,
    private readonly scope: InstrumentationScope,
    meter: Meter | undefined,
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

  /** One batch from the harness's thread (`SpanRecorder.flush`). */
  replay(batch: Batch): void {
    const [origin, spans, metrics] = batch;
    for (const record of spans) this.processor.onEnd(this.readable(record, origin));
    const histograms = this.histograms;
    if (!histograms) return;
    for (const metric of metrics) {
      if (metric[0] === "duration") histograms.duration.record(metric[1], clean(metric[2]));
      else {
        const attributes = clean(metric[3]);
        histograms.tokenUsage.record(metric[1], { ...attributes, [ATTR.tokenType]: "input" });
        histograms.tokenUsage.record(metric[2], { ...attributes, [ATTR.tokenType]: "output" });
      }
    }
  }

  private readable(record: SpanRecord, origin: number): ReadableSpan {
    const [traceId, spanId, parentSpanId, remote, traceFlags, name, kind, start, end, attributes] = record;
    const context: SpanContext = { traceId, spanId, traceFlags };
    const startTime = hrTime(origin + start);
    let endTime = hrTime(origin + end);
    let elapsed = duration(startTime, endTime);
    if (elapsed[0] < 0) {
      endTime = startTime;
      elapsed = [0, 0];
    }
    const events: TimedEvent[] = [];
    if (record[10] !== 0) {
      for (const [eventName, eventAttributes, time] of record[10]) {
        events.push({
          name: eventName,
          attributes: clean(eventAttributes),
          time: hrTime(origin + time),
          droppedAttributesCount: 0,
        });
      }
    }
    const error = record[11];
    return {
      name,
      kind,
      spanContext: () => context,
      // Always present (undefined for a root): every span one object shape, cheaper to build and encode.
      parentSpanContext:
        parentSpanId === ""
          ? undefined
          : { traceId, spanId: parentSpanId, traceFlags, isRemote: remote === 1 },
      startTime,
      endTime,
      status: error === 0 ? OK : { code: SpanStatusCode.ERROR, message: error },
      attributes: clean(attributes),
      links: NO_LINKS,
      events,
      duration: elapsed,
      ended: true,
      resource: this.resource,
      instrumentationScope: this.scope,
      droppedAttributesCount: 0,
      droppedEventsCount: 0,
      droppedLinksCount: 0,
    };
  }
}
