import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AgentHarness } from "../src/harness/agent-harness.js";
import { SessionStore } from "../src/session/session-store.js";
import { echoTool } from "./support/harness-fixture.js";
import { callTools, reply, scriptedModel } from "./support/scripted-model.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rein-harness-"));
  dirs.push(dir);
  return dir;
};

describe("a harness over a JSONL session", () => {
  it("reopening restores the conversation and the leaf, and the next prompt continues it", async () => {
    const dir = tempDir();
    const store = new SessionStore(dir);
    const scripted = scriptedModel();
    const echo = echoTool();
    const first = store.create({ cwd: dir });
    const harness = new AgentHarness({
      session: first,
      model: scripted.model,
      models: scripted.collection,
      tools: [echo.tool],
    });
    scripted.script([callTools(["echo", { text: "persisted" }]), reply("first answer")]);
    await harness.prompt("one");
    const leaf = first.leafId;
    first.close();

    const reopened = store.open(first.id);
    expect(reopened.leafId).toBe(leaf);
    const again = new AgentHarness({
      session: reopened,
      model: scripted.model,
      models: scripted.collection,
      tools: [echo.tool],
    });
    scripted.script([reply("second answer")]);
    await again.prompt("two");
    expect(scripted.requests[2]?.context.messages.map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "toolResult",
      "assistant",
      "user",
    ]);
    expect(reopened.buildContext().messages.at(2)).toMatchObject({ decision: { decision: "allow" } });
    reopened.close();
  });

  it("while a harness holds a session, a second open fails with session_in_use and the file is unchanged", async () => {
    const dir = tempDir();
    const store = new SessionStore(dir);
    const session = store.create();
    const scripted = scriptedModel();
    const harness = new AgentHarness({ session, model: scripted.model, models: scripted.collection });
    scripted.script([reply("hi")]);
    await harness.prompt("hello");
    const file = store.pathOf(session.id);
    const before = fs.readFileSync(file);
    expect(() => store.open(session.id)).toThrow(expect.objectContaining({ code: "session_in_use" }));
    expect(fs.readFileSync(file).equals(before)).toBe(true);
    session.close();
  });

  it("a run whose session cannot be written rejects with a session error and leaves the file loadable", async () => {
    const dir = tempDir();
    const store = new SessionStore(dir);
    const session = store.create();
    const scripted = scriptedModel();
    const harness = new AgentHarness({ session, model: scripted.model, models: scripted.collection });
    const file = store.pathOf(session.id);
    scripted.script([
      () => {
        fs.rmSync(file); // deleted under the running process
        return reply("lost?");
      },
    ]);
    await expect(harness.prompt("hello")).rejects.toMatchObject({ code: "session" });
    expect(fs.existsSync(file)).toBe(false);
    expect(store.list().some((s) => s.id === session.id)).toBe(false); // never silently recreated
    session.close();
  });
});
