/**
 * Spans as records of what happened. The harness's thread keeps an open span
 * as one small handle (its attributes, events and status gathered in place)
 * and, when it ends, appends one flat record of the whole span to a batch; the
 * telemetry worker (`exporter-worker.ts`) turns each record into an exported
 * span. So a turn pays for a few property writes and one array push per span,
 * not for the SDK, and the worker gets one record per span, not one message per
 * operation.
 *
 * Invariants: ids are chosen here, once (W3C sizes, random, never all zero), so
 * a tool call's `traceparent` is known the moment its span starts; a span is
 * sampled as the SDK's default sampler (parent-based, always on) would: a root
 * is sampled, a child inherits its parent's flag, and an unsampled span is never
 * sent; a handle that has ended records nothing more; batches reach the worker
 * in the order they were recorded.
 */
import { randomFillSync } from "node:crypto";
import type { Attributes, SpanKind } from "@opentelemetry/api";

/** Milliseconds on this thread's `performance` clock; the batch carries the clock's origin. */
export type Millis = number;

export const now = (): Millis => performance.now();

/** An event on a span: name, attributes, time. */
export type EventRecord = [name: string, attributes: Attributes, time: Millis];

/**
 * A finished span, positionally (a flat array is the cheapest thing to encode
 * and decode): ids, parent (`""` for a root), whether the parent is remote, the
 * trace flags, name, kind, start and end, attributes, events (`0` for none), and
 * the error message when the span failed (`0` when it did not).
 */
export type SpanRecord = [
  traceId: string,
  spanId: string,
  parentSpanId: string,
  remoteParent: 0 | 1,
  traceFlags: number,
  name: string,
  kind: SpanKind,
  start: Millis,
  end: Millis,
  attributes: Attributes,
  events: EventRecord[] | 0,
  error: string | 0,
];

/**
 * A histogram value: `duration` (seconds), or `tokens` (input and output
 * tokens of one request: two values, the worker adds `gen_ai.token.type`).
 */
export type MetricRecord =
  | [metric: "duration", value: number, attributes: Attributes]
  | [metric: "tokens", input: number, output: number, attributes: Attributes];

/** One batch: the clock origin of its times (epoch ms), spans, metric values. */
export type Batch = [origin: number, spans: SpanRecord[], metrics: MetricRecord[]];

/**
 * Messages to the worker: a `Batch` as it is (an array: posting it structured-clones
 * it, which costs the harness's thread less than `JSON.stringify` and the worker
 * less than `JSON.parse`), a flush (a harness going away while others stay), or
 * a shutdown.
 */
export type ToWorker = Batch | { type: "shutdown" } | { type: "flush"; id: number };
/** Messages from the worker: `flushed` answers the `flush` of the same id. */
export type FromWorker =
  | { type: "warn"; message: string }
  | { type: "stopped"; outcome: "flushed" | "timed out" | "failed"; failing: boolean }
  | { type: "flushed"; id: number; outcome: "flushed" | "timed out" | "failed"; failing: boolean };

const ZERO_SPAN_ID = "0".repeat(16);
const ZERO_TRACE_ID = "0".repeat(32);

/** Random hex ids cut from a pooled hex string (one `randomFillSync` and one hex encoding per 512 bytes). */
class IdSource {
  private readonly pool = Buffer.alloc(512);
  private hex = "";
  private at = 0;
  next(bytes: 8 | 16): string {
    const length = bytes * 2;
    const zero = bytes === 8 ? ZERO_SPAN_ID : ZERO_TRACE_ID;
    for (;;) {
      if (this.at + length > this.hex.length) {
        randomFillSync(this.pool);
        this.hex = this.pool.toString("hex");
        this.at = 0;
      }
      const id = this.hex.slice(this.at, this.at + length);
      this.at += length;
      if (id !== zero) return id;
    }
  }
}

export interface StartOptions {
  kind: SpanKind;
  /** The span's attributes: the handle keeps (and adds to) this object, so pass a fresh one. */
  attributes: Attributes;
  time?: Millis;
}

/** An open span: everything recorded on it is gathered here until it ends. */
export class SpanHandle {
  private ended = false;
  private events: EventRecord[] | 0 = 0;
  private error: string | 0 = 0;
  constructor(
    private readonly recorder: SpanRecorder,
    readonly traceId: string,
    readonly spanId: string,
    private readonly parentSpanId: string,
    private readonly remoteParent: 0 | 1,
    readonly traceFlags: number,
    private readonly name: string,
    private readonly kind: SpanKind,
    private readonly start: Millis,
    private readonly attributes: Attributes,
  ) {}
  get traceparent(): string {
    return `00-${this.traceId}-${this.spanId}-01`;
  }
  setAttribute(key: string, value: Attributes[string]): this {
    if (!this.ended) this.attributes[key] = value;
    return this;
  }
  setAttributes(attributes: Attributes): this {
    if (!this.ended) Object.assign(this.attributes, attributes);
    return this;
  }
  addEvent(name: string, attributes: Attributes, time: Millis = now()): this {
    if (this.ended) return this;
    if (this.events === 0) this.events = [];
    this.events.push([name, attributes, time]);
    return this;
  }
  /** Marks the span failed (status error) with a message. */
  fail(message: string): this {
    if (!this.ended) this.error = message;
    return this;
  }
  end(time: Millis = now()): void {
    if (this.ended) return;
    this.ended = true;
    if ((this.traceFlags & 1) === 0) return; // not sampled: never exported
    this.recorder.push([
      this.traceId,
      this.spanId,
      this.parentSpanId,
      this.remoteParent,
      this.traceFlags,
      this.name,
      this.kind,
      this.start,
      time,
      this.attributes,
      this.events,
      this.error,
    ]);
  }
}

/** Where a span's parent is: a span of ours, a remote `traceparent`'s parts, or nothing (a root). */
export type ParentRef = SpanHandle | { traceId: string; spanId: string; traceFlags: number } | undefined;

export class SpanRecorder {
  private spans: SpanRecord[] = [];
  private metrics: MetricRecord[] = [];
  private readonly ids = new IdSource();
  private scheduled: NodeJS.Timeout | undefined;
  private readonly flushLater = () => this.flush();

  /**
   * @param send receives each batch, in order
   * @param delayMs how long records may wait before they are sent
   * @param maxRecords sent at once when this many are waiting
   */
  constructor(
    private readonly send: (batch: Batch) => void,
    private readonly delayMs: number,
    private readonly maxRecords = 2048,
  ) {}

  start(name: string, options: StartOptions, parent: ParentRef): SpanHandle {
    const spanId = this.ids.next(8);
    if (parent === undefined) {
      return new SpanHandle(
        this,
        this.ids.next(16),
        spanId,
        "",
        0,
        1,
        name,
        options.kind,
        options.time ?? now(),
        options.attributes,
      );
    }
    return new SpanHandle(
      this,
      parent.traceId,
      spanId,
      parent.spanId,
      parent instanceof SpanHandle ? 0 : 1,
      parent.traceFlags & 1,
      name,
      options.kind,
      options.time ?? now(),
      options.attributes,
    );
  }

  duration(seconds: number, attributes: Attributes): void {
    this.metrics.push(["duration", seconds, attributes]);
    this.schedule();
  }

  tokens(input: number, output: number, attributes: Attributes): void {
    this.metrics.push(["tokens", input, output, attributes]);
    this.schedule();
  }

  push(span: SpanRecord): void {
    this.spans.push(span);
    this.schedule();
  }

  private schedule(): void {
    if (this.spans.length + this.metrics.length >= this.maxRecords) this.flush();
    else if (this.scheduled === undefined) {
      this.scheduled = setTimeout(this.flushLater, this.delayMs);
      this.scheduled.unref();
    }
  }

  /** Sends what is waiting now. */
  flush(): void {
    if (this.scheduled !== undefined) clearTimeout(this.scheduled);
    this.scheduled = undefined;
    if (this.spans.length === 0 && this.metrics.length === 0) return;
    const batch: Batch = [performance.timeOrigin, this.spans, this.metrics];
    this.spans = [];
    this.metrics = [];
    this.send(batch);
  }
}
