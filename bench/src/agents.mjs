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
import {
  AgentHarness,
  createSessionHeader,
  HOOK_NAMES,
  JsonlStorage,
  MemoryStorage,
  Session,
} from "@rein/harness";
import {
  echoDefinition,
  model,
  pendingReplies,
  piEcho,
  reinEcho,
  runEcho,
  scriptToolTurns,
  streamFns,
} from "./faux.mjs";

const SESSION_ID = "bench-session";

/** Session files live on the same disk a CLI would use (not tmpfs), so fsync costs what it costs. */
const sessionDir = fs.mkdtempSync(path.join(os.tmpdir(), "rein-bench-turns-"));
process.on("exit", () => fs.rmSync(sessionDir, { recursive: true, force: true }));
let fileCounter = 0;

function assertConsumed(name) {
  const left = pendingReplies();
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

function reinHarness(session, streamFn, extra = {}) {
  return new AgentHarness({ session, model, tools: [reinEcho], streamFn, ...extra });
}

function jsonlSession() {
  const file = path.join(sessionDir, `s${fileCounter++}.jsonl`);
  return Session.create(JsonlStorage.create(file, createSessionHeader({ cwd: sessionDir })));
}

async function runRein({ harness }) {
  const outcome = await harness.prompt("go");
  if (outcome.status !== "completed") throw new Error(`rein run ended ${outcome.status}: ${outcome.reason}`);
}

function closeRein(name) {
  return ({ harness }) => {
    assertConsumed(name);
    const file = harness.session.storage.path;
    harness.session.close();
    if (file) fs.rmSync(file, { force: true });
  };
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
  reinMemory: {
    prepare: (turns, variant) => {
      scriptToolTurns(turns);
      // `durability` only changes what happens on a file; memory sync is a no-op either way.
      return { harness: reinHarness(Session.create(new MemoryStorage()), streamFns[variant]) };
    },
    run: runRein,
    cleanup: closeRein("reinMemory"),
  },
  reinJsonlDurable: {
    prepare: (turns, variant) => {
      scriptToolTurns(turns);
      return { harness: reinHarness(jsonlSession(), streamFns[variant], { durability: "save-point" }) };
    },
    run: runRein,
    cleanup: closeRein("reinJsonlDurable"),
  },
  reinJsonlNone: {
    prepare: (turns, variant) => {
      scriptToolTurns(turns);
      return { harness: reinHarness(jsonlSession(), streamFns[variant], { durability: "none" }) };
    },
    run: runRein,
    cleanup: closeRein("reinJsonlNone"),
  },
  reinPlugins: {
    prepare: (turns, variant) => {
      scriptToolTurns(turns);
      const harness = reinHarness(Session.create(new MemoryStorage()), streamFns[variant]);
      const passThrough = async () => undefined;
      for (let plugin = 0; plugin < 20; plugin++) {
        for (const name of HOOK_NAMES) harness.hooks[name].tapPromise(`plugin-${plugin}`, passThrough);
      }
      return { harness };
    },
    run: runRein,
    cleanup: closeRein("reinPlugins"),
  },
};

/** Turns `CONTENDERS[id]` into an `interleave` contender for one size and variant. */
export function contender(id, turns, variant) {
  const spec = CONTENDERS[id];
  return {
    name: id,
    prepare: () => spec.prepare(turns, variant),
    run: spec.run,
    cleanup: spec.cleanup,
  };
}
