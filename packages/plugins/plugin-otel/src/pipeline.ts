/**
 * The export side, on the telemetry worker: the SDK's batch span processor
 * feeding the OTLP/HTTP exporter (spans arrive finished, as `ReadableSpan`s, so
 * no tracer provider is needed, and none is registered globally: an
 * application's own OpenTelemetry setup never sees these spans), and a private
 * meter provider for the GenAI histograms.
 *
 * Invariants: nothing here runs on a turn's path; a collector that is down or
 * slow costs one warning, never a failed or delayed run; `shutdown` resolves
 * within its bound whatever the collector does.
 */
import type { Meter } from "@opentelemetry/api";
import { type ExportResult, ExportResultCode, type InstrumentationScope } from "@opentelemetry/core";
import { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { type Resource, resourceFromAttributes } from "@opentelemetry/resources";
import {
  MeterProvider,
  PeriodicExportingMetricReader,
  type PushMetricExporter,
} from "@opentelemetry/sdk-metrics";
import {
  BatchSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
  type SpanProcessor,
} from "@opentelemetry/sdk-trace";
import type { OtelOptions } from "./options.js";

export interface TelemetryPipeline {
  /** Where finished spans go (`onEnd`): batched, then exported. */
  readonly spans: SpanProcessor;
  readonly resource: Resource;
  readonly scope: InstrumentationScope;
  /** Undefined when metrics are off. */
  readonly meter: Meter | undefined;
  /**
   * Sends what is buffered and stops; resolves within `shutdownTimeoutMs`.
   * `failing`: the last export had failed (and was reported) when it stopped.
   */
  shutdown(): Promise<FlushReport>;
  /** Sends what is buffered and goes on; resolves within `shutdownTimeoutMs`. */
  flush(): Promise<FlushReport>;
}

export interface FlushReport {
  outcome: "flushed" | "timed out" | "failed";
  /** The last export had failed (and was reported) when it finished. */
  failing: boolean;
}

export interface PipelineOptions {
  options: OtelOptions;
  env: NodeJS.ProcessEnv;
  version: string;
  /** Called once, on the first export that fails (and again after one succeeded since). */
  onExportFailure(signal: "traces" | "metrics", error: string): void;
}

const SCOPE = "@rein/plugin-otel";

/** An explicit base URL wins over the environment; the exporters read the environment themselves. */
const urlFor = (options: OtelOptions, path: "traces" | "metrics"): { url?: string } =>
  options.endpoint === undefined ? {} : { url: `${options.endpoint.replace(/\/+$/, "")}/v1/${path}` };

const headersFor = (options: OtelOptions): { headers?: Record<string, string> } =>
  options.headers === undefined ? {} : { headers: { ...options.headers } };

/**
 * One reporter for both signals: the first failure of a run of failures is
 * reported (a dead collector is one warning, not one per signal or batch), a
 * success re-arms it, and nothing is reported once the pipeline has shut down.
 */
function failureReporter(report: PipelineOptions["onExportFailure"]) {
  let failing = false;
  let closed = false;
  return {
    observe(signal: "traces" | "metrics", result: ExportResult): void {
      if (result.code === ExportResultCode.SUCCESS) {
        failing = false;
        return;
      }
      if (failing || closed) return;
      failing = true;
      report(signal, result.error?.message ?? "export failed");
    },
    get failing() {
      return failing;
    },
    close() {
      closed = true;
    },
  };
}
type FailureReporter = ReturnType<typeof failureReporter>;

class ReportingSpanExporter implements SpanExporter {
  constructor(
    private readonly inner: SpanExporter,
    private readonly failures: FailureReporter,
  ) {}
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      this.failures.observe("traces", result);
      done(result);
    });
  }
  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

function reportingMetricExporter(inner: PushMetricExporter, failures: FailureReporter) {
  const wrapped: PushMetricExporter = {
    export: (metrics, done) =>
      inner.export(metrics, (result) => {
        failures.observe("metrics", result);
        done(result);
      }),
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush(),
    ...(inner.selectAggregationTemporality
      ? { selectAggregationTemporality: inner.selectAggregationTemporality.bind(inner) }
      : {}),
    ...(inner.selectAggregation ? { selectAggregation: inner.selectAggregation.bind(inner) } : {}),
  };
  return wrapped;
}

export function createPipeline({
  options,
  env,
  version,
  onExportFailure,
}: PipelineOptions): TelemetryPipeline {
  const resource = resourceFromAttributes({
    "service.name": options.serviceName ?? env.OTEL_SERVICE_NAME ?? "rein",
    "service.version": version,
    "telemetry.sdk.language": "nodejs",
  });
  const common = { ...headersFor(options), timeoutMillis: options.exportTimeoutMs };
  const failures = failureReporter(onExportFailure);
  const spanExporter = new ReportingSpanExporter(
    new OTLPTraceExporter({ ...urlFor(options, "traces"), ...common }),
    failures,
  );
  const spans = new BatchSpanProcessor({
    exporter: spanExporter,
    scheduledDelayMillis: options.batchDelayMs,
    maxExportBatchSize: options.maxBatchSize,
    maxQueueSize: Math.max(options.maxQueueSize, options.maxBatchSize),
    exportTimeoutMillis: options.exportTimeoutMs,
  });
  let meterProvider: MeterProvider | undefined;
  if (options.metrics) {
    meterProvider = new MeterProvider({
      resource,
      readers: [
        new PeriodicExportingMetricReader({
          exporter: reportingMetricExporter(
            new OTLPMetricExporter({ ...urlFor(options, "metrics"), ...common }),
            failures,
          ),
          exportIntervalMillis: 60_000,
          exportTimeoutMillis: options.exportTimeoutMs,
        }),
      ],
    });
  }

  /** `work`, given up after `shutdownTimeoutMs`. */
  async function bounded(work: () => Promise<unknown>): Promise<FlushReport> {
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<"timed out">((resolve) => {
      timer = setTimeout(() => resolve("timed out"), options.shutdownTimeoutMs);
      timer.unref();
    });
    const done = work().then(
      () => "flushed" as const,
      () => "failed" as const,
    );
    try {
      return { outcome: await Promise.race([done, bound]), failing: failures.failing };
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    spans,
    resource,
    scope: { name: SCOPE, version },
    meter: meterProvider?.getMeter(SCOPE, version),
    async shutdown() {
      try {
        return await bounded(() => Promise.all([spans.shutdown(), meterProvider?.shutdown()]));
      } finally {
        failures.close();
      }
    },
    flush: () => bounded(() => Promise.all([spans.forceFlush(), meterProvider?.forceFlush()])),
  };
}
