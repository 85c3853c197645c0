/**
 * Timing helpers: a monotonic clock, medians, and an interleaved runner that
 * alternates contenders (A B C A B C ...) so drift on a shared, noisy machine
 * hits every contender alike. Ratios are always taken between medians of the
 * same run.
 */

/** Milliseconds from a monotonic clock, sub-microsecond resolution. */
export const now = () => Number(process.hrtime.bigint()) / 1e6;

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The main thread's CPU time in ms (user + system), or NaN where `process.threadCpuUsage` is missing. */
export function threadCpuMs() {
  if (typeof process.threadCpuUsage !== "function") return Number.NaN;
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1000;
}

/** The whole process's CPU time in ms (every thread: the telemetry worker too). */
export function processCpuMs() {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** Runs a full GC when node was started with --expose-gc, so one contender's garbage is not billed to the next. */
export function collect() {
  if (typeof globalThis.gc === "function") globalThis.gc();
}

/**
 * Times every contender `reps` times, interleaved, rotating the start so no
 * contender always runs first. Each contender is `{ name, prepare?, run }`:
 * `prepare()` (untimed) returns the state `run(state)` consumes; `run` is timed.
 * Returns `{ [name]: { median, samples, threadCpu, processCpu } }` in milliseconds:
 * wall time, plus the medians of the main thread's and the whole process's CPU
 * time over the same runs (load on the other core sways those far less; a worker
 * thread's CPU shows in `processCpu` only).
 */
export async function interleave(contenders, { reps, warmup = 1 }) {
  const samples = Object.fromEntries(contenders.map((c) => [c.name, []]));
  const cpu = Object.fromEntries(contenders.map((c) => [c.name, { thread: [], process: [] }]));
  for (let rep = -warmup; rep < reps; rep++) {
    const offset = ((rep % contenders.length) + contenders.length) % contenders.length;
    for (let i = 0; i < contenders.length; i++) {
      const contender = contenders[(i + offset) % contenders.length];
      const state = contender.prepare ? await contender.prepare() : undefined;
      collect();
      const threadStart = threadCpuMs();
      const processStart = processCpuMs();
      const start = now();
      await contender.run(state);
      const elapsed = now() - start;
      const threadUsed = threadCpuMs() - threadStart;
      const processUsed = processCpuMs() - processStart;
      if (contender.cleanup) await contender.cleanup(state);
      if (rep >= 0) {
        samples[contender.name].push(elapsed);
        cpu[contender.name].thread.push(threadUsed);
        cpu[contender.name].process.push(processUsed);
      }
    }
  }
  return Object.fromEntries(
    Object.entries(samples).map(([name, values]) => [
      name,
      {
        median: median(values),
        samples: values,
        threadCpu: median(cpu[name].thread),
        processCpu: median(cpu[name].process),
      },
    ]),
  );
}
