/**
 * Opens a session file with a harness in its own process (the built harness).
 * Usage: node open-child.mjs <session file> [hold]. Prints `opened <pid>` and, with
 * `hold`, keeps the session (and its lock) until killed; on failure prints
 * `failed <code> <message>` and exits 3.
 */
import fs from "node:fs";
import { fauxProvider } from "@earendil-works/pi-ai";
import { AgentHarness, JsonlStorage, Session } from "../../dist/index.js";

const [file, hold] = process.argv.slice(2);
const say = (line) => fs.writeSync(1, `${line}\n`);
try {
  const session = Session.open(JsonlStorage.open(file));
  new AgentHarness({ session, model: fauxProvider().getModel() });
  say(`opened ${process.pid}`);
  if (hold === "hold") setInterval(() => {}, 60_000);
  else session.close();
} catch (error) {
  say(`failed ${error.code} ${error.message}`);
  process.exitCode = 3;
}
