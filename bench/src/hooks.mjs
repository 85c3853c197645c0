/**
 * Benchmark 2: hook dispatch. One tool-call pass = `toolCall` (waterfall) +
 * `toolGate` (gate) + `toolResult` (waterfall), with k pass-through taps on each,
 * through Rein's own hooks and runners, versus a plain `for` loop over the same
 * handler functions: `for (const h of handlers) r = (await h(r)) ?? r`.
 */
import { AgentHarness, MemoryStorage, Session } from "@rein/harness";
import { reinEcho } from "./faux.mjs";
import { interleave } from "./stats.mjs";

const PASS_NAMES = ["toolCall", "toolGate", "toolResult"];

/** Pass-through handlers: one distinct function per tap, as plugins would have. */
function handlers(taps) {
  return Array.from({ length: taps }, () => async (_payload, _context) => undefined);
}

const signal = new AbortController().signal;
const info = { id: "call_1", name: "echo", args: { text: "hi" }, risk: "read", tool: reinEcho };

function reinPass(taps) {
  const harness = new AgentHarness({
    session: Session.create(new MemoryStorage()),
    model: { id: "bench", provider: "bench" },
    recover: false,
  });
  const hooks = harness.hooks;
  for (const name of PASS_NAMES) {
    for (const [i, fn] of handlers(taps).entries()) hooks[name].tapPromise(`plugin-${i}`, fn);
  }
  return async () => {
    // A minimal tool hook context: the runners and taps only read `signal` and `call`.
    const context = { signal, call: info };
    const call = await hooks.toolCall.promise({ id: info.id, name: info.name, args: info.args }, context);
    const gate = { id: call.id, name: call.name, args: call.args, risk: "read" };
    await hooks.toolGate.promise(gate, { signal, call: info });
    return hooks.toolResult.promise({ content: [], isError: false }, context);
  };
}

function plainPass(taps) {
  const stacks = PASS_NAMES.map(() => handlers(taps));
  const [toolCall, toolGate, toolResult] = stacks;
  return async () => {
    const context = { signal, call: info };
    let call = { id: info.id, name: info.name, args: info.args };
    for (const h of toolCall) call = (await h(call, context)) ?? call;
    let verdict;
    const gate = { id: call.id, name: call.name, args: call.args, risk: "read" };
    for (const h of toolGate) verdict = (await h(gate, context)) ?? verdict;
    let result = { content: [], isError: false };
    for (const h of toolResult) result = (await h(result, context)) ?? result;
    return { verdict, result };
  };
}

async function loop(pass, iterations) {
  for (let i = 0; i < iterations; i++) await pass();
}

/** `{ [taps]: { rein, plain } }`: median µs per pass. */
export async function benchHooks({ reps, scale = 1, log = () => {} }) {
  const out = {};
  for (const taps of [1, 10, 50]) {
    // About the same number of tap calls per sample whatever the tap count.
    const iterations = Math.max(200, Math.round((60_000 / taps) * scale));
    log(`hooks: ${taps} taps per hook, ${iterations} passes x ${reps} reps`);
    const rein = reinPass(taps);
    const plain = plainPass(taps);
    await loop(rein, 200); // compile tapable's hook functions before timing
    const results = await interleave(
      [
        { name: "rein", run: () => loop(rein, iterations) },
        { name: "plain", run: () => loop(plain, iterations) },
      ],
      { reps, warmup: 1 },
    );
    out[taps] = {
      rein: (results.rein.median * 1000) / iterations,
      plain: (results.plain.median * 1000) / iterations,
    };
  }
  return out;
}
