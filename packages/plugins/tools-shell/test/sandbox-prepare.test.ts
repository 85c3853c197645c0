/**
 * The sandbox starts ahead of the first command (`BashToolHandle.prepare`, which the
 * plugin calls when the agent's first request goes out): a plugin set up without a run
 * starts nothing; a run starts the runtime before its first command; a prepare that
 * cannot start the sandbox reports nothing and the command still fails closed; an
 * aborted prepare starts nothing after the runtime's import. A fresh Node process each
 * (the runtime is a process-wide singleton), on the built `dist/`.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { tempDir } from "./helpers.js";

const INDEX = fileURLToPath(new URL("../dist/index.js", import.meta.url));
const TESTING = fileURLToPath(new URL("../../../sdk/dist/testing/index.js", import.meta.url));

const PRELUDE = `
import { createRequire, registerHooks, syncBuiltinESMExports } from "node:module";
// Every bwrap command started (the probe and the commands), counted before the tool loads.
const cp = createRequire(import.meta.url)("node:child_process");
const spawn = cp.spawn;
const spawnSync = cp.spawnSync;
let bwraps = 0;
// Every \`which\` the runtime ran, by the program it looked for.
const whiches = [];
cp.spawnSync = function (file, args, ...rest) {
  if (file === "which") whiches.push(...args);
  return spawnSync.call(this, file, args, ...rest);
};
cp.spawn = function (file, args, ...rest) {
  if (Array.isArray(args) && args.some((a) => typeof a === "string" && a.includes("bwrap"))) bwraps++;
  return spawn.call(this, file, args, ...rest);
};
syncBuiltinESMExports();
const resolved = [];
registerHooks({ resolve(specifier, context, next) { resolved.push(specifier); return next(specifier, context); } });
const loaded = () => resolved.some((s) => s.startsWith("@anthropic-ai/sandbox-runtime"));
// The runtime's configuration schemas (zod), which its package index builds and the manager never uses.
const schemas = () => resolved.some((s) => s === "zod" || s.startsWith("zod/"));
const shell = await import(process.env.INDEX);
const context = (id) => ({ signal: new AbortController().signal, update() {}, cwd: process.env.ROOT, sessionId: "s", toolCallId: id, facts: {} });
const text = (result) => result.content.map((c) => c.text ?? "").join("");
`;

function run(script: string) {
  const root = tempDir();
  const child = spawnSync(process.execPath, ["--input-type=module", "-e", PRELUDE + script], {
    cwd: root,
    env: { ...process.env, INDEX, TESTING, ROOT: root },
    encoding: "utf8",
    timeout: 60_000,
  });
  expect(child.status, child.stderr).toBe(0);
  return JSON.parse(child.stdout.trim().split("\n").at(-1) ?? "") as Record<string, unknown>;
}

describe("preparing the sandbox", () => {
  it("starts the runtime and runs its probe before any command; the first command then runs sandboxed", () => {
    const seen = run(`
const handle = shell.openBashTool();
const before = loaded();
await handle.prepare(process.env.ROOT);
const prepared = loaded();
const probes = bwraps;
const result = await handle.tool.execute({ command: "echo in-sandbox" }, context("c1"));
handle.dispose();
await shell.releaseRuntimeIfIdle();
process.stdout.write(JSON.stringify({ before, prepared, probes, bwraps, schemas: schemas(), isError: result.isError, text: text(result) }));
`);
    // The probe ran in prepare; the command then was the only other bwrap command.
    expect(seen).toMatchObject({ before: false, prepared: true, probes: 1, bwraps: 2, isError: false });
    // The manager module was imported, not the package index with its zod schemas.
    expect(seen.schemas).toBe(false);
    expect(seen.text).toContain("in-sandbox");
  });

  it("finds bwrap and socat without spawning which: the first command's start runs no child process for them", () => {
    const seen = run(`
const handle = shell.openBashTool();
await handle.prepare(process.env.ROOT);
const result = await handle.tool.execute({ command: "echo in-sandbox" }, context("c1"));
handle.dispose();
await shell.releaseRuntimeIfIdle();
process.stdout.write(JSON.stringify({ whiches, isError: result.isError, text: text(result) }));
`);
    expect(seen).toMatchObject({ isError: false });
    expect(seen.text).toContain("in-sandbox");
    // The runtime still looks up ripgrep and the shell itself; bwrap and socat come resolved.
    expect(seen.whiches).not.toContain("bwrap");
    expect(seen.whiches).not.toContain("socat");
    expect(seen.whiches).toContain("rg");
  });

  it("reports nothing when the sandbox cannot start, and the command still fails closed", () => {
    const seen = run(`
const handle = shell.openBashTool({ sandbox: { bwrapPath: "/nonexistent/bwrap" } });
const prepared = await handle.prepare(process.env.ROOT).then(() => "resolved", (e) => "rejected: " + e.message);
const result = await handle.tool.execute({ command: "echo ran > ran.txt" }, context("c1"));
const { existsSync } = await import("node:fs");
handle.dispose();
process.stdout.write(JSON.stringify({ prepared, isError: result.isError, text: text(result), ran: existsSync(process.env.ROOT + "/ran.txt") }));
`);
    expect(seen).toMatchObject({ prepared: "resolved", isError: true, ran: false });
    expect(seen.text).toMatch(/sandbox cannot start[\s\S]*The command was not run/);
  });

  it("a probe that passes while the runtime's start fails starts nothing: the command fails closed", () => {
    // The probe runs beside the runtime's initialize; \`true\` as socat makes no bridge socket,
    // so initialize fails (after its 5 attempts) while the offline probe, which needs no
    // bridge, succeeds. The sandbox must stay unstarted.
    const seen = run(`
const handle = shell.openBashTool({ sandbox: { socatPath: "/bin/true" } });
await handle.prepare(process.env.ROOT);
const probes = bwraps;
const result = await handle.tool.execute({ command: "echo ran > ran.txt" }, context("c1"));
const { existsSync } = await import("node:fs");
handle.dispose();
process.stdout.write(JSON.stringify({ probes, bwraps, isError: result.isError, text: text(result), ran: existsSync(process.env.ROOT + "/ran.txt") }));
`);
    // The probe ran (in prepare, and again for the command's own start) and passed each time.
    expect(seen).toMatchObject({ probes: 1, bwraps: 2, isError: true, ran: false });
    expect(seen.text).toMatch(/sandbox cannot start[\s\S]*bridge[\s\S]*The command was not run/);
  });

  it("does nothing for an unsandboxed tool, and starts nothing after the import once aborted", () => {
    const seen = run(`
const off = shell.openBashTool({ sandbox: { mode: "off" } });
await off.prepare(process.env.ROOT);
const offLoaded = loaded();
const handle = shell.openBashTool();
const done = new AbortController();
done.abort();
await handle.prepare(process.env.ROOT, done.signal);
const abortedBwraps = bwraps;
// Nothing was started: the command starts the runtime (probe + itself: two bwrap commands).
const result = await handle.tool.execute({ command: "echo later" }, context("c1"));
handle.dispose();
await shell.releaseRuntimeIfIdle();
process.stdout.write(JSON.stringify({ offLoaded, abortedLoaded: loaded(), abortedBwraps, bwraps, isError: result.isError, text: text(result) }));
`);
    expect(seen).toMatchObject({
      offLoaded: false,
      abortedLoaded: true,
      abortedBwraps: 0,
      bwraps: 2,
      isError: false,
    });
    expect(seen.text).toContain("later");
  });

  it("as a plugin: a host set up without a run starts nothing; a run starts the sandbox when its first request goes out", () => {
    const seen = run(`
const { createTestHarness } = await import(process.env.TESTING);
const plugin = shell.default;
const idle = await createTestHarness({ plugins: [plugin], config: { cwd: process.env.ROOT } });
await new Promise((done) => setTimeout(done, 200));
const afterSetup = loaded();
await idle.dispose();
const t = await createTestHarness({ plugins: [plugin], config: { cwd: process.env.ROOT }, script: ["no command needed"] });
await t.prompt("answer");
await new Promise((done) => setTimeout(done, 50));
const afterRun = loaded();
await t.dispose();
process.stdout.write(JSON.stringify({ afterSetup, afterRun }));
`);
    expect(seen).toEqual({ afterSetup: false, afterRun: true });
  });

  it("as a plugin: the sandbox's import waits for the first response, so it cannot delay the first request", () => {
    const seen = run(`
const { createTestHarness } = await import(process.env.TESTING);
const seenAtRequest = [];
// A request that takes a while to go out (a slow tap): the runtime is still not loaded when it does.
const slowRequest = {
  name: "slow-request",
  setup(rein) {
    rein.hooks.beforeRequest.tapPromise("slow-request", async (request) => {
      await new Promise((done) => setTimeout(done, 100));
      seenAtRequest.push(loaded());
      return request;
    });
  },
};
const t = await createTestHarness({ plugins: [shell.default, slowRequest], config: { cwd: process.env.ROOT }, script: ["no command needed"] });
await t.prompt("answer");
await new Promise((done) => setTimeout(done, 50));
const afterRun = loaded();
await t.dispose();
process.stdout.write(JSON.stringify({ seenAtRequest, afterRun }));
`);
    expect(seen).toEqual({ seenAtRequest: [false], afterRun: true });
  });

  it("as a plugin: dispose does not wait for a runtime import still under way, and nothing starts after it", () => {
    // The runtime's import is held back 3 s (a shim with a top-level await stands in for
    // the package, then re-exports it); a text-only run ends meanwhile.
    const seen = run(`
registerHooks({
  resolve(specifier, context, next) {
    if (!specifier.startsWith("@anthropic-ai/sandbox-runtime") || context.parentURL?.startsWith("data:")) return next(specifier, context);
    const real = next(specifier, context).url;
    const shim = "await new Promise((r) => setTimeout(r, 3000)); export * from " + JSON.stringify(real) + ";";
    return { url: "data:text/javascript," + encodeURIComponent(shim), shortCircuit: true };
  },
});
const { createTestHarness } = await import(process.env.TESTING);
const t = await createTestHarness({ plugins: [shell.default], config: { cwd: process.env.ROOT }, script: ["no command needed"] });
await t.prompt("answer");
await new Promise((done) => setTimeout(done, 100));
const importing = loaded();
const started = performance.now();
await t.dispose();
const disposeMs = performance.now() - started;
// The held-back import finishes after dispose; the aborted prepare must start nothing then.
await new Promise((done) => setTimeout(done, 3500));
process.stdout.write(JSON.stringify({ importing, disposeMs, bwraps }));
`);
    expect(seen.importing).toBe(true);
    expect(seen.disposeMs).toBeLessThan(1500);
    expect(seen.bwraps).toBe(0);
  });
});
