/**
 * `createTestHarness`: a real `AgentHarness` on an in-memory session and a
 * scripted model, with the given plugins loaded, recording every event and every
 * request the model received.
 *
 * Invariants: no network and no test-runner imports (works under vitest, node:test,
 * jest...); the harness is the real one (same hooks, gate reduction, persistence
 * order), not a mock; `dispose()` disposes the plugins, waits for the harness to
 * close and unregisters the faux provider, even when a step fails.
 */
import {
  AgentHarness,
  type AgentHarnessOptions,
  type AgentMessage,
  type AnyAgentTool,
  type EventOf,
  type EventType,
  type HarnessEvent,
  MemoryStorage,
  type PromptInput,
  type RunOutcome,
  Session,
} from "@rein/harness";
import type { EvaluateToolCallOptions, ToolCallEvaluation, ToolCallProbe } from "../evaluate-tool-call.js";
import type { LogRecord } from "../logger.js";
import { loadPlugins, type PluginHost, type PluginHostEntry } from "../plugin-host.js";
import { createScriptedModel, type RecordedRequest, type ScriptStep } from "../scripted-model.js";
import { checkToolCall } from "./check-tool-call.js";

/** Harness settings a test may choose; session and model are the kit's. */
export type TestHarnessConfig = Omit<
  AgentHarnessOptions,
  "session" | "model" | "models" | "tools" | "streamFn"
>;

export interface TestHarnessOptions {
  /** Plugins and tool packs, loaded in order (as `loadPlugins`). */
  plugins?: readonly PluginHostEntry[];
  /** Tools the harness itself has (owner `harness`), before any plugin loads. */
  tools?: readonly AnyAgentTool[];
  /** The model's replies, in order. More can be added with `script()`. */
  script?: readonly ScriptStep[];
  config?: TestHarnessConfig;
  /** An existing session (default: a new in-memory one). */
  session?: Session;
}

export interface TestHarness {
  readonly harness: AgentHarness;
  readonly host: PluginHost;
  readonly session: Session;
  /** Every event, in order. */
  readonly events: readonly HarnessEvent[];
  /** What the model received, one entry per request. */
  readonly requests: readonly RecordedRequest[];
  /** Plugin log records (plugins log here instead of stderr). */
  readonly logs: readonly LogRecord[];
  /** Runs the agent on a prompt until it settles. */
  prompt(input: PromptInput): Promise<RunOutcome>;
  /** Queues more model replies. */
  script(...steps: ScriptStep[]): void;
  /** The active branch's messages, as the model would see them next. */
  messages(): AgentMessage[];
  /** Events of one type, typed. */
  eventsOf<K extends EventType>(type: K): EventOf<K>[];
  /** The `tool_decision` events so far. */
  decisions(): EventOf<"tool_decision">[];
  /** Runs a tool call through the decision stack without the model or the tool (see `checkToolCall`). */
  checkToolCall(probe: ToolCallProbe, options?: EvaluateToolCallOptions): Promise<ToolCallEvaluation>;
  /** Disposes plugins, closes the harness and unregisters the scripted model. */
  dispose(): Promise<void>;
}

export async function createTestHarness(options: TestHarnessOptions = {}): Promise<TestHarness> {
  const scripted = createScriptedModel(options.script ?? []);
  const events: HarnessEvent[] = [];
  const logs: LogRecord[] = [];
  let harness: AgentHarness;
  let host: PluginHost;
  try {
    const session = options.session ?? Session.create(new MemoryStorage());
    harness = new AgentHarness({
      ...options.config,
      session,
      model: scripted.model,
      models: scripted.models,
      tools: options.tools ?? [],
    });
    // Subscribed before plugins load, so events their setup causes are seen too.
    harness.subscribe(
      (event) => {
        events.push(event);
      },
      { owner: "test-harness" },
    );
    host = await loadPlugins(harness, options.plugins ?? [], { logger: (record) => logs.push(record) });
  } catch (error) {
    scripted.dispose();
    throw error;
  }
  const eventsOf = <K extends EventType>(type: K) =>
    events.filter((event): event is EventOf<K> => event.type === type);
  let disposing: Promise<void> | undefined;
  return {
    harness,
    host,
    session: harness.session,
    events,
    requests: scripted.requests,
    logs,
    prompt: (input) => harness.prompt(input),
    script: (...steps) => scripted.append(steps),
    messages: () => harness.session.buildContext().messages,
    eventsOf,
    decisions: () => eventsOf("tool_decision"),
    checkToolCall: (probe, checkOptions) => checkToolCall(harness, probe, checkOptions),
    dispose() {
      disposing ??= (async () => {
        try {
          await harness.waitForIdle();
          await host.dispose();
          await harness.close();
        } finally {
          scripted.dispose();
        }
      })();
      return disposing;
    },
  };
}
