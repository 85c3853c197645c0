/**
 * Rein's state folders are out of the sandboxed shell's reach wherever the config
 * puts them (invariant 4): a `session.dir` outside `.rein/` is known only to the
 * CLI, which hands it to the shell's sandbox (`stateFolders`). A real `rein run`, a
 * real bubblewrap; the host is checked afterwards. A session dir that holds the project
 * is left out (it would make the project read-only).
 */
import { existsSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, project, rein } from "../support/rein-process.js";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..");
afterAll(cleanup);

const config = (
  sessionDir: string,
  command: string,
  allowWrite: string[],
) => `import { defineConfig } from "@rein/sdk";
import shell from ${JSON.stringify(join(repo, "packages/plugins/tools-shell/dist/index.js"))};
export default defineConfig({
  model: { script: [{ toolCalls: [{ name: "bash", args: { command: ${JSON.stringify(command)} } }] }, "done"] },
  session: { dir: ${JSON.stringify(sessionDir)} },
  plugins: [[shell, { sandbox: { filesystem: { allowWrite: ${JSON.stringify(allowWrite)} } } }]],
});
`;

describe("a session dir outside .rein/ is not writable from the sandbox", () => {
  const beside = `../rein-sessions-${process.pid}`;
  afterAll(() => rmSync(join(tmpdir(), beside.slice(3)), { recursive: true, force: true }));
  it.each([
    ["in the project", "history", []],
    ["beside it, and named in allowWrite", beside, [beside]],
  ])("%s", async (_label, sessionDir, allowWrite) => {
    const write = `mkdir -p '${sessionDir}'; echo forged > '${sessionDir}/forged.jsonl'; python3 -c "open('${sessionDir}/by-python.jsonl', 'w').write('x')"; echo wrote-the-project > ok.txt`;
    const dir = project({ "rein.config.ts": config(sessionDir, write, allowWrite) });
    const result = await rein(["run", "go"], dir);
    expect(result.code, result.stderr).toBe(0);
    const sessions = join(dir, sessionDir);
    // The command ran (the rest of the project is writable), and Rein wrote its session.
    expect(existsSync(join(dir, "ok.txt")), result.stdout + result.stderr).toBe(true);
    expect(readdirSync(sessions).filter((name) => name.endsWith(".jsonl"))).toHaveLength(1);
    expect(existsSync(join(sessions, "forged.jsonl"))).toBe(false);
    expect(existsSync(join(sessions, "by-python.jsonl"))).toBe(false);
  });

  it("a session dir that holds the project is not made read-only (it would lock the project)", async () => {
    const dir = project({ "rein.config.ts": config(".", "echo wrote-the-project > ok.txt", []) });
    const result = await rein(["run", "go"], dir);
    expect(result.code, result.stderr).toBe(0);
    expect(existsSync(join(dir, "ok.txt")), result.stdout + result.stderr).toBe(true);
  });

  it("nor by the file tools", async () => {
    const dir = project({
      "rein.config.ts": `import { defineConfig } from "@rein/sdk";
import fsTools from ${JSON.stringify(join(repo, "packages/plugins/tools-fs/dist/index.js"))};
export default defineConfig({
  model: { script: [{ toolCalls: [{ name: "write", args: { path: "history/forged.jsonl", content: "x" } }, { name: "write", args: { path: "notes.txt", content: "x" } }] }, "done"] },
  session: { dir: "history" },
  plugins: [fsTools],
});
`,
    });
    const result = await rein(["run", "go"], dir);
    expect(result.code, result.stderr).toBe(0);
    expect(existsSync(join(dir, "notes.txt")), result.stdout + result.stderr).toBe(true);
    expect(existsSync(join(dir, "history", "forged.jsonl"))).toBe(false);
  });
});
