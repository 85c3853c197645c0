/**
 * `rein` keeps V8's young generation at its initial size (bin.ts): the semi-spaces do
 * not grow as the process allocates, which was the largest part of a run's peak RSS
 * above its code. A preload allocates the same short-lived garbage at exit, in the bin
 * and in a bare `node` (the control, where the space does grow), and reports the young
 * generation's size after a forced scavenge: read mid-collection, the space can show
 * pages it is about to release (a 2 MiB space once read as 8.5 MiB under load).
 */
import { spawnSync } from "node:child_process";
import { expect, it } from "vitest";
import { machineEnv, REIN_BIN } from "./support/rein-process.js";

const CHURN = `data:text/javascript,${encodeURIComponent(`
import v8 from "node:v8";
process.on("exit", () => {
  let keep = [];
  for (let i = 0; i < 2e6; i++) { keep.push({ a: i, b: "x" + i }); if (keep.length > 50000) keep = []; }
  keep = null;
  globalThis.gc({ type: "minor" });
  const young = v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space");
  process.stderr.write("\\nyoung=" + young.physical_space_size + "\\n");
});`)}`;

function youngMiB(args: string[]): number {
  const result = spawnSync(process.execPath, ["--expose-gc", "--import", CHURN, ...args], {
    env: { ...process.env, ...machineEnv },
    encoding: "utf8",
    timeout: 60_000,
  });
  expect(result.status, result.stderr).toBe(0);
  const young = /young=(\d+)/.exec(result.stderr);
  expect(young, result.stderr).not.toBeNull();
  return Number(young?.[1]) / 2 ** 20;
}

it("keeps the young generation small in rein, where a bare node grows it", () => {
  expect(youngMiB(["-e", "0"])).toBeGreaterThan(8);
  expect(youngMiB([REIN_BIN, "--help"])).toBeLessThan(4);
});
