/**
 * One session case in a fresh process, so peak RSS belongs to that case alone.
 *
 *   node session-worker.mjs append <rein|pi> <entries> <dir>
 *   node session-worker.mjs reopen <rein|pi|floor> <file>
 *
 * `floor` is the physical floor of any JSONL reopen: read the file and JSON.parse
 * every line, keeping the values (as any reopen must), and nothing else.
 *
 * Prints one JSON line: { file?, ms, messages?, maxRssMiB, baseRssMiB }.
 * `ms` times only the operation (not node start-up or module loading);
 * `baseRssMiB` is the RSS after imports, before the operation.
 */
import fs from "node:fs";
import path from "node:path";
import { collect, now } from "./stats.mjs";

const [mode, impl, arg, dir] = process.argv.slice(2);

/** pi's session layer, imported on its own (the package index would load its whole CLI and inflate RSS). */
async function piSessions() {
  const index = import.meta.resolve("@earendil-works/pi-coding-agent");
  return import(new URL("./core/session-manager.js", index).href);
}

/** The session layer alone (`@rein/harness/session`): no pi-ai, as an application reopening sessions would import it. */
const rein = () => import("@rein/harness/session");

const LOREM =
  "the quick brown fox jumps over the lazy dog while the agent reads files and writes careful notes ";
const text = (i, length) => `${i}: ${LOREM.repeat(Math.ceil(length / LOREM.length)).slice(0, length)}`;
const USAGE = {
  input: 1200,
  output: 80,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 1280,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};

/** The i-th message of a realistic tool-using transcript: user, assistant with a tool call, tool result, ... */
export function transcriptMessage(i) {
  const timestamp = 1_767_225_600_000 + i * 1000;
  switch (i % 3) {
    case 0:
      return { role: "user", content: text(i, 160), timestamp };
    case 1:
      return {
        role: "assistant",
        content: [
          { type: "text", text: text(i, 240) },
          { type: "toolCall", id: `call_${i}`, name: "read", arguments: { path: `src/file-${i}.ts` } },
        ],
        api: "faux",
        provider: "faux",
        model: "faux-1",
        usage: USAGE,
        stopReason: "toolUse",
        timestamp,
      };
    default:
      return {
        role: "toolResult",
        toolCallId: `call_${i - 1}`,
        toolName: "read",
        content: [{ type: "text", text: text(i, 800) }],
        isError: false,
        timestamp,
      };
  }
}

async function append(entries) {
  const messages = Array.from({ length: entries }, (_, i) => transcriptMessage(i));
  if (impl === "rein") {
    const { JsonlStorage, Session, createSessionHeader } = await rein();
    const header = createSessionHeader({ cwd: dir });
    const file = path.join(dir, `rein-${entries}.jsonl`);
    const start = now();
    const session = Session.create(JsonlStorage.create(file, header));
    for (const message of messages) session.appendMessage(message);
    session.sync();
    session.close();
    return { file, ms: now() - start };
  }
  const { SessionManager } = await piSessions();
  const start = now();
  const manager = SessionManager.create(dir, dir);
  for (const message of messages) manager.appendMessage(message);
  return { file: manager.getSessionFile(), ms: now() - start };
}

/**
 * Reads `file` in 1 MiB chunks (as Rein does; one whole-file read measured no faster
 * and holds the file twice), decodes their whole lines about 32 KiB at a time (one
 * `toString` and `split` each: strings below V8's large-object size die young; whole
 * 1 MiB chunks measured slower) and parses each line. Returns every parsed value.
 */
function readAndParseLines(file) {
  const values = [];
  const fd = fs.openSync(file, "r");
  try {
    let buffer = Buffer.allocUnsafe(1 << 20);
    let filled = 0;
    let position = 0;
    for (;;) {
      if (filled === buffer.length) {
        const bigger = Buffer.allocUnsafe(buffer.length * 2);
        buffer.copy(bigger, 0, 0, filled);
        buffer = bigger;
      }
      const count = fs.readSync(fd, buffer, filled, buffer.length - filled, position + filled);
      filled += count;
      const last = filled === 0 ? -1 : buffer.lastIndexOf(0x0a, filled - 1);
      if (last !== -1) {
        for (let start = 0; start <= last; ) {
          let end = last;
          if (last - start > 1 << 15) {
            end = buffer.lastIndexOf(0x0a, start + (1 << 15));
            if (end < start) end = buffer.indexOf(0x0a, start + (1 << 15));
          }
          for (const line of buffer.toString("utf8", start, end).split("\n")) values.push(JSON.parse(line));
          start = end + 1;
        }
        position += last + 1;
        buffer.copy(buffer, 0, last + 1, filled);
        filled -= last + 1;
      }
      if (count === 0) return values;
    }
  } finally {
    fs.closeSync(fd);
  }
}

async function reopen(file) {
  if (impl === "floor") {
    collect();
    const baseRssMiB = process.memoryUsage().rss / 2 ** 20;
    const start = now();
    const values = readAndParseLines(file);
    const ms = now() - start;
    return { ms, messages: values.length - 1, baseRssMiB }; // less the header line
  }
  if (impl === "rein") {
    const { JsonlStorage, Session } = await rein();
    collect();
    const baseRssMiB = process.memoryUsage().rss / 2 ** 20;
    const start = now();
    const session = Session.open(JsonlStorage.open(file));
    const context = session.buildContext();
    const ms = now() - start;
    session.close();
    return { ms, messages: context.messages.length, baseRssMiB };
  }
  const { SessionManager } = await piSessions();
  collect();
  const baseRssMiB = process.memoryUsage().rss / 2 ** 20;
  const start = now();
  const manager = SessionManager.open(file, path.dirname(file));
  const context = manager.buildSessionContext();
  const ms = now() - start;
  return { ms, messages: context.messages.length, baseRssMiB };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = mode === "append" ? await append(Number(arg)) : await reopen(arg);
  result.maxRssMiB = process.resourceUsage().maxRSS / 1024;
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
