/**
 * `startChild` and `recoverChildren`: the entry points of child agents (see
 * start-child.ts for what a child inherits, child-sessions.ts for where it lives).
 */
import { invalidArgument } from "../errors.js";
import { AgentHarness } from "../harness/agent-harness.js";
import type { RecoveryReport } from "../harness/recovery.js";
import type { AgentInfo } from "../hooks/hook-types.js";
import { JsonlStorage } from "../session/jsonl-storage.js";
import { Session } from "../session/session.js";
import { childSessionFiles, createChildSession } from "./child-sessions.js";
import { parentInternals } from "./parent-port.js";
import {
  agentPath,
  type ChildAgentOptions,
  childHarnessOptions,
  forwardEvents,
  inheritTaps,
  narrowOnly,
  type ParentPort,
} from "./start-child.js";

/** What `startChild` takes: the child options; the session is made beside the parent's unless given. */
export type StartChildOptions = Omit<ChildAgentOptions, "session"> & { session?: Session };

/** Set in a child agent: who it is (what its taps see as `context.agent`). */
export function agentOf(harness: AgentHarness): AgentInfo | undefined {
  return parentInternals(harness)?.config.agent;
}

function portOf(parent: AgentHarness): ParentPort {
  const internals = parentInternals(parent);
  if (!(parent instanceof AgentHarness) || internals === undefined) {
    throw invalidArgument("startChild: the parent must be an AgentHarness");
  }
  const { config } = internals;
  return {
    session: parent.session,
    hooks: parent.hooks,
    model: config.model,
    thinkingLevel: config.thinkingLevel,
    tools: config.tools,
    activeToolNames: parent.activeToolNames,
    systemPrompt: config.systemPrompt,
    resources: config.resources,
    defaultToolVerdict: config.defaultToolVerdict,
    failurePolicy: internals.failurePolicy,
    streamFn: internals.streamFn,
    cwd: config.cwd,
    decisionTrail: config.decisionTrail,
    runId: parent.hookContext().runId,
    agent: config.agent,
    emit: internals.emit,
  };
}

/**
 * Starts a child agent of `parent`: a harness over a child session of the parent's
 * tree (made beside it unless `session` is given), linked to `toolCallId`, whose
 * decision stack is the parent's taps plus whatever the caller adds to
 * `child.hooks` (reins only tighten). The child is idle: call `prompt()`; close it
 * and its session when done. Its events reach the parent's listeners as
 * `child_event`. A wider `activeTools` is an `invalid_argument` naming the tools.
 */
export function startChild(parent: AgentHarness, options: StartChildOptions): AgentHarness {
  const port = portOf(parent);
  const path = options.path ?? agentPath(port, options.name);
  if (typeof path !== "string" || path === "")
    throw invalidArgument("startChild: path must be a non-empty string");
  if (typeof options.toolCallId !== "string" || options.toolCallId === "")
    throw invalidArgument("startChild: toolCallId must name the parent's tool call");
  const session =
    options.session ??
    createChildSession(parent.session, {
      sessionId: parent.session.id,
      toolCallId: options.toolCallId,
      agentPath: path,
    });
  let child: AgentHarness;
  try {
    child = new AgentHarness(childHarnessOptions(port, { ...options, session }, path));
  } catch (error) {
    if (options.session === undefined) session.close();
    throw error;
  }
  // Narrowing first: Tapable's register interceptor also rewrites taps already there.
  narrowOnly(child.hooks);
  inheritTaps(parent.hooks, child.hooks);
  forwardEvents(child, port, { path, sessionId: session.id, toolCallId: options.toolCallId });
  return child;
}

/**
 * Recovers the child sessions of `parent` a crash left open (JSONL sessions only):
 * each is opened, repaired as a harness opening it would (interrupted tool calls
 * get a result; none is run again), its own children recovered, and closed.
 * Returns the reports of those that needed repair, by child session id.
 */
export function recoverChildren(parent: AgentHarness): { sessionId: string; report: RecoveryReport }[] {
  const reports: { sessionId: string; report: RecoveryReport }[] = [];
  for (const file of childSessionFiles(parent.session.storage.path, parent.session.id)) {
    const session = Session.open(JsonlStorage.open(file));
    try {
      const child = new AgentHarness({ session, model: parent.model, tools: parent.tools });
      if (child.recovery !== undefined) reports.push({ sessionId: session.id, report: child.recovery });
      reports.push(...recoverChildren(child));
    } finally {
      session.close();
    }
  }
  return reports;
}
