/**
 * The plugin through the built `rein` (a real child process, config loaded by
 * jiti): a run with an allowed and a denied call reaches a real OTLP/HTTP
 * receiver before the process exits, continuing the caller's TRACEPARENT.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  cleanup,
  policyPlugin,
  project,
  rein,
  scriptedConfig,
  TOOLS_PLUGIN,
} from "../../../cli/test/support/rein-process.js";
import { type OtlpReceiver, startOtlpReceiver } from "./support/otlp-receiver.js";

afterAll(cleanup);

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..");
const otelDist = join(repo, "packages/plugins/plugin-otel/dist/index.js");

let receiver: OtlpReceiver;
beforeEach(async () => {
  receiver = await startOtlpReceiver();
});
afterEach(() => receiver.close());

describe("rein run with @rein/plugin-otel", () => {
  it("exports the run's span tree before exiting, under the caller's trace", async () => {
    const dir = project({
      "rein.config.ts": scriptedConfig(
        [
          { toolCalls: [{ name: "echo", args: { text: "hi" } }] },
          { toolCalls: [{ name: "push", args: { remote: "origin" } }] },
          "All done.",
        ],
        `plugins: ["./tools.ts", "./house.ts", [${JSON.stringify(otelDist)}, { endpoint: ${JSON.stringify(receiver.url)} }]],`,
      ),
      "tools.ts": TOOLS_PLUGIN,
      "house.ts": policyPlugin(true),
    });
    const traceparent = "00-5c2fd6d7b8a0437e9ad2f6e3c0b1a4d9-aa00bb11cc22dd33-01";
    const started = Date.now();
    const result = await rein(["run", "go"], dir, { env: { TRACEPARENT: traceparent } });
    const took = Date.now() - started;
    expect(result.stderr).not.toContain("cannot export");
    expect(result.code).toBe(0);
    // The spans were sent before exit: nothing to wait for.
    expect(receiver.problems).toEqual([]);
    const names = receiver.spans.map((span) => span.name);
    expect(names).toEqual(
      expect.arrayContaining([
        "invoke_agent rein",
        "execute_tool echo",
        "execute_tool push",
        "apply_guardrail push",
      ]),
    );
    const agent = receiver.spans.find((span) => span.name === "invoke_agent rein");
    expect(agent?.traceId).toBe("5c2fd6d7b8a0437e9ad2f6e3c0b1a4d9");
    expect(agent?.parentSpanId).toBe("aa00bb11cc22dd33");
    const denied = receiver.spans.find((span) => span.name === "apply_guardrail push");
    expect(denied?.attributes).toMatchObject({
      "rein.decision": "deny",
      "rein.decision.by": "house-rules:no-push",
      "rein.decision.reason": "no pushing on Fridays",
    });
    // A generous bound: the export adds no wait to the process (it has a 3 s shutdown bound).
    expect(took).toBeLessThan(15_000);
  });

  it("rein hook: a decision on another agent's call is an apply_guardrail span under the agent's TRACEPARENT", async () => {
    const policy = JSON.stringify(join(repo, "packages/plugins/plugin-policy/dist/index.js"));
    const dir = project({
      "rein.config.ts": `import { defineConfig } from "@rein/sdk";
import policy from ${policy};
import otel from ${JSON.stringify(otelDist)};
export default defineConfig({
  model: { script: [] },
  plugins: [
    [policy, { rules: [{ id: "no-touch", rule: "bash(touch *)", decision: "deny", reason: "no new files from the shell" }] }],
    [otel, { endpoint: ${JSON.stringify(receiver.url)} }],
  ],
});
`,
    });
    const input = {
      session_id: "otel-hook-1",
      cwd: dir,
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "touch marker" },
      tool_use_id: "toolu_otel_1",
    };
    const traceparent = "00-1f2e3d4c5b6a79881f2e3d4c5b6a7988-0102030405060708-01";
    const result = await rein(["hook", "claude-code"], dir, {
      input: JSON.stringify(input),
      env: { TRACEPARENT: traceparent },
    });
    expect(JSON.parse(result.stdout).hookSpecificOutput.permissionDecision, result.stderr).toBe("deny");
    const span = receiver.spans.find((one) => one.name === "apply_guardrail bash");
    expect(span?.traceId).toBe("1f2e3d4c5b6a79881f2e3d4c5b6a7988");
    expect(span?.parentSpanId).toBe("0102030405060708");
    expect(span?.attributes).toMatchObject({
      "gen_ai.tool.call.id": "toolu_otel_1",
      "rein.decision": "deny",
      "rein.decision.by": "policy:no-touch",
      "rein.hook.agent": "claude-code",
    });
  });

  it("a collector that is down costs one warning line and no failed run", async () => {
    await receiver.close();
    const dir = project({
      "rein.config.ts": scriptedConfig(
        ["Nothing to do."],
        `plugins: [[${JSON.stringify(otelDist)}, { endpoint: ${JSON.stringify(receiver.url)}, shutdownTimeoutMs: 1000 }]],`,
      ),
    });
    const result = await rein(["run", "go"], dir);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("Nothing to do.");
    const warnings = result.stderr.split("\n").filter((line) => line.startsWith("[otel]"));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /^\[otel\] warn: (cannot export (traces|metrics) to the OTLP endpoint \(connect ECONNREFUSED|telemetry not fully sent within 1000 ms)/,
    );
    receiver = await startOtlpReceiver(); // afterEach closes one
  });
});
