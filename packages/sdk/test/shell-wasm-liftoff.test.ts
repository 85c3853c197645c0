/**
 * The bash grammar's WebAssembly stays on Liftoff (wasm-tiering.ts): once the parser
 * has loaded, V8 tiers no WebAssembly function up to TurboFan, whose background
 * compilation of the grammar cost hundreds of MiB and held up the process's exit.
 * Each case is a fresh Node process (V8 flags are per process) with natives syntax
 * on, so `%IsTurboFanFunction` can tell; the control case shows the probe does tier
 * up when the parser is loaded with V8's defaults.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { keepWasmOnLiftoff, LIFTOFF_FLAGS } from "../src/shell/wasm-tiering.js";

const SHELL = fileURLToPath(new URL("../dist/shell/index.js", import.meta.url));

// A hot loop (sums n..1) compiled after the parser: whether V8 tiers it up shows the flags in force.
const PROBE = `
const { analyzeShell, loadShellParser } = await import(${JSON.stringify(SHELL)});
await loadShellParser();
const facts = await analyzeShell("echo hi | grep h");
const bytes = new Uint8Array([0,0x61,0x73,0x6d,1,0,0,0,1,6,1,0x60,1,0x7f,1,0x7f,3,2,1,0,7,5,1,1,0x66,0,0,
  0x0a,0x23,1,0x21,1,1,0x7f,2,0x40,3,0x40,0x20,0,0x45,0x0d,1,0x20,1,0x20,0,0x6a,0x21,1,0x20,0,0x41,1,0x6b,
  0x21,0,0x0c,0,0x0b,0x0b,0x20,1,0x0b]);
const f = (await WebAssembly.instantiate(bytes)).instance.exports.f;
let sum = 0;
for (let i = 0; i < 2000; i++) sum += f(10000);
await new Promise((done) => setTimeout(done, 300));
for (let i = 0; i < 200; i++) sum += f(10000);
console.log(JSON.stringify({ argv: facts.commands.map((c) => c.argv), sum, turbofan: %IsTurboFanFunction(f) }));
`;

function probe(env: NodeJS.ProcessEnv) {
  const result = spawnSync(process.execPath, ["--allow-natives-syntax", "--input-type=module", "-e", PROBE], {
    encoding: "utf8",
    env: { ...process.env, ...env },
    timeout: 60_000,
  });
  expect(result.status, result.stderr).toBe(0);
  return JSON.parse(result.stdout.trim().split("\n").at(-1) ?? "") as {
    argv: string[][];
    sum: number;
    turbofan: boolean;
  };
}

describe("the parser's WebAssembly", () => {
  it("runs on Liftoff only once the parser is loaded: nothing tiers up to TurboFan", () => {
    const out = probe({ REIN_WASM_TIER_UP: "" });
    expect(out.argv).toEqual([
      ["echo", "hi"],
      ["grep", "h"],
    ]);
    expect(out.sum).toBe(2200 * 50005000);
    expect(out.turbofan).toBe(false);
  });

  it("tiers up with V8's defaults (REIN_WASM_TIER_UP=1): the probe can tell", () => {
    const out = probe({ REIN_WASM_TIER_UP: "1" });
    expect(out.argv).toEqual([
      ["echo", "hi"],
      ["grep", "h"],
    ]);
    expect(out.turbofan).toBe(true);
  });

  it("leaves V8's defaults when REIN_WASM_TIER_UP=1", () => {
    expect(LIFTOFF_FLAGS).toContain("--wasm-tiering-budget=");
    expect(keepWasmOnLiftoff({ REIN_WASM_TIER_UP: "1" })).toBe(false);
  });
});
