#!/usr/bin/env node
/**
 * Entry point of `rein`. `--version` answers before anything else loads (it is
 * what scripts and shell prompts call most); everything else is in main.ts.
 */
import { readFileSync } from "node:fs";

const [first, ...rest] = process.argv.slice(2);
if ((first === "--version" || first === "-v") && rest.length === 0) {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
    version: string;
  };
  process.stdout.write(`${pkg.version}\n`);
} else {
  await import("./main.js");
}
