/**
 * An asynchronous storage (a database) returns promises from its writes: the harness
 * awaits them before it broadcasts or runs a tool, a failed write fails the session,
 * and a synchronous storage keeps its fast path (no write is ever left in flight).
 */
import { describe, expect, it } from "vitest";
import type { StoredEntry } from "../src/session/entries.js";
import { MemoryStorage } from "../src/session/memory-storage.js";
import { Session } from "../src/session/session.js";
import type { LoadedSession, SessionStorage } from "../src/session/storage.js";
import { echoTool, fixture } from "./support/harness-fixture.js";
import { callTools, reply } from "./support/scripted-model.js";

/**
 * Memory storage whose writes land a macrotask later (like a database round trip),
 * in call order; after `failAt` writes, that write and every later one reject.
 */
class SlowStorage implements SessionStorage {
  readonly kind = "slow";
  readonly inner = new MemoryStorage();
  /** Ids of the entries actually stored, in order. */
  readonly stored: string[] = [];
  failAt = Number.POSITIVE_INFINITY;
  #writes = 0;
  #chain: Promise<void> = Promise.resolve();
  #failed = false;

  load(): LoadedSession {
    return this.inner.load();
  }
  append(entry: StoredEntry): Promise<void> {
    return this.appendAll([entry]);
  }
  appendAll(entries: readonly StoredEntry[]): Promise<void> {
    const n = ++this.#writes;
    const write = this.#chain.then(
      () =>
        new Promise<void>((resolve, reject) => {
          setTimeout(() => {
            if (this.#failed || n >= this.failAt) {
              this.#failed = true;
              reject(new Error(`write ${n} refused`));
              return;
            }
            this.inner.appendAll(entries);
            this.stored.push(...entries.map((entry) => entry.id));
            resolve();
          }, 1);
        }),
    );
    this.#chain = write.catch(() => {});
    return write;
  }
  sync(): Promise<void> {
    return this.#chain;
  }
  close(): Promise<void> {
    return this.#chain;
  }
}

describe("asynchronous session storage", () => {
  it("every listener sees a message_end only after its entry is stored", async () => {
    const storage = new SlowStorage();
    const session = Session.create(storage);
    const f = fixture({ session });
    const unseen: string[] = [];
    f.harness.on("message_end", () => {
      const last = session.entries().at(-1) as StoredEntry;
      if (!storage.stored.includes(last.id)) unseen.push(last.id);
    });
    f.scripted.script([reply("hello")]);
    const outcome = await f.harness.prompt("hi");
    expect(outcome.status).toBe("completed");
    expect(unseen).toEqual([]);
    expect(f.types().filter((t) => t === "message_end")).toHaveLength(2);
    // Everything the session holds reached storage, in the same order.
    await session.close();
    const all = [...session.entries(), ...session.journal()].map((e) => e.id).sort();
    expect([...storage.stored].sort()).toEqual(all);
    expect(storage.load().entries.map((e) => e.id)).toEqual(storage.stored);
  });

  it("a tool runs only after its tool_start record is stored", async () => {
    const storage = new SlowStorage();
    const session = Session.create(storage);
    let startStored: boolean | undefined;
    const echo = echoTool({
      execute: async (_args, context) => {
        const start = session
          .journal()
          .find((r) => r.event === "tool_start" && r.toolCallId === context.toolCallId);
        startStored = start !== undefined && storage.stored.includes(start.id);
        return { content: [{ type: "text", text: "ok" }] };
      },
    });
    const f = fixture({ session, tools: [echo.tool] });
    f.scripted.script([callTools(["echo", { text: "a" }]), reply("done")]);
    await f.harness.prompt("go");
    expect(startStored).toBe(true);
  });

  it("save_point and settled come after the turn's writes are stored", async () => {
    const storage = new SlowStorage();
    const session = Session.create(storage);
    const f = fixture({ session });
    const lagging: string[] = [];
    for (const type of ["save_point", "settled"] as const) {
      f.harness.on(type, () => {
        if (session.whenStored() !== undefined) lagging.push(type);
      });
    }
    f.harness.on("turn_end", () => f.harness.appendEntry({ type: "custom", customType: "note", data: 1 }));
    f.scripted.script([reply("done")]);
    await f.harness.prompt("go");
    expect(lagging).toEqual([]);
    expect(storage.load().entries.some((e) => e.type === "custom")).toBe(true);
  });

  it("a failed write fails the session: the run reports it, later writes are refused, storage stays loadable", async () => {
    const storage = new SlowStorage();
    const session = Session.create(storage);
    const f = fixture({ session });
    storage.failAt = 3; // the third write of the run and every later one fail
    f.scripted.script([reply("never stored")]);
    await expect(f.harness.prompt("go")).rejects.toMatchObject({ code: "session" });
    expect(() => session.appendJournal({ event: "run_start", runId: "x" })).toThrow(
      expect.objectContaining({ code: "session" }),
    );
    await expect(session.whenStored()).rejects.toMatchObject({ code: "session" });
    // Storage holds exactly the two writes that succeeded, and opens as a valid session.
    const loaded = storage.load();
    expect(loaded.entries.map((e) => e.id)).toEqual(storage.stored);
    expect(storage.stored).toHaveLength(2);
    const reopened = Session.open(new MemoryStorage(loaded.header, loaded.entries));
    expect(reopened.journal().length + reopened.entries().length).toBe(2);
    expect(session.journal().length + session.entries().length).toBeGreaterThan(2);
  });

  it("memory and JSONL stay synchronous: no write is ever in flight", async () => {
    const f = fixture({ tools: [echoTool().tool] });
    const inFlight: string[] = [];
    f.harness.subscribe((event) => {
      if (f.session.whenStored() !== undefined) inFlight.push(event.type);
    });
    f.scripted.script([callTools(["echo", { text: "a" }]), reply("done")]);
    await f.harness.prompt("go");
    f.harness.appendEntry({ type: "custom", customType: "idle" });
    expect(f.session.whenStored()).toBeUndefined();
    expect(f.session.close()).toBeUndefined();
    expect(inFlight).toEqual([]);
  });
});
