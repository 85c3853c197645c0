/**
 * `sessionsWithJournal(event)`: the sessions `rein approvals` has to open, found in one
 * query. It names every session holding a record of the event (answered or not, the
 * caller filters) and no session that only talks about it in a message.
 */
import type { Session } from "@rein/harness";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresSessionStore } from "../src/index.js";
import { type TestDatabase, testDatabase } from "./support.js";

let db: TestDatabase;
let store: PostgresSessionStore;

beforeAll(async () => {
  db = await testDatabase();
  store = new PostgresSessionStore(db.url);
  await store.ready();
}, 60_000);
afterAll(async () => {
  await db?.done();
});

function park(session: Session, approvalId: string): void {
  session.appendJournal({
    event: "tool_park",
    runId: "r1",
    approvalId,
    toolCallId: `call-${approvalId}`,
    toolName: "push",
    args: { remote: "origin" },
    argsHash: "0".repeat(64),
    askedBy: "deploy:push",
    reason: "pushing needs a person",
  });
}

describe("sessionsWithJournal", () => {
  it("names exactly the sessions holding a record of the event, most recently modified first", async () => {
    const plain = await store.create();
    plain.appendMessage({ role: "user", content: 'what is "event":"tool_park"?', timestamp: 1 });
    plain.appendJournal({ event: "run_start", runId: "r0" });
    const first = await store.create();
    park(first, "a1");
    const answered = await store.create();
    park(answered, "a2");
    answered.appendJournal({
      event: "tool_approval",
      approvalId: "a2",
      toolCallId: "call-a2",
      decision: "deny",
      by: "person:alice",
      reason: "not today",
      argsHash: "0".repeat(64),
    });
    for (const session of [plain, first, answered]) {
      await session.whenStored();
      await session.close();
    }
    expect(await store.sessionsWithJournal("tool_park")).toEqual([answered.id, first.id]);
    expect(await store.sessionsWithJournal("tool_approval")).toEqual([answered.id]);
    expect(await store.sessionsWithJournal("no_such_event")).toEqual([]);
  });

  it("a damaged row does not fail the search", async () => {
    const session = await store.create();
    park(session, "b1");
    await session.whenStored();
    await session.close();
    const broken = await store.create();
    broken.appendJournal({ event: "run_start", runId: "r9" });
    await broken.whenStored();
    await broken.close();
    await db.query("UPDATE rein_entries SET body = 'not json' WHERE session_id = $1", [broken.id]);
    expect(await store.sessionsWithJournal("tool_park")).toContain(session.id);
    expect(await store.sessionsWithJournal("tool_park")).not.toContain(broken.id);
  });
});
