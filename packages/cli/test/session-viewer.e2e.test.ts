import { existsSync } from "node:fs";
import { join } from "node:path";
import type { JsonObject } from "@earendil-works/pi-ai";
import { type AssistantMessage, SessionStore } from "@rein/harness";
import { chromium } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import {
  cleanup,
  policyPlugin,
  project,
  rein,
  scriptedConfig,
  TOOLS_PLUGIN,
} from "./support/rein-process.js";

afterAll(cleanup);

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

const launch = () =>
  chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });

const usage = (input: number, output: number, cacheRead: number, cacheWrite: number, cost: number) => ({
  input,
  output,
  cacheRead,
  cacheWrite,
  totalTokens: input + output + cacheRead + cacheWrite,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: cost },
});

const assistant = (
  content: AssistantMessage["content"],
  spent: ReturnType<typeof usage>,
  stopReason: AssistantMessage["stopReason"] = "stop",
): AssistantMessage => ({
  role: "assistant",
  content,
  api: "faux",
  provider: "faux",
  model: "scripted",
  usage: spent,
  stopReason,
  timestamp: 2,
});

const call = (id: string, name: string, args: JsonObject) => ({
  type: "toolCall" as const,
  id,
  name,
  arguments: args,
});

const result = (toolCallId: string, toolName: string, decision: Record<string, unknown>) => ({
  role: "toolResult" as const,
  toolCallId,
  toolName,
  content: [{ type: "text" as const, text: decision.decision === "deny" ? "denied" : "done" }],
  isError: decision.decision === "deny",
  timestamp: 3,
  decision,
});

/**
 * A session with a linear start, four decided calls (a deny with its trail, an
 * allow by the default, an answered ask, an allow by a rule), then a fork whose
 * second branch is active.
 */
function recordBranchedSession(dir: string) {
  const session = new SessionStore(join(dir, ".rein/sessions")).create({ cwd: dir });
  const ids: Record<string, string> = {};
  ids.user = session.appendMessage({ role: "user", content: "tidy up", timestamp: 1 }).id;
  ids.calls = session.appendMessage(
    assistant(
      [
        call("c1", "push", { remote: "origin" }),
        call("c2", "echo", { text: "hi" }),
        call("c3", "write", { path: "a.txt" }),
        call("c4", "echo", { text: "ok" }),
      ],
      usage(100, 20, 10, 5, 0.0123),
      "toolUse",
    ),
  ).id;
  session.appendMessage(
    result("c1", "push", {
      decision: "deny",
      by: "house-rules:no-push",
      reason: "no pushing on Fridays",
      trail: [
        { hook: "toolCall", by: "normalise", answer: "rewrite", args: { remote: "origin", force: false } },
        { hook: "toolGate", by: "guard", answer: "no opinion" },
        { hook: "toolGate", by: "house-rules:no-push", answer: "deny", reason: "no pushing on Fridays" },
        { hook: "toolGate", by: "friendly", answer: "allow", reason: "friends allow everything" },
      ],
    }) as never,
  );
  session.appendMessage(
    result("c2", "echo", {
      decision: "allow",
      by: "harness:default",
      reason: "no gate had an opinion; default is allow",
    }) as never,
  );
  session.appendMessage(
    result("c3", "write", {
      decision: "allow",
      by: "permissions",
      reason: "allowed once at the prompt",
      askedBy: "policy:writes",
    }) as never,
  );
  ids.lastResult = session.appendMessage(
    result("c4", "echo", { decision: "allow", by: "policy:echo-ok", reason: "echo is harmless" }) as never,
  ).id;
  ids.endA = session.appendMessage(
    assistant([{ type: "text", text: "done" }], usage(200, 30, 20, 10, 0.0077)),
  ).id;
  session.moveLeaf(ids.lastResult);
  ids.endB = session.appendMessage(
    assistant([{ type: "text", text: "another ending" }], usage(50, 5, 0, 0, 0.001)),
  ).id;
  ids.thanks = session.appendMessage({ role: "user", content: "thanks", timestamp: 4 }).id;
  ids.welcome = session.appendMessage(
    assistant([{ type: "text", text: "welcome" }], usage(0, 0, 0, 0, 0)),
  ).id;
  const id = session.id;
  session.close();
  return { id, ids };
}

describe("the HTML session viewer in headless Chromium", { timeout: 120_000 }, () => {
  it("shows the branch tree with the active leaf and a denied call with who denied it and why", async () => {
    expect(
      existsSync(CHROMIUM),
      `Chromium is required at ${CHROMIUM} (.ci/run installs Debian's chromium)`,
    ).toBe(true);
    const dir = project({
      "rein.config.ts": scriptedConfig(
        [{ toolCalls: [{ name: "push", args: { remote: "origin" } }] }, "I was not allowed to push."],
        'plugins: ["./tools.ts", "./policy.ts"],',
      ),
      "tools.ts": TOOLS_PLUGIN,
      "policy.ts": policyPlugin(true),
    });
    expect((await rein(["run", "push it"], dir)).code).toBe(0);
    const [summary] = new SessionStore(join(dir, ".rein/sessions")).list();
    const page = join(dir, "session.html");
    expect((await rein(["sessions", "export", summary?.id as string, "--html", "-o", page], dir)).code).toBe(
      0,
    );

    const browser = await launch();
    try {
      const tab = await browser.newPage();
      await tab.goto(`file://${page}`);
      const tree = tab.locator("nav > ul.tree");
      await expect(tree.isVisible()).resolves.toBe(true);
      // biome-ignore lint/performance/useDomNodeTextContent: the test checks what the page shows, as rendered.
      const treeText = await tree.innerText();
      expect(treeText).toContain("user: push it");
      expect(treeText).toContain("◀ leaf");
      const denied = tab.locator('[data-decision="deny"]');
      expect(await denied.count()).toBe(1);
      expect(await denied.isVisible()).toBe(true);
      // biome-ignore lint/performance/useDomNodeTextContent: the test checks what the page shows, as rendered.
      const deniedText = await denied.innerText();
      expect(deniedText).toContain("Denied by house-rules:no-push");
      expect(deniedText).toContain("no pushing on Fridays");
      expect(await tab.locator('[data-tool="push"]').count()).toBe(1);
    } finally {
      await browser.close();
    }
  });

  it("indents only at the fork, totals usage and cost, filters by decision and shows a decision's trail on click", async () => {
    const dir = project({
      "rein.config.ts": scriptedConfig([], 'plugins: ["./tools.ts"],'),
      "tools.ts": TOOLS_PLUGIN,
    });
    const { id, ids } = recordBranchedSession(dir);
    const page = join(dir, "branched.html");
    const exported = await rein(["sessions", "export", id, "--html", "-o", page], dir);
    expect(exported.code, exported.stderr).toBe(0);

    const browser = await launch();
    try {
      const tab = await browser.newPage();
      await tab.goto(`file://${page}`);
      const x = async (entryId: string | undefined) =>
        (await tab.locator(`[data-entry="${entryId}"] > span`).boundingBox())?.x ?? Number.NaN;
      // The linear start is one flat column: no staircase.
      const start = await x(ids.user);
      expect(await x(ids.calls)).toBe(start);
      expect(await x(ids.lastResult)).toBe(start);
      // The fork indents both branches alike; within a branch, flat again.
      const branchA = await x(ids.endA);
      expect(branchA).toBeGreaterThan(start);
      expect(await x(ids.endB)).toBe(branchA);
      expect(await x(ids.thanks)).toBe(branchA);
      expect(await x(ids.welcome)).toBe(branchA);
      expect(await tab.locator("li.branch").count()).toBe(2);
      // biome-ignore lint/performance/useDomNodeTextContent: the test checks what the page shows, as rendered.
      expect(await tab.locator(`[data-entry="${ids.welcome}"]`).innerText()).toContain("◀ leaf");

      // Totals over every assistant message, the abandoned branch's included.
      // biome-ignore lint/performance/useDomNodeTextContent: the test checks what the page shows, as rendered.
      expect(await tab.locator("[data-tokens]").innerText()).toBe("395 in (30 cached) · 55 out");
      // biome-ignore lint/performance/useDomNodeTextContent: the test checks what the page shows, as rendered.
      expect(await tab.locator("[data-cost]").innerText()).toBe("$0.0210");
      // biome-ignore lint/performance/useDomNodeTextContent: the test checks what the page shows, as rendered.
      expect(await tab.locator("[data-usage]").innerText()).toContain("over 4 model requests");

      const visibleTools = async () => {
        const tools = tab.locator("main .tool");
        const shown: string[] = [];
        for (let i = 0; i < (await tools.count()); i++) {
          const tool = tools.nth(i);
          if (await tool.isVisible())
            shown.push(JSON.parse((await tool.locator("pre").first().textContent()) as string));
        }
        return shown;
      };
      expect(await visibleTools()).toEqual([
        { remote: "origin" },
        { text: "hi" },
        { path: "a.txt" },
        { text: "ok" },
      ]);
      await tab.locator('[data-filter="deny"]').click();
      expect(await visibleTools()).toEqual([{ remote: "origin" }]);
      // Messages without a matching call are hidden too.
      expect(await tab.locator("main .msg.user").first().isVisible()).toBe(false);
      await tab.locator('[data-filter="ask"]').click();
      expect(await visibleTools()).toEqual([{ path: "a.txt" }]);
      await tab.locator('[data-filter="default"]').click();
      expect(await visibleTools()).toEqual([{ text: "hi" }]);
      // biome-ignore lint/performance/useDomNodeTextContent: the test checks what the page shows, as rendered.
      expect(await tab.locator(".filters").innerText()).toContain("Denied (1)");
      await tab.locator('[data-filter="all"]').click();
      expect((await visibleTools()).length).toBe(4);
      expect(await tab.locator("main .msg.user").first().isVisible()).toBe(true);

      // The trail is there but folded; a click shows every tap's answer in order.
      const trail = tab.locator('[data-tool="push"] details.trail');
      expect(await trail.count()).toBe(1);
      const steps = trail.locator("li.step");
      expect(await steps.first().isVisible()).toBe(false);
      await trail.locator("summary").click();
      expect(await steps.first().isVisible()).toBe(true);
      const stepTexts = (await steps.allInnerTexts()).map((text) => text.replace(/\s+/g, " ").trim());
      expect(stepTexts).toEqual([
        'toolCall normalise rewrite { "remote": "origin", "force": false }',
        "toolGate guard no opinion",
        "toolGate house-rules:no-push deny: no pushing on Fridays",
        "toolGate friendly allow: friends allow everything",
      ]);
      // Decisions without a trail have no trail control.
      expect(await tab.locator('[data-tool="echo"] details.trail').count()).toBe(0);
    } finally {
      await browser.close();
    }
  });

  it("renders recorded Markdown with its line breaks, runs no markup a message carries, and shows no cost without prices", async () => {
    const answer = [
      "## Plan",
      "",
      "1. **read** the notes",
      "2. fix `parse()`",
      "",
      "```js",
      "const x = 1;",
      "```",
      "",
      "first line",
      "second line",
      "",
      '<img src=x onerror="window.pwned=1"> [link](javascript:window.pwned=2)',
    ].join("\n");
    const dir = project({
      "rein.config.mjs": `export default { model: { script: [${JSON.stringify(answer)}] } };\n`,
    });
    const run = await rein(["run", "line one\nline two"], dir);
    expect(run.code, run.stderr).toBe(0);
    const page = join(dir, "markdown.html");
    const [summary] = new SessionStore(join(dir, ".rein/sessions")).list();
    expect((await rein(["export", summary?.id as string, "--html", "-o", page], dir)).code).toBe(0);
    const browser = await launch();
    try {
      const tab = await browser.newPage({ viewport: { width: 1000, height: 700 } });
      await tab.goto(`file://${page}`);
      // biome-ignore lint/performance/useDomNodeTextContent: the test checks what the page shows, as rendered.
      expect(await tab.locator("main .assistant h2").innerText()).toBe("Plan");
      expect(await tab.locator("main .assistant ol > li").count()).toBe(2);
      // biome-ignore lint/performance/useDomNodeTextContent: the test checks what the page shows, as rendered.
      expect(await tab.locator("main .assistant pre code.language-js").innerText()).toBe("const x = 1;\n");
      // biome-ignore lint/performance/useDomNodeTextContent: the test checks what the page shows, as rendered.
      expect(await tab.locator("main .user .md").innerText()).toBe("line one\nline two");
      // biome-ignore lint/performance/useDomNodeTextContent: the test checks what the page shows, as rendered.
      expect(await tab.locator("main .assistant .md").innerText()).toContain("first line\nsecond line");
      await tab
        .locator("main .assistant a")
        .click()
        .catch(() => undefined);
      expect(await tab.evaluate(() => (globalThis as { pwned?: number }).pwned)).toBeUndefined();
      expect(await tab.locator("[data-cost]").count()).toBe(0);
      // biome-ignore lint/performance/useDomNodeTextContent: the test checks what the page shows, as rendered.
      expect(await tab.locator("[data-usage]").innerText()).toMatch(
        /^Usage: [\d,]+ in · [\d,]+ out over 1 model request/,
      );
      if (process.env.REIN_SCREENS_DIR)
        await tab.screenshot({
          path: join(process.env.REIN_SCREENS_DIR, "7-html-export.png"),
          fullPage: true,
        });
    } finally {
      await browser.close();
    }
  });
});
