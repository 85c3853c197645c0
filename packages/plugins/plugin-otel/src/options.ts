/**
 * The plugin's options. Everything left unset comes from the standard
 * OpenTelemetry environment (`OTEL_EXPORTER_OTLP_*`, `OTEL_SERVICE_NAME`), so the
 * same config works on a laptop and behind a collector in production.
 */
import { type Static, Type } from "@rein/sdk";

export const OtelOptions = Type.Object(
  {
    /**
     * The OTLP/HTTP base URL (`/v1/traces` and `/v1/metrics` are added). Unset:
     * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` / `_METRICS_ENDPOINT` (full URLs), then
     * `OTEL_EXPORTER_OTLP_ENDPOINT`, then `http://localhost:4318`.
     */
    endpoint: Type.Optional(Type.String({ pattern: "^https?://", description: "OTLP/HTTP base URL" })),
    /** Extra request headers (an API key for a hosted backend). Unset: `OTEL_EXPORTER_OTLP_HEADERS`. */
    headers: Type.Optional(Type.Record(Type.String(), Type.String())),
    /** `service.name` of the resource. Unset: `OTEL_SERVICE_NAME`, else `rein`. */
    serviceName: Type.Optional(Type.String({ minLength: 1 })),
    /** `gen_ai.agent.name` on `invoke_agent` spans. */
    agentName: Type.String({ minLength: 1, default: "rein" }),
    /**
     * Record tool arguments and results on `execute_tool` spans. Off by default:
     * they can hold secrets. When on, the harness's text masks (plugin-redact) are
     * applied first and each value is cut to `maxContentLength` characters.
     */
    captureContent: Type.Boolean({ default: false }),
    maxContentLength: Type.Integer({ minimum: 16, default: 4096 }),
    /**
     * A gate decision as an `apply_guardrail` child span of the tool's span (the
     * default: visible as a step in every trace viewer), or as an event of that name
     * on the tool's span (one span fewer per call, for high-volume agents).
     */
    decisions: Type.Union([Type.Literal("span"), Type.Literal("event")], { default: "span" }),
    /** Export the token-usage and duration histograms too. */
    metrics: Type.Boolean({ default: true }),
    /** How long one export may take before it is given up (the collector may be down). */
    exportTimeoutMs: Type.Integer({ minimum: 1, default: 2000 }),
    /** Longest wait for the last spans to leave when the plugin is disposed. */
    shutdownTimeoutMs: Type.Integer({ minimum: 1, default: 3000 }),
    /** Spans are batched: sent after this delay, or when a batch is full. */
    batchDelayMs: Type.Integer({ minimum: 0, default: 1000 }),
    maxBatchSize: Type.Integer({ minimum: 1, default: 512 }),
    /** Spans kept while the collector is slow; beyond that new spans are dropped (never blocking a turn). */
    maxQueueSize: Type.Integer({ minimum: 1, default: 2048 }),
  },
  { additionalProperties: false },
);
export type OtelOptions = Static<typeof OtelOptions>;
