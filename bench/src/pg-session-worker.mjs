/**
 * One PostgreSQL session case in a fresh process (like session-worker.mjs):
 *
 *   node pg-session-worker.mjs append <burst|awaited> <entries> <url>
 *   node pg-session-worker.mjs reopen <url> <session id>
 *
 * `burst` appends every message and then awaits `whenStored()` (writes queued
 * meanwhile leave together); `awaited` awaits each append, the harness's pattern
 * when it broadcasts every message. Prints one JSON line: { id?, ms, messages?, maxRssMiB }.
 * `ms` times only the operation (connect and lock included, not node start-up).
 */

import { transcriptMessage } from "./session-worker.mjs";
import { now } from "./stats.mjs";

const [mode, arg1, arg2, arg3] = process.argv.slice(2);
const { Session, createSessionHeader } = await import("@rein/harness");
const { PostgresStorage } = await import("@rein/store-postgres");

async function append(style, entries, url) {
  const messages = Array.from({ length: entries }, (_, i) => transcriptMessage(i));
  const start = now();
  const session = Session.create(await PostgresStorage.create(url, createSessionHeader()));
  for (const message of messages) {
    session.appendMessage(message);
    if (style === "awaited") await session.whenStored();
  }
  await session.whenStored();
  await session.close();
  return { id: session.id, ms: now() - start };
}

async function reopen(url, id) {
  const start = now();
  const session = Session.open(await PostgresStorage.open(url, id));
  const context = session.buildContext();
  const ms = now() - start;
  await session.close();
  return { ms, messages: context.messages.length };
}

const result = mode === "append" ? await append(arg1, Number(arg2), arg3) : await reopen(arg1, arg2);
result.maxRssMiB = process.resourceUsage().maxRSS / 1024;
process.stdout.write(`${JSON.stringify(result)}\n`);
