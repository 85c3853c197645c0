/**
 * The start-up trust check (security invariant 9): before any project code runs,
 * the project's files are compared with its trust record (trust-store.ts), and
 * while the config and plugins load every module is admitted only if the record
 * has its exact bytes (module-gate.ts).
 *
 * - What is checked: every config name in the project folder (present or absent),
 *   the local layer and the user layer, all hashed up front; then each module file
 *   as it loads, except Rein's own installation and the managed layer's folder
 *   (outside the project): the administrator's and Rein's code, not the project's.
 * - A change (a new config file beside an old one, an edited plugin or import, a
 *   new package) or a project with no record: refused with one line naming the
 *   files and `rein trust`; on a terminal the person is asked instead, and a yes
 *   records what then loads.
 * - `REIN_TRUST_PROJECT=1` in the environment trusts the project's code for that
 *   one process without reading or writing a record (CI, test harnesses): the
 *   environment is set by whoever starts Rein, never by a project file.
 */
import { readFileSync, realpathSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { CONFIG_FILE_NAMES, reinConfigDir } from "@rein/sdk";
import { trustError } from "../errors.js";
import { installRoot, reinPackages } from "./install-root.js";
import { openModuleGate } from "./module-gate.js";
import { hashFile, readTrust, sha256, type TrustRecord, trustFile, writeTrust } from "./trust-store.js";

export const TRUST_ENV = "REIN_TRUST_PROJECT";

export interface TrustChange {
  file: string;
  kind: "new" | "changed" | "removed";
}

export interface ProjectTrust {
  project: string;
  /** `verify`: only recorded bytes load; `record`: what loads is recorded; `off`: REIN_TRUST_PROJECT. */
  mode: "verify" | "record" | "off";
  /** What differs from the record (before loading). */
  changes: TrustChange[];
  /** Modules seen loading that the record lacked (record mode), for the summary. */
  added(): string[];
  /** Every project file the record holds or this process recorded: out of the file tools' reach. */
  files(): string[];
  /** Record mode: writes the record of everything checked and loaded; returns its path. */
  save(): string | undefined;
  /** Re-records the local layer after Rein itself wrote it (a project grant). */
  refreshLocal(): void;
  close(): void;
}

export interface TrustOptions {
  /** The project folder (the project config's folder, else the working directory). */
  project: string;
  /** The local layer's file, the user layer's folder, the managed layer's file. */
  localFile: string;
  managedFile: string;
  env: NodeJS.ProcessEnv;
  /** Record instead of verifying (`rein trust`, `rein init`, a yes at the prompt). */
  record?: boolean;
  /** Asked when the record is missing or differs; true records. Absent: refuse. */
  ask?: (changes: TrustChange[], project: string) => Promise<boolean>;
}

const real = (path: string) => {
  try {
    return realpathSync.native(path);
  } catch {
    // Absent: its folder's real path and the name (a config name recorded as absent).
    try {
      return join(realpathSync.native(dirname(path)), path.slice(dirname(path).length + 1));
    } catch {
      return path;
    }
  }
};

const inside = (dir: string, file: string) =>
  file === dir || file.startsWith(dir.endsWith(sep) ? dir : dir + sep);

/** The files hashed up front: every config name in the project folder, the local layer, the user layer. */
export function entryFiles(project: string, localFile: string, env: NodeJS.ProcessEnv): string[] {
  const userDir = reinConfigDir(env);
  return [
    ...CONFIG_FILE_NAMES.map((name) => join(project, name)),
    localFile,
    ...CONFIG_FILE_NAMES.map((name) => join(userDir, name.replace(/^rein\./, ""))),
  ].map(real);
}

/** Compares the record with the files now. */
export function changesSince(record: TrustRecord | undefined, entries: readonly string[]): TrustChange[] {
  const changes: TrustChange[] = [];
  const checked = new Set<string>();
  for (const file of entries) {
    checked.add(file);
    const now = hashFile(file);
    const then = record?.files[file];
    if (now === null && (then === null || then === undefined)) continue;
    if (then === undefined || then === null) changes.push({ file, kind: "new" });
    else if (now === null) changes.push({ file, kind: "removed" });
    else if (now !== then) changes.push({ file, kind: "changed" });
  }
  for (const [file, then] of Object.entries(record?.files ?? {})) {
    if (checked.has(file) || then === null) continue;
    const now = hashFile(file);
    if (now === null) changes.push({ file, kind: "removed" });
    else if (now !== then) changes.push({ file, kind: "changed" });
  }
  return changes;
}

/** One line naming the changes (paths relative to the project when inside it). */
export function describeChanges(changes: readonly TrustChange[], project: string): string {
  const shown = changes.slice(0, 8).map((c) => {
    const rel = relative(project, c.file);
    return `${rel.startsWith("..") ? c.file : rel} (${c.kind})`;
  });
  return `${shown.join(", ")}${changes.length > 8 ? ` and ${changes.length - 8} more` : ""}`;
}

/** Starts the trust check for one process's loading of the project; throws when refused. */
export async function startTrust(options: TrustOptions): Promise<ProjectTrust> {
  const project = real(options.project);
  const closed: ProjectTrust = {
    project,
    mode: "off",
    changes: [],
    added: () => [],
    files: () => [],
    save: () => undefined,
    refreshLocal: () => undefined,
    close: () => undefined,
  };
  if (options.env[TRUST_ENV] === "1") return closed;
  const record = readTrust(project, options.env);
  const entries = entryFiles(project, options.localFile, options.env);
  const changes = changesSince(record, entries);
  let recording = options.record === true;
  if (!recording && (record === undefined || changes.length > 0)) {
    const what =
      record === undefined
        ? `this project's code was never trusted here (${describeChanges(changes, project) || "no config yet"})`
        : `the project's code changed since it was trusted: ${describeChanges(changes, project)}`;
    if (options.ask === undefined || !(await options.ask(changes, project))) {
      throw trustError(`refusing to run project code in ${project}: ${what}`, {
        hint: `review and trust it with: rein trust${options.project === process.cwd() ? "" : ` -C ${project}`}`,
      });
    }
    recording = true;
  }

  const managedDir = real(dirname(options.managedFile));
  const rein = installRoot();
  // Rein installed inside the project: only its own packages are Rein's (install-root.ts).
  const reinInProject = inside(project, rein);
  const exempt = (file: string) =>
    inside(project, file)
      ? reinInProject && reinPackages().some((dir) => inside(dir, file))
      : inside(rein, file) || inside(managedDir, file);
  const seen = new Map<string, string>();
  const known = record?.files ?? {};
  const close = openModuleGate((file, source) => {
    const path = real(file);
    if (exempt(path)) return;
    const hash = sha256(source);
    if (recording) {
      seen.set(path, hash);
      return;
    }
    if (known[path] === hash) return;
    const rel = relative(project, path);
    throw trustError(
      `refusing to load ${rel.startsWith("..") ? path : rel}: it is ${known[path] === undefined ? "not in" : "changed since"} the trust record of ${project}`,
      { file: path, hint: "review and trust the project's code with: rein trust" },
    );
  });
  const localFile = real(options.localFile);
  const localAtStart = readText(localFile);
  return {
    project,
    mode: recording ? "record" : "verify",
    changes,
    added: () => [...seen.keys()].filter((file) => known[file] === undefined),
    files: () => [...new Set([...Object.keys(known).filter((file) => known[file] !== null), ...seen.keys()])],
    save() {
      if (!recording) return undefined;
      const files: Record<string, string | null> = {};
      for (const file of entries) files[file] = hashFile(file);
      for (const [file, hash] of seen) files[file] = hash;
      return writeTrust({ version: 1, project, trustedAt: new Date().toISOString(), files }, options.env);
    },
    refreshLocal() {
      if (recording) return;
      const current = readTrust(project, options.env);
      if (current === undefined) return;
      const hash = hashFile(localFile);
      if (current.files[localFile] === hash) return;
      // Only what Rein itself writes there: project grants appended, nothing else changed.
      if (!onlyGrantsAdded(localAtStart, readText(localFile))) return;
      writeTrust({ ...current, files: { ...current.files, [localFile]: hash } }, options.env);
    },
    close,
  };
}

export { trustFile };

const readText = (file: string): string | undefined => {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
};

const PERMISSIONS = "@rein/plugin-permissions";

/**
 * Whether `after` is `before` with project grants appended to the permissions
 * plugin's entry and nothing else changed (what `saveProjectGrant` writes).
 */
export function onlyGrantsAdded(before: string | undefined, after: string | undefined): boolean {
  if (after === undefined) return false;
  let old: unknown;
  let now: unknown;
  try {
    old = before === undefined || before.trim() === "" ? {} : JSON.parse(before);
    now = JSON.parse(after);
  } catch {
    return false;
  }
  const grantsOf = (layer: unknown): unknown[][] => {
    const plugins = (layer as { plugins?: unknown }).plugins;
    if (!Array.isArray(plugins)) return [];
    return plugins
      .filter(
        (entry): entry is [string, { projectGrants?: unknown }] =>
          Array.isArray(entry) && entry[0] === PERMISSIONS,
      )
      .map((entry) => (Array.isArray(entry[1]?.projectGrants) ? (entry[1].projectGrants as unknown[]) : []));
  };
  const without = (layer: unknown): string =>
    JSON.stringify(layer, (key, value) => (key === "projectGrants" ? undefined : value));
  const stripped = (layer: unknown): string => {
    // A permissions entry saveProjectGrant added holds nothing but the grants.
    const copy = JSON.parse(without(layer)) as { plugins?: unknown[] };
    if (Array.isArray(copy.plugins)) {
      copy.plugins = copy.plugins.filter(
        (entry) => !(Array.isArray(entry) && entry[0] === PERMISSIONS && JSON.stringify(entry[1]) === "{}"),
      );
      if (copy.plugins.length === 0) delete copy.plugins;
    }
    return JSON.stringify(copy);
  };
  if (stripped(old) !== stripped(now)) return false;
  const [was, is] = [grantsOf(old).flat(), grantsOf(now).flat()];
  return is.length > was.length && was.every((grant, i) => JSON.stringify(grant) === JSON.stringify(is[i]));
}
