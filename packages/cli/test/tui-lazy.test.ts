/**
 * The terminal UI loads only on a terminal: `rein --version`, and a `rein run`
 * whose output is piped, resolve none of its modules (src/tui, pi-tui, emphasize,
 * diff), so their start-up is what it was. Each is a fresh process of the built
 * bin recording every module it resolves (a bundle file counted as the modules it holds). (That a terminal does load it, the pty
 * test shows.)
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { sourceModules } from "./support/bundled-modules.js";
import { cacheRoot, cleanup, project, REIN_BIN } from "./support/rein-process.js";

const hooks = mkdtempSync(join(tmpdir(), "rein-lazy-"));
afterAll(() => {
  rmSync(hooks, { recursive: true, force: true });
  cleanup();
});
const HOOK = join(hooks, "record.mjs");
writeFileSync(
  HOOK,
  `import { appendFileSync } from "node:fs";
import { registerHooks } from "node:module";
registerHooks({ resolve(specifier, context, next) {
  const result = next(specifier, context);
  appendFileSync(process.env.REIN_RESOLVED, result.url + "\\n");
  return result;
} });
`,
);
const TUI = /\/dist\/tui\/|@earendil-works\/pi-tui|\/emphasize\/|\/node_modules\/diff\//;
/** The line-mode chat loop and what only it draws (the session tree, transcripts). */
const CHAT = /\/dist\/chat\/|\/dist\/ui\/session-tree\.js|\/dist\/export\/transcript\.js/;

function resolvedBy(args: string[], cwd: string): string[] {
  const log = join(hooks, `${Math.random().toString(36).slice(2)}.log`);
  writeFileSync(log, "");
  const child = spawnSync(process.execPath, ["--import", HOOK, REIN_BIN, ...args], {
    cwd,
    encoding: "utf8",
    env: {
      ...process.env,
      REIN_RESOLVED: log,
      REIN_TRUST_PROJECT: "1",
      REIN_CACHE_DIR: cacheRoot,
      NO_COLOR: "1",
    },
    timeout: 30_000,
  });
  expect(child.status, child.stderr).toBe(0);
  // A bundle file (package-bundles.ts) stands for the modules it holds.
  return sourceModules(readFileSync(log, "utf8").split("\n").filter(Boolean));
}

it("rein --version and a piped rein run load none of the terminal UI", () => {
  const dir = project({ "rein.config.mjs": 'export default { model: { script: ["# hi"] } };\n' });
  const version = resolvedBy(["--version"], dir);
  expect(version.length).toBeGreaterThan(0);
  expect(version.filter((url) => TUI.test(url))).toEqual([]);
  const run = resolvedBy(["run", "hello"], dir);
  // The run itself did load: the CLI's run command and the harness were resolved.
  expect(run.some((url) => url.includes("/dist/commands/run.js"))).toBe(true);
  expect(run.filter((url) => TUI.test(url))).toEqual([]);
});

it("a rein run loads the chat loop only when it is a chat", () => {
  const dir = project({ "rein.config.mjs": 'export default { model: { script: ["# hi", "# again"] } };\n' });
  const run = resolvedBy(["run", "hello"], dir);
  expect(run.some((url) => url.includes("/dist/commands/run.js"))).toBe(true);
  expect(run.filter((url) => CHAT.test(url))).toEqual([]);
  const chat = resolvedBy(["run", "--chat"], dir);
  expect(chat.some((url) => url.includes("/dist/chat/chat.js"))).toBe(true);
});
