/**
 * Generated spellings of a denied file (invariant 2): every combination of a
 * prefix (./, dot-dot detours, double slashes, the real and the symlinked absolute
 * working directory) and a name that reaches `.env` (the file, a symlink to it, a
 * symlink two folders down) must be denied for read, grep and edit - decided at the
 * gate on the canonical facts, through @rein/tools-fs and @rein/plugin-policy.
 */
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import policy from "@rein/plugin-policy";
import { createTestHarness } from "@rein/sdk/testing";
import { describe, expect, it } from "vitest";
import fsTools from "../../src/index.js";
import { tempDir } from "../helpers.js";

describe("generated spellings of .env are all denied", () => {
  it("read, grep and edit, every prefix x name", async () => {
    const real = tempDir("rein-mut-");
    mkdirSync(join(real, "src/deep"), { recursive: true });
    writeFileSync(join(real, ".env"), "KEY=sk-live-mutation\n");
    symlinkSync(".env", join(real, "env-link"));
    symlinkSync("../../.env", join(real, "src/deep/cfg"));
    const linked = join(tempDir("rein-mut-link-"), "work");
    symlinkSync(real, linked);

    const prefixes = [
      "",
      "./",
      "src/../",
      "src/deep/../../",
      "./src/./../",
      "src//..//",
      `${real}/`,
      `${linked}/`,
    ];
    const names = [".env", "env-link", "src/deep/cfg", "src/deep/../../.env", "src/deep/./cfg"];
    const t = await createTestHarness({
      plugins: [fsTools, [policy, { rules: [{ id: "env", rule: "read(**/.env)", decision: "deny" }] }]],
      config: { cwd: linked },
    });
    const allowed: string[] = [];
    let checked = 0;
    for (const prefix of prefixes) {
      for (const name of names) {
        const path = `${prefix}${name}`;
        for (const [tool, args] of [
          ["read", { path }],
          ["grep", { pattern: "KEY", path }],
          ["edit", { path, oldText: "KEY", newText: "K" }],
        ] as const) {
          const verdict = await t.checkToolCall({ name: tool, args });
          checked++;
          if (verdict.decision !== "deny" || verdict.by !== "policy:env") allowed.push(`${tool} ${path}`);
        }
      }
    }
    await t.dispose();
    expect(allowed).toEqual([]);
    expect(checked).toBe(prefixes.length * names.length * 3);
  });
});
