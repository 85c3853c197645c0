/**
 * Child agents from plugin code: `startChild(rein, options)` starts a harness over a
 * child session of the plugin's harness (its tree, linked to a tool call), whose
 * decision stack is the parent's plus narrowing (see @rein/harness README, "Child
 * agents"); `recoverChildren(rein)` repairs the child sessions a crash left open.
 *
 * Invariant: a `rein` object reaches only its own harness's children: the harness
 * is the one the plugin host bound it to, never one named by the caller.
 */
import {
  type AgentHarness,
  type RecoveryReport,
  recoverChildren as recoverChildrenOf,
  type StartChildOptions,
  startChild as startChildOf,
} from "@rein/harness";
import { invalidPlugin } from "./errors.js";
import { harnessOfRein, sharedService } from "./harness-services.js";

export type { StartChildOptions };

function parentOf(rein: object, what: string): AgentHarness {
  const harness = harnessOfRein(rein);
  if (!harness) throw invalidPlugin(`${what}: expected the rein object a plugin's setup received`);
  return harness;
}

/** Starts a child agent of the plugin's harness (idle: call `prompt()`; close it and its session after). */
export function startChild(rein: object, options: StartChildOptions): AgentHarness {
  return startChildOf(parentOf(rein, "startChild"), options);
}

/** Recovers the child sessions of the plugin's harness that a crash left open; see `AgentHarness.recoverChildren`. */
export function recoverChildren(rein: object): { sessionId: string; report: RecoveryReport }[] {
  return recoverChildrenOf(parentOf(rein, "recoverChildren"));
}

/**
 * A named way to start a child (a `task` agent config): `startChild` plus that
 * config's narrowing. Tool packs register theirs (`childConfigs(rein).set(...)`) so
 * `rein check --as-child <name>` and `rein replay` decide a call as such a child would.
 */
export interface ChildConfig {
  /** The plugin that registered it. */
  readonly plugin: string;
  start(options: StartChildOptions): AgentHarness;
}

const CHILD_CONFIGS = Symbol("rein.child-configs");

/** The harness's child configs by name (one table per harness). `owner`: a `rein` object or a harness. */
export function childConfigs(owner: object): Map<string, ChildConfig> {
  return sharedService(owner, CHILD_CONFIGS, () => new Map<string, ChildConfig>());
}
