#!/usr/bin/env node
/**
 * For shell runners (scripts/check.sh): `start` starts a cluster that outlives this
 * process and prints its URL and dir on two lines; `stop <dir>` stops and removes it.
 */
import { isAbsolute } from "node:path";
import { startCluster, stopCluster } from "./cluster.js";

const [command, dir] = process.argv.slice(2);
try {
  if (command === "start") {
    const cluster = await startCluster();
    process.stdout.write(`${cluster.url}\n${cluster.dir}\n`);
  } else if (command === "stop" && dir && isAbsolute(dir)) {
    stopCluster(dir);
  } else {
    process.stderr.write(
      "usage: node packages/test-postgres/dist/cli.js start | stop <absolute dir printed by start>\n",
    );
    process.exitCode = 2;
  }
} catch (error) {
  process.stderr.write(`test-postgres: ${(error as Error).message}\n`);
  process.exitCode = 1;
}
