/**
 * Rein's transpile cache for config files and plugins (module-loader.ts), signed.
 * The cache folder (`~/.cache/rein/jiti`) is writable by anything that runs as the
 * user, an unsandboxed model's shell included; an entry is run as the module it
 * stands for, so an entry the model wrote would be code the trust gate never saw.
 * So each entry carries an HMAC-SHA256, made with a key kept in the user's Rein
 * config dir (`cache-key`, 0600, beside the grant key: the sandbox neither reads nor
 * writes that dir, the file tools and the agent hooks refuse it), over the entry's
 * name (itself a hash of the transform version, the file name, the flags and the
 * source bytes the gate admitted) and the code. An entry without a valid MAC is a
 * miss: transpiled again and rewritten.
 *
 * Invariant: a cached output runs only if this user's Rein wrote it for exactly
 * those source bytes. No key (the config dir unwritable): no cache.
 */
import { createHmac, hash, randomBytes, timingSafeEqual } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { reinConfigDir } from "@rein/sdk";

const HEADER = "//rein-mac:";
const MAC_HEX = 64;

let key: Buffer | null | undefined;

/** The cache key file: `<Rein config dir>/cache-key`. */
export const cacheKeyFile = (env: NodeJS.ProcessEnv = process.env): string =>
  join(reinConfigDir(env), "cache-key");

function loadKey(file: string): Buffer | null {
  try {
    const key = Buffer.from(readFileSync(file, "utf8").trim(), "hex");
    return key.length === 32 ? key : null;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") return null;
  }
  try {
    mkdirSync(join(file, ".."), { recursive: true, mode: 0o700 });
    const fresh = randomBytes(32);
    writeFileSync(file, `${fresh.toString("hex")}\n`, { mode: 0o600, flag: "wx" });
    return fresh;
  } catch (error) {
    // Another process made it first: theirs. Anything else: no cache this process.
    return (error as NodeJS.ErrnoException).code === "EEXIST" ? loadKey(file) : null;
  }
}

/** This process's cache key (read or made once), or null when there can be none. */
function cacheKey(): Buffer | null {
  if (key === undefined) key = loadKey(cacheKeyFile());
  return key;
}

/** HMAC-SHA256 over the name and the code's SHA-256 (one-shot `hash`: a tenth of a streamed digest's cost). */
const macOf = (secret: Buffer, name: string, code: string): string =>
  createHmac("sha256", secret)
    .update(`${name}\0${hash("sha256", code)}`)
    .digest("hex");

/** The cached code of entry `name` in `file` if Rein wrote it (valid MAC), else undefined. */
export function readCached(file: string, name: string): string | undefined {
  const secret = cacheKey();
  if (secret === null) return undefined;
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  if (!text.startsWith(HEADER) || text.charCodeAt(HEADER.length + MAC_HEX) !== 10) return undefined;
  const given = Buffer.from(text.slice(HEADER.length, HEADER.length + MAC_HEX), "utf8");
  const code = text.slice(HEADER.length + MAC_HEX + 1);
  const expected = Buffer.from(macOf(secret, name, code), "utf8");
  return given.length === expected.length && timingSafeEqual(given, expected) ? code : undefined;
}

/** Writes entry `name` (whole or not at all); a failure only costs the next start a transform. */
export function writeCached(folder: string, file: string, name: string, code: string): void {
  const secret = cacheKey();
  if (secret === null) return;
  try {
    mkdirSync(folder, { recursive: true });
    const scratch = `${file}.${process.pid}.tmp`;
    writeFileSync(scratch, `${HEADER}${macOf(secret, name, code)}\n${code}`);
    renameSync(scratch, file);
  } catch {
    // Unwritable: transpiled again next time.
  }
}

/** Forgets the key read by this process (tests that switch config dirs). */
export function forgetCacheKey(): void {
  key = undefined;
}
