/**
 * A worker admits runs as its event loop has room (`LoopAdmission`): on a clock of
 * the test's own, where time passes only in `sleep` and the loop's busy time follows
 * a script, so each rule is checked exactly.
 */
import { describe, expect, it } from "vitest";
import {
  ADMISSION_DEFAULTS,
  type AdmissionSettings,
  LoopAdmission,
  type LoopClockPort,
} from "../src/worker/loop-admission.js";

/** A clock whose loop is busy `share(t)` of each ms; time moves only when something sleeps. */
function scriptedClock(share: (at: number) => number): LoopClockPort & { sleeps: number[] } {
  let at = 0;
  let busy = 0;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => at,
    busyMs: () => busy,
    async sleep(ms) {
      sleeps.push(ms);
      for (let i = 0; i < ms; i++) {
        busy += share(at);
        at += 1;
      }
    },
  };
}

const SETTINGS: AdmissionSettings = { busyShare: 0.75, windowMs: 10, maxWaitMs: 250, batch: 16 };
const never = () => false;

describe("admitting runs as the event loop has room", () => {
  it("never holds back a worker that holds no run, however busy its loop", async () => {
    const clock = scriptedClock(() => 1);
    const admission = new LoopAdmission(SETTINGS, clock);
    expect(await admission.wait(0, never)).toBe(0);
    expect(clock.sleeps).toEqual([]);
  });

  it("admits at once after a quiet window", async () => {
    const clock = scriptedClock(() => 0.2);
    const admission = new LoopAdmission(SETTINGS, clock);
    await clock.sleep(50); // the loop was 20% busy since the last fetch
    expect(await admission.wait(5, never)).toBe(0);
  });

  it("measures over at least one window: fetches in quick succession are spaced by it", async () => {
    const clock = scriptedClock(() => 0);
    const admission = new LoopAdmission(SETTINGS, clock);
    await admission.wait(5, never);
    // Right after the last fetch there is no window to judge: it waits one out.
    expect(await admission.wait(5, never)).toBe(10);
  });

  it("holds a fetch while the loop is busier than the share, until a window below it", async () => {
    // Saturated for the first 40 ms, then nearly idle.
    const clock = scriptedClock((at) => (at < 40 ? 1 : 0.1));
    const admission = new LoopAdmission(SETTINGS, clock);
    const waited = await admission.wait(5, never);
    expect(waited).toBeGreaterThanOrEqual(40);
    expect(waited).toBeLessThanOrEqual(50);
  });

  it("admits a batch after the longest wait even when the loop stays saturated", async () => {
    const clock = scriptedClock(() => 1);
    const admission = new LoopAdmission(SETTINGS, clock);
    expect(await admission.wait(5, never)).toBe(250);
    expect(await admission.wait(5, never)).toBe(250);
  });

  it("ends a wait as soon as the worker stops", async () => {
    const clock = scriptedClock(() => 1);
    const admission = new LoopAdmission(SETTINGS, clock);
    let stopping = false;
    const waiting = admission.wait(5, () => stopping);
    stopping = true;
    expect(await waiting).toBeLessThanOrEqual(SETTINGS.windowMs);
  });

  it("takes at most a batch per fetch, and never more than the free slots", () => {
    const admission = new LoopAdmission(
      SETTINGS,
      scriptedClock(() => 0),
    );
    expect(admission.batchFor(200)).toBe(16);
    expect(admission.batchFor(3)).toBe(3);
  });

  it("defaults to the measured settings", () => {
    expect(ADMISSION_DEFAULTS).toEqual({ busyShare: 0.75, windowMs: 10, maxWaitMs: 250, batch: 16 });
  });
});
