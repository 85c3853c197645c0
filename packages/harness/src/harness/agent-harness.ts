import { registerParent } from "../children/parent-port.js";
import {
  type CompactionSettings,
  DEFAULT_COMPACTION_SETTINGS,
  resolveCompactionSettings,
} from "../compaction/compaction-settings.js";
import { estimateFixedTokens } from "../compaction/token-estimate.js";
import { busyError, HarnessError, invalidArgument } from "../errors.js";
import { EventBus } from "../events/event-bus.js";
import type {
  EventListener,
  EventType,
  HarnessEvent,
  ListenerOptions,
  QueueName,
  RunOutcome,
} from "../events/event-types.js";
import { createHooks, DEFAULT_FAILURE_POLICY, type FailurePolicy } from "../hooks/create-hooks.js";
import type { HarnessHooks } from "../hooks/hook-table.js";
import type {
  ConfigView,
  HookContext,
  SessionFacade,
  ToolCallInfo,
  ToolHookContext,
  WritableEntry,
} from "../hooks/hook-types.js";
import { type InFlightCall, PluginDriver } from "../hooks/plugin-driver.js";
import type { StreamFunction } from "../loop/loop-types.js";
import { DEFAULT_RETRY_SETTINGS, type RetrySettings, resolveRetrySettings } from "../loop/retry.js";
import { streamThrough } from "../models/builtin-models.js";
import { ResourceRuns } from "../resources/resource-runs.js";
import { refuseWhileParked } from "../session/approvals.js";
import type { AgentMessage, EntryInput, JournalRunStatus } from "../session/entries.js";
import type { Session } from "../session/session.js";
import type { SessionStore } from "../session/session-store.js";
import { type CompactionOutcome, type OperationHost, runCompaction } from "./compaction-run.js";
import { HookCalls } from "./hook-calls.js";
import { HookViews } from "./hook-views.js";
import { activeTools, type LiveConfig, resolveSystemPrompt } from "./live-config.js";
import { type AgentHarnessOptions, initialLiveConfig, validateOptions } from "./options.js";
import { resumeStateOf } from "./parked-calls.js";
import { type Phase, PhaseGate } from "./phase-gate.js";
import { type PromptInput, promptMessage, type RunOptions } from "./prompt-input.js";
import { QUEUE_NAMES, QueueLedger } from "./queue-ledger.js";
import { type RecoveryReport, recoverSession } from "./recovery.js";
import { type ActiveRun, executeRun, newRun, type RunBody, type RunPort, runStartRecord } from "./run.js";
import { SessionWriter } from "./session-writer.js";
import type { DecisionEnvironment, DecisionOverrides } from "./tool-decisions.js";
import { checkTarget, type NavigateOptions, type NavigateOutcome, runNavigation } from "./tree-navigation.js";
import type { TurnSnapshot } from "./turn-snapshot.js";

export type { WritableEntry } from "../hooks/hook-types.js";
export type { AgentHarnessOptions, DecisionOptions, Durability } from "./options.js";
export type { Phase } from "./phase-gate.js";

export interface CompactOptions {
  /** Extra instructions for the model writing the summary. */
  instructions?: string;
}

const WRITABLE_TYPES = new Set(["custom", "custom_message", "label", "session_info"]);

export class AgentHarness extends ResourceRuns {
  readonly hooks: HarnessHooks;
  readonly session: Session;
  private readonly driver = new PluginDriver();
  /** Runs plugin code through the harness's one driver (tagged, tracked, timed): @rein/sdk's setups and cleanups. */
  readonly plugins: Pick<PluginDriver, "run"> = this.driver;
  private readonly events: EventBus;
  protected readonly gate: PhaseGate;
  protected readonly config: LiveConfig;
  protected readonly writer: SessionWriter;
  private readonly ledger: QueueLedger;
  private readonly views: HookViews;
  private readonly calls: HookCalls;
  private readonly failurePolicy: FailurePolicy;
  private readonly maxStopContinuations: number;
  private readonly streamFn: StreamFunction;
  protected compactionValue: CompactionSettings;
  protected retryValue: RetrySettings;
  private readonly operationHost: OperationHost;
  protected readonly runPort: RunPort;
  protected active: ActiveRun | undefined;
  /** The running `compact()` / `navigateTree()`, for `abort()`. */
  private operation: AbortController | undefined;
  private readonly recoveryReport: RecoveryReport | undefined;

  constructor(options: AgentHarnessOptions) {
    super();
    validateOptions(options);
    this.session = options.session;
    this.config = initialLiveConfig(options);
    this.failurePolicy = { ...DEFAULT_FAILURE_POLICY, ...options.failurePolicy };
    this.maxStopContinuations = options.maxStopContinuations ?? 8;
    this.streamFn = options.streamFn ?? streamThrough(options.models);
    this.compactionValue = resolveCompactionSettings(DEFAULT_COMPACTION_SETTINGS, options.compaction);
    this.retryValue = resolveRetrySettings(DEFAULT_RETRY_SETTINGS, options.retry);
    this.events = new EventBus(this.driver);
    this.gate = new PhaseGate(this.events);
    const emit = (event: HarnessEvent) => this.events.emit(event);
    this.writer = new SessionWriter(this.session, options.durability ?? "save-point", {
      busy: () => this.gate.phase !== "idle",
      emit,
    });
    this.ledger = new QueueLedger(this.config.queueModes, {
      journal: (record) => this.writer.journal(record),
      journalQuietly: (record) => this.writer.journalQuietly(record),
      emit,
    });
    this.hooks = createHooks({
      driver: this.driver,
      policy: () => this.failurePolicy,
      report: (failure) => this.events.report(failure),
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
    this.calls = new HookCalls(this.hooks, this.views);
    registerParent(this, this.config, this.failurePolicy, this.streamFn, emit); // for startChild
    this.operationHost = {
      session: this.session,
      hooks: this.hooks,
      model: () => this.config.model,
      requestOptions: () => this.config.requestOptions,
      streamFn: () => this.streamFn,
      compactionSettings: () => this.compactionValue,
      retryPolicy: () => this.retryPolicy(),
      emit,
      hookContext: (signal) => this.views.context(signal),
    };
    this.runPort = {
      calls: this.calls,
      config: this.config,
      ledger: this.ledger,
      writer: this.writer,
      driver: this.driver,
      operations: this.operationHost,
      decisionEnvironment: (signal, overrides) => this.decisionEnvironment(signal, overrides),
      streamFn: () => this.streamFn,
      retryPolicy: () => this.retryPolicy(),
      maxStopContinuations: () => this.maxStopContinuations,
      emit,
    };
    if (options.recover !== false) {
      const recovered = recoverSession(this.session, { tools: this.config.tools, model: this.config.model });
      this.recoveryReport = recovered.report;
      for (const queue of QUEUE_NAMES) this.ledger.restore(queue, recovered.queues[queue]);
    }
  }

  /** What recovery repaired or restored at open (`undefined`: nothing was open); also in `session.warnings`. */
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
    return this.gate.phase;
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
   * (evaluating a recorded tool call, tests); run and turn ids are the current run's.
   */
  hookContext(signal: AbortSignal = new AbortController().signal): HookContext {
    return this.views.context(signal);
  }

  /**
   * What `decideToolCall` needs to decide a call on this harness, under `signal`
   * (runs use it; so does `evaluateToolCall`: no events unless `emit` is given).
   */
  decisionEnvironment(signal: AbortSignal, overrides: DecisionOverrides = {}): DecisionEnvironment {
    return {
      hooks: this.hooks,
      driver: this.driver,
      signal,
      timeoutMs: () => this.failurePolicy.tapTimeoutMs,
      defaultVerdict: () => this.config.defaultToolVerdict,
      defaultVerdictOwner: () => this.defaultVerdictOwner,
      contextFor: (info) => this.views.toolContext(signal, info),
      emit: async () => undefined,
      place: { cwd: this.config.cwd, sessionId: this.session.id },
      report: (failure) => this.events.report(failure),
      ...(this.config.agent === undefined ? {} : { agentPath: this.config.agent.path }),
      ...overrides,
    };
  }

  /** A tool hook context (`context.call` set), as `toolCall` / `toolGate` / `toolResult` taps receive. */
  toolHookContext(signal: AbortSignal, call: ToolCallInfo): ToolHookContext {
    return this.views.toolContext(signal, call);
  }

  get sessionId(): string {
    return this.session.id;
  }

  // ---- queues ----

  /** Changes direction: injected after the current turn fully ends. */
  steer(message: string | AgentMessage): void {
    this.ledger.enqueue("steer", message);
  }
  /** One more thing after this task: injected when the agent would otherwise stop. */
  followUp(message: string | AgentMessage): void {
    this.ledger.enqueue("followUp", message);
  }
  /** Context for the next explicit prompt, injected before its user message. */
  nextTurn(message: string | AgentMessage): void {
    this.ledger.enqueue("nextTurn", message);
  }
  queued(queue: QueueName): number {
    return this.ledger.size(queue);
  }

  // ---- session writes ----

  /** Writes at once when idle; when busy, queues a pending write committed at the next save point. */
  appendEntry(input: WritableEntry): void {
    if (!input || !WRITABLE_TYPES.has(input.type)) {
      throw invalidArgument(
        `appendEntry accepts ${[...WRITABLE_TYPES].join(", ")} entries, not ${JSON.stringify(input?.type)}`,
      );
    }
    this.writer.record(input);
  }

  /** Sets (`null`: removes) a tree entry's label; at once when idle, else pending until the next save point. */
  label(entryId: string, label: string | null): void {
    const entry = this.session.getEntry(entryId);
    if (entry === undefined || entry.type === "leaf") {
      throw invalidArgument(`label: no tree entry "${entryId}" in session ${this.session.id}`);
    }
    if (label !== null && typeof label !== "string") throw invalidArgument("label must be a string or null");
    this.writer.record({ type: "label", targetId: entryId, label });
  }

  /**
   * A new session file in `store` holding this session's branch from the root to
   * `entryId` (idle only: every write is committed and synced first). The caller
   * builds a harness on the returned session; this one is unchanged.
   */
  fork(entryId: string, store: SessionStore): Session {
    if (this.gate.phase !== "idle") throw busyError("fork", this.gate.phase);
    const entry = this.session.getEntry(entryId);
    if (entry === undefined || entry.type === "leaf") {
      throw invalidArgument(`fork: no tree entry "${entryId}" in session ${this.session.id}`);
    }
    this.writer.sync("force");
    return store.fork(this.session.id, entryId);
  }

  /** Writes that wait for the next save point. */
  get pendingWrites(): readonly EntryInput[] {
    return this.writer.pendingWrites;
  }

  // ---- runs and structural operations ----

  /**
   * Runs the agent on a prompt until it stops (`options`: `RunOptions`, recorded in its `run_start`);
   * resolves with the outcome after `settled`. Rejects with `busy` when not idle, `parked` when the
   * session waits on parked calls, `hook` when a transform hook failed (the session ends in an error message).
   */
  async prompt(input: PromptInput, options?: RunOptions): Promise<RunOutcome> {
    if (this.gate.phase === "idle") refuseWhileParked(this.session, "prompt");
    return this.startRun("prompt", (run) => executeRun(this.runPort, run, promptMessage(input)), options);
  }

  /**
   * Continues a `parked` run once its calls are answered (`resolveApproval`); see
   * `executeResume`. Rejects with `parked` while one is pending, `invalid_argument` if none.
   */
  async resume(): Promise<RunOutcome> {
    const state = this.gate.phase === "idle" ? resumeStateOf(this.session) : undefined;
    return this.startRun("resume", this.resumeRun(state));
  }

  protected async startRun(name: string, body: RunBody, options?: RunOptions): Promise<RunOutcome> {
    const run = newRun(options); // checks the options before the phase is taken
    this.gate.take("turn", name);
    this.active = run;
    let outcome: RunOutcome | undefined;
    let failure: unknown;
    try {
      this.writer.journal(runStartRecord(run));
      outcome = await body(run);
    } catch (error) {
      failure = error;
    }
    const status: JournalRunStatus = outcome === undefined ? "error" : outcome.status;
    this.ledger.settle();
    let settleFailure = this.writer.settle({ event: "run_end", runId: run.runId, status });
    if (settleFailure instanceof Promise) settleFailure = await settleFailure; // asynchronous storage
    this.active = undefined;
    await this.gate.finish(run.runId);
    if (failure !== undefined) throw failure;
    if (settleFailure !== undefined) throw settleFailure;
    return outcome as RunOutcome;
  }

  /** Asks the provider and running tools to stop; clears steer and follow-up, keeps next-turn. */
  abort(reason?: string): void {
    this.ledger.clearOnAbort();
    const operation = this.operation;
    if (operation && !operation.signal.aborted) {
      operation.abort(new HarnessError("aborted", reason ?? "aborted"));
      void this.events.emit({ type: "abort", ...(reason === undefined ? {} : { reason }) });
    }
    this.endRun(reason, true);
  }

  /**
   * `context.stopRun(reason)`: ends the run like `abort(reason)`, but never cancels an
   * allowed call and keeps queued steering and follow-ups (a plugin's stop, not the user's).
   */
  private stopRun(reason: string): void {
    if (typeof reason !== "string" || reason === "")
      throw invalidArgument("stopRun needs a reason (a string)");
    this.endRun(reason, false);
  }

  /** Aborts the run's signal and, for a person's abort, the one its tools run under. */
  private endRun(reason: string | undefined, cancelTools: boolean): void {
    const run = this.active;
    if (!run) return;
    const error = reason === undefined ? undefined : new HarnessError("aborted", reason);
    const ending = !run.controller.signal.aborted;
    const cancelling = cancelTools && !run.execution.signal.aborted;
    if (!ending && !cancelling) return;
    if (ending) run.controller.abort(error);
    if (cancelling) run.execution.abort(error);
    void this.events.emit({ type: "abort", runId: run.runId, ...(reason === undefined ? {} : { reason }) });
  }

  /** Resolves once the harness is idle and `settled` has been emitted. */
  waitForIdle(): Promise<void> {
    return this.gate.waitForIdle();
  }

  /**
   * Summarises the older part of the active branch and appends a `compaction` entry (idle
   * only; phase `compaction`). Resolves `done`, `cancelled` (by `beforeCompact`) or `skipped`;
   * rejects with `compaction` (the model failed), `hook` or `aborted`, having written nothing.
   */
  compact(options: CompactOptions = {}): Promise<CompactionOutcome> {
    return this.runOperation("compaction", "compact", async (signal) => {
      const fixedTokens = estimateFixedTokens(
        await resolveSystemPrompt(this.config),
        activeTools(this.config),
      );
      const request = { reason: "manual" as const, signal, instructions: options.instructions, fixedTokens };
      return runCompaction(this.operationHost, request);
    });
  }

  /**
   * Moves the active leaf to `targetId` (idle only; phase `branch`; `null`: the empty branch).
   * With `summary` (or `summarize: true`, by the model) the abandoned branch is recorded as a
   * `branch_summary` after the target; `beforeBranch` may cancel or supply it. Rejects with
   * `invalid_argument` (before taking the phase), `compaction`, `hook` or `aborted`, having written nothing.
   */
  navigateTree(targetId: string | null, options: NavigateOptions = {}): Promise<NavigateOutcome> {
    try {
      checkTarget(this.operationHost, targetId);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.runOperation("branch", "navigateTree", (signal) =>
      runNavigation(this.operationHost, targetId, options, signal),
    );
  }

  /** Waits for idle and for plugin calls in flight (at most `timeoutMs`); returns those still running. */
  async close(timeoutMs = 5_000): Promise<readonly InFlightCall[]> {
    await this.gate.waitForIdle();
    return this.driver.drain(timeoutMs);
  }

  // ---- internals ----

  /** A structural operation other than a run: phase, abort controller, settle (pending writes flush). */
  private async runOperation<T>(
    phase: "compaction" | "branch",
    name: string,
    body: (signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    this.gate.take(phase, name);
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
    let settleFailure = this.writer.settle();
    if (settleFailure instanceof Promise) settleFailure = await settleFailure;
    await this.gate.finish();
    if (failure !== undefined) throw failure;
    if (settleFailure !== undefined) throw settleFailure;
    return result as T;
  }
}
