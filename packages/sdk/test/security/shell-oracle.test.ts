/**
 * The differential oracle of security invariant 1: scripts generated from bash's
 * grammar, run in real bash under strace, judged against the analysis. Any program
 * executed or file written that the analysis neither listed nor marked unknown is a
 * divergence, printed as a minimal script.
 *
 * The seeded sample here runs with the normal tests; `pnpm test:security:deep` runs
 * at least 100,000 (REIN_ORACLE_SCRIPTS, REIN_ORACLE_SEED, REIN_ORACLE_CONCURRENCY).
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { loadShellParser } from "@rein/sdk/shell";
import { beforeAll, describe, expect, it } from "vitest";
import { traceBash } from "./oracle/bash-trace.js";
import { render, ScriptGenerator } from "./oracle/generator.js";
import { runOracle } from "./oracle/judge.js";

const COUNT = Number(process.env.REIN_ORACLE_SCRIPTS ?? 8000);
const SEED = Number(process.env.REIN_ORACLE_SEED ?? 20261201);
const CONCURRENCY = Number(process.env.REIN_ORACLE_CONCURRENCY ?? 3);

beforeAll(async () => {
  execFileSync("strace", ["-V"], { stdio: "ignore" });
  execFileSync("bwrap", ["--version"], { stdio: "ignore" });
  await loadShellParser();
});

describe("the differential oracle against real bash", () => {
  it("traces what bash really runs and writes", async () => {
    const trace = await traceBash("x=$(touch a); echo hi > f; ls >/dev/null; ( exec /usr/bin/true )");
    expect(trace.executed.map((p) => p.split("/").pop())).toEqual(["touch", "ls", "true"]);
    expect(trace.shellWrites).toEqual(["f"]);
  });

  it("runs scripts in a sandbox: nothing outside the throwaway folder can change", async () => {
    const canary = path.join(realpathSync(tmpdir()), `rein-oracle-canary-${process.pid}`);
    writeFileSync(canary, "still here");
    try {
      const trace = await traceBash(`rm -f ${canary}; echo x > ${canary}.new; touch inside`);
      expect(trace.executed.map((p) => path.basename(p))).toEqual(["rm", "touch"]);
      expect(readFileSync(canary, "utf8")).toBe("still here");
      expect(existsSync(`${canary}.new`)).toBe(false);
    } finally {
      rmSync(canary, { force: true });
    }
  });

  it("generates the same scripts for the same seed", () => {
    const a = new ScriptGenerator(7);
    const b = new ScriptGenerator(7);
    for (let i = 0; i < 50; i++) expect(render(a.script())).toBe(render(b.script()));
  });

  it(`finds no divergence in ${COUNT} generated scripts (seed ${SEED})`, {
    timeout: Math.max(600_000, COUNT * 200),
  }, async () => {
    const generator = new ScriptGenerator(SEED);
    const parts = Array.from({ length: COUNT }, () => generator.script());
    const started = Date.now();
    const counts = await runOracle(parts, CONCURRENCY);
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    console.log(
      `shell oracle (seed ${SEED}): generated ${counts.generated}, executed in bash ${counts.executed}, ` +
        `marked unknown ${counts.unknown} (${counts.unknownRun} of them run anyway: ${counts.unknownRanUnlisted} ran code the analysis could not list), ` +
        `divergences ${counts.divergences.length}, ${seconds} s`,
    );
    for (const d of counts.divergences.slice(0, 10))
      console.log(
        `divergence: ${JSON.stringify(d.script)} ran ${d.unlisted.join(", ") || "-"} wrote ${d.unlistedWrites.join(", ") || "-"}`,
      );
    expect(counts.divergences.map((d) => d.script)).toEqual([]);
    expect(counts.executed).toBeGreaterThan(COUNT / 10);
    // Not vacuous: among unknown scripts, bash really runs code the analysis could not list.
    expect(counts.unknownRanUnlisted).toBeGreaterThan(0);
  });
});
