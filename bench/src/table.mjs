/**
 * Renders the results as one Markdown table (the same text goes to the terminal
 * and into docs/benchmarks.md), preceded by the run's date, machine and versions.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import { fileURLToPath } from "node:url";

const cell = (value) => String(value).replaceAll("|", "\\|");

export function renderTable(rows) {
  const lines = ["| Row | Measured (Rein vs pi where two) | Ratio | Target | Met |", "|---|---|---|---|---|"];
  let group;
  for (const r of rows) {
    if (r.group !== group) {
      group = r.group;
      lines.push(`| **${cell(group)}** | | | | |`);
    }
    lines.push(`| ${[r.name, r.measured, r.ratio, r.target, r.met].map(cell).join(" | ")} |`);
  }
  return lines.join("\n");
}

function packageVersion(name) {
  try {
    const entry = fileURLToPath(import.meta.resolve(name));
    for (let dir = entry; dir !== "/"; ) {
      dir = dir.slice(0, dir.lastIndexOf("/")) || "/";
      const file = `${dir}/package.json`;
      if (!fs.existsSync(file)) continue;
      const pkg = JSON.parse(fs.readFileSync(file, "utf8"));
      if (pkg.name === name) return pkg.version;
    }
  } catch {
    // fall through
  }
  return "?";
}

/** A package's version as seen from another package's folder (`from`: a file URL inside it). */
function versionFrom(from, name) {
  try {
    return createRequire(from)(`${name}/package.json`).version;
  } catch {
    return "?";
  }
}

const CLI_PACKAGE = new URL("../../packages/cli/package.json", import.meta.url);

function memory() {
  try {
    return execFileSync("free", ["-h"], { encoding: "utf8" }).trimEnd();
  } catch {
    return `total ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`;
  }
}

export function describeRun({ reps, scale, seconds }) {
  const cpus = os.cpus();
  const versions = [
    "@rein/harness",
    "@earendil-works/pi-ai",
    "@earendil-works/pi-agent-core",
    "@earendil-works/pi-coding-agent",
  ].map((name) => `${name} ${packageVersion(name)}`);
  if (fs.existsSync(CLI_PACKAGE)) {
    const cli = JSON.parse(fs.readFileSync(CLI_PACKAGE, "utf8")).version;
    const piCli = import.meta.resolve("@earendil-works/pi-coding-agent");
    versions.push(
      `@rein/cli ${cli} (jiti ${versionFrom(CLI_PACKAGE, "jiti")}; pi-coding-agent's jiti ${versionFrom(piCli, "jiti")})`,
    );
  }
  return [
    `- Date: ${new Date().toISOString()}`,
    `- Machine: nproc ${os.availableParallelism()}, ${cpus[0]?.model ?? "unknown CPU"}, ${os.platform()} ${os.release()}, load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")} at the end`,
    `- Node ${process.version}; ${versions.join(", ")}`,
    `- Repetitions: ${JSON.stringify(reps)} (medians of interleaved runs, after one warm-up round)${
      scale === 1 ? "" : `; sizes scaled by ${scale}`
    }; wall time ${seconds.toFixed(0)} s`,
    "",
    "```",
    `$ free -h`,
    memory(),
    "```",
  ].join("\n");
}
