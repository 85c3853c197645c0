import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, project, rein } from "./support/rein-process.js";

afterAll(cleanup);

describe("rein init", { timeout: 60_000 }, () => {
  it("scaffolds a config and a plugin that run as they are, and refuses to overwrite", async () => {
    const dir = project({});
    const init = await rein(["init"], dir);
    expect(init.code).toBe(0);
    for (const file of ["rein.config.ts", "plugins/no-secrets.ts", "plugins/no-secrets.test.ts"]) {
      expect(existsSync(join(dir, file))).toBe(true);
    }
    const run = await rein(["run", "hello"], dir);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain("noted: hello from rein");
    const again = await rein(["init"], dir);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("--force");
  });
});
