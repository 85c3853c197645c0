/**
 * What the `rein hook` commands share: the agent argument, the `--timeout` and
 * `--on-failure` options, and where a config's hook decisions are recorded.
 * Every bad value is a usage error naming the option.
 */
import { sessionStore } from "../agent/build-agent.js";
import type { LoadedConfig } from "../config/load-config.js";
import { usageError } from "../errors.js";
import { AGENTS, type AgentName, type OnFailure } from "./agent-protocols.js";
import { type AuditWriter, type AuditWriterOptions, auditWriter } from "./hook-audit.js";

export function onFailureOf(value: string | undefined): OnFailure {
  if (value === undefined || value === "block" || value === "continue") return value ?? "block";
  throw usageError(`--on-failure ${value}: expected block or continue`);
}

export function agentName(value: string): AgentName {
  if ((AGENTS as readonly string[]).includes(value)) return value as AgentName;
  throw usageError(`unknown agent "${value}"`, `agents: ${AGENTS.join(", ")}`);
}

export function timeoutOf(value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const ms = Number(value);
  if (!Number.isInteger(ms) || ms <= 0)
    throw usageError(`--timeout ${value}: expected a positive number of milliseconds`);
  return ms;
}

/**
 * The audit of a config's sessions: its JSONL directory. A PostgreSQL session
 * store is not written by hooks yet (the README says so): no audit then.
 */
export function auditFor(loaded: LoadedConfig, options: AuditWriterOptions = {}): AuditWriter | undefined {
  return loaded.config.session?.store === "postgres" ? undefined : auditWriter(sessionStore(loaded), options);
}
