/**
 * Recovery on open is the same on PostgreSQL as on JSONL: one crash state (a run
 * killed inside a tool, with a steer and a pending write accepted), as a JSONL file
 * and imported into PostgreSQL, reopens to the same recovery report and the same
 * repaired session, continues the same, and is not repaired twice.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createModels, fauxAssistantMessage, fauxProvider, fauxToolCall } from "@earendil-works/pi-ai";
import { AgentHarness, type AgentTool, JsonlStorage, Session, type StoredEntry, Type } from "@rein/harness";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresSessionStore } from "../src/index.js";
import { type TestDatabase, testDatabase } from "./support.js";

let db: TestDatabase;
let store: PostgresSessionStore;
let dir: string;

beforeAll(async () => {
  db = await testDatabase();
  store = new PostgresSessionStore(db.url);
  await store.ready();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "rein-parity-"));
}, 60_000);
afterAll(async () => {
  fs.rmSync(dir, { recursive: true, force: true });
  await db?.done();
});

/** What an entry says, without ids and timestamps. */
function key(entry: StoredEntry): string {
  if (entry.type === "journal") return `journal:${entry.event}`;
  if (entry.type !== "message") return entry.type;
  const m = entry.message;
  const text =
    typeof m.content === "string"
      ? m.content
      : m.content
          .map((b) => (b.type === "text" ? b.text : b.type === "toolCall" ? `call:${b.id}` : b.type))
          .join("|");
  return `${m.role}:${"toolCallId" in m ? m.toolCallId : ""}:${text}`;
}

function harnessOn(session: Session, replies: ReturnType<typeof fauxAssistantMessage>[], tool: AgentTool) {
  const faux = fauxProvider();
  const models = createModels();
  models.setProvider(faux.provider);
  faux.setResponses(replies);
  const harness = new AgentHarness({ session, model: faux.getModel(), models, tools: [tool] });
  return { harness, done: () => faux.setResponses([]) };
}

describe("recovery on open, JSONL and PostgreSQL", () => {
  it("the same crash state reopens to the same report and the same repaired, continuing session", async () => {
    const file = path.join(dir, "live.jsonl");
    const crash = path.join(dir, "crash.jsonl");
    const live = Session.create(
      JsonlStorage.create(file, { type: "session", version: 1, id: "parity-1", createdAt: 1 }),
    );
    let running: AgentHarness | undefined;
    const tool: AgentTool = {
      name: "echo",
      description: "Echo",
      parameters: Type.Object({ text: Type.String() }),
      risk: "read",
      execute: async () => {
        running?.steer("s-1");
        running?.appendEntry({ type: "custom", customType: "note", data: "k-1" });
        fs.copyFileSync(file, crash); // a SIGKILL now would leave exactly this
        return { content: [{ type: "text", text: "ok" }] };
      },
    };
    const first = harnessOn(
      live,
      [
        fauxAssistantMessage([fauxToolCall("echo", { text: "x" }, { id: "c1" })], { stopReason: "toolUse" }),
        fauxAssistantMessage("done"),
      ],
      tool,
    );
    running = first.harness;
    await first.harness.prompt("go");
    first.done();
    live.close();

    expect((await store.importJsonl(crash)).id).toBe("parity-1");
    const fromFile = Session.open(JsonlStorage.open(crash));
    const fromDb = await store.open("parity-1");
    const before = fromFile.storage.load().entries.length;

    const replies = () => [fauxAssistantMessage("after s-1"), fauxAssistantMessage("after again")];
    const a = harnessOn(fromFile, replies(), tool);
    const b = harnessOn(fromDb, replies(), tool);
    expect(a.harness.recovery).toBeDefined();
    expect(b.harness.recovery).toEqual(a.harness.recovery);
    expect(a.harness.recovery).toMatchObject({
      toolResults: [{ toolCallId: "c1", started: true, completed: false }],
      pendingWrites: 1,
    });
    expect(a.harness.queued("steer")).toBe(1);
    expect(b.harness.queued("steer")).toBe(1);

    for (const side of [a, b]) {
      expect((await side.harness.prompt("again")).status).toBe("completed");
      side.done();
    }
    await fromDb.close();
    fromFile.close();

    const fileEntries = JsonlStorage.open(crash, { readOnly: true }).load().entries;
    const dbSession = await store.open("parity-1", { readOnly: true });
    const dbEntries = dbSession.storage.load().entries;
    expect(fileEntries.length).toBeGreaterThan(before);
    expect(dbEntries.map(key)).toEqual(fileEntries.map(key));

    // Repaired once: neither reopens to another recovery.
    const again = [Session.open(JsonlStorage.open(crash)), await store.open("parity-1")];
    for (const session of again) {
      const side = harnessOn(session, [], tool);
      expect(side.harness.recovery).toBeUndefined();
      side.done();
      await session.close();
    }
  });
});
