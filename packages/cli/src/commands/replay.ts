/**
 * `rein replay <session>`: every recorded tool call of a session through the
 * current config's stack, with no model and no tool executed. Exit 1 when any
 * verdict changed, so CI can guard policy changes.
 *
 * By default the replay has state (replay/stateful.ts): the recorded runs go
 * through the harness's run loop in order, so guard budgets, session grants and
 * permission answers build up as they did, and an unchanged stack replays with
 * zero changes. `--isolated` re-decides each call alone through `toolCall` +
 * `toolGate` (what the call would get in a fresh session). `--coverage` is
 * replay/coverage.ts. Verdicts are compared at the gate: a recorded ask
 * (answered, or denied because nobody answered) is `ask`.
 */
import { childSessionFiles, type DecisionRecord, type Session, type SessionHeader } from "@rein/harness";
import { evaluateToolCall } from "@rein/sdk";
import { type Agent, inspectionAgent } from "../agent/build-agent.js";
import { openReadOnly } from "../agent/session-access.js";
import { sessionBackend } from "../agent/session-backend.js";
import { loadConfig } from "../config/load-config.js";
import { ExitCode, usageError } from "../errors.js";
import { type DecisionStep, trailOf } from "../export/decision-step.js";
import type { GlobalOptions } from "../globals.js";
import { childReplayLines } from "../replay/children.js";
import { coverageOf, coverageText, type ReplayedSession } from "../replay/coverage.js";
import {
  type RecordedCall,
  type RecordedSession,
  readRecorded,
  recordedVerdict,
  type Verdict,
  wasAsked,
} from "../replay/recorded.js";
import { replayWithState } from "../replay/stateful.js";
import { reserveStdout } from "../ui/json-stdout.js";
import { shorten, terminal } from "../ui/terminal.js";

export interface ReplayLine {
  index: number;
  /** Set on a child agent's call: its agent path (`task#1 of run r1`). */
  agent?: string;
  /** Set on a child agent's call: its session. */
  childSessionId?: string;
  entryId: string;
  toolCallId: string;
  tool: string;
  args: unknown;
  recorded: Verdict;
  recordedBy?: string;
  /** For a recorded ask: what the answer (or its absence) made of it. */
  recordedOutcome?: "allow" | "deny";
  /** `not reached`: the replayed run stopped before this call (replay with state only). */
  now: Verdict | "not reached";
  /** For an ask now (replay with state): what the answer made of it. */
  nowOutcome?: "allow" | "deny";
  by: string;
  reason: string;
  changed: boolean;
  /** The replayed decision's trail, when the stack records trails. */
  trail?: DecisionStep[];
}

export interface ReplayOptions {
  json?: boolean;
  isolated?: boolean;
  /** Report rule coverage over the sessions instead of changes. */
  coverage?: boolean;
  /** With `coverage`: every session in the store. */
  all?: boolean;
  /** With `coverage`: exit 1 when a call was decided by a default verdict. */
  failOnDefault?: boolean;
}

function lineFor(index: number, call: RecordedCall): Omit<ReplayLine, "now" | "by" | "reason" | "changed"> {
  const recorded = recordedVerdict(call.decision);
  const line: Omit<ReplayLine, "now" | "by" | "reason" | "changed"> = {
    index,
    entryId: call.entryId,
    toolCallId: call.toolCallId,
    tool: call.tool,
    args: call.args,
    recorded,
  };
  if (call.decision?.by) line.recordedBy = call.decision.by;
  if (call.decision && recorded === "ask") line.recordedOutcome = call.decision.decision;
  return line;
}

const isChanged = (recorded: Verdict, now: ReplayLine["now"]) => recorded !== "unknown" && recorded !== now;

async function isolatedLines(recorded: RecordedSession, agent: Agent): Promise<ReplayLine[]> {
  const lines: ReplayLine[] = [];
  for (const call of recorded.calls) {
    const evaluation = await evaluateToolCall(
      agent.harness,
      { name: call.tool, args: call.args, id: call.toolCallId },
      { skipPermission: true },
    );
    const base = lineFor(lines.length + 1, call);
    lines.push({
      ...base,
      now: evaluation.decision,
      by: evaluation.by,
      reason: evaluation.reason,
      changed: isChanged(base.recorded, evaluation.decision),
    });
  }
  return lines;
}

/** `decisions`: per tool call id, in order; each recorded call takes the next one of its id. */
function statefulLines(recorded: RecordedSession, decisions: Map<string, DecisionRecord[]>): ReplayLine[] {
  return recorded.calls.map((call, i) => {
    const base = lineFor(i + 1, call);
    const now = decisions.get(call.toolCallId)?.shift();
    if (!now) {
      return {
        ...base,
        now: "not reached",
        by: "replay",
        reason: "the replayed run stopped before this call",
        changed: base.recorded !== "unknown",
      };
    }
    const asked = wasAsked(now);
    const line: ReplayLine = {
      ...base,
      now: asked ? "ask" : now.decision,
      by: now.askedBy ?? now.by,
      reason: now.reason,
      changed: isChanged(base.recorded, asked ? "ask" : now.decision),
    };
    if (asked) line.nowOutcome = now.decision;
    const trail = trailOf(now);
    if (trail) line.trail = trail;
    return line;
  });
}

interface SessionReplay {
  lines: ReplayLine[];
  overran: number[];
  stoppedInRecord: number[];
  /** The rules the replayed stack declares (`<plugin>:<rule>`). */
  declared: readonly string[];
}

/** One session replayed, with state or `--isolated`. */
async function replaySession(id: string, isolated: boolean, globals: GlobalOptions): Promise<SessionReplay> {
  const session = await openReadOnly(id, globals);
  let recorded: RecordedSession;
  let header: SessionHeader;
  try {
    recorded = readRecorded(session);
    header = session.header;
    const replay = await replayParent(recorded, header, isolated, globals);
    replay.lines.push(...(await replayChildren(session, replay.lines.length, globals)));
    return replay;
  } finally {
    session.close();
  }
}

async function replayParent(
  recorded: RecordedSession,
  header: SessionHeader,
  isolated: boolean,
  globals: GlobalOptions,
): Promise<SessionReplay> {
  if (isolated) {
    const agent = await inspectionAgent(globals);
    try {
      const declared = agent.host.plugins.flatMap((plugin) => plugin.rules);
      return { lines: await isolatedLines(recorded, agent), overran: [], stoppedInRecord: [], declared };
    } finally {
      await agent.dispose();
    }
  }
  const outcome = await replayWithState(recorded, header, globals);
  return {
    lines: statefulLines(
      recorded,
      new Map([...outcome.decisions].map(([callId, replayed]) => [callId, replayed.map((r) => r.decision)])),
    ),
    overran: outcome.overran,
    stoppedInRecord: outcome.stoppedInRecord,
    declared: outcome.declared,
  };
}

/** The child agents' calls (replay/children.ts), numbered after the parent's; none without children. */
async function replayChildren(
  session: Session,
  after: number,
  globals: GlobalOptions,
): Promise<ReplayLine[]> {
  if (childSessionFiles(session.storage.path, session.id).length === 0) return [];
  const agent = await inspectionAgent(globals);
  try {
    const lines = await childReplayLines(session, agent);
    return lines.map((line, i) => ({ index: after + i + 1, ...line }));
  } finally {
    await agent.dispose();
  }
}

export async function replayCommand(
  ids: string[],
  options: ReplayOptions,
  globals: GlobalOptions,
): Promise<number> {
  if (options.coverage) return coverageCommand(ids, options, globals);
  const [id, ...more] = ids;
  if (id === undefined || more.length > 0) {
    throw usageError(
      `rein replay takes one session (got ${ids.length}); several sessions are for --coverage`,
    );
  }
  // Plugins load and gates run with stdout reserved: their console output goes to stderr.
  const json = options.json ? reserveStdout() : undefined;
  const term = terminal();
  let replay: SessionReplay;
  try {
    replay = await replaySession(id, options.isolated === true, globals);
  } finally {
    json?.release();
  }
  const { lines, overran, stoppedInRecord } = replay;
  const changed = lines.filter((line) => line.changed).length;
  // Notes about whole runs go to stderr in both modes (stdout stays one line per call).
  for (const run of overran) {
    term.err.write(`run ${run} went on past the record (the current stack let it continue)\n`);
  }
  for (const run of stoppedInRecord) {
    term.err.write(
      `run ${run} went on past the point where the record stops it (the user, or a plugin's stop that did not happen now); not counted as a change\n`,
    );
  }
  if (options.json) {
    for (const line of lines) term.out.write(`${JSON.stringify(line)}\n`);
  } else {
    const { co } = term;
    for (const line of lines) {
      const mark = line.changed ? co.red(co.bold("CHANGED ")) : "        ";
      const then = line.recordedOutcome ? ` (then ${line.recordedOutcome})` : "";
      const nowThen = line.nowOutcome ? ` (then ${line.nowOutcome})` : "";
      const who = line.agent ? `${co.dim(`[${line.agent}]`)} ` : "";
      term.out.write(
        `${mark}#${line.index} ${who}${co.bold(line.tool)} ${shorten(line.args, 50)}  recorded ${line.recorded}${then} → now ${line.now === "deny" ? co.red(line.now) : line.now}${nowThen} by ${line.by}: ${shorten(line.reason, 80)}\n`,
      );
    }
    term.err.write(
      `${lines.length} tool call${lines.length === 1 ? "" : "s"} replayed${options.isolated ? " (isolated)" : ""}, ${changed} changed\n`,
    );
  }
  return changed > 0 || overran.length > 0 ? ExitCode.failed : ExitCode.ok;
}

/** `--coverage`: every session replayed (each in a fresh stack), hits tallied over all of them. */
async function coverageCommand(
  ids: string[],
  options: ReplayOptions,
  globals: GlobalOptions,
): Promise<number> {
  const sessions = options.all ? await allSessionIds(globals) : ids;
  if (sessions.length === 0) {
    throw usageError(
      options.all
        ? "--all: there are no recorded sessions"
        : "--coverage needs sessions (ids, prefixes or .jsonl files), or --all",
    );
  }
  const json = options.json ? reserveStdout() : undefined;
  const replayed: ReplayedSession[] = [];
  let declared: readonly string[] = [];
  try {
    for (const id of sessions) {
      const replay = await replaySession(id, options.isolated === true, globals);
      declared = replay.declared;
      replayed.push({ session: id, lines: replay.lines });
    }
  } finally {
    json?.release();
  }
  const report = coverageOf(declared, replayed);
  const term = terminal();
  term.out.write(options.json ? `${JSON.stringify(report, null, 2)}\n` : coverageText(report, shorten));
  return options.failOnDefault && report.byDefault.length > 0 ? ExitCode.failed : ExitCode.ok;
}

async function allSessionIds(globals: GlobalOptions): Promise<string[]> {
  const loaded = await loadConfig({ cwd: globals.cwd, configPath: globals.config });
  return (await (await sessionBackend(loaded)).list())
    .sort((a, b) => a.createdAt - b.createdAt)
    .map((summary) => summary.id);
}
