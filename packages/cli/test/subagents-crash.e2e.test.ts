/**
 * A crash while a child agent runs: `rein` is SIGKILLed while the child's tool
 * call is in flight. Reopening the parent recovers both sessions: the parent's
 * `task` call and the child's call each get an `interrupted` result, what the
 * child did before the crash is all there, and no tool runs a second time.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type MessageEntry, SessionStore } from "@rein/harness";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, project, REIN_BIN, rein, spawnRein } from "./support/rein-process.js";

afterAll(cleanup);

const repo = join(REIN_BIN, "..", "..", "..", "..");
const taskDist = join(repo, "packages", "plugins", "tools-task", "dist", "index.js");

/** `block` appends a line per execution, then waits until the run is aborted (or the process dies). */
const BLOCK_TOOL = `import { definePlugin, defineTool, Type } from "@rein/sdk";
import { appendFileSync } from "node:fs";
import { join } from "node:path";
export default definePlugin({
  name: "block-tool",
  setup(rein) {
    rein.registerTool(defineTool({
      name: "block",
      description: "Block",
      parameters: Type.Object({}),
      risk: "read",
      execute: (_args, ctx) => new Promise((resolve) => {
        appendFileSync(join(ctx.cwd, "runs.log"), ctx.toolCallId + "\\n");
        ctx.signal.addEventListener("abort", () => resolve({ content: [{ type: "text", text: "stopped" }], isError: true }));
      }),
    }));
  },
});
`;

const config = `import { defineConfig } from "@rein/sdk";
import task from ${JSON.stringify(taskDist)};
const conversations = {
  "delegate the wait": [{ toolCalls: [{ id: "p1", name: "task", args: { prompt: "wait here" } }] }, "recovered"],
  "wait here": [{ toolCalls: [{ id: "c1", name: "block", args: {} }] }, "never reached"],
};
const route = ({ context }) => {
  const first = context.messages.find((m) => m.role === "user");
  const key = typeof first.content === "string" ? first.content : first.content.map((b) => b.text ?? "").join("");
  const turn = context.messages.filter((m) => m.role === "assistant").length;
  return conversations[key][Math.min(turn, conversations[key].length - 1)];
};
export default defineConfig({
  model: { script: Array.from({ length: 8 }, () => route) },
  plugins: ["./block.ts", task],
});
`;

const waitFor = async (check: () => boolean, ms = 30_000) => {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

const results = (entries: readonly { type: string }[]) =>
  (entries as MessageEntry[])
    .filter((e) => e.type === "message" && e.message.role === "toolResult")
    .map((e) => (e.message.role === "toolResult" ? [e.message.toolCallId, e.message.content[0]] : []));

describe("SIGKILL while a child agent runs", { timeout: 120_000 }, () => {
  it("reopening recovers parent and child: nothing lost, no tool run twice", async () => {
    const dir = project({ "rein.config.ts": config, "block.ts": BLOCK_TOOL });
    const log = join(dir, "runs.log");
    const running = spawnRein(["run", "delegate the wait"], dir);
    const exited = new Promise((resolve) => running.on("exit", resolve));
    await waitFor(() => existsSync(log));
    running.kill("SIGKILL");
    await exited;

    const store = new SessionStore(join(dir, ".rein/sessions"));
    const [parent] = store.list();
    const parentId = parent?.id as string;
    const childDir = join(dir, ".rein/sessions/children", parentId);
    const [child] = new SessionStore(childDir).list();
    expect(child).toBeDefined();

    // Reopen the parent: its harness recovers it, the task pack recovers the child.
    const resumed = await rein(["run", "--continue", "and now?"], dir);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain(`recovered child session ${child?.id}: 1 interrupted call(s) closed`);

    expect(readFileSync(log, "utf8")).toBe("c1\n");
    const parentSession = store.open(parentId);
    try {
      expect(results(parentSession.entries())[0]).toEqual([
        "p1",
        {
          type: "text",
          text: expect.stringContaining("interrupted: the tool may or may not have completed"),
        },
      ]);
      expect(
        parentSession
          .journal()
          .filter((r) => r.event === "run_end")
          .map((r) => (r as { status?: string }).status),
      ).toEqual(["interrupted", "completed"]);
    } finally {
      parentSession.close();
    }
    const childSession = new SessionStore(childDir).open(child?.id as string);
    try {
      expect(childSession.header.parent).toMatchObject({ sessionId: parentId, toolCallId: "p1" });
      const roles = childSession.entries().flatMap((e) => (e.type === "message" ? [e.message.role] : []));
      expect(roles.slice(0, 3)).toEqual(["user", "assistant", "toolResult"]);
      expect(results(childSession.entries())).toEqual([
        [
          "c1",
          {
            type: "text",
            text: expect.stringContaining("interrupted: the tool may or may not have completed"),
          },
        ],
      ]);
      expect(
        childSession
          .journal()
          .some((r) => r.event === "run_end" && (r as { status?: string }).status === "interrupted"),
      ).toBe(true);
    } finally {
      childSession.close();
    }

    // Reopening again finds nothing left to recover, and runs nothing again.
    const again = await rein(["run", "--continue", "still fine?"], dir);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).not.toContain("recovered child session");
    expect(readFileSync(log, "utf8")).toBe("c1\n");

    const show = await rein(["sessions", "show", parentId], dir);
    expect(show.stdout).toContain("│ user  wait here");
    expect(show.stdout).toContain("interrupted: the tool may or may not have completed");
  });
});
