/**
 * Races for a session's lock in its own process (the built harness).
 * Usage: node lock-child.mjs <session file> hold|race [stall ms].
 * `hold` opens at once. `race` prints `ready`, waits for `go` on stdin, then opens; with
 * a stall, every read of a lock file, every unlink and every rename sleeps up to that long first (a
 * slow process in the middle of a stale takeover). On success it appends one `custom`
 * entry `{ customType: "writer", data: { pid } }`, syncs, prints `opened <pid>` and holds
 * the session until killed; on failure it prints `failed <code> <message>` and exits 3.
 */
import fs from "node:fs";
import { JsonlStorage, Session } from "../../dist/index.js";

const [file, mode, stall] = process.argv.slice(2);
const say = (line) => fs.writeSync(1, `${line}\n`);
const stallMs = Number(stall ?? 0);
if (stallMs > 0) {
  const sleep = () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Math.random() * stallMs);
  const { readFileSync, renameSync, unlinkSync } = fs;
  fs.readFileSync = (target, ...rest) => {
    if (String(target).includes(".lock")) sleep();
    return readFileSync(target, ...rest);
  };
  fs.unlinkSync = (target) => {
    sleep();
    return unlinkSync(target);
  };
  fs.renameSync = (from, to) => {
    sleep();
    return renameSync(from, to);
  };
}

function open() {
  try {
    const session = Session.open(JsonlStorage.open(file));
    session.append({ type: "custom", customType: "writer", data: { pid: process.pid } });
    session.sync();
    say(`opened ${process.pid}`);
    setInterval(() => {}, 60_000);
  } catch (error) {
    say(`failed ${error.code} ${error.message}`);
    process.exit(3);
  }
}

if (mode === "hold") open();
else {
  say("ready");
  process.stdin.setEncoding("utf8").on("data", (chunk) => {
    if (chunk.includes("go")) open();
  });
}
