/**
 * AgentHarness: one session's runs (spec ../../../../../shared/spec/harness.md).
 *
 * Invariants:
 * - Structural operations (`prompt`, `compact`, `navigateTree`) take the phase
 *   synchronously before their first await and otherwise reject with code `busy`.
 *   Compaction, navigation and retry logic live in compaction-run.ts,
 *   tree-navigation.ts and ../loop/retry.ts; this class wires them.
 * - Every turn runs from a snapshot built from the session plus the live config at
 *   turn start; setters never alter a turn already running.
 * - A message is persisted before any listener sees its `message_end`.
 * - Writes made while busy are pending and flush in FIFO order at the next save
 *   point (after the turn's messages and its `turn_end` listeners), at settle, and
 *   in failure cleanup; they are never dropped.
 * - `settled` is emitted last; `waitForIdle()` resolves only after it.
 * - Durable runs: run, turn and tool-call boundaries, accepted queue messages and
 *   pending writes are journaled (session `journal` records) when they happen; a
 *   message injected from a queue carries the queue id in its own entry, a committed
 *   pending write its pending id. Opening a harness on a session recovers what a
 *   crash left open (./recovery.ts).
 */
import type { Model, ToolCall } from "@mariozechner/pi-ai";
import {
  type CompactionSettings,
  DEFAULT_COMPACTION_SETTINGS,
  resolveCompactionSettings,
} from "../compaction/compaction-settings.js";
import { estimateFixedTokens } from "../compaction/token-estimate.js";
import { busyError, HarnessError, invalidArgument, isHarnessError } from "../errors.js";
import { EventBus } from "../events/event-bus.js";
import type {
  ConfigKey,
  EventListener,
  EventType,
  HarnessEvent,
  ListenerOptions,
  QueueName,
  RunOutcome,
} from "../events/event-types.js";
import {
  createHooks,
  DEFAULT_FAILURE_POLICY,
  type FailurePolicy,
  runBail,
  runWaterfall,
} from "../hooks/create-hooks.js";
import type { HarnessHooks } from "../hooks/hook-table.js";
import type {
  ConfigView,
  HookContext,
  RequestOptions,
  SessionFacade,
  ToolCallInfo,
  ToolHookContext,
  WritableEntry,
} from "../hooks/hook-types.js";
import { type InFlightCall, PluginDriver } from "../hooks/plugin-driver.js";
import { shortId } from "../ids.js";
import { runAgentLoop } from "../loop/agent-loop.js";
import type { AgentLoopConfig, StreamFunction } from "../loop/loop-types.js";
import {
  DEFAULT_RETRY_SETTINGS,
  type RetryPolicy,
  type RetrySettings,
  resolveRetrySettings,
} from "../loop/retry.js";
import type {
  AgentMessage,
  EntryInput,
  JournalRecord,
  JournalRunStatus,
  ThinkingLevel,
} from "../session/entries.js";
import type { Session } from "../session/session.js";
import type { SessionStore } from "../session/session-store.js";
import type { AnyAgentTool, ToolExecutionContext, ToolResult } from "../tools.js";
import {
  type CompactionOutcome,
  compactAfterOverflow,
  compactBeforeRequest,
  type OperationHost,
  runCompaction,
} from "./compaction-run.js";
import { HookViews } from "./hook-views.js";
import {
  activeTools,
  type DefaultToolVerdict,
  type LiveConfig,
  type SystemPromptSource,
  validateActiveTools,
  validateThinkingLevel,
  validateTools,
} from "./live-config.js";
import { MessageQueues, type QueuedMessage, type QueueModes, toUserMessage } from "./message-queues.js";
import { PendingWrites } from "./pending-writes.js";
import { type PromptInput, promptMessage } from "./prompt-input.js";
import { type RecoveryReport, recoverSession } from "./recovery.js";
import { decideToolCall } from "./tool-decisions.js";
import { checkTarget, type NavigateOptions, type NavigateOutcome, runNavigation } from "./tree-navigation.js";
import type { TurnSnapshot } from "./turn-snapshot.js";

export type Phase = "idle" | "turn" | "compaction" | "branch";

export type Durability = "save-point" | "strict" | "none";

export interface AgentHarnessOptions {
  session: Session;
  // biome-ignore lint/suspicious/noExplicitAny: any provider API.
  model: Model<any>;
  thinkingLevel?: ThinkingLevel;
  tools?: readonly AnyAgentTool[];
  /** Names of the active tools; default all registered tools. */
  activeTools?: readonly string[];
  systemPrompt?: SystemPromptSource;
  resources?: Record<string, unknown>;
  requestOptions?: RequestOptions;
  queueModes?: Partial<QueueModes>;
  /** Working directory handed to tools. Default `process.cwd()`. */
  cwd?: string;
  /** Verdict when no gate has an opinion. Default `allow`. */
  defaultToolVerdict?: DefaultToolVerdict;
  failurePolicy?: Partial<FailurePolicy>;
  /** Bound on how many extra turns `beforeStop` may ask for in one run. Default 8. */
  maxStopContinuations?: number;
  /**
   * When the session is flushed to stable storage (every append is in the OS at once either way):
   * - `save-point` (default): an fsync starts at every save point without blocking the next turn
   *   (consecutive ones coalesce), and settle waits for it;
   * - `strict`: every save point waits for its fsync;
   * - `none`: left to the OS.
   */
  durability?: Durability;
  /** Replaces pi-ai's `streamSimple` (tests, proxies). Summaries are written through it too. */
  streamFn?: StreamFunction;
  /** Automatic compaction: `enabled` (default true), `reserveTokens` (16 384), `keepRecentTokens` (20 000). */
  compaction?: Partial<CompactionSettings>;
  /** Retry of transient provider errors: `enabled` (default true), `maxAttempts` (4), `baseDelayMs` (2 000), `maxDelayMs` (60 000). */
  retry?: Partial<RetrySettings>;
  /**
   * Recover what a crash left open when the harness opens its session (default true):
   * close an unfinished run as `interrupted`, synthesize missing tool results, commit
   * pending writes, restore queued messages. See `harness.recovery`.
   */
  recover?: boolean;
}

export interface CompactOptions {
  /** Extra instructions for the model writing the summary. */
  instructions?: string;
}

export type { WritableEntry } from "../hooks/hook-types.js";

const WRITABLE_TYPES = new Set(["custom", "custom_message", "label", "session_info"]);

interface ActiveRun {
  runId: string;
  controller: AbortController;
  turnId: string | undefined;
  snapshot: TurnSnapshot | undefined;
  /** Set when `beforeRun` rewrote the system prompt: it holds for the whole run. */
  systemPromptOverride: string | undefined;
  /** An overflow compaction happened since the last successful assistant message (at most one per turn). */
  overflowCompacted: boolean;
  /** Ids of queued messages a `beforeRun` tap replaced: recorded on the run's first persisted message. */
  consumedQueueIds: string[] | undefined;
}

const QUEUE_NAMES: readonly QueueName[] = ["steer", "followUp", "nextTurn"];

/** Ids of queued messages and pending writes: 64 random bits, so no two in one session collide. */
const durableId = () => `${shortId()}${shortId()}`;

export class AgentHarness {
  readonly hooks: HarnessHooks;
  readonly session: Session;
  private readonly driver = new PluginDriver();
  private readonly events: EventBus;
  private readonly config: LiveConfig;
  private readonly queues: MessageQueues;
  private readonly pending = new PendingWrites();
  private readonly failurePolicy: FailurePolicy;
  private readonly maxStopContinuations: number;
  private readonly durability: Durability;
  private readonly streamFn: StreamFunction | undefined;
  private compactionValue: CompactionSettings;
  private retryValue: RetrySettings;
  private readonly operationHost: OperationHost;
  private phaseValue: Phase = "idle";
  private active: ActiveRun | undefined;
  /** The running `compact()` / `navigateTree()`, for `abort()`. */
  private operation: AbortController | undefined;
  private idle: Promise<void> = Promise.resolve();
  private readonly views: HookViews;
  /** Queued messages taken from a queue and not yet persisted (by identity: each push is a fresh object). */
  private readonly taken = new Map<AgentMessage, { queue: QueueName; id: string }>();
  private readonly recoveryReport: RecoveryReport | undefined;

  constructor(options: AgentHarnessOptions) {
    validateOptions(options);
    const tools = options.tools ?? [];
    validateTools(tools);
    if (options.activeTools) validateActiveTools(options.activeTools, tools);
    const thinkingLevel = options.thinkingLevel ?? "off";
    validateThinkingLevel(thinkingLevel);
    this.session = options.session;
    this.config = {
      model: options.model,
      thinkingLevel,
      tools: [...tools],
      activeToolNames: options.activeTools ? [...options.activeTools] : undefined,
      systemPrompt: options.systemPrompt ?? "",
      resources: { ...options.resources },
      requestOptions: { ...options.requestOptions },
      queueModes: { steer: "one-at-a-time", followUp: "one-at-a-time", ...options.queueModes },
      defaultToolVerdict: options.defaultToolVerdict ?? "allow",
      cwd: options.cwd ?? process.cwd(),
    };
    this.failurePolicy = { ...DEFAULT_FAILURE_POLICY, ...options.failurePolicy };
    this.maxStopContinuations = options.maxStopContinuations ?? 8;
    this.durability = options.durability ?? "save-point";
    this.streamFn = options.streamFn;
    this.compactionValue = resolveCompactionSettings(DEFAULT_COMPACTION_SETTINGS, options.compaction);
    this.retryValue = resolveRetrySettings(DEFAULT_RETRY_SETTINGS, options.retry);
    this.events = new EventBus(this.driver);
    this.queues = new MessageQueues(this.config.queueModes, (queue) => this.queueChanged(queue));
    this.hooks = createHooks({
      driver: this.driver,
      policy: () => this.failurePolicy,
      report: (failure) => this.reportPluginError(failure),
    });
    this.views = new HookViews({
      session: this.session,
      config: this.config,
      activeToolNames: () => this.activeToolNames,
      runId: () => this.active?.runId,
      turnId: () => this.active?.turnId,
      queues: {
        steer: (message) => this.steer(message),
        followUp: (message) => this.followUp(message),
        nextTurn: (message) => this.nextTurn(message),
      },
      append: (input) => this.appendEntry(input),
      stopRun: (reason) => this.stopRun(reason),
    });
    this.operationHost = this.createOperationHost();
    if (options.recover !== false) {
      const recovered = recoverSession(this.session, { tools: this.config.tools, model: this.config.model });
      this.recoveryReport = recovered.report;
      for (const queue of QUEUE_NAMES) this.queues.restore(queue, recovered.queues[queue]);
    }
  }

  /**
   * What recovery repaired or restored when this harness opened its session
   * (`undefined`: nothing was left open). Also reported in `session.warnings`.
   */
  get recovery(): RecoveryReport | undefined {
    return this.recoveryReport;
  }

  // ---- observation ----

  /** Every event, in order. Returns the unsubscribe function. */
  subscribe(listener: EventListener, options?: ListenerOptions): () => void {
    return this.events.subscribe(listener, options);
  }

  /** One event type, in order. Returns the unsubscribe function. */
  on<K extends EventType>(
    type: K,
    listener: EventListener<Extract<HarnessEvent, { type: K }>>,
    options?: ListenerOptions,
  ): () => void {
    return this.events.on(type, listener, options);
  }

  get phase(): Phase {
    return this.phaseValue;
  }

  /** The running turn's snapshot; `undefined` between turns and when idle. */
  get snapshot(): TurnSnapshot | undefined {
    return this.active?.snapshot;
  }

  /** The live config, read-only: what taps see as `context.config`. */
  get configView(): ConfigView {
    return this.views.configView;
  }

  /** The session as plugins see it (reads; writes obey the pending-write rule). */
  get sessionFacade(): SessionFacade {
    return this.views.sessionFacade;
  }

  /**
   * A hook context like the ones taps receive, for running hooks outside a turn
   * (evaluating a recorded tool call, tests). Run and turn ids are those of the
   * current run, if any.
   */
  hookContext(signal: AbortSignal = new AbortController().signal): HookContext {
    return this.views.context(signal);
  }

  /** A tool hook context (`context.call` set), as `toolCall` / `toolGate` / `toolResult` taps receive. */
  toolHookContext(signal: AbortSignal, call: ToolCallInfo): ToolHookContext {
    return this.views.toolContext(signal, call);
  }

  get sessionId(): string {
    return this.session.id;
  }

  // ---- live config ----

  // biome-ignore lint/suspicious/noExplicitAny: any provider API.
  get model(): Model<any> {
    return this.config.model;
  }
  // biome-ignore lint/suspicious/noExplicitAny: any provider API.
  setModel(model: Model<any>): void {
    if (!model || typeof model.id !== "string" || typeof model.provider !== "string") {
      throw invalidArgument("setModel expects a pi-ai Model with provider and id");
    }
    this.config.model = model;
    this.record({ type: "model_change", provider: model.provider, modelId: model.id });
    this.configChanged("model");
  }

  get thinkingLevel(): ThinkingLevel {
    return this.config.thinkingLevel;
  }
  setThinkingLevel(level: ThinkingLevel): void {
    validateThinkingLevel(level);
    this.config.thinkingLevel = level;
    this.record({ type: "thinking_level_change", thinkingLevel: level });
    this.configChanged("thinkingLevel");
  }

  get tools(): readonly AnyAgentTool[] {
    return this.config.tools;
  }
  /** Replaces the tool registry. Active tool names that no longer exist are an error. */
  setTools(tools: readonly AnyAgentTool[]): void {
    validateTools(tools);
    if (this.config.activeToolNames) validateActiveTools(this.config.activeToolNames, tools);
    this.config.tools = [...tools];
    this.configChanged("tools");
  }

  get activeToolNames(): readonly string[] {
    return this.config.activeToolNames ?? this.config.tools.map((tool) => tool.name);
  }
  /** `undefined` makes every registered tool active. */
  setActiveTools(names: readonly string[] | undefined): void {
    if (names) validateActiveTools(names, this.config.tools);
    this.config.activeToolNames = names ? [...names] : undefined;
    this.record({ type: "active_tools_change", activeTools: [...this.activeToolNames] });
    this.configChanged("activeTools");
  }

  get systemPrompt(): SystemPromptSource {
    return this.config.systemPrompt;
  }
  setSystemPrompt(source: SystemPromptSource): void {
    if (typeof source !== "string" && typeof source !== "function") {
      throw invalidArgument("setSystemPrompt expects a string or a function");
    }
    this.config.systemPrompt = source;
    this.configChanged("systemPrompt");
  }

  get resources(): Readonly<Record<string, unknown>> {
    return this.config.resources;
  }
  setResources(resources: Record<string, unknown>): void {
    this.config.resources = { ...resources };
    this.configChanged("resources");
  }

  get requestOptions(): Readonly<RequestOptions> {
    return this.config.requestOptions;
  }
  setRequestOptions(options: RequestOptions): void {
    this.config.requestOptions = { ...options };
    this.configChanged("requestOptions");
  }

  get queueModes(): Readonly<QueueModes> {
    return { ...this.config.queueModes };
  }
  setQueueModes(modes: Partial<QueueModes>): void {
    for (const [queue, mode] of Object.entries(modes)) {
      if (mode !== "one-at-a-time" && mode !== "all") {
        throw invalidArgument(
          `queue mode for ${queue} must be "one-at-a-time" or "all", not ${JSON.stringify(mode)}`,
        );
      }
    }
    Object.assign(this.config.queueModes, modes);
    this.configChanged("queueModes");
  }

  get defaultToolVerdict(): DefaultToolVerdict {
    return this.config.defaultToolVerdict;
  }
  setDefaultToolVerdict(verdict: DefaultToolVerdict): void {
    if (typeof verdict !== "function" && verdict !== "allow" && verdict !== "ask" && verdict !== "deny") {
      throw invalidArgument('default tool verdict must be "allow", "ask", "deny" or a function');
    }
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
    this.compactionValue = resolveCompactionSettings(this.compactionValue, settings);
    this.configChanged("compaction");
  }

  get retrySettings(): Readonly<RetrySettings> {
    return { ...this.retryValue };
  }
  /** Changes retry of transient provider errors; the next failure uses it. */
  setRetrySettings(settings: Partial<RetrySettings>): void {
    this.retryValue = resolveRetrySettings(this.retryValue, settings);
    this.configChanged("retry");
  }

  // ---- queues ----

  /** Changes direction: injected after the current turn fully ends. */
  steer(message: string | AgentMessage): void {
    this.enqueue("steer", message);
  }
  /** One more thing after this task: injected when the agent would otherwise stop. */
  followUp(message: string | AgentMessage): void {
    this.enqueue("followUp", message);
  }
  /** Context for the next explicit prompt, injected before its user message. */
  nextTurn(message: string | AgentMessage): void {
    this.enqueue("nextTurn", message);
  }

  /** Journals the message (durable once this returns), then queues it. */
  private enqueue(queue: QueueName, input: string | AgentMessage): void {
    // A fresh object per push: the harness knows a queued message by identity.
    const message = { ...toUserMessage(input) } as AgentMessage;
    const id = durableId();
    this.session.appendJournal({ event: "queue_push", queue, queueId: id, message });
    this.queues.push(queue, { id, message });
  }
  queued(queue: QueueName): number {
    return this.queues.size(queue);
  }

  // ---- session writes ----

  /** Writes at once when idle; when busy, queues a pending write committed at the next save point. */
  appendEntry(input: WritableEntry): void {
    if (!input || !WRITABLE_TYPES.has(input.type)) {
      throw invalidArgument(
        `appendEntry accepts ${[...WRITABLE_TYPES].join(", ")} entries, not ${JSON.stringify(input?.type)}`,
      );
    }
    this.record(input);
  }

  /**
   * Sets (or with `null` removes) the label of a tree entry. A session write:
   * at once when idle, pending until the next save point when busy.
   */
  label(entryId: string, label: string | null): void {
    const entry = this.session.getEntry(entryId);
    if (entry === undefined || entry.type === "leaf") {
      throw invalidArgument(`label: no tree entry "${entryId}" in session ${this.session.id}`);
    }
    if (label !== null && typeof label !== "string") throw invalidArgument("label must be a string or null");
    this.record({ type: "label", targetId: entryId, label });
  }

  /**
   * A new session file in `store` holding this session's branch from the root to
   * `entryId` (idle only: every write is committed and synced first). The caller
   * builds a harness on the returned session; this one is unchanged.
   */
  fork(entryId: string, store: SessionStore): Session {
    if (this.phaseValue !== "idle") throw busyError("fork", this.phaseValue);
    const entry = this.session.getEntry(entryId);
    if (entry === undefined || entry.type === "leaf") {
      throw invalidArgument(`fork: no tree entry "${entryId}" in session ${this.session.id}`);
    }
    this.session.sync();
    return store.fork(this.session.id, entryId);
  }

  /** Writes that wait for the next save point. */
  get pendingWrites(): readonly EntryInput[] {
    return this.pending.list().map((write) => write.input);
  }

  // ---- runs ----

  /**
   * Runs the agent on a prompt until it stops. Resolves with the run's outcome
   * after `settled`; rejects with `busy` when not idle, and with code `hook` when
   * a transform hook failed (the session then ends in a closed error message).
   */
  async prompt(input: PromptInput): Promise<RunOutcome> {
    const run = this.beginRun();
    let outcome: RunOutcome | undefined;
    let failure: unknown;
    try {
      this.session.appendJournal({ event: "run_start", runId: run.runId });
      outcome = await this.executeRun(run, promptMessage(input));
    } catch (error) {
      failure = error;
    }
    const status: JournalRunStatus = outcome === undefined ? "error" : outcome.status;
    const settleFailure = await this.settle(run.runId, status);
    if (failure !== undefined) throw failure;
    if (settleFailure !== undefined) throw settleFailure;
    return outcome as RunOutcome;
  }

  /** Asks the provider and running tools to stop; clears steer and follow-up, keeps next-turn. */
  abort(reason?: string): void {
    for (const queue of ["steer", "followUp"] as const) {
      const cleared = this.queues.clear(queue);
      if (cleared.length > 0) {
        this.journalQuietly({ event: "queue_clear", queue, queueIds: cleared.map((item) => item.id) });
      }
    }
    const operation = this.operation;
    if (operation && !operation.signal.aborted) {
      operation.abort(new HarnessError("aborted", reason ?? "aborted"));
      void this.events.emit({ type: "abort", ...(reason === undefined ? {} : { reason }) });
    }
    const run = this.active;
    if (!run || run.controller.signal.aborted) return;
    run.controller.abort(reason === undefined ? undefined : new HarnessError("aborted", reason));
    void this.events.emit({ type: "abort", runId: run.runId, ...(reason === undefined ? {} : { reason }) });
  }

  /**
   * What `context.stopRun(reason)` does: ends the current run at once, like
   * `abort(reason)`, but keeps queued steering and follow-ups (a plugin's stop is
   * not the user cancelling what they asked for).
   */
  private stopRun(reason: string): void {
    if (typeof reason !== "string" || reason === "")
      throw invalidArgument("stopRun needs a reason (a string)");
    const run = this.active;
    if (!run || run.controller.signal.aborted) return;
    run.controller.abort(new HarnessError("aborted", reason));
    void this.events.emit({ type: "abort", runId: run.runId, reason });
  }

  /** Resolves once the harness is idle and `settled` has been emitted. */
  waitForIdle(): Promise<void> {
    return this.idle;
  }

  /**
   * Summarises the older part of the active branch and appends a `compaction`
   * entry (idle only; phase `compaction`). Resolves `done`, `cancelled` (by
   * `beforeCompact`) or `skipped` (nothing to compact); rejects with code
   * `compaction` (the model failed), `hook` (a tap failed) or `aborted`, having
   * written nothing.
   */
  compact(options: CompactOptions = {}): Promise<CompactionOutcome> {
    return this.runOperation("compaction", "compact", async (signal) => {
      const request = { reason: "manual" as const, signal, instructions: options.instructions };
      return runCompaction(this.operationHost, { ...request, fixedTokens: await this.fixedTokens() });
    });
  }

  /**
   * Moves the active leaf to `targetId` (idle only; phase `branch`); `null` is the
   * empty branch. With `summary` (or `summarize: true`, written by the model) the
   * abandoned branch is recorded as a `branch_summary` after the target.
   * `beforeBranch` may cancel or supply the summary. Rejects with `invalid_argument`,
   * `compaction`, `hook` or `aborted`, having written nothing.
   */
  navigateTree(targetId: string | null, options: NavigateOptions = {}): Promise<NavigateOutcome> {
    // An invalid target is rejected before the phase is taken: no phase change, no `settled`.
    try {
      checkTarget(this.operationHost, targetId);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.runOperation("branch", "navigateTree", (signal) =>
      runNavigation(this.operationHost, targetId, options, signal),
    );
  }

  /**
   * Waits for idle and for plugin calls still in flight (at most `timeoutMs`);
   * returns the calls that never finished, naming their plugin and hook.
   */
  async close(timeoutMs = 5_000): Promise<readonly InFlightCall[]> {
    await this.idle;
    return this.driver.drain(timeoutMs);
  }

  // ---- internals: phases ----

  private resolveIdle: (() => void) | undefined;

  private takePhase(phase: Exclude<Phase, "idle">, operation: string): void {
    if (this.phaseValue !== "idle") throw busyError(operation, this.phaseValue);
    this.phaseValue = phase;
    // Started from a `settled` listener: this phase's events must not wait for that listener.
    this.events.release();
    this.idle = new Promise((resolve) => {
      this.resolveIdle = resolve;
    });
  }

  /** Back to idle, then `settled`, then the idle waiters (a `settled` listener may already start a new run). */
  private async finishPhase(runId?: string): Promise<void> {
    const resolve = this.resolveIdle;
    this.resolveIdle = undefined;
    this.active = undefined;
    this.phaseValue = "idle";
    await this.events.emitLast(runId === undefined ? { type: "settled" } : { type: "settled", runId });
    resolve?.();
  }

  /** A structural operation other than a run: phase, abort controller, settle (pending writes flush). */
  private async runOperation<T>(
    phase: "compaction" | "branch",
    name: string,
    body: (signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    this.takePhase(phase, name);
    const controller = new AbortController();
    this.operation = controller;
    let result: T | undefined;
    let failure: unknown;
    try {
      result = await body(controller.signal);
    } catch (error) {
      failure = error;
    }
    this.operation = undefined;
    let settleFailure: unknown;
    try {
      this.pending.flush(this.session);
      if (this.durability !== "none") this.session.sync();
    } catch (error) {
      settleFailure = error;
    }
    await this.finishPhase();
    if (failure !== undefined) throw failure;
    if (settleFailure !== undefined) throw settleFailure;
    return result as T;
  }

  private beginRun(): ActiveRun {
    this.takePhase("turn", "prompt");
    const run: ActiveRun = {
      runId: shortId(),
      controller: new AbortController(),
      turnId: undefined,
      snapshot: undefined,
      systemPromptOverride: undefined,
      overflowCompacted: false,
      consumedQueueIds: undefined,
    };
    this.active = run;
    return run;
  }

  /** Flushes leftover writes, returns to idle, emits `settled`. Returns a persistence failure, if any. */
  private async settle(runId: string, status: JournalRunStatus): Promise<unknown> {
    this.returnTaken();
    let failure: unknown;
    try {
      this.pending.flush(this.session);
      this.session.appendJournal({ event: "run_end", runId, status });
      if (this.durability !== "none") this.session.sync();
    } catch (error) {
      failure = error;
    }
    await this.finishPhase(runId);
    return failure;
  }

  // ---- internals: one run ----

  private async executeRun(run: ActiveRun, prompt: AgentMessage): Promise<RunOutcome> {
    this.recordConfigDrift();
    const signal = run.controller.signal;
    const nextTurn = this.take("nextTurn");
    const putBack = () => {
      for (const item of nextTurn) this.taken.delete(item.message);
      this.queues.restore("nextTurn", nextTurn);
    };
    let start: { systemPrompt: string; messages: AgentMessage[]; block?: { reason: string } };
    let systemPrompt: string;
    try {
      systemPrompt = await this.resolveSystemPrompt();
      start = await runWaterfall(
        this.hooks,
        "beforeRun",
        { systemPrompt, messages: [...nextTurn.map((item) => item.message), prompt] },
        this.views.context(signal),
      );
    } catch (error) {
      putBack();
      // A beforeRun tap still waiting when the run was aborted: the run is aborted, not failed.
      if (signal.aborted && isHarnessError(error, "aborted")) {
        return { runId: run.runId, status: "aborted", reason: error.message, messages: [] };
      }
      throw error;
    }
    if (start.block) {
      putBack();
      return { runId: run.runId, status: "blocked", reason: start.block.reason, messages: [] };
    }
    // Queued messages a tap replaced or dropped were consumed by it: the run's first
    // persisted message records their ids, in the same line.
    const injected = new Set(start.messages);
    const replaced = nextTurn.filter((item) => !injected.has(item.message));
    if (replaced.length > 0) {
      for (const item of replaced) this.taken.delete(item.message);
      run.consumedQueueIds = replaced.map((item) => item.id);
    }
    if (start.systemPrompt !== systemPrompt) run.systemPromptOverride = start.systemPrompt;

    const result = await runAgentLoop(start.messages, this.loopConfig(run));
    if (result.status === "error" && result.error instanceof HarnessError) throw result.error;
    const outcome: RunOutcome = { runId: run.runId, status: result.status, messages: result.messages };
    if (result.error !== undefined)
      outcome.reason = result.error instanceof Error ? result.error.message : String(result.error);
    else if (result.status === "aborted" && signal.reason instanceof HarnessError)
      outcome.reason = signal.reason.message; // `abort(reason)` or a plugin's `stopRun(reason)`
    return outcome;
  }

  private loopConfig(run: ActiveRun): AgentLoopConfig {
    const signal = run.controller.signal;
    const config: AgentLoopConfig = {
      runId: run.runId,
      signal,
      emit: (event) => this.dispatch(event),
      prepareTurn: () => this.takeSnapshot(run),
      retry: () => this.retryPolicy(),
      recoverTurn: async (message, turn) => {
        if (run.overflowCompacted) return false;
        const compacted = await compactAfterOverflow(this.operationHost, message, {
          model: turn.model,
          signal,
          runId: run.runId,
          fixedTokens: () => estimateFixedTokens(turn.systemPrompt, turn.tools),
        });
        if (compacted) run.overflowCompacted = true;
        return compacted;
      },
      takeSteering: () => this.take("steer").map((item) => item.message),
      takeFollowUp: () => this.take("followUp").map((item) => item.message),
      planToolCall: (call, tool, args) =>
        decideToolCall(
          {
            hooks: this.hooks,
            defaultVerdict: () => this.config.defaultToolVerdict,
            contextFor: (info) => this.views.toolContext(signal, info),
            emit: (event) => this.dispatch(event),
          },
          call,
          tool,
          args,
        ),
      executeTool: (tool, args, context) => this.executeTool(tool, args, context),
      beforeStop: async (last, continuations) => {
        if (continuations >= this.maxStopContinuations) return undefined;
        const answer = await runBail(
          this.hooks,
          "beforeStop",
          { lastMessage: last, continuations },
          this.views.context(signal),
        );
        if (answer?.decision !== "continue") return undefined;
        return [toUserMessage(answer.message)];
      },
    };
    if (this.streamFn) config.streamFn = this.streamFn;
    if (this.hooks.beforeRequest.taps.length > 0) {
      config.beforeRequest = (_turn, request) =>
        runWaterfall(this.hooks, "beforeRequest", request, this.views.context(signal));
    }
    if (this.hooks.providerPayload.taps.length > 0) {
      config.onPayload = (payload) =>
        runWaterfall(this.hooks, "providerPayload", payload, this.views.context(signal));
    }
    const callInfo = (call: ToolCall, tool: AnyAgentTool | undefined) => ({
      id: call.id,
      name: call.name,
      args: call.arguments,
      risk: tool?.risk,
      tool: tool as AnyAgentTool,
    });
    if (this.hooks.toolResult.taps.length > 0) {
      config.finalizeToolResult = (call, tool, result) =>
        runWaterfall(this.hooks, "toolResult", result, this.views.toolContext(signal, callInfo(call, tool)));
    }
    if (this.hooks.toolUpdate.taps.length > 0) {
      config.finalizeToolUpdate = (call, tool, partial) =>
        runWaterfall(this.hooks, "toolUpdate", partial, this.views.toolContext(signal, callInfo(call, tool)));
    }
    if (this.hooks.beforeRetry.taps.length > 0) {
      config.beforeRetry = (request) =>
        runBail(this.hooks, "beforeRetry", request, this.views.context(signal));
    }
    return config;
  }

  /** Persist before broadcast; flush pending writes at the save point after `turn_end` listeners. */
  private async dispatch(event: HarnessEvent): Promise<void> {
    if (event.type === "message_end") {
      this.persistMessage(event.message);
      const { message } = event;
      if (this.active && message.role === "assistant" && message.stopReason !== "error") {
        this.active.overflowCompacted = false; // the turn got through: a later overflow may compact again
      }
    } else if (event.type === "turn_start") {
      if (this.active) this.active.turnId = event.turnId;
      this.session.appendJournal({ event: "turn_start", runId: event.runId, turnId: event.turnId });
    } else if (event.type === "turn_end") {
      this.session.appendJournal({ event: "turn_end", runId: event.runId, turnId: event.turnId });
    }
    await this.events.emit(event);
    if (event.type === "turn_end") await this.savePoint();
  }

  /** Appends a message; one taken from a queue (or the run's first) records the queue ids it consumes. */
  private persistMessage(message: AgentMessage): void {
    const tag = this.taken.get(message);
    const run = this.active;
    let queueIds: string[] | undefined = tag === undefined ? undefined : [tag.id];
    if (run?.consumedQueueIds !== undefined) queueIds = [...run.consumedQueueIds, ...(queueIds ?? [])];
    this.session.appendMessage(message, queueIds === undefined ? {} : { queueIds });
    if (tag !== undefined) this.taken.delete(message);
    if (run !== undefined) run.consumedQueueIds = undefined;
  }

  /** Drains a queue, remembering each message until it is persisted. */
  private take(queue: QueueName): QueuedMessage[] {
    const items = this.queues.drain(queue);
    for (const item of items) this.taken.set(item.message, { queue, id: item.id });
    return items;
  }

  /**
   * At settle: messages taken from a queue but never persisted (the run failed or
   * stopped first) go back to the front of their queue, in order; ids a `beforeRun`
   * tap consumed without any message being persisted are journaled as taken.
   */
  private returnTaken(): void {
    const run = this.active;
    if (run?.consumedQueueIds !== undefined) {
      this.journalQuietly({ event: "queue_take", queue: "nextTurn", queueIds: run.consumedQueueIds });
      run.consumedQueueIds = undefined;
    }
    if (this.taken.size === 0) return;
    const back: Record<QueueName, QueuedMessage[]> = { steer: [], followUp: [], nextTurn: [] };
    for (const [message, { queue, id }] of this.taken) back[queue].push({ id, message });
    this.taken.clear();
    for (const queue of QUEUE_NAMES) this.queues.restore(queue, back[queue]);
  }

  /** A journal record whose loss only weakens recovery (it never blocks the caller). */
  private journalQuietly(record: JournalRecord): void {
    try {
      this.session.appendJournal(record);
    } catch {
      // The session is failing; the next write that matters reports it.
    }
  }

  private async savePoint(): Promise<void> {
    const hadPendingWrites = this.pending.size > 0;
    const flushed = this.pending.flush(this.session);
    if (this.durability !== "none") this.session.sync({ wait: this.durability === "strict" });
    if (this.active) this.active.snapshot = undefined;
    await this.events.emit({ type: "save_point", hadPendingWrites, flushed });
  }

  private async takeSnapshot(run: ActiveRun): Promise<TurnSnapshot> {
    const config = this.config;
    const model = config.model;
    const tools = activeTools(config);
    const systemPrompt = run.systemPromptOverride ?? (await this.resolveSystemPrompt());
    let context = this.session.buildContext();
    // Auto-compaction, threshold path: the compaction entry is the harness's own structural
    // write at a turn boundary (before this turn's request), appended directly, not pending.
    const compacted = await compactBeforeRequest(this.operationHost, context, {
      model,
      signal: run.controller.signal,
      runId: run.runId,
      fixedTokens: () => estimateFixedTokens(systemPrompt, tools),
    });
    if (compacted) context = this.session.buildContext();
    const snapshot: TurnSnapshot = {
      runId: run.runId,
      turnId: run.turnId ?? "",
      model,
      systemPrompt,
      messages: context.messages,
      tools,
      allTools: config.tools,
      activeToolNames: tools.map((tool) => tool.name),
      thinkingLevel: config.thinkingLevel,
      requestOptions: { ...config.requestOptions },
      resources: config.resources,
      sessionId: this.session.id,
      cwd: config.cwd,
    };
    run.snapshot = snapshot;
    return snapshot;
  }

  /** Estimated tokens of the system prompt and active tool definitions a request would carry now. */
  private async fixedTokens(): Promise<number> {
    return estimateFixedTokens(await this.resolveSystemPrompt(), activeTools(this.config));
  }

  private retryPolicy(): RetryPolicy | undefined {
    const { enabled, maxAttempts, baseDelayMs, maxDelayMs } = this.retryValue;
    return enabled ? { maxAttempts, baseDelayMs, maxDelayMs } : undefined;
  }

  private async resolveSystemPrompt(): Promise<string> {
    const source = this.config.systemPrompt;
    if (typeof source === "string") return source;
    return source({
      model: this.config.model,
      tools: activeTools(this.config),
      resources: this.config.resources,
    });
  }

  private async executeTool(
    tool: AnyAgentTool,
    args: Record<string, unknown>,
    context: ToolExecutionContext,
  ): Promise<ToolResult> {
    const site = { runId: this.active?.runId ?? "", toolCallId: context.toolCallId, toolName: tool.name };
    // Journaled before the tool can have any effect: recovery then knows it may have run.
    this.session.appendJournal({ event: "tool_start", ...site });
    let result: ToolResult;
    try {
      result = await this.driver.run(
        { plugin: tool.owner ?? `tool:${tool.name}`, hook: "execute", toolCallId: context.toolCallId },
        () => tool.execute(args, context),
      );
    } catch (error) {
      // A tool failure is a result the model can read, in the tool's own words.
      const cause = error instanceof HarnessError && error.cause !== undefined ? error.cause : error;
      result = {
        content: [{ type: "text" as const, text: cause instanceof Error ? cause.message : String(cause) }],
        isError: true,
      };
    }
    this.journalQuietly({ event: "tool_end", ...site, isError: result?.isError === true });
    return result;
  }

  // ---- internals: writes and config ----

  private record(input: EntryInput): void {
    if (this.phaseValue === "idle") {
      this.session.append(input);
      return;
    }
    const id = durableId();
    // Durable while pending; if the journal cannot be written, the flush reports the failure.
    this.journalQuietly({ event: "pending_write", pendingId: id, input });
    this.pending.add(input, id);
  }

  /** At run start, commit live config the branch does not reflect yet (e.g. a model chosen at construction). */
  private recordConfigDrift(): void {
    const branch = this.session.buildContext();
    const { model, thinkingLevel } = this.config;
    if (branch.model?.provider !== model.provider || branch.model?.modelId !== model.id) {
      this.session.append({ type: "model_change", provider: model.provider, modelId: model.id });
    }
    if ((branch.thinkingLevel ?? "off") !== thinkingLevel) {
      this.session.append({ type: "thinking_level_change", thinkingLevel });
    }
    const active = this.activeToolNames;
    const recorded = branch.activeTools;
    if (!recorded || recorded.length !== active.length || recorded.some((name, i) => name !== active[i])) {
      this.session.append({ type: "active_tools_change", activeTools: [...active] });
    }
  }

  private configChanged(key: ConfigKey): void {
    void this.events.emit({ type: "config_change", key, pending: this.phaseValue !== "idle" });
  }

  private queueChanged(queue: QueueName): void {
    void this.events.emit({ type: "queue_update", queue, ...this.queues.snapshot() });
  }

  private reportPluginError(failure: HarnessError): void {
    void this.events.emit({
      type: "plugin_error",
      plugin: failure.plugin ?? "unknown",
      hook: failure.hook ?? "unknown",
      message: failure.message,
      code: failure.pluginCode ?? failure.code,
      ...(failure.toolCallId ? { toolCallId: failure.toolCallId } : {}),
    });
  }

  // ---- internals: what hooks and operations see ----

  private createOperationHost(): OperationHost {
    return {
      session: this.session,
      hooks: this.hooks,
      model: () => this.config.model,
      requestOptions: () => this.config.requestOptions,
      streamFn: () => this.streamFn,
      compactionSettings: () => this.compactionValue,
      retryPolicy: () => this.retryPolicy(),
      emit: (event) => this.events.emit(event),
      hookContext: (signal) => this.views.context(signal),
    };
  }
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Checks the options' shapes before anything uses them: every problem is an
 * `invalid_argument` naming the option, never a TypeError from deep inside.
 */
function validateOptions(options: AgentHarnessOptions): void {
  if (!isPlainObject(options)) throw invalidArgument("AgentHarness needs an options object");
  const session = options.session as unknown;
  if (!session || typeof (session as { buildContext?: unknown }).buildContext !== "function") {
    throw invalidArgument("AgentHarness needs a session (options.session)");
  }
  const model = options.model as unknown;
  if (!isPlainObject(model) || typeof model.id !== "string" || typeof model.provider !== "string") {
    throw invalidArgument("AgentHarness needs a model: a pi-ai Model with provider and id (options.model)");
  }
  const fail = (option: string, expected: string, value: unknown) => {
    const shown = typeof value === "function" ? "a function" : (JSON.stringify(value) ?? String(value));
    return invalidArgument(`options.${option} must be ${expected}, not ${shown}`);
  };
  const optional = <K extends keyof AgentHarnessOptions>(
    key: K,
    expected: string,
    ok: (value: NonNullable<AgentHarnessOptions[K]>) => boolean,
  ) => {
    const value = options[key];
    if (value !== undefined && !ok(value as NonNullable<AgentHarnessOptions[K]>))
      throw fail(key, expected, value);
  };
  optional("systemPrompt", "a string or a function", (v) => typeof v === "string" || typeof v === "function");
  optional("resources", "an object", isPlainObject);
  optional("requestOptions", "an object", isPlainObject);
  optional("cwd", "a string", (v) => typeof v === "string");
  optional("defaultToolVerdict", '"allow", "ask", "deny" or a function', (v) =>
    typeof v === "function" ? true : v === "allow" || v === "ask" || v === "deny",
  );
  optional("maxStopContinuations", "an integer >= 0", (v) => Number.isInteger(v) && v >= 0);
  optional(
    "durability",
    '"save-point", "strict" or "none"',
    (v) => v === "save-point" || v === "strict" || v === "none",
  );
  optional("streamFn", "a function", (v) => typeof v === "function");
  optional("recover", "a boolean", (v) => typeof v === "boolean");
  optional("compaction", "an object", isPlainObject);
  optional("retry", "an object", isPlainObject);
  optional("queueModes", "an object", isPlainObject);
  for (const [queue, mode] of Object.entries(options.queueModes ?? {})) {
    if (queue !== "steer" && queue !== "followUp")
      throw fail(`queueModes.${queue}`, "absent (unknown queue)", mode);
    if (mode !== "one-at-a-time" && mode !== "all")
      throw fail(`queueModes.${queue}`, '"one-at-a-time" or "all"', mode);
  }
  optional("failurePolicy", "an object", isPlainObject);
  const policy = (options.failurePolicy ?? {}) as Partial<FailurePolicy>;
  if (
    policy.tapTimeoutMs !== undefined &&
    !(typeof policy.tapTimeoutMs === "number" && policy.tapTimeoutMs > 0)
  ) {
    throw fail("failurePolicy.tapTimeoutMs", "a number > 0", policy.tapTimeoutMs);
  }
  if (policy.gate !== undefined && policy.gate !== "ask" && policy.gate !== "deny") {
    throw fail("failurePolicy.gate", '"deny" or "ask" (gates fail closed, never allow)', policy.gate);
  }
  if (policy.transform !== undefined && policy.transform !== "fail-run" && policy.transform !== "skip-tap") {
    throw fail("failurePolicy.transform", '"fail-run" or "skip-tap"', policy.transform);
  }
}
