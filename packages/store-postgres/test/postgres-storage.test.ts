/**
 * PostgreSQL session storage against a real server: round trips, one transaction
 * per write group, the advisory lock (refused while held, released when the holder
 * is SIGKILLed), stored rows that are damaged, and migrations.
 */
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  AgentHarness,
  createSessionHeader,
  isHarnessError,
  type Session,
  type StoredEntry,
} from "@rein/harness";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresSessionStore, PostgresStorage, shippedMigrations } from "../src/index.js";
import { type TestDatabase, testDatabase } from "./support.js";

let db: TestDatabase;
let store: PostgresSessionStore;
const children: ChildProcess[] = [];

beforeAll(async () => {
  db = await testDatabase();
  store = new PostgresSessionStore(db.url);
  await store.ready();
}, 60_000);
afterAll(async () => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await db?.done();
});

describe("round trips", () => {
  it("what a session appends reopens identical, in append order, leaf restored", async () => {
    const session = await store.create({ cwd: "/work", name: "first" });
    session.appendMessage({ role: "user", content: "hello", timestamp: 1 });
    session.appendJournal({ event: "run_start", runId: "r1" });
    const labelled = session.appendMessage({ role: "user", content: "again", timestamp: 2 });
    session.setLabel(labelled.id, "mark");
    session.appendAll([
      { type: "custom", customType: "a" },
      { type: "custom", customType: "b" },
    ]);
    const before = [...session.entries(), ...session.journal()].map((e) => e.id).sort();
    await session.close();

    const reopened = await store.open(session.id.slice(0, 8));
    expect([...reopened.entries(), ...reopened.journal()].map((e) => e.id).sort()).toEqual(before);
    expect(reopened.leafId).toBe(session.leafId);
    expect(reopened.labelOf(labelled.id)).toBe("mark");
    expect(reopened.name).toBe("first");
    expect(reopened.header).toEqual(session.header);
    const rows = await db.query<{ seq: string; entry_id: string }>(
      "SELECT seq, entry_id FROM rein_entries WHERE session_id = $1 ORDER BY seq",
      [session.id],
    );
    expect(rows.map((row) => Number(row.seq))).toEqual(rows.map((_, i) => i + 1));
    await reopened.close();
  });

  it("a harness run on a postgres session persists every message before listeners see it", async () => {
    const { createModels, fauxAssistantMessage, fauxProvider } = await import("@earendil-works/pi-ai");
    const faux = fauxProvider();
    const models = createModels();
    models.setProvider(faux.provider);
    faux.setResponses([fauxAssistantMessage("hi there")]);
    const session = await store.create();
    const harness = new AgentHarness({ session, model: faux.getModel(), models });
    const unseen: string[] = [];
    harness.on("message_end", async () => {
      const last = session.entries().at(-1) as StoredEntry;
      const rows = await db.query("SELECT 1 FROM rein_entries WHERE session_id = $1 AND entry_id = $2", [
        session.id,
        last.id,
      ]);
      if (rows.length !== 1) unseen.push(last.id);
    });
    const outcome = await harness.prompt("hello");
    faux.setResponses([]);
    expect(outcome.status).toBe("completed");
    expect(unseen).toEqual([]);
    await session.close();
    const reopened = await store.open(session.id, { readOnly: true });
    expect(reopened.buildContext().messages.map((m) => m.role)).toEqual(["user", "assistant"]);
  });

  it("a write group is one transaction: a failing row takes the whole group with it, and the session fails", async () => {
    await db.query(`CREATE OR REPLACE FUNCTION refuse_boom() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.body LIKE '%"boom"%' THEN RAISE EXCEPTION 'boom refused'; END IF; RETURN NEW; END $$`);
    await db.query(
      "CREATE TRIGGER refuse_boom BEFORE INSERT ON rein_entries FOR EACH ROW EXECUTE FUNCTION refuse_boom()",
    );
    try {
      const session = await store.create();
      session.append({ type: "custom", customType: "kept" });
      await session.whenStored();
      session.appendAll([
        { type: "custom", customType: "one" },
        { type: "custom", customType: "two" },
        { type: "custom", customType: "boom" },
      ]);
      await expect(session.whenStored()).rejects.toMatchObject({ code: "session" });
      expect(() => session.append({ type: "custom", customType: "later" })).toThrow(
        expect.objectContaining({ code: "session" }),
      );
      await session.close();
      const reopened = await store.open(session.id, { readOnly: true });
      expect(reopened.entries().map((e) => (e.type === "custom" ? e.customType : e.type))).toEqual(["kept"]);
    } finally {
      await db.query("DROP TRIGGER refuse_boom ON rein_entries");
    }
  });

  it("an entry that cannot be serialised is refused at once and nothing is written", async () => {
    const session = await store.create();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => session.append({ type: "custom", customType: "bad", data: cyclic })).toThrow(
      expect.objectContaining({ code: "invalid_argument" }),
    );
    session.append({ type: "custom", customType: "fine" });
    await session.close();
    const reopened = await store.open(session.id, { readOnly: true });
    expect(reopened.entries()).toHaveLength(1);
  });
});

const lockChild = path.join(path.dirname(fileURLToPath(import.meta.url)), "lock-child.mjs");

describe("the one-writer lock", () => {
  function hold(id: string, leaseMs?: number): Promise<{ child: ChildProcess; line: string }> {
    const args = [lockChild, db.url, id, ...(leaseMs === undefined ? [] : [String(leaseMs)])];
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
    children.push(child);
    return new Promise((resolve) => {
      let out = "";
      child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
        out += chunk;
        if (out.includes("\n")) resolve({ child, line: out.split("\n")[0] as string });
      });
    });
  }

  it("a second writer is refused while the first holds the session, in this process or another", async () => {
    const session = await store.create();
    await expect(store.open(session.id)).rejects.toMatchObject({ code: "session_in_use" });
    const other = await hold(session.id);
    expect(other.line).toMatch(
      /^failed session_in_use session in use: postgres session \S+ is locked by rein session lock [0-9a-f]{8} pid \d+/,
    );
    // Readers are never refused.
    const reader = await store.open(session.id, { readOnly: true });
    expect(reader.id).toBe(session.id);
    await session.close();
    const again = await store.open(session.id);
    await again.close();
  });

  it("the refusal names the holder's process; the lock is released when the holder is SIGKILLed", async () => {
    const session = await store.create();
    const id = session.id;
    await session.close();
    const holder = await hold(id);
    expect(holder.line).toMatch(/^opened \d+$/);
    const pid = holder.line.split(" ")[1] as string;
    const refusal = await store.open(id).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isHarnessError(refusal, "session_in_use")).toBe(true);
    expect((refusal as Error).message).toContain(`pid ${pid}`);

    holder.child.kill("SIGKILL");
    await new Promise((resolve) => holder.child.once("exit", resolve));
    // The server notices the dead connection and drops its lock: no stale lock to guess about.
    let reopened: Session | undefined;
    for (let attempt = 0; attempt < 50 && reopened === undefined; attempt++) {
      reopened = await store.open(id).catch((error: unknown) => {
        if (!isHarnessError(error, "session_in_use")) throw error;
        return new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 100));
      });
    }
    expect(reopened).toBeDefined();
    const writers = (reopened as Session)
      .entries()
      .flatMap((e) => (e.type === "custom" && e.customType === "writer" ? [e.data] : []));
    expect(writers).toEqual([{ pid: Number(pid) }]);
    await reopened?.close();
  }, 30_000);
});

describe("the lock's lease", () => {
  it("a holder frozen by SIGSTOP loses the session within its lease; woken, it writes nothing more", async () => {
    const session = await store.create();
    const id = session.id;
    await session.close();
    const lease = 1_500;
    const child = spawn(process.execPath, [lockChild, db.url, id, String(lease)], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    children.push(child);
    const lines: string[] = [];
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      lines.push(...chunk.split("\n").filter(Boolean));
    });
    const waitFor = async (what: RegExp) => {
      for (let i = 0; i < 200 && !lines.some((line) => what.test(line)); i++)
        await new Promise((resolve) => setTimeout(resolve, 50));
      return lines.find((line) => what.test(line));
    };
    expect(await waitFor(/^opened/)).toBeDefined();
    await expect(store.open(id, { lockWaitMs: 0 })).rejects.toMatchObject({ code: "session_in_use" });
    child.kill("SIGSTOP");
    const frozenAt = Date.now();
    let next: Session | undefined;
    while (next === undefined && Date.now() - frozenAt < lease * 4) {
      next = await store.open(id, { lockWaitMs: 200 }).catch((error: unknown) => {
        if (!isHarnessError(error, "session_in_use")) throw error;
        return undefined;
      });
    }
    const took = Date.now() - frozenAt;
    expect(next).toBeDefined();
    // Not before the lease: a live holder that is only quiet keeps its lock (see the renewal test).
    expect(took).toBeGreaterThanOrEqual(lease - 200);
    expect(took).toBeLessThan(lease * 3);
    (next as Session).append({ type: "custom", customType: "next writer" });
    await (next as Session).whenStored();
    child.kill("SIGCONT");
    expect(await waitFor(/^(wrote|refused)/)).toBe("refused session");
    await next?.close();
    const final = await store.open(id, { readOnly: true });
    expect(final.entries().map((e) => (e.type === "custom" ? e.customType : e.type))).toEqual([
      "writer",
      "next writer",
    ]);
    child.kill("SIGKILL");
  }, 30_000);

  it("a live holder renews its lease: quiet for several leases, it keeps the session and writes", async () => {
    const lease = 600;
    const leased = new PostgresSessionStore(db.url, { leaseMs: lease });
    const session = await leased.create();
    await new Promise((resolve) => setTimeout(resolve, lease * 4));
    await expect(store.open(session.id, { lockWaitMs: 0 })).rejects.toMatchObject({ code: "session_in_use" });
    session.append({ type: "custom", customType: "still mine" });
    await session.whenStored();
    await session.close();
  });
});

describe("a backend terminated under an open session", () => {
  const backendOf = async (role: "writer" | "lock", id: string) =>
    (
      await db.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE application_name LIKE $1", [
        `rein session ${role} ${id.slice(0, 8)} pid ${process.pid} %`,
      ])
    ).map((row) => row.pid);

  it("a writable session writes through the one connection that holds its lock", async () => {
    // So a write still running when its process dies commits (or not) before the server
    // drops the lock: the next writer reads after it, never beside it.
    const session = await store.create();
    expect(await backendOf("lock", session.id)).toHaveLength(1);
    expect(await backendOf("writer", session.id)).toHaveLength(0);
    await session.close();
    expect(await backendOf("lock", session.id)).toHaveLength(0);
  });

  it("its connection's: the session stops writing, keeps what it stored, and another writer may take it", async () => {
    const session = await store.create();
    session.append({ type: "custom", customType: "before" });
    await session.whenStored();
    const backends = await backendOf("lock", session.id);
    expect(backends).toHaveLength(1);
    await db.query("SELECT pg_terminate_backend($1)", [backends[0]]);
    let next: Session | undefined;
    for (let attempt = 0; attempt < 50 && next === undefined; attempt++) {
      next = await store
        .open(session.id)
        .catch(() => new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 50)));
    }
    expect(next).toBeDefined();
    // The old holder knows it lost its connection and lock: it writes nothing more.
    expect(() => session.append({ type: "custom", customType: "stale writer" })).toThrow(
      expect.objectContaining({ code: "session" }),
    );
    (next as Session).append({ type: "custom", customType: "new writer" });
    await next?.close();
    await session.close();
    const final = await store.open(session.id, { readOnly: true });
    expect(final.entries().map((e) => (e.type === "custom" ? e.customType : e.type))).toEqual([
      "before",
      "new writer",
    ]);
  });
});

describe("stored rows that are damaged", () => {
  /** Each mutation of one row's body (`null`: the row is deleted). */
  const mutations: [string, (body: string) => string | null][] = [
    ["truncated body", (body) => body.slice(0, Math.floor(body.length / 2))],
    ["not an object", () => "[1,2]"],
    ["parent renamed", (body) => body.replace(/"parentId":"[^"]+"/, '"parentId":"nowhere"')],
    ["type changed", (body) => body.replace(/"type":"[a-z_]+"/, '"type":"unknown_kind"')],
    ["id duplicated", (body) => body.replace(/"id":"[^"]+"/, '"id":"dup"')],
    ["row deleted", () => null],
    [
      "random byte",
      (body) => {
        const at = Math.floor(Math.random() * body.length);
        const byte = String.fromCharCode(33 + Math.floor(Math.random() * 90));
        return `${body.slice(0, at)}${byte}${body.slice(at + 1)}`;
      },
    ],
  ];

  it("each damaged row either loads as a valid session or fails with a HarnessError naming the session, never a TypeError", async () => {
    const source = await store.create();
    for (let i = 0; i < 6; i++) {
      source.appendMessage({ role: "user", content: `m${i}`, timestamp: i });
      source.appendJournal({ event: "run_start", runId: `r${i}` });
    }
    const id = source.id;
    await source.close();
    const rows = await db.query<{ seq: string; body: string }>(
      "SELECT seq, body FROM rein_entries WHERE session_id = $1 ORDER BY seq",
      [id],
    );
    const outcomes = { loaded: 0, refused: 0 };
    for (let round = 0; round < 60; round++) {
      const [name, mutate] = mutations[round % mutations.length] as (typeof mutations)[number];
      const row = rows[Math.floor(Math.random() * rows.length)] as { seq: string; body: string };
      const body = mutate(row.body);
      if (body === null)
        await db.query("DELETE FROM rein_entries WHERE session_id = $1 AND seq = $2", [id, row.seq]);
      else
        await db.query("UPDATE rein_entries SET body = $1 WHERE session_id = $2 AND seq = $3", [
          body,
          id,
          row.seq,
        ]);
      try {
        const session = await store.open(id, { readOnly: true });
        session.buildContext();
        outcomes.loaded++;
      } catch (error) {
        expect(isHarnessError(error), `${name}: ${String(error)}`).toBe(true);
        expect((error as Error).message).toContain(id);
        outcomes.refused++;
      }
      // Restore the row for the next round.
      await db.query("DELETE FROM rein_entries WHERE session_id = $1 AND seq = $2", [id, row.seq]);
      await db.query(
        "INSERT INTO rein_entries (session_id, seq, entry_id, type, body) VALUES ($1, $2, 'x', 'x', $3)",
        [id, row.seq, row.body],
      );
    }
    expect(outcomes.refused).toBeGreaterThan(0);
    expect(outcomes.loaded + outcomes.refused).toBe(60);
  });
});

describe("migrations", () => {
  it("run once however many stores open the database at the same time", async () => {
    const fresh = await testDatabase();
    try {
      await Promise.all(Array.from({ length: 5 }, () => new PostgresSessionStore(fresh.url).ready()));
      const versions = await fresh.query<{ version: number }>(
        "SELECT version FROM rein_migrations ORDER BY version",
      );
      expect(versions.map((row) => row.version)).toEqual(shippedMigrations().map((m) => m.version));
    } finally {
      await fresh.done();
    }
  }, 60_000);

  it("a database migrated by a newer package is refused, not written", async () => {
    const fresh = await testDatabase();
    try {
      await new PostgresSessionStore(fresh.url).ready();
      await fresh.query("INSERT INTO rein_migrations (version, name) VALUES (999, 'future')");
      await expect(new PostgresSessionStore(fresh.url).ready()).rejects.toMatchObject({ code: "session" });
    } finally {
      await fresh.done();
    }
  }, 60_000);

  it("an open of a session that does not exist says so", async () => {
    await expect(PostgresStorage.open(db.url, "no-such-session")).rejects.toMatchObject({ code: "session" });
    await expect(store.open("zzzz-none")).rejects.toMatchObject({ code: "invalid_argument" });
  });

  it("a header row that is not this session's is refused", async () => {
    const header = createSessionHeader();
    await db.query("INSERT INTO rein_sessions (id, header, created_at) VALUES ($1, $2, 0)", [
      header.id,
      JSON.stringify({ ...header, id: "someone-else" }),
    ]);
    await expect(store.open(header.id, { readOnly: true })).rejects.toMatchObject({ code: "session" });
  });
});
