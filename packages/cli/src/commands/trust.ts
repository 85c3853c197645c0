/**
 * `rein trust`: shows what changed in the project's code since it was last trusted
 * (or that it never was), asks, then loads the config and its plugins once,
 * recording every file Rein loaded from the project with its hash (the trust
 * record, trust/trust-store.ts). `--yes` answers for a script; without a terminal
 * and without `--yes` nothing is trusted.
 */

import { realpathSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { createInterface } from "node:readline/promises";
import { findConfig } from "../config/find-config.js";
import { localConfigFile } from "../config/layers.js";
import { loadConfig } from "../config/load-config.js";
import { resolvePlugins } from "../config/resolve-plugins.js";
import { ExitCode, usageError } from "../errors.js";
import type { GlobalOptions } from "../globals.js";
import { changesSince, entryFiles, TRUST_ENV } from "../trust/project-trust.js";
import { askOnTerminal } from "../trust/trust-prompt.js";
import { readTrust, trustFile } from "../trust/trust-store.js";
import { terminal } from "../ui/terminal.js";

export async function trustCommand(options: { yes?: boolean }, globals: GlobalOptions): Promise<number> {
  const term = terminal();
  const file = globals.config ? resolve(globals.cwd, globals.config) : findConfig(globals.cwd);
  const project = realpathSync.native(file ? dirname(file) : globals.cwd);
  const record = readTrust(project);
  const changes = changesSince(record, entryFiles(project, localConfigFile(project), process.env));
  const shown = (path: string) => {
    const rel = relative(project, path);
    return rel.startsWith("..") ? path : rel;
  };
  term.err.write(
    record === undefined
      ? `${project}: never trusted; these files are new to Rein:\n`
      : `${project}: trusted ${record.trustedAt}; since then:\n`,
  );
  for (const change of changes) term.err.write(`  ${change.kind.padEnd(8)} ${shown(change.file)}\n`);
  if (changes.length === 0) term.err.write("  no config file or recorded module changed\n");
  term.err.write("Plugins and everything they import are recorded as they load.\n");
  if (!options.yes) {
    if (!askOnTerminal()) {
      throw usageError("rein trust: no terminal to confirm on", "pass --yes to trust the files listed above");
    }
    const prompt = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
    let answer: string;
    try {
      answer = await prompt.question("Trust the project's code and let Rein load it? [y/N] ");
    } finally {
      prompt.close();
    }
    if (!/^y(es)?$/i.test(answer.trim())) {
      term.err.write("nothing trusted\n");
      return ExitCode.failed;
    }
  }
  // Recording must see every load: the off switch of CI and tests does not apply here.
  const env = { ...process.env };
  delete env[TRUST_ENV];
  const loaded = await loadConfig({ cwd: globals.cwd, configPath: globals.config, env, recordTrust: true });
  await resolvePlugins(loaded);
  const saved = loaded.trust.save();
  const added = loaded.trust.added();
  term.err.write(
    `trusted ${loaded.trust.files().length} project file(s)${added.length > 0 ? `, ${added.length} new: ${added.map(shown).join(", ")}` : ""}\n`,
  );
  term.out.write(`${saved ?? trustFile(project)}\n`);
  return ExitCode.ok;
}
