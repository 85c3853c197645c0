// Quick start: an agent on a scripted (offline) model that lists files, reads one,
// is denied a write by a policy tap, and answers. Run: pnpm quickstart
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fauxAssistantMessage, fauxToolCall, registerFauxProvider, Type } from "@mariozechner/pi-ai";
import { AgentHarness, MemoryStorage, Session } from "@rein/harness";

const root = new URL(".", import.meta.url).pathname;
const faux = registerFauxProvider();
faux.setResponses([
  fauxAssistantMessage([fauxToolCall("ls", {})], { stopReason: "toolUse" }),
  fauxAssistantMessage([fauxToolCall("read", { path: "package.json" })], { stopReason: "toolUse" }),
  fauxAssistantMessage([fauxToolCall("write", { path: "package.json", content: "{}" })], {
    stopReason: "toolUse",
  }),
  fauxAssistantMessage(
    "This folder is the Rein quick start; I read package.json but was not allowed to change it.",
  ),
]);

const tools = [
  {
    name: "ls",
    description: "List files",
    parameters: Type.Object({}),
    risk: "read",
    execute: () => ({ content: [{ type: "text", text: readdirSync(root).join("\n") }] }),
  },
  {
    name: "read",
    description: "Read a file",
    parameters: Type.Object({ path: Type.String() }),
    risk: "read",
    execute: ({ path }) => ({ content: [{ type: "text", text: readFileSync(join(root, path), "utf8") }] }),
  },
  {
    name: "write",
    description: "Write a file",
    parameters: Type.Object({ path: Type.String(), content: Type.String() }),
    risk: "write",
    execute: () => {
      throw new Error("unreachable: the policy denies writes");
    },
  },
];

const harness = new AgentHarness({
  session: Session.create(new MemoryStorage()),
  model: faux.getModel(),
  tools,
});
harness.hooks.toolGate.tapPromise("read-only-policy", async (call) =>
  call.risk === "write"
    ? { decision: "deny", reason: "this agent is read-only", rule: "no-writes" }
    : undefined,
);
harness.on("tool_decision", (e) => console.error(`[${e.decision}] ${e.toolName} by ${e.by}: ${e.reason}`));
harness.on("message_update", (e) => {
  if (e.delta.type === "text_delta") process.stdout.write(e.delta.delta ?? "");
});
const outcome = await harness.prompt("What is in this folder?");
process.stdout.write("\n");
console.error(`run ${outcome.status}; ${harness.session.entries().length} session entries`);
faux.unregister();
