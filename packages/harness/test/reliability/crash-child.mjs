/**
 * Crash-matrix child: runs the scripted session (crash-scenario.mjs) on the built
 * harness (dist) and SIGKILLs itself at the point the job names:
 * - `{ kind: "append", index, mode }`: at the index-th storage append, `before` the
 *   line is written, `after` it, or `torn`: after writing only `fraction` of it;
 * - `{ kind: "event", index }`: inside the listener of the index-th harness event.
 *
 * Usage: node crash-child.mjs <session file> <job JSON>; job `{ phase: "script" |
 * "resume", kill?: ... }`. Reports on stdout, one line each, written synchronously
 * (a line is out before the next statement runs, so a kill never loses one that
 * was printed): `session <id>`, `accepted <kind> <text>`, `done <appends> <events>`.
 */
import fs from "node:fs";
import { fauxAssistantMessage, fauxToolCall, registerFauxProvider, Type } from "@mariozechner/pi-ai";
import { AgentHarness, createSessionHeader, JsonlStorage, Session } from "../../dist/index.js";
import { crashTools, respond, runResume, runScript } from "./crash-scenario.mjs";

const [file, jobText] = process.argv.slice(2);
const job = JSON.parse(jobText);
const kill = job.kill;
const say = (line) => fs.writeSync(1, `${line}\n`);
const die = () => process.kill(process.pid, "SIGKILL");

const faux = registerFauxProvider({ tokenSize: { min: 50, max: 50 } });
const pi = { fauxAssistantMessage, fauxToolCall, Type };
const reply = (context) => respond(context, pi);
faux.setResponses(Array.from({ length: 64 }, () => reply));

const storage =
  job.phase === "script"
    ? JsonlStorage.create(file, createSessionHeader({ cwd: process.cwd() }))
    : JsonlStorage.open(file);

let appends = 0;
const append = storage.append.bind(storage);
storage.append = (entry) => {
  appends++;
  if (kill?.kind === "append" && appends === kill.index) {
    if (kill.mode === "before") die();
    if (kill.mode === "torn") {
      const line = Buffer.from(`${JSON.stringify(entry)}\n`, "utf8");
      const cut = Math.max(1, Math.min(line.length - 1, Math.floor(line.length * kill.fraction)));
      fs.appendFileSync(file, line.subarray(0, cut));
      die();
    }
    append(entry);
    die();
  }
  append(entry);
};

const session = Session.open(storage);
say(`session ${session.id}`);
const harness = new AgentHarness({ session, model: faux.getModel(), tools: crashTools(pi) });
let events = 0;
harness.subscribe(() => {
  events++;
  if (kill?.kind === "event" && events === kill.index) die();
});
const accept = (kind, text) => say(`accepted ${kind} ${text}`);

if (job.phase === "script") await runScript(harness, accept);
else await runResume(harness, accept);
session.close();
say(`done ${appends} ${events}`);
