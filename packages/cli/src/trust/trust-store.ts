/**
 * The trust record (security invariant 9): per project, the files Rein loads and
 * runs from it (config layers below managed, plugin modules and all they import,
 * packages from the project's node_modules), each with its SHA-256, or `null` for
 * a config name recorded as absent (a `rein.config.ts` that appears beside a
 * `rein.config.json` is a change).
 *
 * Invariants: the record lives in the user's Rein config dir (`trust/`), which no
 * sandboxed command reads or writes and no file tool writes, never in the project,
 * so a project file can never mark itself trusted; it is written atomically, 0600
 * in a 0700 folder; a record that cannot be read or parsed is an error, not an
 * empty record.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { reinConfigDir } from "@rein/sdk";
import { trustError } from "../errors.js";

export interface TrustRecord {
  version: 1;
  /** The project folder (real path) the record is for. */
  project: string;
  trustedAt: string;
  /** Absolute real path -> SHA-256 (hex) of its bytes, or null: recorded as absent. */
  files: Record<string, string | null>;
}

export const sha256 = (bytes: string | Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/** Where a project's record is kept. */
export function trustFile(project: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(reinConfigDir(env), "trust", `${sha256(project).slice(0, 32)}.json`);
}

/** The SHA-256 of a file, or null when it does not exist. Other failures throw. */
export function hashFile(file: string): string | null {
  try {
    return sha256(readFileSync(file));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw trustError(
      `cannot read ${file} to check it against the trust record: ${(error as Error).message}`,
      {
        file,
        cause: error,
      },
    );
  }
}

const isRecord = (value: unknown, project: string): value is TrustRecord => {
  if (typeof value !== "object" || value === null) return false;
  const record = value as Partial<TrustRecord>;
  return (
    record.version === 1 &&
    record.project === project &&
    typeof record.trustedAt === "string" &&
    typeof record.files === "object" &&
    record.files !== null &&
    Object.values(record.files).every((hash) => hash === null || typeof hash === "string")
  );
};

/** The project's record, or undefined when there is none yet. */
export function readTrust(project: string, env: NodeJS.ProcessEnv = process.env): TrustRecord | undefined {
  const file = trustFile(project, env);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw trustError(`cannot read the trust record: ${(error as Error).message}`, { file, cause: error });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw trustError(`the trust record is not valid JSON (${(error as Error).message})`, {
      file,
      hint: "run rein trust to write it again",
    });
  }
  if (!isRecord(parsed, project)) {
    throw trustError(`the trust record is not one Rein wrote for ${project}`, {
      file,
      hint: "run rein trust to write it again",
    });
  }
  return parsed;
}

/** Writes the project's record (atomically: a temporary file, then rename). Returns its path. */
export function writeTrust(record: TrustRecord, env: NodeJS.ProcessEnv = process.env): string {
  const file = trustFile(record.project, env);
  mkdirSync(join(file, ".."), { recursive: true, mode: 0o700 });
  const scratch = `${file}.${process.pid}.tmp`;
  writeFileSync(scratch, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  renameSync(scratch, file);
  return file;
}
