/**
 * Spans as a stream of small operations. The harness's thread only records
 * what happened (start, attributes, events, status, end, a histogram value) as
 * plain tuples with ids it chose itself; the OpenTelemetry SDK replays them on
 * a worker thread (`exporter-worker.ts`), where spans are built, batched and
 * exported. So a turn pays for an array push, not for the SDK.
 *
 * Invariants: ids are chosen here, once (W3C sizes, random, never all zero), so
 * a tool call's `traceparent` is known the moment its span starts, before the
 * worker has seen it; operations reach the worker in the order they were
 * recorded; a handle that has ended records nothing more.
 */
import { randomFillSync } from "node:crypto";
import type { Attributes, SpanKind } from "@opentelemetry/api";

/** Epoch milliseconds (fractional), as the SDK takes them. */
export type Millis = number;

export type SpanOp =
  | {
      op: "start";
      id: string;
      traceId: string;
      /** A local parent's span id, or a remote parent's (`remote`). */
      parent?: string;
      remote?: { spanId: string; traceFlags: number };
      name: string;
      kind: SpanKind;
      time: Millis;
      attributes: Attributes;
    }
  | { op: "attributes"; id: string; attributes: Attributes }
  | { op: "event"; id: string; name: string; attributes: Attributes; time: Millis }
  | { op: "status"; id: string; error: string }
  | { op: "end"; id: string; time: Millis }
  | { op: "record"; metric: "tokenUsage" | "duration"; value: number; attributes: Attributes };

/** Messages to the worker: a JSON array of operations (cheaper to post than a structured clone), or a shutdown. */
export type ToWorker = string | { type: "shutdown" };
/** Messages from the worker. */
export type FromWorker =
  | { type: "warn"; message: string }
  | { type: "stopped"; outcome: "flushed" | "timed out" | "failed"; failing: boolean };

export const now = (): Millis => performance.timeOrigin + performance.now();

/** Random hex ids from a pooled buffer (one `randomFillSync` per 512 bytes). */
class IdSource {
  private pool = Buffer.alloc(512);
  private at = this.pool.length;
  next(bytes: 8 | 16): string {
    for (;;) {
      if (this.at + bytes > this.pool.length) {
        randomFillSync(this.pool);
        this.at = 0;
      }
      const id = this.pool.toString("hex", this.at, this.at + bytes);
      this.at += bytes;
      if (!/^0+$/.test(id)) return id;
    }
  }
}

export interface StartOptions {
  kind: SpanKind;
  attributes: Attributes;
  time?: Millis;
}

/** What the recorder hands back for a span: enough to describe it and its context. */
export class SpanHandle {
  private ended = false;
  constructor(
    private readonly recorder: SpanRecorder,
    readonly traceId: string,
    readonly spanId: string,
  ) {}
  get traceparent(): string {
    return `00-${this.traceId}-${this.spanId}-01`;
  }
  setAttribute(key: string, value: Attributes[string]): this {
    return this.setAttributes({ [key]: value });
  }
  setAttributes(attributes: Attributes): this {
    if (!this.ended) this.recorder.push({ op: "attributes", id: this.spanId, attributes });
    return this;
  }
  addEvent(name: string, attributes: Attributes, time: Millis = now()): this {
    if (!this.ended) this.recorder.push({ op: "event", id: this.spanId, name, attributes, time });
    return this;
  }
  /** Marks the span failed (status error) with a message. */
  fail(message: string): this {
    if (!this.ended) this.recorder.push({ op: "status", id: this.spanId, error: message });
    return this;
  }
  end(time: Millis = now()): void {
    if (this.ended) return;
    this.ended = true;
    this.recorder.push({ op: "end", id: this.spanId, time });
  }
}

/** Where a span's parent is: a span of ours, a remote `traceparent`'s parts, or nothing (a root). */
export type ParentRef = SpanHandle | { traceId: string; spanId: string; traceFlags: number } | undefined;

export class SpanRecorder {
  private ops: SpanOp[] = [];
  private readonly ids = new IdSource();
  private scheduled: NodeJS.Timeout | undefined;

  /**
   * @param send receives the operations recorded so far, in order
   * @param delayMs how long operations may wait before they are sent
   * @param maxOps sent at once when this many are waiting
   */
  constructor(
    private readonly send: (ops: SpanOp[]) => void,
    private readonly delayMs: number,
    private readonly maxOps = 2048,
  ) {}

  start(name: string, options: StartOptions, parent: ParentRef): SpanHandle {
    const spanId = this.ids.next(8);
    const op: Extract<SpanOp, { op: "start" }> = {
      op: "start",
      id: spanId,
      traceId: parent?.traceId ?? this.ids.next(16),
      name,
      kind: options.kind,
      time: options.time ?? now(),
      attributes: options.attributes,
    };
    if (parent instanceof SpanHandle) op.parent = parent.spanId;
    else if (parent) op.remote = { spanId: parent.spanId, traceFlags: parent.traceFlags };
    this.push(op);
    return new SpanHandle(this, op.traceId, spanId);
  }

  record(metric: "tokenUsage" | "duration", value: number, attributes: Attributes): void {
    this.push({ op: "record", metric, value, attributes });
  }

  push(op: SpanOp): void {
    this.ops.push(op);
    if (this.ops.length >= this.maxOps) this.flush();
    else if (this.scheduled === undefined) {
      this.scheduled = setTimeout(() => this.flush(), this.delayMs);
      this.scheduled.unref();
    }
  }

  /** Sends what is waiting now. */
  flush(): void {
    if (this.scheduled !== undefined) clearTimeout(this.scheduled);
    this.scheduled = undefined;
    if (this.ops.length === 0) return;
    const ops = this.ops;
    this.ops = [];
    this.send(ops);
  }
}
