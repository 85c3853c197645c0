/**
 * Session locks shared over a few connections (`lockConnections`): many writable
 * sessions on at most N connections, each writing through the one holding its lock;
 * still one writer per session (in this process, in another store, in another
 * process); a lost lock connection fences every session on it; a frozen holder loses
 * every lock within its lease.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { isHarnessError, type Session } from "@rein/harness";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresSessionStore } from "../src/index.js";
import { type TestDatabase, testDatabase } from "./support.js";

let db: TestDatabase;
let plain: PostgresSessionStore;
const lockChild = path.join(path.dirname(fileURLToPath(import.meta.url)), "lock-child.mjs");

const lockBackends = async () =>
  (
    await db.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE application_name LIKE $1 AND datname = current_database()",
      [`rein session locks pid ${process.pid} %`],
    )
  ).map((row) => row.pid);

/** Opens `id` for writing, retrying while it is still held (a lock the server has not dropped yet). */
async function openWhenFree(store: PostgresSessionStore, id: string, tries = 60): Promise<Session> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await store.open(id, { lockWaitMs: 100 });
    } catch (error) {
      if (!isHarnessError(error, "session_in_use") || attempt >= tries) throw error;
    }
  }
}

beforeAll(async () => {
  db = await testDatabase();
  plain = new PostgresSessionStore(db.url);
  await plain.ready();
}, 60_000);
afterAll(async () => {
  await db?.done();
});

describe("shared lock connections", () => {
  it("twenty writable sessions hold their locks on at most two connections and write through them", async () => {
    const shared = new PostgresSessionStore(db.url, { lockConnections: 2 });
    const sessions = await Promise.all(Array.from({ length: 20 }, () => shared.create()));
    expect(await lockBackends()).toHaveLength(2);
    expect(shared.lockConnectionsOpen).toBe(2);
    for (const [i, session] of sessions.entries()) session.append({ type: "custom", customType: `n${i}` });
    await Promise.all(sessions.map((session) => session.whenStored()));
    // Every one of them is locked against any other writer.
    for (const session of sessions)
      await expect(plain.open(session.id, { lockWaitMs: 0 })).rejects.toMatchObject({
        code: "session_in_use",
      });
    await Promise.all(sessions.map((session) => session.close()));
    // Closed: unlocked, the connections stay for the next sessions.
    for (const session of sessions) {
      const reopened = await plain.open(session.id, { lockWaitMs: 0 });
      expect(reopened.entries().some((e) => e.type === "custom")).toBe(true);
      await reopened.close();
    }
    expect(await lockBackends()).toHaveLength(2);
    await shared.close();
    expect(await lockBackends()).toHaveLength(0);
  });

  it("one writer per session in this process: a second open here is refused, though the lock is re-entrant on its connection", async () => {
    const shared = new PostgresSessionStore(db.url, { lockConnections: 1 });
    const session = await shared.create();
    const refusal = await shared.open(session.id, { lockWaitMs: 200 }).catch((error: unknown) => error);
    expect(isHarnessError(refusal, "session_in_use")).toBe(true);
    expect((refusal as Error).message).toContain("another run in this process");
    // Two opens at once: exactly one wins.
    await session.close();
    const both = await Promise.allSettled([
      shared.open(session.id, { lockWaitMs: 0 }),
      shared.open(session.id, { lockWaitMs: 0 }),
    ]);
    expect(both.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    for (const r of both) if (r.status === "fulfilled") await r.value.close();
    // A waiting opener gets it once the holder closes.
    const first = await shared.open(session.id);
    const waiting = shared.open(session.id, { lockWaitMs: 3_000 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    await first.close();
    const second = await waiting;
    second.append({ type: "custom", customType: "second" });
    await second.close();
    await shared.close();
  });

  it("a lost lock connection fences every session on it; the next open gets a new connection", async () => {
    const shared = new PostgresSessionStore(db.url, { lockConnections: 1 });
    const sessions = await Promise.all([shared.create(), shared.create(), shared.create()]);
    for (const session of sessions) session.append({ type: "custom", customType: "before" });
    await Promise.all(sessions.map((session) => session.whenStored()));
    const [backend] = await lockBackends();
    await db.query("SELECT pg_terminate_backend($1)", [backend]);
    // Another writer takes each session once the server has dropped the locks.
    for (const session of sessions) {
      const next = await openWhenFree(plain, session.id);
      next.append({ type: "custom", customType: "new writer" });
      await next.close();
    }
    // The old holders know: they write nothing more.
    for (const session of sessions)
      expect(() => session.append({ type: "custom", customType: "stale writer" })).toThrow(
        expect.objectContaining({ code: "session" }),
      );
    for (const session of sessions) await session.close();
    const again = await shared.open(sessions[0]?.id as string);
    expect(shared.lockConnectionsOpen).toBe(1);
    const backends = await lockBackends();
    expect(backends).toHaveLength(1);
    expect(backends[0]).not.toBe(backend);
    await again.close();
    for (const session of sessions) {
      const final = await plain.open(session.id, { readOnly: true });
      expect(final.entries().map((e) => (e.type === "custom" ? e.customType : e.type))).toEqual([
        "before",
        "new writer",
      ]);
    }
    await shared.close();
  });

  it("a process frozen by SIGSTOP loses every session on its shared lock connection within its lease", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const session = await plain.create();
      ids.push(session.id);
      await session.close();
    }
    const lease = 1_500;
    const child = spawn(process.execPath, [lockChild, db.url, ids.join(","), String(lease), "shared"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const lines: string[] = [];
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      lines.push(...chunk.split("\n").filter(Boolean));
    });
    try {
      for (let i = 0; i < 200 && !lines.some((line) => line.startsWith("opened")); i++)
        await new Promise((resolve) => setTimeout(resolve, 50));
      expect(lines.find((line) => line.startsWith("opened"))).toBeDefined();
      for (const id of ids)
        await expect(plain.open(id, { lockWaitMs: 0 })).rejects.toMatchObject({ code: "session_in_use" });
      child.kill("SIGSTOP");
      const frozenAt = Date.now();
      for (const id of ids) {
        const next = await openWhenFree(plain, id, 100);
        await next.close();
      }
      const took = Date.now() - frozenAt;
      expect(took).toBeGreaterThanOrEqual(lease - 200);
      expect(took).toBeLessThan(lease * 4);
    } finally {
      child.kill("SIGKILL");
    }
  }, 30_000);
});
