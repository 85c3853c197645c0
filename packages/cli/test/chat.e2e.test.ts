import { join } from "node:path";
import { JsonlStorage, Session, SessionStore } from "@rein/harness";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, project, rein, scriptedConfig } from "./support/rein-process.js";

afterAll(cleanup);

describe("rein run --chat: prompts and session commands, one per line", { timeout: 90_000 }, () => {
  it("runs prompts, labels, draws the tree, compacts, forks and navigates, leaving sessions that reopen", async () => {
    const dir = project({
      "rein.config.ts": scriptedConfig(
        [
          "first answer",
          "second answer",
          // the summary the model writes for /compact
          "## Goal\nanswer two questions\n## Progress\nboth answered\n## Decisions\nnone\n## Files touched\nnone\n## Next steps\nnone",
        ],
        "compaction: { keepRecentTokens: 1 },",
      ),
    });
    const input = [
      "first question",
      "/label . first-done",
      "second question",
      "/tree",
      "/compact keep it short",
      "/fork",
      "/exit",
      "",
    ].join("\n");
    const result = await rein(["run", "--chat"], dir, { input });
    expect(result.stderr).not.toContain("✗");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("first answer");
    expect(result.stdout).toContain("second answer");
    expect(result.stdout).toContain("[first-done]");
    expect(result.stdout).toContain("◀ leaf");
    expect(result.stderr).toContain("compaction done");

    const store = new SessionStore(join(dir, ".rein/sessions"));
    const sessions = store.list();
    expect(sessions).toHaveLength(2); // the chat's session and its fork
    const original = sessions.find((s) => !s.forkedFrom);
    const fork = sessions.find((s) => s.forkedFrom);
    expect(fork?.forkedFrom?.sessionId).toBe(original?.id);
    const session = Session.open(JsonlStorage.open(original?.path as string, { readOnly: true }));
    const context = session.buildContext();
    expect(context.messages[0]?.role).toBe("user");
    expect(JSON.stringify(context.messages[0])).toContain("both answered");
    expect(session.entries().some((e) => e.type === "label" && e.label === "first-done")).toBe(true);
    session.close();
  });

  it("/tree <entry> moves the leaf, and an unknown command is reported without ending the chat", async () => {
    const dir = project({ "rein.config.ts": scriptedConfig(["one", "two", "three"]) });
    const first = await rein(["run", "--chat"], dir, { input: "q1\nq2\n/session\n/exit\n" });
    expect(first.code).toBe(0);
    const store = new SessionStore(join(dir, ".rein/sessions"));
    const [summary] = store.list();
    const readOnly = Session.open(JsonlStorage.open(summary?.path as string, { readOnly: true }));
    const firstAnswer = readOnly.branch().find((e) => e.type === "message" && e.message.role === "assistant")
      ?.id as string;
    readOnly.close();
    const second = await rein(["run", "--chat", "--continue"], dir, {
      input: `/frobnicate\n/tree ${firstAnswer}\nq3\n/exit\n`,
    });
    expect(second.stderr).toContain("unknown command /frobnicate");
    const session = store.open(summary?.id as string);
    const users = session
      .buildContext()
      .messages.filter((m) => m.role === "user")
      .map((m) => m.content);
    expect(users).toEqual(["q1", "q3"]);
    session.close();
  });
});
