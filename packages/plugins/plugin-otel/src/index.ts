/**
 * @rein/plugin-otel: OpenTelemetry traces and metrics of Rein runs, following
 * the GenAI semantic conventions (see README for the version and the span tree).
 *
 * Invariants:
 * - observation only: it subscribes to events and taps no decision hook, so it
 *   can never change, delay or fail a decision;
 * - the OpenTelemetry SDK runs on a shared worker thread (`telemetry-worker.ts`);
 *   the harness's thread only records finished spans (`span-ops.ts`);
 * - export is batched in the background; a collector that is down costs one
 *   warning (again only after it came back and failed anew), never a failed run;
 * - disposing the last harness on the thread flushes within `shutdownTimeoutMs`;
 * - it publishes each tool call's span through the SDK's trace context, so a
 *   tool that calls out (an MCP server) can continue the trace there, and it
 *   continues the trace a host set (`traceContext(...).setParent`) or, without
 *   one, the `TRACEPARENT` environment variable.
 */
import { definePlugin, isTraceparent, textMasks, traceContext } from "@rein/sdk";
import { AgentTraces, TRACED_EVENTS } from "./agent-traces.js";
import { OtelOptions } from "./options.js";
import { SpanRecorder } from "./span-ops.js";
import { leaseTelemetryWorker } from "./telemetry-worker.js";

export { ATTR, METRIC, OPERATION, REIN } from "./conventions.js";
export { OtelOptions } from "./options.js";

const VERSION = "0.1.0";

/** How long finished spans wait on the harness's thread before they go to the worker. */
const POST_DELAY_MS = 20;

export default definePlugin({
  name: "otel",
  version: VERSION,
  description:
    "OpenTelemetry traces and metrics (GenAI conventions) of every run, request, tool call and decision.",
  options: OtelOptions,
  setup(rein, options) {
    const lease = leaseTelemetryWorker(options, VERSION, (message) => rein.logger.warn(message));
    const recorder = new SpanRecorder((batch) => lease.send(batch), POST_DELAY_MS);
    const masks = textMasks(rein);
    const context = traceContext(rein);
    const envParent = isTraceparent(process.env.TRACEPARENT) ? process.env.TRACEPARENT : undefined;
    const traces = new AgentTraces(
      {
        spans: recorder,
        metrics: options.metrics,
        agentName: options.agentName,
        captureContent: options.captureContent,
        maxContentLength: options.maxContentLength,
        decisions: options.decisions,
        mask: (text) => masks.mask(text),
        model: () => ({ provider: rein.config.model.provider, id: rein.config.model.id }),
      },
      () => rein.session.id,
      () => context.parent ?? envParent,
    );
    rein.onDispose(context.provide(rein.plugin.name, (toolCallId) => traces.traceparentFor(toolCallId)));
    rein.onDispose(context.onDecision(rein.plugin.name, (decision) => traces.outsideRun(decision)));
    for (const type of TRACED_EVENTS) rein.on(type, (event) => traces.handle(event));

    return async () => {
      traces.endAll("aborted", "the plugin was disposed during the run");
      recorder.flush();
      const report = await lease.release();
      // A collector already reported as failing was the one warning; do not add a second.
      if (report !== undefined && !report.failing && report.outcome !== "flushed") {
        rein.logger.warn(
          `telemetry not fully sent within ${options.shutdownTimeoutMs} ms; ${
            report.stopped ? "the rest is dropped" : "the rest stays queued for the other harnesses' worker"
          }`,
        );
      }
    };
  },
});
