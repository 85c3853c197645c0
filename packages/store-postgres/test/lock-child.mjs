/**
 * Holds a PostgreSQL session open in its own process (the built packages):
 * `node lock-child.mjs <url> <session id>`: opens it (taking its advisory lock),
 * appends one `custom` entry naming its pid, prints `opened <pid>` and waits to be
 * killed; on failure prints `failed <code>` and exits 3. A third argument is the lock's
 * lease in ms; on SIGCONT (after a SIGSTOP) it tries one more write and prints
 * `wrote` or `refused <code>`. The session id may be several, comma-separated; a
 * fourth argument `shared` holds their locks on one shared lock connection
 * (`lockConnections: 1`).
 */
import fs from "node:fs";
import { PostgresSessionStore } from "../dist/index.js";

const [url, ids, lease, shared] = process.argv.slice(2);
const say = (line) => fs.writeSync(1, `${line}\n`);
try {
  const options = {
    ...(lease === undefined ? {} : { leaseMs: Number(lease) }),
    ...(shared === "shared" ? { lockConnections: 1 } : {}),
  };
  const store = new PostgresSessionStore(url, options);
  const sessions = [];
  for (const id of ids.split(",")) sessions.push(await store.open(id));
  process.on("SIGCONT", async () => {
    try {
      for (const session of sessions) {
        session.append({ type: "custom", customType: "woken writer", data: { pid: process.pid } });
        await session.whenStored();
      }
      say("wrote");
    } catch (error) {
      say(`refused ${error.code}`);
    }
  });
  for (const session of sessions) {
    session.append({ type: "custom", customType: "writer", data: { pid: process.pid } });
    await session.whenStored();
  }
  say(`opened ${process.pid}`);
  setInterval(() => {}, 60_000);
} catch (error) {
  say(`failed ${error.code} ${error.message}`);
  process.exit(3);
}
