/**
 * Benchmark 1: per-turn overhead. Every contender runs the same scripted
 * conversation (N turns that each call `echo` once, then a final answer: N + 1
 * turns) against the same faux provider, interleaved, and we report the median
 * time per turn, the overhead above the bare floor, and ratios to pi-agent-core.
 */
import { contender } from "./agents.mjs";
import { interleave } from "./stats.mjs";

const OVERHEAD_IDS = [
  "floor",
  "pi",
  "reinMemory",
  "reinJsonlDurable",
  "reinJsonlNone",
  "reinPlugins",
  "reinOtel",
];
const GROWTH_IDS = ["floor", "pi", "reinMemory", "reinJsonlDurable"];

const perTurnUs = (ms, turns) => (ms * 1000) / (turns + 1);

/** Medians per contender for one size and variant: `{ id: { perTurn, overhead } }` in µs. */
async function measure(ids, turns, variant, reps, log) {
  log(`turns: ${turns} tool turns, ${variant}, ${ids.length} contenders x ${reps} reps`);
  const results = await interleave(
    ids.map((id) => contender(id, turns, variant)),
    { reps, warmup: 1 },
  );
  const floor = perTurnUs(results.floor.median, turns);
  return Object.fromEntries(
    ids.map((id) => {
      const perTurn = perTurnUs(results[id].median, turns);
      return [
        id,
        {
          perTurn,
          overhead: perTurn - floor,
          samples: results[id].samples.length,
          // Explanation beside the judged wall time: CPU per turn on the harness thread and in the whole process.
          threadCpu: perTurnUs(results[id].threadCpu, turns),
          processCpu: perTurnUs(results[id].processCpu, turns),
        },
      ];
    }),
  );
}

/**
 * Per-turn cost of each contender at several sizes, all interleaved in one
 * rotation (so load drift cannot favour one size): `{ [turns]: { id: { perTurn, overhead } } }`.
 */
async function measureGrowth(ids, sizes, reps, log) {
  log(`turns: growth at ${sizes.join(" / ")} tool turns, flat, ${ids.length} contenders x ${reps} reps`);
  const contenders = sizes.flatMap((turns) =>
    ids.map((id) => ({ ...contender(id, turns, "flat"), name: `${id}@${turns}` })),
  );
  const results = await interleave(contenders, { reps, warmup: 1 });
  return Object.fromEntries(
    sizes.map((turns) => {
      const floor = perTurnUs(results[`floor@${turns}`].median, turns);
      const row = Object.fromEntries(
        ids.map((id) => {
          const perTurn = perTurnUs(results[`${id}@${turns}`].median, turns);
          return [id, { perTurn, overhead: perTurn - floor }];
        }),
      );
      return [turns, row];
    }),
  );
}

/**
 * Runs the overhead rows (1,000 turns, flat and full) and the growth rows
 * (250 / 1,000 / 4,000 turns, flat). Returns raw numbers for the table.
 */
export async function benchTurns({ reps, scale = 1, log = () => {} }) {
  const n = (turns) => Math.max(10, Math.round(turns * scale));
  const overhead = {};
  for (const variant of ["flat", "full"]) {
    overhead[variant] = await measure(OVERHEAD_IDS, n(1000), variant, reps, log);
  }
  const sizes = [250, 1000, 4000].map(n);
  const measured = await measureGrowth(GROWTH_IDS, sizes, reps, log);
  // Keyed by nominal size, so the report reads the same at any --scale.
  const growth = { 250: measured[sizes[0]], 1000: measured[sizes[1]], 4000: measured[sizes[2]] };
  return { overhead, growth, turns: n(1000), sizes };
}

export const TURN_LABELS = {
  floor: "floor: faux stream + tool fn in a loop",
  pi: "pi-agent-core Agent (in memory)",
  reinMemory: "Rein AgentHarness, in-memory session",
  reinJsonlDurable: 'Rein, JSONL, durability "save-point" (CLI)',
  reinJsonlNone: 'Rein, JSONL, durability "none"',
  reinPlugins: "Rein, in memory, 20 plugins x 10 hooks",
  reinOtel: "Rein, in memory, @rein/plugin-otel exporting over OTLP/HTTP",
};
