/**
 * Read-only views of a harness built from its public getters: the config view,
 * the session facade and hook contexts, shaped exactly like the ones the harness
 * hands its own taps (`ConfigView`, `SessionFacade`, `HookContext`).
 *
 * Invariant: nothing here can write around the harness. Config is read through
 * getters (always live, never a stale copy); session writes go through
 * `harness.appendEntry`, so they obey the pending-write rule.
 */
import type {
  AgentHarness,
  ConfigView,
  HookContext,
  SessionFacade,
  ToolCallInfo,
  ToolHookContext,
} from "@rein/harness";

const views = new WeakMap<AgentHarness, { config: ConfigView; session: SessionFacade }>();

function build(harness: AgentHarness) {
  const config: ConfigView = Object.freeze({
    get model() {
      return harness.model;
    },
    get thinkingLevel() {
      return harness.thinkingLevel;
    },
    get tools() {
      return harness.tools;
    },
    get activeToolNames() {
      return harness.activeToolNames;
    },
    get resources() {
      return harness.resources;
    },
    get requestOptions() {
      return harness.requestOptions;
    },
    get cwd() {
      return harness.cwd;
    },
    get sessionId() {
      return harness.sessionId;
    },
  });
  const session: SessionFacade = Object.freeze({
    get id() {
      return harness.session.id;
    },
    get leafId() {
      return harness.session.leafId;
    },
    entries: () => harness.session.entries(),
    getEntry: (id: string) => harness.session.getEntry(id),
    buildContext: () => harness.session.buildContext(),
    append: (input: Parameters<SessionFacade["append"]>[0]) => harness.appendEntry(input),
  });
  return { config, session };
}

function viewsOf(harness: AgentHarness) {
  let found = views.get(harness);
  if (!found) {
    found = build(harness);
    views.set(harness, found);
  }
  return found;
}

/** The live config, read-only. */
export const configView = (harness: AgentHarness): ConfigView => viewsOf(harness).config;

/** The session as plugins see it: reads, and writes that obey the pending-write rule. */
export const sessionFacade = (harness: AgentHarness): SessionFacade => viewsOf(harness).session;

/** A hook context outside any run (no run or turn id), e.g. to evaluate a tool call offline. */
export function hookContext(harness: AgentHarness, signal: AbortSignal): HookContext {
  return {
    config: configView(harness),
    signal,
    runId: undefined,
    turnId: undefined,
    queues: {
      steer: (message) => harness.steer(message),
      followUp: (message) => harness.followUp(message),
      nextTurn: (message) => harness.nextTurn(message),
    },
    session: sessionFacade(harness),
  };
}

export function toolHookContext(
  harness: AgentHarness,
  signal: AbortSignal,
  call: ToolCallInfo,
): ToolHookContext {
  return { ...hookContext(harness, signal), call };
}
