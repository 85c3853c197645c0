/**
 * Holds a PostgreSQL session open in its own process (the built packages):
 * `node lock-child.mjs <url> <session id>`: opens it (taking its advisory lock),
 * appends one `custom` entry naming its pid, prints `opened <pid>` and waits to be
 * killed; on failure prints `failed <code>` and exits 3.
 */
import fs from "node:fs";
import { PostgresSessionStore } from "../dist/index.js";

const [url, id] = process.argv.slice(2);
const say = (line) => fs.writeSync(1, `${line}\n`);
try {
  const session = await new PostgresSessionStore(url).open(id);
  session.append({ type: "custom", customType: "writer", data: { pid: process.pid } });
  await session.whenStored();
  say(`opened ${process.pid}`);
  setInterval(() => {}, 60_000);
} catch (error) {
  say(`failed ${error.code} ${error.message}`);
  process.exit(3);
}
