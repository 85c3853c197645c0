import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import policy from "@rein/plugin-policy";
import { createTestHarness, type TestHarness } from "@rein/sdk/testing";
import toolsFs from "@rein/tools-fs";
import { afterEach, describe, expect, it } from "vitest";
import houseRules from "../src/index.js";

let t: TestHarness | undefined;
let root: string | undefined;
afterEach(async () => {
  await t?.dispose();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe("house-rules stacked with @rein/tools-fs and @rein/plugin-policy", () => {
  it("the real write tool writes inside src/, is denied outside it, and the strictest verdict wins", async () => {
    root = mkdtempSync(join(tmpdir(), "house-rules-"));
    mkdirSync(join(root, "src"));
    t = await createTestHarness({
      config: { cwd: root },
      plugins: [
        toolsFs,
        houseRules,
        [
          policy,
          {
            rules: [{ id: "allow-writes", rule: "write(**)", decision: "allow", reason: "writes are fine" }],
          },
        ],
      ],
      script: [
        { toolCalls: [{ name: "write", args: { path: "notes.txt", content: "outside" } }] },
        { toolCalls: [{ name: "write", args: { path: "src/ok.ts", content: "export {};\n" } }] },
        "done",
      ],
    });
    const outcome = await t.prompt("write two files");
    expect(outcome.status).toBe("completed");
    expect(existsSync(join(root, "notes.txt"))).toBe(false);
    expect(readFileSync(join(root, "src/ok.ts"), "utf8")).toBe("export {};\n");
    // policy's allow never undoes house-rules' deny; inside src/ the policy's allow decides
    expect(t.decisions().map((d) => [d.decision, d.by])).toEqual([
      ["deny", "house-rules:outside-writable-roots"],
      ["allow", "policy:allow-writes"],
    ]);
  });
});
