// What the two bundle scripts (bundle-vendor.mjs, bundle-packages.mjs) share: reading a
// package's `exports`, and putting a freshly built bundle folder in place by renames, so a
// rein starting during a rebuild (the tests do) never finds half a bundle.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";

/** The file an `exports` target names for `import`, relative to the package root. */
export function importTarget(target) {
  if (typeof target === "string") return target;
  for (const key of ["import", "default"]) {
    if (target?.[key] !== undefined) {
      const found = importTarget(target[key]);
      if (found) return found;
    }
  }
  return undefined;
}

/** The files of a folder and their bytes, to tell an unchanged bundle from a new one. */
function contents(dir) {
  if (!existsSync(dir)) return undefined;
  return readdirSync(dir)
    .sort()
    .map((f) => `${f}\0${readFileSync(join(dir, f), "latin1")}`)
    .join("\0\0");
}

/** Puts the staged folder `next` at `out` unless `out` already holds the same files; `old` is a scratch path. */
export function swapIn(next, out, old) {
  if (contents(next) === contents(out)) {
    rmSync(next, { recursive: true, force: true });
    return;
  }
  rmSync(old, { recursive: true, force: true });
  mkdirSync(dirname(old), { recursive: true });
  mkdirSync(dirname(out), { recursive: true });
  if (existsSync(out)) renameSync(out, old);
  renameSync(next, out);
  rmSync(old, { recursive: true, force: true });
}

/** How long a chunk of an earlier build is kept: a rein still running may import it lazily. */
const KEEP_EARLIER_CHUNKS_MS = 24 * 60 * 60 * 1000;

/**
 * Moves the staged folder `next`'s files into `out` one rename each: chunks first, then
 * the entries, the manifest last, so whichever manifest a process reads names files that
 * exist. Chunks of earlier builds stay a day (their names are content hashes, and a rein
 * started before the rebuild may still import one lazily), then go.
 */
export function mergeIn(next, out) {
  mkdirSync(out, { recursive: true });
  const rank = (f) => (f === "manifest.json" ? 2 : f.startsWith("chunk-") ? 0 : 1);
  const fresh = readdirSync(next).sort((a, b) => rank(a) - rank(b));
  for (const file of fresh) renameSync(join(next, file), join(out, file));
  rmSync(next, { recursive: true, force: true });
  const now = Date.now();
  for (const file of readdirSync(out))
    if (!fresh.includes(file) && now - statSync(join(out, file)).mtimeMs > KEEP_EARLIER_CHUNKS_MS)
      rmSync(join(out, file), { force: true });
}
