/**
 * The durability setting decides which syncs wait for the disk: `strict` every one,
 * `save-point` settle's, `group` none (the fsyncs run off the main thread and
 * coalesce: group commit), `none` leaves flushing to the OS. Pinned on the syncs the
 * harness asks its session for during one run with a tool call (two save points and
 * a settle).
 */

import { describe, expect, it } from "vitest";
import { MemoryStorage, Session } from "../src/index.js";
import { echoTool, fixture } from "./support/harness-fixture.js";
import { callTools, reply } from "./support/scripted-model.js";

async function syncsOf(durability: "save-point" | "group" | "strict" | "none") {
  const session = Session.create(new MemoryStorage());
  const waits: boolean[] = [];
  const sync = session.sync.bind(session);
  session.sync = (options?: { wait?: boolean }) => {
    waits.push(options?.wait ?? true);
    return sync(options);
  };
  const f = fixture({ session, durability, tools: [echoTool().tool] });
  f.scripted.script([callTools(["echo", { text: "a" }]), reply("done")]);
  const outcome = await f.harness.prompt("go");
  expect(outcome.status).toBe("completed");
  return waits;
}

describe("durability modes", () => {
  it.each([
    ["strict", [true, true, true]],
    ["save-point", [false, false, true]],
    ["group", [false, false, false]],
    ["none", []],
  ] as const)("%s: the syncs of a run wait %j", async (durability, waits) => {
    expect(await syncsOf(durability)).toEqual(waits);
  });

  it("an unknown mode is refused naming the option and the modes", () => {
    expect(() => fixture({ durability: "sometimes" as never })).toThrow(
      expect.objectContaining({ code: "invalid_argument", message: expect.stringContaining('"group"') }),
    );
  });
});
