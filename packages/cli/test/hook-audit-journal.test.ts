/**
 * The hook audit's long-lived writer (hook-audit.ts, what the hook daemon
 * records with): an entry is written to the OS before `record` resolves and
 * fsynced by a background group commit (observed through the journal's own
 * durable size); an idle session gives its lock back; a session another
 * writer waits for (its `.wanted` marker) is given back within a check, and the
 * per-event writer then records after the kept-open writer's entries, whole.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type JsonlStorage, SessionStore } from "@rein/harness";
import { afterEach, describe, expect, it } from "vitest";
import { auditWriter, reinSessionId, WANTED_CHECK_MS } from "../src/hook/hook-audit.js";
import { parseHookInput } from "../src/hook/hook-input.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function store(): SessionStore {
  const dir = mkdtempSync(join(tmpdir(), "rein-hook-audit-"));
  dirs.push(dir);
  return new SessionStore(join(dir, "sessions"));
}

const prompt = (sessionId: string, text: string) =>
  parseHookInput(
    "claude-code",
    JSON.stringify({ session_id: sessionId, cwd: "/tmp", hook_event_name: "UserPromptSubmit", prompt: text }),
  );

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

function journalOf(sessions: SessionStore, agentSessionId: string): string {
  const file = readdirSync(sessions.dir).find((name) =>
    name.endsWith(`_${reinSessionId(agentSessionId)}.jsonl`),
  );
  if (file === undefined) throw new Error(`no journal for ${agentSessionId}`);
  return join(sessions.dir, file);
}

const prompts = (file: string) =>
  readFileSync(file, "utf8")
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line) as { type: string; message?: { role: string; content: unknown } })
    .filter((entry) => entry.type === "message" && entry.message?.role === "user")
    .map((entry) => entry.message?.content);

describe("the hook audit's kept-open journal", () => {
  it("writes each entry to the OS before it answers and fsyncs it in a background group commit", async () => {
    const sessions = store();
    const audit = auditWriter(sessions, { keepOpen: true, idleCloseMs: 60_000 });
    try {
      await audit.record(prompt("s1", "first"), []);
      const storage = audit.openSession("s1")?.storage as JsonlStorage;
      const file = journalOf(sessions, "s1");
      // Written: the bytes are in the file (another process reads them) before the fsync completed.
      expect(statSync(file).size).toBe(storage.writtenSize);
      expect(prompts(file)).toEqual(["first"]);
      expect(storage.durableSize).toBeLessThan(storage.writtenSize as number);
      // The background fsync completes on its own: nothing here waits for it or syncs.
      await until(() => storage.durableSize === storage.writtenSize, "the group commit's fsync");
      expect(storage.durableSize).toBe(statSync(file).size);

      // Three entries back to back: each written at once, covered by fsyncs that share the work.
      for (const text of ["a", "b", "c"]) await audit.record(prompt("s1", text), []);
      expect(prompts(file)).toEqual(["first", "a", "b", "c"]);
      expect(storage.durableSize).toBeLessThan(statSync(file).size);
      await until(() => storage.durableSize === statSync(file).size, "the second group commit");
    } finally {
      audit.close();
    }
  });

  it("gives an idle session's lock back", async () => {
    const sessions = store();
    const audit = auditWriter(sessions, { keepOpen: true, idleCloseMs: 100 });
    try {
      await audit.record(prompt("idle", "hello"), []);
      const file = journalOf(sessions, "idle");
      const storage = audit.openSession("idle")?.storage as JsonlStorage;
      expect(existsSync(`${file}.lock`)).toBe(true);
      await until(() => audit.openSession("idle") === undefined, "the idle close");
      expect(existsSync(`${file}.lock`)).toBe(false);
      expect(storage.durableSize).toBe(statSync(file).size);
      // The next entry reopens the session and lands after the first.
      await audit.record(prompt("idle", "again"), []);
      expect(prompts(file)).toEqual(["hello", "again"]);
    } finally {
      audit.close();
    }
  });

  it("gives a session another writer waits for back within a check, and both writers' entries land whole", async () => {
    const sessions = store();
    const kept = auditWriter(sessions, { keepOpen: true, idleCloseMs: 60_000 });
    try {
      await kept.record(prompt("shared", "kept 1"), []);
      const file = journalOf(sessions, "shared");
      // A per-event writer (the in-process fallback) waits for the lock, leaving its marker.
      const started = Date.now();
      const perEvent = auditWriter(sessions);
      const waiting = perEvent.record(prompt("shared", "fallback 1"), []);
      await waiting;
      // Given back on the marker, long before the idle close.
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(kept.openSession("shared")).toBeUndefined();
      expect(existsSync(join(sessions.dir, `.${reinSessionId("shared")}.wanted`))).toBe(false);
      // Both at once, several times: the lock takes them in turn.
      await Promise.all([
        (async () => {
          for (const n of [2, 3, 4]) await kept.record(prompt("shared", `kept ${n}`), []);
        })(),
        (async () => {
          for (const n of [2, 3]) await auditWriter(sessions).record(prompt("shared", `fallback ${n}`), []);
        })(),
      ]);
      kept.close();
      const seen = prompts(file);
      expect(seen.slice(0, 2)).toEqual(["kept 1", "fallback 1"]);
      expect([...seen].sort()).toEqual(
        ["kept 1", "kept 2", "kept 3", "kept 4", "fallback 1", "fallback 2", "fallback 3"].sort(),
      );
      // Each writer's own entries in its order.
      expect(seen.filter((text) => String(text).startsWith("kept"))).toEqual([
        "kept 1",
        "kept 2",
        "kept 3",
        "kept 4",
      ]);
      expect(seen.filter((text) => String(text).startsWith("fallback"))).toEqual([
        "fallback 1",
        "fallback 2",
        "fallback 3",
      ]);
    } finally {
      kept.close();
    }
  }, 30_000);

  it("ignores a marker left by a writer that gave up long ago", async () => {
    const sessions = store();
    const audit = auditWriter(sessions, { keepOpen: true, idleCloseMs: 60_000 });
    try {
      await audit.record(prompt("stale", "one"), []);
      const marker = join(sessions.dir, `.${reinSessionId("stale")}.wanted`);
      writeFileSync(marker, "");
      const { utimesSync } = await import("node:fs");
      const old = new Date(Date.now() - 60_000);
      utimesSync(marker, old, old);
      await sleep(WANTED_CHECK_MS * 5);
      expect(audit.openSession("stale")).toBeDefined();
    } finally {
      audit.close();
    }
  });
});
