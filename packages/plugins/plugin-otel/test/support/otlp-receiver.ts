/**
 * A real OTLP/HTTP receiver on 127.0.0.1: accepts `POST /v1/traces` and
 * `/v1/metrics` with JSON bodies (the OTLP proto's JSON mapping:
 * ExportTraceServiceRequest / ExportMetricsServiceRequest), checks their shape
 * strictly (hex ids of the right length, nanosecond timestamps as strings, typed
 * AnyValue attributes), and keeps the decoded spans and metric names.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  /** SpanKind enum of the proto: 1 internal, 2 server, 3 client. */
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
  status: { code: number; message?: string };
  resource: Record<string, unknown>;
  scope: string;
}

export interface OtlpReceiver {
  readonly url: string;
  readonly spans: ReceivedSpan[];
  readonly metrics: { name: string; unit: string; kind: string }[];
  /** Raw requests: path and content type. */
  readonly requests: { path: string; contentType: string | undefined }[];
  /** Malformed payloads (each fails the test that reads it). */
  readonly problems: string[];
  /** Resolves once spans matching `predicate` have arrived (or rejects after `timeoutMs`). */
  waitFor(predicate: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

type AnyValue = Record<string, unknown>;

function decodeValue(value: AnyValue, where: string): unknown {
  if ("stringValue" in value) return value.stringValue;
  if ("boolValue" in value) return value.boolValue;
  if ("intValue" in value) {
    // int64 is a string in the JSON mapping (the JS exporter may send a number).
    const raw = value.intValue;
    if (typeof raw !== "number" && typeof raw !== "string")
      throw new Error(`${where}: intValue is ${typeof raw}`);
    return Number(raw);
  }
  if ("doubleValue" in value) return Number(value.doubleValue);
  if ("arrayValue" in value) {
    const values = ((value.arrayValue as { values?: AnyValue[] }).values ?? []) as AnyValue[];
    return values.map((v, i) => decodeValue(v, `${where}[${i}]`));
  }
  throw new Error(`${where}: not an AnyValue: ${JSON.stringify(value)}`);
}

function decodeAttributes(list: unknown, where: string): Record<string, unknown> {
  if (list === undefined) return {};
  if (!Array.isArray(list)) throw new Error(`${where}: attributes is not a list`);
  const out: Record<string, unknown> = {};
  for (const item of list as { key?: unknown; value?: AnyValue }[]) {
    if (typeof item.key !== "string" || typeof item.value !== "object")
      throw new Error(`${where}: bad KeyValue`);
    out[item.key] = decodeValue(item.value, `${where}.${item.key}`);
  }
  return out;
}

const HEX = (length: number) => new RegExp(`^[0-9a-f]{${length}}$`);
const TRACE_ID = HEX(32);
const SPAN_ID = HEX(16);
const NANOS = /^\d+$/;

function decodeTraces(body: unknown): ReceivedSpan[] {
  const request = body as { resourceSpans?: unknown };
  if (!Array.isArray(request.resourceSpans))
    throw new Error("ExportTraceServiceRequest without resourceSpans");
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of request.resourceSpans as Record<string, unknown>[]) {
    const resource = decodeAttributes(
      (resourceSpans.resource as { attributes?: unknown })?.attributes,
      "resource",
    );
    for (const scopeSpans of (resourceSpans.scopeSpans ?? []) as Record<string, unknown>[]) {
      const scope = String((scopeSpans.scope as { name?: unknown })?.name ?? "");
      for (const span of (scopeSpans.spans ?? []) as Record<string, unknown>[]) {
        const name = String(span.name);
        if (!TRACE_ID.test(String(span.traceId)))
          throw new Error(`span ${name}: traceId ${String(span.traceId)}`);
        if (!SPAN_ID.test(String(span.spanId)))
          throw new Error(`span ${name}: spanId ${String(span.spanId)}`);
        const parent =
          span.parentSpanId === undefined || span.parentSpanId === "" ? undefined : String(span.parentSpanId);
        if (parent !== undefined && !SPAN_ID.test(parent))
          throw new Error(`span ${name}: parentSpanId ${parent}`);
        for (const key of ["startTimeUnixNano", "endTimeUnixNano"]) {
          if (!NANOS.test(String(span[key]))) throw new Error(`span ${name}: ${key} ${String(span[key])}`);
        }
        const status = (span.status ?? {}) as { code?: number; message?: string };
        spans.push({
          traceId: String(span.traceId),
          spanId: String(span.spanId),
          parentSpanId: parent,
          name,
          kind: Number(span.kind),
          startNs: BigInt(String(span.startTimeUnixNano)),
          endNs: BigInt(String(span.endTimeUnixNano)),
          attributes: decodeAttributes(span.attributes, `span ${name}`),
          events: ((span.events ?? []) as Record<string, unknown>[]).map((event) => ({
            name: String(event.name),
            attributes: decodeAttributes(event.attributes, `event ${String(event.name)}`),
          })),
          status: { code: status.code ?? 0, ...(status.message ? { message: status.message } : {}) },
          resource,
          scope,
        });
      }
    }
  }
  return spans;
}

function decodeMetricNames(body: unknown): { name: string; unit: string; kind: string }[] {
  const request = body as { resourceMetrics?: unknown };
  if (!Array.isArray(request.resourceMetrics))
    throw new Error("ExportMetricsServiceRequest without resourceMetrics");
  const out: { name: string; unit: string; kind: string }[] = [];
  for (const resource of request.resourceMetrics as Record<string, unknown>[]) {
    for (const scope of (resource.scopeMetrics ?? []) as Record<string, unknown>[]) {
      for (const metric of (scope.metrics ?? []) as Record<string, unknown>[]) {
        const kind =
          ["histogram", "sum", "gauge", "exponentialHistogram"].find((k) => k in metric) ?? "unknown";
        out.push({ name: String(metric.name), unit: String(metric.unit ?? ""), kind });
      }
    }
  }
  return out;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const metrics: { name: string; unit: string; kind: string }[] = [];
  const requests: { path: string; contentType: string | undefined }[] = [];
  const problems: string[] = [];
  const waiters = new Set<() => void>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      requests.push({ path: req.url ?? "", contentType: req.headers["content-type"] });
      try {
        if (req.method !== "POST") throw new Error(`${req.method} ${req.url}`);
        if (!String(req.headers["content-type"]).startsWith("application/json")) {
          throw new Error(`content-type ${req.headers["content-type"]}`);
        }
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
        if (req.url === "/v1/traces") spans.push(...decodeTraces(body));
        else if (req.url === "/v1/metrics") metrics.push(...decodeMetricNames(body));
        else throw new Error(`unknown path ${req.url}`);
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      } catch (error) {
        problems.push(error instanceof Error ? error.message : String(error));
        res.writeHead(400, { "content-type": "application/json" }).end("{}");
      }
      for (const wake of waiters) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    metrics,
    requests,
    problems,
    waitFor(predicate, timeoutMs = 10_000) {
      if (predicate(spans)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(`spans not received within ${timeoutMs} ms: ${spans.map((s) => s.name).join(", ")}`),
          );
        }, timeoutMs);
        const check = () => {
          if (!predicate(spans)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
