/**
 * Crash-matrix child: runs the scripted session (crash-scenario.mjs) on the built
 * harness (dist) and SIGKILLs itself at the point the job names:
 * - `{ kind: "append", index, mode }`: at the index-th storage append, `before` the
 *   line is written, `after` it, or `torn`: after writing only `fraction` of it;
 * - `{ kind: "event", index }`: inside the listener of the index-th harness event.
 *
 * On an asynchronous storage (`job.store`: the path of a module exporting
 * `PostgresStorage`; the first argument is then its database url) `torn` kills the
 * process with the write's statement in flight, `after` once it is committed, and a
 * public call counts as accepted once its writes are stored (`whenStored`).
 *
 * Usage: node crash-child.mjs <session file | url> <job JSON>; job `{ phase: "script" |
 * "resume", kill?: ..., store?: string, sessionId?: string }`. Reports on stdout, one
 * line each, written synchronously (a line is out before the next statement runs, so
 * a kill never loses one that was printed): `session <id>`, `accepted <kind> <text>`,
 * `done <appends> <events>`.
 */
import fs from "node:fs";
import { pathToFileURL } from "node:url";
import { createModels, fauxAssistantMessage, fauxProvider, fauxToolCall } from "@earendil-works/pi-ai";
import { Type } from "typebox";
import { AgentHarness, createSessionHeader, JsonlStorage, Session } from "../../dist/index.js";
import { crashTools, respond, runResume, runScript } from "./crash-scenario.mjs";

const [file, jobText] = process.argv.slice(2);
const job = JSON.parse(jobText);
const kill = job.kill;
const say = (line) => fs.writeSync(1, `${line}\n`);
const die = () => process.kill(process.pid, "SIGKILL");

const faux = fauxProvider({ tokenSize: { min: 50, max: 50 } });
const models = createModels();
models.setProvider(faux.provider);
const pi = { fauxAssistantMessage, fauxToolCall, Type };
const reply = (context) => respond(context, pi);
faux.setResponses(Array.from({ length: 64 }, () => reply));

async function openStorage() {
  if (job.store) {
    const { PostgresStorage } = await import(pathToFileURL(job.store).href);
    return job.phase === "script"
      ? PostgresStorage.create(file, createSessionHeader({ cwd: process.cwd() }))
      : PostgresStorage.open(file, job.sessionId);
  }
  return job.phase === "script"
    ? JsonlStorage.create(file, createSessionHeader({ cwd: process.cwd() }))
    : JsonlStorage.open(file);
}
const storage = await openStorage();
const synchronous = storage.kind === "jsonl";

let appends = 0;
const append = storage.append.bind(storage);
storage.append = (entry) => {
  appends++;
  if (kill?.kind === "append" && appends === kill.index) {
    if (kill.mode === "before") die();
    if (!synchronous) {
      const write = append(entry);
      if (kill.mode === "after") return write.then(die);
      // Torn: die with the statement on its way (after it was sent, or just before).
      if (kill.fraction < 0.5) setImmediate(die);
      else setTimeout(die, 1 + kill.fraction * 3);
      return write;
    }
    if (kill.mode === "torn") {
      const line = Buffer.from(`${JSON.stringify(entry)}\n`, "utf8");
      const cut = Math.max(1, Math.min(line.length - 1, Math.floor(line.length * kill.fraction)));
      fs.appendFileSync(file, line.subarray(0, cut));
      die();
    }
    append(entry);
    die();
  }
  return append(entry);
};

const session = Session.open(storage);
say(`session ${session.id}`);
const harness = new AgentHarness({ session, model: faux.getModel(), models, tools: crashTools(pi) });
let events = 0;
harness.subscribe(() => {
  events++;
  if (kill?.kind === "event" && events === kill.index) die();
});
// On an asynchronous storage a call's writes are accepted once stored.
const accept = (kind, text) => {
  const stored = session.whenStored();
  if (stored)
    stored.then(
      () => say(`accepted ${kind} ${text}`),
      () => {},
    );
  else say(`accepted ${kind} ${text}`);
};

if (job.phase === "script") await runScript(harness, accept);
else await runResume(harness, accept);
await session.close();
say(`done ${appends} ${events}`);
