/**
 * Usage and cost totals, summed from what the session records: every assistant
 * message's pi-ai `usage` (tokens, and the cost pi-ai computed from the model's
 * prices). Invariant: a total is exactly the sum of the recorded figures, in
 * file order, so `sessions list`, exports, `--json` and the last line agree with
 * the session file. Not counted: compaction and branch summaries (the harness
 * records no usage for them) and, in a fork, the copied branch (its usage was
 * spent, and is counted, in the source session).
 */
import type { AgentMessage, Session, SessionEntry } from "@rein/harness";

export interface UsageTotals {
  /** Assistant messages counted (requests answered, errors included). */
  requests: number;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens: number;
  /** In the provider's currency (pi-ai: dollars), from the model's prices per million tokens. */
  cost: { input: number; output: number; cacheRead: number; cacheWrite: number; total: number };
}

export const emptyUsage = (): UsageTotals => ({
  requests: 0,
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
});

const num = (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? value : 0);

/** Adds an assistant message's usage to `totals` (other messages add nothing). */
export function addUsage(totals: UsageTotals, message: AgentMessage): void {
  if (message.role !== "assistant") return;
  totals.requests++;
  const usage = message.usage as Partial<AssistantUsage> | undefined;
  if (!usage) return;
  totals.input += num(usage.input);
  totals.output += num(usage.output);
  totals.cacheRead += num(usage.cacheRead);
  totals.cacheWrite += num(usage.cacheWrite);
  totals.totalTokens += num(usage.totalTokens);
  for (const key of ["input", "output", "cacheRead", "cacheWrite", "total"] as const) {
    totals.cost[key] += num(usage.cost?.[key]);
  }
}

type AssistantUsage = Extract<AgentMessage, { role: "assistant" }>["usage"];

/** The entries a fork copied from its source: the branch from the root to the fork point. */
function copiedEntries(entries: readonly SessionEntry[], forkedAt: string | undefined): Set<string> {
  const copied = new Set<string>();
  if (forkedAt === undefined) return copied;
  const parents = new Map(entries.map((entry) => [entry.id, entry.parentId]));
  for (let id: string | null | undefined = forkedAt; id; id = parents.get(id)) copied.add(id);
  return copied;
}

/** Totals over every branch of a session (abandoned branches were paid for too). */
export function sessionUsage(
  entries: readonly SessionEntry[],
  forkedFrom?: { entryId: string } | undefined,
): UsageTotals {
  const totals = emptyUsage();
  const copied = copiedEntries(entries, forkedFrom?.entryId);
  for (const entry of entries) {
    if (entry.type === "message" && !copied.has(entry.id)) addUsage(totals, entry.message);
  }
  return totals;
}

/** A point in a session to count a run's usage from (`runUsage`). */
export interface UsageMark {
  readonly entries: number;
}

export const usageMark = (session: Session): UsageMark => ({ entries: session.entries().length });

/** A run's totals: the entries the session recorded since `mark` (so they sum the file too). */
export function runUsage(session: Session, mark: UsageMark): UsageTotals {
  return sessionUsage(session.entries().slice(mark.entries));
}

/** Both totals, as the `--json` end event and `/cost` report them. */
export function usageReport(session: Session, mark: UsageMark) {
  return {
    run: runUsage(session, mark),
    session: sessionUsage(session.entries(), session.header.forkedFrom),
  };
}

/** `1,234,567`: as `toLocaleString("en-US")` prints it, without loading ICU's locale data (~0.1 s, after the last response). */
export function tokens(n: number): string {
  if (!Number.isInteger(n)) return String(n);
  const digits = String(Math.abs(n));
  let out = digits.slice(0, digits.length % 3 || 3);
  for (let at = out.length; at < digits.length; at += 3) out += `,${digits.slice(at, at + 3)}`;
  return n < 0 ? `-${out}` : out;
}

/** `1,234 in (800 cached) · 340 out · $0.0042`; the cost only when the model has prices. */
export function formatUsage(totals: UsageTotals): string {
  const cached = totals.cacheRead + totals.cacheWrite;
  const parts = [
    `${tokens(totals.input + cached)} in${totals.cacheRead > 0 ? ` (${tokens(totals.cacheRead)} cached)` : ""}`,
    `${tokens(totals.output)} out`,
  ];
  if (totals.cost.total > 0) parts.push(`$${totals.cost.total.toFixed(4)}`);
  return parts.join(" · ");
}
