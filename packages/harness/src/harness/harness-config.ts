/**
 * The live-config half of AgentHarness's public API (spec "Three kinds of
 * state"): getters and setters of what the application wants next.
 *
 * Invariants: every setter checks its value by the option table (options.ts),
 * the same rules the constructor applies; a setter applies at once (getters see
 * the new value) but never alters a turn already running (each turn works from
 * its own snapshot); a change the session records (model, thinking level,
 * active tools) is written at once when idle and pending while busy.
 */
import type { Model } from "@earendil-works/pi-ai";
import { type CompactionSettings, resolveCompactionSettings } from "../compaction/compaction-settings.js";
import { invalidArgument } from "../errors.js";
import type { ConfigKey } from "../events/event-types.js";
import type { RequestOptions } from "../hooks/hook-types.js";
import { type RetryPolicy, type RetrySettings, resolveRetrySettings } from "../loop/retry.js";
import type { ThinkingLevel } from "../session/entries.js";
import type { AnyAgentTool } from "../tools.js";
import {
  type DefaultToolVerdict,
  type LiveConfig,
  type SystemPromptSource,
  validateActiveTools,
} from "./live-config.js";
import type { QueueModes } from "./message-queues.js";
import { checkModel, checkOption, type DecisionOptions } from "./options.js";
import type { SessionWriter } from "./session-writer.js";

export abstract class HarnessConfig {
  protected abstract readonly config: LiveConfig;
  protected abstract readonly writer: SessionWriter;
  protected abstract compactionValue: CompactionSettings;
  protected abstract retryValue: RetrySettings;

  // biome-ignore lint/suspicious/noExplicitAny: any provider API.
  get model(): Model<any> {
    return this.config.model;
  }
  // biome-ignore lint/suspicious/noExplicitAny: any provider API.
  setModel(model: Model<any>): void {
    checkModel(model, "setModel expects a pi-ai Model with provider and id");
    this.config.model = model;
    this.writer.record({ type: "model_change", provider: model.provider, modelId: model.id });
    this.configChanged("model");
  }

  get thinkingLevel(): ThinkingLevel {
    return this.config.thinkingLevel;
  }
  setThinkingLevel(level: ThinkingLevel): void {
    checkOption("thinkingLevel", level, "setThinkingLevel");
    this.config.thinkingLevel = level;
    this.writer.record({ type: "thinking_level_change", thinkingLevel: level });
    this.configChanged("thinkingLevel");
  }

  get tools(): readonly AnyAgentTool[] {
    return this.config.tools;
  }
  /** Replaces the tool registry. Active tool names that no longer exist are an error. */
  setTools(tools: readonly AnyAgentTool[]): void {
    if (this.config.agent) refuseInChild("setTools", tools, this.config.tools);
    checkOption("tools", tools, "setTools");
    if (this.config.activeToolNames) validateActiveTools(this.config.activeToolNames, tools);
    this.config.tools = [...tools];
    this.configChanged("tools");
  }

  get activeToolNames(): readonly string[] {
    return this.config.activeToolNames ?? this.config.tools.map((tool) => tool.name);
  }
  /** `undefined` makes every registered tool active. */
  setActiveTools(names: readonly string[] | undefined): void {
    if (names !== undefined)
      checkOption("activeTools", names, "setActiveTools", { tools: this.config.tools });
    this.config.activeToolNames = names ? [...names] : undefined;
    this.writer.record({ type: "active_tools_change", activeTools: [...this.activeToolNames] });
    this.configChanged("activeTools");
  }

  get systemPrompt(): SystemPromptSource {
    return this.config.systemPrompt;
  }
  setSystemPrompt(source: SystemPromptSource): void {
    checkOption("systemPrompt", source, "setSystemPrompt");
    this.config.systemPrompt = source;
    this.configChanged("systemPrompt");
  }

  get resources(): Readonly<Record<string, unknown>> {
    return this.config.resources;
  }
  setResources(resources: Record<string, unknown>): void {
    checkOption("resources", resources, "setResources");
    this.config.resources = { ...resources };
    this.configChanged("resources");
  }

  get requestOptions(): Readonly<RequestOptions> {
    return this.config.requestOptions;
  }
  setRequestOptions(options: RequestOptions): void {
    checkOption("requestOptions", options, "setRequestOptions");
    this.config.requestOptions = { ...options };
    this.configChanged("requestOptions");
  }

  get queueModes(): Readonly<QueueModes> {
    return { ...this.config.queueModes };
  }
  setQueueModes(modes: Partial<QueueModes>): void {
    checkOption("queueModes", modes, "setQueueModes");
    Object.assign(this.config.queueModes, modes);
    this.configChanged("queueModes");
  }

  get defaultToolVerdict(): DefaultToolVerdict {
    return this.config.defaultToolVerdict;
  }
  setDefaultToolVerdict(verdict: DefaultToolVerdict): void {
    if (this.config.agent)
      throw invalidArgument("setDefaultToolVerdict: a child agent's default verdict is its parent's");
    checkOption("defaultToolVerdict", verdict, "setDefaultToolVerdict");
    this.config.defaultToolVerdict = verdict;
    this.configChanged("defaultToolVerdict");
  }

  get cwd(): string {
    return this.config.cwd;
  }

  get compactionSettings(): Readonly<CompactionSettings> {
    return { ...this.compactionValue };
  }
  /** Changes automatic compaction; the next decision point (turn start, provider error) uses it. */
  setCompactionSettings(settings: Partial<CompactionSettings>): void {
    checkOption("compaction", settings, "setCompactionSettings");
    this.compactionValue = resolveCompactionSettings(this.compactionValue, settings);
    this.configChanged("compaction");
  }

  get retrySettings(): Readonly<RetrySettings> {
    return { ...this.retryValue };
  }
  /** Changes retry of transient provider errors; the next failure uses it. */
  setRetrySettings(settings: Partial<RetrySettings>): void {
    checkOption("retry", settings, "setRetrySettings");
    this.retryValue = resolveRetrySettings(this.retryValue, settings);
    this.configChanged("retry");
  }

  /** What an `ask` no `permissionAsk` tap answers becomes: `deny`, or `park` (durable approvals). */
  get onUnanswered(): "deny" | "park" {
    return this.config.onUnanswered;
  }
  /** Changes it from the next unanswered `ask` on. */
  setOnUnanswered(mode: "deny" | "park"): void {
    if (this.config.agent && mode !== "deny")
      throw invalidArgument(
        "setOnUnanswered: a child agent's unanswered asks are denied (it cannot be resumed alone)",
      );
    checkOption("onUnanswered", mode, "setOnUnanswered");
    this.config.onUnanswered = mode;
    this.configChanged("onUnanswered");
  }

  /** What tool decisions record (`trail`: every tap's step). */
  get decisions(): Readonly<Required<DecisionOptions>> {
    return { trail: this.config.decisionTrail };
  }
  /** Changes it from the next tool decision on. */
  setDecisions(decisions: DecisionOptions): void {
    checkOption("decisions", decisions, "setDecisions");
    this.config.decisionTrail = decisions.trail === true;
    this.configChanged("decisions");
  }

  protected retryPolicy(): RetryPolicy | undefined {
    const { enabled, maxAttempts, baseDelayMs, maxDelayMs } = this.retryValue;
    return enabled ? { maxAttempts, baseDelayMs, maxDelayMs } : undefined;
  }

  private configChanged(key: ConfigKey): void {
    this.writer.configChanged(key);
  }
}

/** A child agent's tools can only narrow: a new tool, or another definition under a known name, is refused. */
function refuseInChild(
  where: string,
  tools: readonly AnyAgentTool[],
  current: readonly AnyAgentTool[],
): void {
  const added = (Array.isArray(tools) ? tools : []).filter((tool) => !current.includes(tool));
  if (added.length > 0) {
    throw invalidArgument(
      `${where}: a child agent's tools can only narrow its parent's; ${added.map((t) => JSON.stringify(t?.name)).join(", ")} would be new`,
    );
  }
}
