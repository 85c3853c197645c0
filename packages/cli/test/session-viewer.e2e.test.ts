import { existsSync } from "node:fs";
import { join } from "node:path";
import { SessionStore } from "@rein/harness";
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

    const browser = await chromium.launch({
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
});
