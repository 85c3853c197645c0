/**
 * The scripted session of the crash matrix, shared by the child process (which runs
 * it on the built harness and gets killed) and the parent (which reopens the file and
 * continues on the sources). Plain JavaScript with no imports: pi-ai's helpers are
 * passed in, so both sides build the same tools and the same model replies.
 *
 * The model is a pure function of the context it is sent, so a session resumed after
 * a crash gets sensible replies whatever was cut off.
 */

/** @param {{ Type: any }} pi */
export function crashTools(pi) {
  const { Type } = pi;
  return [
    {
      name: "read_value",
      description: "Read a value",
      parameters: Type.Object({ key: Type.String() }),
      risk: "read",
      idempotent: true,
      execute: async ({ key }) => {
        await new Promise((resolve) => setImmediate(resolve));
        return { content: [{ type: "text", text: `value of ${key}` }] };
      },
    },
    {
      name: "write_value",
      description: "Write a value",
      parameters: Type.Object({ key: Type.String(), value: Type.String() }),
      risk: "write",
      executionMode: "sequential",
      execute: async ({ key, value }) => {
        await new Promise((resolve) => setImmediate(resolve));
        return { content: [{ type: "text", text: `wrote ${key}=${value}` }] };
      },
    },
  ];
}

const textOf = (message) => {
  const content = message?.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((block) => (block?.type === "text" ? block.text : "")).join("");
};

/**
 * The model: tool calls for some prompts, text otherwise. Tool call ids and reply
 * texts include the number of assistant messages so far, so they never repeat.
 * @param {{ messages: any[] }} context
 * @param {{ fauxAssistantMessage: any, fauxToolCall: any }} pi
 */
export function respond(context, pi) {
  const messages = context.messages;
  const n = messages.filter((m) => m.role === "assistant").length;
  const last = messages.at(-1);
  const calls = (...specs) =>
    pi.fauxAssistantMessage(
      specs.map(([name, args], i) => pi.fauxToolCall(name, args, { id: `call-${n}-${i}` })),
      { stopReason: "toolUse" },
    );
  if (last?.role === "user") {
    switch (textOf(last)) {
      case "p-1":
        return calls(
          ["read_value", { key: "a" }],
          ["read_value", { key: "b" }],
          ["write_value", { key: "c", value: "1" }],
        );
      case "s-1":
        return calls(["write_value", { key: "s", value: "2" }]);
      case "p-2":
        return calls(["read_value", { key: "d" }], ["write_value", { key: "e", value: "3" }]);
      case "p-resume":
        return calls(["read_value", { key: "r" }]);
      default:
        return pi.fauxAssistantMessage(`reply ${n} to ${textOf(last)}`);
    }
  }
  return pi.fauxAssistantMessage(`ack ${n}`);
}

/**
 * Runs the scripted session on `harness`. `accept(kind, text)` is called after a
 * public call that accepted something returned (the parent's ledger of promises).
 */
export async function runScript(harness, accept) {
  const enqueue = (queue, text) => {
    harness[queue](text);
    accept(queue, text);
  };
  const write = (key) => {
    harness.appendEntry({ type: "custom", customType: "crash-note", data: key });
    accept("pending", key);
  };
  let turnEnds = 0;
  let toolStarts = 0;
  harness.on("turn_end", () => {
    turnEnds++;
    if (turnEnds === 1) {
      enqueue("steer", "s-1");
      enqueue("followUp", "f-1");
      write("k-1");
      harness.setThinkingLevel("low");
    }
  });
  harness.on("tool_execution_start", () => {
    toolStarts++;
    if (toolStarts === 5) {
      enqueue("steer", "s-2");
      write("k-2");
    }
  });
  enqueue("nextTurn", "nt-1");
  await harness.prompt("p-1");
  enqueue("nextTurn", "nt-2");
  await harness.prompt("p-2");
  enqueue("followUp", "f-3");
  write("k-3");
  await harness.prompt("p-3");
}

/** A run in a later process, on the recovered session. */
export async function runResume(harness, accept) {
  let once = false;
  harness.on("tool_execution_start", () => {
    if (once) return;
    once = true;
    harness.steer("s-resume");
    accept("steer", "s-resume");
  });
  await harness.prompt("p-resume");
}

/** Deterministic PRNG (mulberry32). */
export function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
