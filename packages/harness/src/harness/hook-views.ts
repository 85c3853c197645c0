/**
 * What hooks see of a harness: a read-only view of the live config, a session
 * facade whose writes obey the pending-write rule, queue operations, and the
 * run's signal and ids (spec "Hook context"). Never the raw session or config.
 *
 * Invariant: views read through to the live values on every access (getters),
 * so a tap always sees the current config, never a copy taken at construction.
 */
import type {
  ConfigView,
  HookContext,
  QueueControl,
  SessionFacade,
  ToolCallInfo,
  ToolHookContext,
  WritableEntry,
} from "../hooks/hook-types.js";
import type { Session } from "../session/session.js";
import type { LiveConfig } from "./live-config.js";

export interface HookViewSource {
  readonly session: Session;
  /** The live config object (setters replace its fields, never the object). */
  readonly config: LiveConfig;
  activeToolNames(): readonly string[];
  runId(): string | undefined;
  turnId(): string | undefined;
  queues: QueueControl;
  /** A session write through the harness (pending while busy). */
  append(input: WritableEntry): void;
  /** Ends the current run at once (see `HookContext.stopRun`). */
  stopRun(reason: string): void;
}

export class HookViews {
  readonly configView: ConfigView;
  readonly sessionFacade: SessionFacade;

  constructor(private readonly source: HookViewSource) {
    this.configView = configView(source);
    this.sessionFacade = sessionFacade(source);
  }

  context(signal: AbortSignal): HookContext {
    const source = this.source;
    const agent = source.config.agent;
    return {
      config: this.configView,
      ...(agent === undefined ? {} : { agent }),
      signal,
      get runId() {
        return source.runId();
      },
      get turnId() {
        return source.turnId();
      },
      queues: source.queues,
      session: this.sessionFacade,
      stopRun: source.stopRun,
    };
  }

  toolContext(signal: AbortSignal, call: ToolCallInfo): ToolHookContext {
    return Object.assign(this.context(signal), { call });
  }
}

function configView(source: HookViewSource): ConfigView {
  const config = source.config;
  return {
    get model() {
      return config.model;
    },
    get thinkingLevel() {
      return config.thinkingLevel;
    },
    get tools() {
      return config.tools;
    },
    get activeToolNames() {
      return source.activeToolNames();
    },
    get resources() {
      return config.resources;
    },
    get requestOptions() {
      return config.requestOptions;
    },
    get cwd() {
      return config.cwd;
    },
    get sessionId() {
      return source.session.id;
    },
    get onUnanswered() {
      return config.onUnanswered;
    },
  };
}

function sessionFacade(source: HookViewSource): SessionFacade {
  const session = source.session;
  return {
    get id() {
      return session.id;
    },
    get leafId() {
      return session.leafId;
    },
    entries: () => session.entries(),
    getEntry: (id) => session.getEntry(id),
    buildContext: () => session.buildContext(),
    append: (input) => source.append(input),
  };
}
