/**
 * The contenders of the turn benchmark. Each `prepare(turns, variant)` builds a
 * fresh agent and scripts the faux provider (untimed); `run(state)` sends one
 * prompt that runs `turns` tool-call turns plus a final answer (timed);
 * `cleanup(state)` checks the run and releases files.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Agent } from "@earendil-works/pi-agent-core";
import * as reinHarnessModule from "@rein/harness";
import * as fauxModule from "./faux.mjs";
import {
  echoDefinition,
  model,
  pendingReplies,
  piEcho,
  runEcho,
  scriptToolTurns,
  streamFns,
} from "./faux.mjs";
import { otelContender } from "./otel.mjs";

const SESSION_ID = "bench-session";

/** Session files live on the same disk a CLI would use (not tmpfs), so fsync costs what it costs. */
const sessionDir = fs.mkdtempSync(path.join(os.tmpdir(), "rein-bench-turns-"));
process.on("exit", () => fs.rmSync(sessionDir, { recursive: true, force: true }));
let fileCounter = 0;

function assertConsumed(name, pending = pendingReplies) {
  const left = pending();
  if (left !== 0) throw new Error(`${name}: the run left ${left} scripted replies unused`);
}

/** Bare floor: the faux stream and the tool function called directly in a loop. */
async function runFloor({ streamFn }) {
  const messages = [{ role: "user", content: "go", timestamp: Date.now() }];
  const context = { systemPrompt: "", messages, tools: [echoDefinition] };
  for (;;) {
    const stream = streamFn(model, context, { sessionId: SESSION_ID });
    for await (const _event of stream) {
      // drain, as an agent does
    }
    const reply = await stream.result();
    messages.push(reply);
    let called = false;
    for (const block of reply.content) {
      if (block.type !== "toolCall") continue;
      called = true;
      const result = await runEcho(block.arguments);
      messages.push({
        role: "toolResult",
        toolCallId: block.id,
        toolName: block.name,
        content: result.content,
        isError: false,
        timestamp: Date.now(),
      });
    }
    if (!called) return messages;
  }
}

/**
 * Rein's contenders, built from a harness module (`@rein/harness`'s exports) and a
 * faux module (this folder's `faux.mjs`: `model`, `streamFns`, `scriptToolTurns`,
 * `pendingReplies`, `reinEcho`). The defaults are this tree's; compare.mjs also
 * passes another revision's harness with this tree's provider (and the reverse), so
 * a before/after can tell the harness's change from the provider library's.
 */
export function reinContenders(harness = reinHarnessModule, faux = fauxModule) {
  const { AgentHarness, createSessionHeader, HOOK_NAMES, JsonlStorage, MemoryStorage, Session } = harness;
  const make = (session, streamFn, extra = {}) =>
    new AgentHarness({ session, model: faux.model, tools: [faux.reinEcho], streamFn, ...extra });
  const jsonlSession = () => {
    const file = path.join(sessionDir, `s${fileCounter++}.jsonl`);
    return Session.create(JsonlStorage.create(file, createSessionHeader({ cwd: sessionDir })));
  };
  const close =
    (name) =>
    ({ harness: agent }) => {
      assertConsumed(name, faux.pendingReplies);
      const file = agent.session.storage.path;
      agent.session.close();
      if (file) fs.rmSync(file, { force: true });
    };
  const contender = (name, build) => ({
    prepare: (turns, variant) => {
      faux.scriptToolTurns(turns);
      return { harness: build(faux.streamFns[variant]) };
    },
    run: runRein,
    cleanup: close(name),
  });
  return {
    // `durability` only changes what happens on a file; memory sync is a no-op either way.
    reinMemory: contender("reinMemory", (streamFn) => make(Session.create(new MemoryStorage()), streamFn)),
    reinJsonlDurable: contender("reinJsonlDurable", (streamFn) =>
      make(jsonlSession(), streamFn, { durability: "save-point" }),
    ),
    reinJsonlNone: contender("reinJsonlNone", (streamFn) =>
      make(jsonlSession(), streamFn, { durability: "none" }),
    ),
    reinPlugins: contender("reinPlugins", (streamFn) => {
      const agent = make(Session.create(new MemoryStorage()), streamFn);
      const passThrough = async () => undefined;
      for (let plugin = 0; plugin < 20; plugin++) {
        for (const name of HOOK_NAMES) agent.hooks[name].tapPromise(`plugin-${plugin}`, passThrough);
      }
      return agent;
    }),
  };
}

async function runRein({ harness }) {
  const outcome = await harness.prompt("go");
  if (outcome.status !== "completed") throw new Error(`rein run ended ${outcome.status}: ${outcome.reason}`);
}

/** Every contender, keyed by row id. */
export const CONTENDERS = {
  floor: {
    prepare: (turns, variant) => {
      scriptToolTurns(turns);
      return { streamFn: streamFns[variant] };
    },
    run: runFloor,
    cleanup: () => assertConsumed("floor"),
  },
  pi: {
    prepare: (turns, variant) => {
      scriptToolTurns(turns);
      const agent = new Agent({
        initialState: { systemPrompt: "", model, thinkingLevel: "off", tools: [piEcho] },
        streamFn: streamFns[variant],
        sessionId: SESSION_ID,
      });
      return { agent };
    },
    run: async ({ agent }) => {
      await agent.prompt("go");
      if (agent.state.errorMessage) throw new Error(`pi run failed: ${agent.state.errorMessage}`);
    },
    cleanup: () => assertConsumed("pi"),
  },
  ...reinContenders(),
  reinOtel: otelContender,
};

/** Turns `CONTENDERS[id]` into an `interleave` contender for one size and variant. */
export function contender(id, turns, variant, contenders = CONTENDERS) {
  const spec = contenders[id];
  return {
    name: id,
    prepare: () => spec.prepare(turns, variant),
    run: spec.run,
    cleanup: spec.cleanup,
  };
}
