#!/usr/bin/env node
/**
 * Entry point of `rein`. `--version` answers before anything else loads (it is
 * what scripts and shell prompts call most); every other command first keeps V8's
 * young generation at its initial size, then loads main.ts, with typebox and the
 * Anthropic SDK from their bundles where the build made them (vendor-bundles.ts), and
 * Rein's own packages from theirs (package-bundles.ts).
 *
 * No compile cache: Node's (`module.enableCompileCache()`) is V8 code that Node runs
 * in place of a module whose source length and CRC-32 it matches, kept in a folder
 * that anything running as the user can write and read by Node at each module's
 * first load, mid-run included, with no hook for Rein to check it first (cli README,
 * "Start-up: no compile cache").
 *
 * The young generation: V8 grows it to 16-32 MiB as a process allocates, which was the
 * largest part of a `rein run`'s peak RSS above its code (a 20-call run: 146 → 119 MiB
 * without growth, for ~2-5% more CPU in scavenges). A CLI run allocates in short bursts
 * between model responses, so scavenging a small space more often costs little.
 * `rein worker` is the exception (below).
 */
import { readFileSync } from "node:fs";
import { setFlagsFromString } from "node:v8";

const [first, ...rest] = process.argv.slice(2);
if ((first === "--version" || first === "-v") && rest.length === 0) {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
    version: string;
  };
  process.stdout.write(`${pkg.version}\n`);
} else {
  // Not for `rein worker`: hundreds of runs in one process allocate all the time, where a
  // young generation held small doubles the time spent in scavenges (docs/benchmarks.md,
  // "Concurrent runs per worker"); its growth is a fixed cost, not one per run.
  if (first !== "worker") setFlagsFromString("--semi-space-growth-factor=1");
  const [{ useVendorBundles }, { usePackageBundles }] = await Promise.all([
    import("./vendor-bundles.js"),
    import("./package-bundles.js"),
  ]);
  useVendorBundles();
  usePackageBundles();
  await import("./main.js");
}
