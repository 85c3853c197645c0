/**
 * Node's compile cache in Rein's bin (compile-cache.ts): on in Rein's cache folder
 * when that folder takes a write, never handed to Node otherwise (Node 24 spun
 * forever on a folder it could not create under /proc), off on
 * NODE_DISABLE_COMPILE_CACHE, and a start with an unusable folder still works.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { compileCacheDir, enableCompileCache, writableCacheDir } from "../src/compile-cache.js";
import { machineEnv, REIN_BIN } from "./support/rein-process.js";

const root = mkdtempSync(join(tmpdir(), "rein-compile-cache-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const ENABLED = { status: 1 };

function recorder(result: { status: number } | undefined = ENABLED) {
  const calls: string[] = [];
  const enable = (dir: string) => {
    calls.push(dir);
    return result;
  };
  return { calls, enable };
}

describe("where the cache lives", () => {
  it("is $REIN_CACHE_DIR/node-compile-cache, else under $XDG_CACHE_HOME/rein, else ~/.cache/rein", () => {
    expect(compileCacheDir({ REIN_CACHE_DIR: "/c", XDG_CACHE_HOME: "/x" })).toBe("/c/node-compile-cache");
    expect(compileCacheDir({ XDG_CACHE_HOME: "/x" })).toBe("/x/rein/node-compile-cache");
    expect(compileCacheDir({})).toMatch(/\/\.cache\/rein\/node-compile-cache$/);
  });
});

describe("the writability guard", () => {
  it("creates the folder and its marker, and says yes", () => {
    const dir = join(root, "fresh", "node-compile-cache");
    expect(writableCacheDir(dir)).toBe(true);
    expect(readdirSync(dir)).toContain(".rein-writable");
    expect(writableCacheDir(dir)).toBe(true);
  });

  it("says no for a folder under /proc, under a file, or in a read-only folder", () => {
    expect(writableCacheDir("/proc/rein-no-such/node-compile-cache")).toBe(false);
    expect(writableCacheDir("/proc/self/node-compile-cache")).toBe(false);
    const file = join(root, "a-file");
    writeFileSync(file, "");
    expect(writableCacheDir(join(file, "node-compile-cache"))).toBe(false);
    if (process.getuid?.() !== 0) {
      const locked = join(root, "locked");
      writableCacheDir(join(locked, "x"));
      rmSync(join(locked, "x"), { recursive: true });
      chmodSync(locked, 0o500);
      expect(writableCacheDir(join(locked, "x"))).toBe(false);
      chmodSync(locked, 0o700);
    }
  });
});

describe("enabling", () => {
  it("hands Node the folder once it is writable", () => {
    const { calls, enable } = recorder();
    const env = { REIN_CACHE_DIR: join(root, "on") };
    expect(enableCompileCache(env, enable)).toEqual({
      enabled: true,
      dir: join(root, "on", "node-compile-cache"),
    });
    expect(calls).toEqual([join(root, "on", "node-compile-cache")]);
  });

  it("never hands Node a folder it cannot write (the /proc spin)", () => {
    const { calls, enable } = recorder();
    const outcome = enableCompileCache({ REIN_CACHE_DIR: "/proc/rein-no-such" }, enable);
    expect(outcome).toMatchObject({ enabled: false, reason: "unwritable" });
    expect(calls).toEqual([]);
  });

  it("stays off on NODE_DISABLE_COMPILE_CACHE, leaves NODE_COMPILE_CACHE's cache to Node, and reports Node's failure", () => {
    const { calls, enable } = recorder();
    const env = { REIN_CACHE_DIR: join(root, "on") };
    expect(enableCompileCache({ ...env, NODE_DISABLE_COMPILE_CACHE: "1" }, enable)).toEqual({
      enabled: false,
      reason: "disabled",
    });
    expect(enableCompileCache({ ...env, NODE_COMPILE_CACHE: "/elsewhere" }, enable)).toEqual({
      enabled: false,
      reason: "already-enabled",
    });
    expect(calls).toEqual([]);
    expect(enableCompileCache(env, recorder({ status: 0 }).enable)).toMatchObject({
      enabled: false,
      reason: "failed",
    });
    const throwing = () => {
      throw new Error("no");
    };
    expect(enableCompileCache(env, throwing)).toMatchObject({ enabled: false, reason: "failed" });
    expect(enableCompileCache(env, null)).toEqual({ enabled: false, reason: "unsupported" });
  });
});

describe("the bin", () => {
  const run = (env: Record<string, string>) => {
    const base: NodeJS.ProcessEnv = { ...process.env, ...machineEnv };
    // Node reads even an empty NODE_COMPILE_CACHE as set: these must be absent.
    delete base.NODE_COMPILE_CACHE;
    delete base.NODE_DISABLE_COMPILE_CACHE;
    return spawnSync(process.execPath, [REIN_BIN, "--help"], {
      env: { ...base, ...env },
      encoding: "utf8",
      timeout: 30_000,
    });
  };

  it("fills the cache folder on a start, and the next start still works", () => {
    const cache = join(root, "bin-cache");
    expect(run({ REIN_CACHE_DIR: cache }).status).toBe(0);
    const dir = join(cache, "node-compile-cache");
    const entries = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
    expect(entries.length).toBeGreaterThan(10);
    const again = run({ REIN_CACHE_DIR: cache });
    expect(again.status).toBe(0);
    expect(again.stdout).toMatch(/Usage: rein/);
  });

  it("starts promptly and works with a cache folder it cannot use", () => {
    const started = Date.now();
    const result = run({ REIN_CACHE_DIR: "/proc/rein-no-such" });
    expect(result.error).toBeUndefined();
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/Usage: rein/);
    expect(Date.now() - started).toBeLessThan(25_000);
    expect(existsSync("/proc/rein-no-such")).toBe(false);
  });
});
