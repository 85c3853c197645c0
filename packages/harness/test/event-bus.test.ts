import { describe, expect, it } from "vitest";
import { EventBus } from "../src/events/event-bus.js";
import { PluginDriver } from "../src/hooks/plugin-driver.js";

const bus = () => new EventBus(new PluginDriver());

describe("event bus: events nobody listens to", () => {
  it("an event of a type nobody listens to is not delivered, yet awaiting it waits for the events before it", async () => {
    const events = bus();
    const log: string[] = [];
    let finishSlow: () => void = () => undefined;
    events.on("agent_start", async () => {
      await new Promise<void>((resolve) => {
        finishSlow = resolve;
      });
      log.push("agent_start delivered");
    });
    events.subscribe(() => undefined); // removed below: only typed listeners remain
    const seen: string[] = [];
    const off = events.subscribe((event) => {
      seen.push(event.type);
    });
    off();
    off(); // a second call removes nothing more (the type counts stay right)
    void events.emit({ type: "agent_start", runId: "r1" });
    const unheard = events.emit({ type: "turn_start", runId: "r1", turnId: "t0", turnIndex: 0 }).then(() => {
      log.push("turn_start awaited");
    });
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(log).toEqual([]);
    finishSlow();
    await unheard;
    expect(log).toEqual(["agent_start delivered", "turn_start awaited"]);
    expect(seen).toEqual([]);
  });

  it("a listener for one type sees that type only; a listener for every type sees all again", async () => {
    const events = bus();
    const typed: string[] = [];
    const every: string[] = [];
    events.on("turn_start", (event) => {
      typed.push(event.type);
    });
    await events.emit({ type: "agent_start", runId: "r1" });
    await events.emit({ type: "turn_start", runId: "r1", turnId: "t0", turnIndex: 0 });
    const off = events.subscribe((event) => {
      every.push(event.type);
    });
    await events.emit({ type: "agent_start", runId: "r2" });
    off();
    await events.emit({ type: "agent_start", runId: "r3" });
    await events.emit({ type: "turn_start", runId: "r3", turnId: "t0", turnIndex: 0 });
    expect(typed).toEqual(["turn_start", "turn_start"]);
    expect(every).toEqual(["agent_start"]);
  });

  it("settled is queued even with nobody listening to it, so taking the next phase still frees the chain", async () => {
    const events = bus();
    let release: () => void = () => undefined;
    events.on("agent_end", async () => {
      await new Promise<void>((resolve) => {
        release = resolve;
      });
    });
    const next: string[] = [];
    events.on("agent_start", (event) => {
      next.push(event.runId);
    });
    void events.emit({ type: "agent_end", runId: "r1", status: "completed", messages: [] });
    void events.emitLast({ type: "settled", runId: "r1" });
    // The agent_end listener waits for a next run: taking its phase releases the chain.
    events.release();
    await events.emit({ type: "agent_start", runId: "r2" });
    expect(next).toEqual(["r2"]);
    release();
    await events.drain();
  });
});
