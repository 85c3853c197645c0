/** `rein sessions list | show | tree | fork`. */

import { resolve } from "node:path";
import type { Session, SessionSummary } from "@rein/harness";
import { openReadOnly } from "../agent/session-access.js";
import { type SessionBackendPort, sessionBackend } from "../agent/session-backend.js";
import { loadConfig } from "../config/load-config.js";
import { ExitCode, sessionNotFound } from "../errors.js";
import { withChildSessions } from "../export/child-sessions.js";
import { transcript } from "../export/transcript.js";
import type { GlobalOptions } from "../globals.js";
import { trailLines } from "../ui/decision-trail.js";
import { drawTree } from "../ui/session-tree.js";
import { shorten, terminal } from "../ui/terminal.js";
import { formatUsage, sessionUsage, type UsageTotals } from "../usage/usage-totals.js";

export async function listSessions(options: { json?: boolean }, globals: GlobalOptions): Promise<number> {
  const loaded = await loadConfig({ cwd: globals.cwd, configPath: globals.config });
  const backend = await sessionBackend(loaded);
  const sessions = await Promise.all((await backend.list()).map((summary) => withUsage(backend, summary)));
  const term = terminal();
  if (options.json) {
    for (const s of sessions) term.out.write(`${JSON.stringify(s)}\n`);
    return ExitCode.ok;
  }
  if (sessions.length === 0) {
    term.err.write("no sessions yet\n");
    return ExitCode.ok;
  }
  for (const s of sessions) {
    const when = new Date(s.modifiedAt).toISOString().replace("T", " ").slice(0, 16);
    const title = s.error
      ? term.co.red(`unreadable: ${s.error}`)
      : shorten(s.name ?? s.firstUserText ?? "", 60);
    term.out.write(
      `${term.co.bold(s.id.slice(0, 8))}  ${when}  ${String(s.messageCount).padStart(4)} msgs  ${(s.usage ? formatUsage(s.usage) : "").padEnd(28)}  ${title}\n`,
    );
  }
  return ExitCode.ok;
}

/** A listed session with its usage totals (read again: the store's summary has no usage). */
async function withUsage(
  backend: SessionBackendPort,
  summary: SessionSummary,
): Promise<SessionSummary & { usage?: UsageTotals }> {
  if (summary.error) return summary;
  let session: Session | undefined;
  try {
    session = await backend.openReadOnly(summary.id);
    return { ...summary, usage: sessionUsage(session.entries(), session.header.forkedFrom) };
  } catch {
    return summary; // changed or removed since it was listed
  } finally {
    await session?.close();
  }
}

export async function showSession(
  id: string,
  options: { json?: boolean },
  globals: GlobalOptions,
): Promise<number> {
  const session = await openReadOnly(id, globals);
  const term = terminal();
  try {
    if (options.json) {
      for (const entry of session.entries()) term.out.write(`${JSON.stringify(entry)}\n`);
      return ExitCode.ok;
    }
    const { co } = term;
    term.out.write(`${co.bold(`session ${session.id}`)}${session.name ? ` · ${session.name}` : ""}\n`);
    term.out.write(
      `${co.dim(`usage ${formatUsage(sessionUsage(session.entries(), session.header.forkedFrom))}`)}\n\n`,
    );
    writeTranscript(session, (line) => term.out.write(line), co, "");
    return ExitCode.ok;
  } finally {
    session.close();
  }
}

type Colors = ReturnType<typeof terminal>["co"];

/** A session's transcript; a child agent's, indented under the call that started it. */
function writeTranscript(session: Session, write: (text: string) => void, co: Colors, indent: string): void {
  const out = (text: string) => write(text.replace(/^(?=.)/gm, indent));
  withChildSessions(session, (children) => {
    for (const item of transcript(session)) {
      if (item.kind === "user") out(`${co.cyan("user")}  ${item.text}\n\n`);
      else if (item.kind === "note") out(`${co.dim(`· ${shorten(item.text, 100)}`)}\n\n`);
      else {
        if (item.text) out(`${co.green("assistant")}  ${item.text}\n`);
        if (item.error) out(`${co.red(`assistant error: ${item.error}`)}\n`);
        for (const call of item.toolCalls) {
          const verdict = call.decision
            ? `${call.decision.decision === "deny" ? co.red("denied") : co.green("allowed")} by ${call.decision.by}: ${call.decision.reason}`
            : "";
          out(`  → ${co.bold(call.name)} ${shorten(call.args, 80)}\n`);
          if (verdict) out(`    ${verdict}\n`);
          for (const line of trailLines(call.decision?.trail ?? [])) out(`${co.dim(`      ${line}`)}\n`);
          for (const child of children.of(call.id)) {
            out(`    ${co.bold(`⤷ ${child.link.agentPath}`)} ${co.dim(`session ${child.session.id}`)}\n`);
            writeTranscript(child.session, out, co, "    │ ");
          }
          if (call.result)
            out(
              `    ${call.result.isError ? co.red("✗") : co.green("✓")} ${shorten(call.result.text, 100)}\n`,
            );
        }
        out("\n");
      }
    }
  });
}

export async function treeSession(id: string, globals: GlobalOptions): Promise<number> {
  const session = await openReadOnly(id, globals);
  try {
    const term = terminal();
    for (const line of drawTree(session, term.co)) term.out.write(`${line}\n`);
    return ExitCode.ok;
  } finally {
    session.close();
  }
}

export async function forkSession(
  id: string,
  entryId: string | undefined,
  globals: GlobalOptions,
): Promise<number> {
  const loaded = await loadConfig({ cwd: globals.cwd, configPath: globals.config });
  const store = await sessionBackend(loaded);
  let at = entryId;
  if (!at) {
    const source = await openReadOnly(id, globals);
    at = source.leafId ?? undefined;
    source.close();
    if (!at) throw sessionNotFound(`session "${id}" is empty: nothing to fork`);
  }
  let forked: Session;
  try {
    forked = await store.fork(id, at);
  } catch (error) {
    throw sessionNotFound(`cannot fork "${id}" at "${at}": ${(error as Error).message}`, error);
  }
  terminal().out.write(`${forked.id}\n`);
  await forked.close();
  return ExitCode.ok;
}

/** `rein sessions import <file.jsonl>`: copies a JSONL session into the configured store, same id. */
export async function importSession(file: string, globals: GlobalOptions): Promise<number> {
  const loaded = await loadConfig({ cwd: globals.cwd, configPath: globals.config });
  const store = await sessionBackend(loaded);
  let imported: { id: string; entries: number; warnings: string[] };
  try {
    imported = await store.importJsonl(resolve(globals.cwd, file));
  } catch (error) {
    throw sessionNotFound(`cannot import ${file} into ${store.where}: ${(error as Error).message}`, error);
  }
  const term = terminal();
  for (const warning of imported.warnings) term.err.write(`warning: ${warning}\n`);
  term.out.write(`${imported.id}\n`);
  term.err.write(`imported ${imported.entries} entries into ${store.kind} (${store.where})\n`);
  return ExitCode.ok;
}
