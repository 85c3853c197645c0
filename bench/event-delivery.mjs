/**
 * The harness's event delivery alone (docs/benchmarks.md, "Tracing", session 10):
 * an `EventBus` with its `PluginDriver`, one tool turn's 13 events (the types and
 * counts a flat-context tool turn emits), each awaited as the harness does, with
 * no-op listeners on the twelve event types @rein/plugin-otel listens to (or none:
 * `--none`). Main-thread CPU per turn, median and fastest of 7 runs of 20,000 turns.
 *
 *   node bench/event-delivery.mjs [path/to/another/checkout] [--none]
 *
 * The checkout (built) defaults to this one, so a before/after runs the script twice.
 */
import path from "node:path";
import { pathToFileURL } from "node:url";

const args = process.argv.slice(2);
const none = args.includes("--none");
const root = path.resolve(args.find((a) => a !== "--none") ?? new URL("..", import.meta.url).pathname);
const dist = pathToFileURL(path.join(root, "packages/harness/dist")).href;
const { EventBus } = await import(`${dist}/events/event-bus.js`);
const { PluginDriver } = await import(`${dist}/hooks/plugin-driver.js`);

const TRACED = ["agent_start", "turn_start", "message_end", "retry", "tool_decision", "tool_parked"];
TRACED.push(
  "tool_execution_start",
  "tool_execution_end",
  "plugin_error",
  "abort",
  "agent_end",
  "child_event",
);
const TURN = ["turn_start", "message_start", "message_update", "message_update", "message_update"];
TURN.push("message_end", "tool_decision", "tool_execution_start", "tool_execution_end", "message_start");
TURN.push("message_end", "turn_end", "save_point");

const bus = new EventBus(new PluginDriver());
if (!none) for (const type of TRACED) bus.on(type, () => {});
const events = TURN.map((type) => ({ type }));

async function run(turns) {
  for (let i = 0; i < turns; i++) for (const event of events) await bus.emit(event);
}

await run(5000);
const perTurn = [];
for (let r = 0; r < 7; r++) {
  const start = process.threadCpuUsage();
  await run(20_000);
  const used = process.threadCpuUsage(start);
  perTurn.push((used.user + used.system) / 20_000);
}
perTurn.sort((a, b) => a - b);
console.log(
  `${root}${none ? " (no listeners)" : ""}: ${perTurn[3].toFixed(2)} µs CPU per turn (median; fastest ${perTurn[0].toFixed(2)})`,
);
