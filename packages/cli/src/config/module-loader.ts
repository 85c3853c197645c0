/**
 * Loads TypeScript and JavaScript config files and plugins at run time with jiti.
 *
 * Invariants: `@rein/sdk`, `@rein/harness`, `typebox` and pi-ai are the very
 * modules this CLI itself imported (one copy: `instanceof` and symbols hold),
 * so a plugin outside any workspace can import them without installing them;
 * transpiled files are cached on disk (see `cacheDir`, one folder per transform
 * version) so a second start does not transpile again; the transform keeps lines
 * (transpile.ts), so a syntax or run-time error names the file and its line;
 * every file jiti compiles passes the trust gate (trust/module-gate.ts) with the
 * bytes it compiles, before it runs.
 */
import { existsSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import * as piAi from "@earendil-works/pi-ai";
import * as reinHarness from "@rein/harness";
import * as reinSdk from "@rein/sdk";
import { createJiti, type Jiti, type JitiOptions, type TransformOptions, type TransformResult } from "jiti";
import * as typebox from "typebox";
import { admitModule } from "../trust/module-gate.js";
import { sha256 } from "../trust/trust-store.js";
import { withFreshNativeModules } from "./native-reload.js";
import { TRANSPILER_ID, transform } from "./transpile.js";
import { readCached, writeCached } from "./transpile-cache.js";

/** Where transpiled plugins are cached: `<cache root>/jiti`. */
export function cacheDir(): string {
  return join(reinSdk.reinCacheDir(), "jiti");
}

export interface ModuleLoader {
  /** Imports a module file (TypeScript or JavaScript); returns its namespace. */
  import(file: string): Promise<Record<string, unknown>>;
  /** Resolves a bare specifier (npm package) with ESM conditions from `fromDir`; undefined when not found. */
  resolve(specifier: string, fromDir: string): string | undefined;
}

let shared: Jiti | undefined;

/**
 * The shared packages, as the CLI itself imported them (they are in its module
 * graph anyway: the SDK imports the harness, the harness pi-ai). jiti serves
 * them as virtual modules, by exact name: no resolution and no import per plugin
 * (a fifth of a warm 30-plugin start). Subpaths (`typebox/value`) resolve from
 * the plugin's folder like any package: jiti's `alias`, used before, is a prefix
 * rewrite and turned them into paths inside the package's main file.
 */
const sharedModules: Record<string, unknown> = {
  "@rein/sdk": reinSdk,
  "@rein/harness": reinHarness,
  typebox,
  "@earendil-works/pi-ai": piAi,
};

/**
 * jiti's transform, behind the trust gate and with Rein's own disk cache. jiti's
 * cache would skip the transform on a hit, and with it the one point where the
 * exact bytes about to run are seen; so jiti caches nothing and this does: keyed by
 * the transform version, the file name, the flags and the source, so a cached
 * output is only ever the output for those bytes, and signed (transpile-cache.ts),
 * so it is only ever output this user's Rein wrote.
 */
function gatedTransform(options: TransformOptions): TransformResult {
  if (options.filename !== undefined) admitModule(options.filename, options.source);
  const flags = [options.ts, options.async, options.jsx, options.interopDefault]
    .map((f) => (f ? 1 : 0))
    .join("");
  const key = sha256(`${TRANSPILER_ID}\0${options.filename ?? ""}\0${flags}\0${options.source}`).slice(0, 32);
  const folder = join(cacheDir(), TRANSPILER_ID);
  const name = `${basename(options.filename ?? "eval")}-${key}.cjs`;
  const file = join(folder, name);
  // Signed: an entry someone else wrote into the (user-writable) cache is a miss.
  const cached = readCached(file, name);
  if (cached !== undefined) return { code: cached };
  const result = transform(options);
  if (result.error === undefined && !result.code.includes("__JITI_ERROR__"))
    writeCached(folder, file, name, result.code);
  return result;
}

function jitiOptions(moduleCache: boolean): JitiOptions {
  return {
    fsCache: false,
    moduleCache,
    interopDefault: false,
    virtualModules: sharedModules,
    transform: gatedTransform,
  };
}

function jiti(): Jiti {
  shared ??= createJiti(import.meta.url, jitiOptions(true));
  return shared;
}

/**
 * `fresh`: a loader that re-evaluates every module it imports (jiti's
 * `moduleCache: false`), for reloading edited plugins and config; the shared
 * packages are still the CLI's own modules, so there is still one SDK.
 */
export function moduleLoader(options: { fresh?: boolean } = {}): ModuleLoader {
  const loader = options.fresh ? createJiti(import.meta.url, jitiOptions(false)) : undefined;
  const current = () => loader ?? jiti();
  return {
    async import(file) {
      if (loader === undefined) return (await jiti().import(file)) as Record<string, unknown>;
      return (await withFreshNativeModules(() => loader.import(file))) as Record<string, unknown>;
    },
    resolve(specifier, fromDir) {
      const parentURL = pathToFileURL(join(fromDir, "__rein_resolve__.js")).href;
      try {
        const resolved = current().esmResolve(specifier, { parentURL, try: true });
        if (!resolved) return undefined;
        const file = resolved.startsWith("file:") ? fileURLToPath(resolved) : resolved;
        return existsSync(file) ? file : undefined;
      } catch {
        return undefined;
      }
    },
  };
}

/** Extracts `line` (1-based) of `file` from a loader error message (`file:line:col` or `(line:col)`). */
export function lineFromError(error: unknown, file: string): number | undefined {
  const text = error instanceof Error ? `${error.message}\n${error.stack ?? ""}` : String(error);
  const escaped = file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const located = new RegExp(`${escaped}:(\\d+)(?::\\d+)?`).exec(text);
  if (located) return Number(located[1]);
  const parenthesised = /\((\d+):(\d+)\)/.exec(error instanceof Error ? error.message : text);
  return parenthesised ? Number(parenthesised[1]) : undefined;
}
