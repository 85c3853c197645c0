/**
 * Concurrency: two processes opening one session. While one holds it, the other
 * fails with `session_in_use` ("session in use") and the file is byte-for-byte
 * unchanged; two processes racing to open get exactly one winner; a holder killed
 * with SIGKILL leaves a stale lock that the next open takes over.
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentHarness } from "../../src/harness/agent-harness.js";
import { JsonlStorage } from "../../src/session/jsonl-storage.js";
import { Session } from "../../src/session/session.js";
import { createSessionHeader } from "../../src/session/storage.js";
import { reply, scriptedModel } from "../support/scripted-model.js";
import { ensureBuilt, runNode, tempDir } from "./support.js";

const child = path.join(path.dirname(fileURLToPath(import.meta.url)), "open-child.mjs");
let work: string;
const holders: ChildProcess[] = [];

beforeAll(() => {
  ensureBuilt();
  work = tempDir("rein-concurrency-");
});
afterAll(() => {
  for (const holder of holders)
    if (holder.exitCode === null && holder.signalCode === null) holder.kill("SIGKILL");
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

/** A session with one completed run, closed. */
async function sessionFile(name: string): Promise<string> {
  const file = path.join(work, `${name}.jsonl`);
  const session = Session.create(JsonlStorage.create(file, createSessionHeader()));
  const scripted = scriptedModel();
  const harness = new AgentHarness({ session, model: scripted.model, models: scripted.collection });
  scripted.script([reply("hi")]);
  await harness.prompt("hello");
  session.close();
  scripted.dispose();
  return file;
}

/** Starts a process that opens the session and holds it; resolves once it has. */
function holdInChild(file: string): Promise<ChildProcess> {
  const holder = spawn(process.execPath, [child, file, "hold"], { stdio: ["ignore", "pipe", "inherit"] });
  holders.push(holder);
  return new Promise((resolve, reject) => {
    let out = "";
    holder.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      if (out.includes("opened")) resolve(holder);
      if (out.includes("failed")) reject(new Error(out));
    });
    holder.on("exit", (code) => reject(new Error(`holder exited early (${code}): ${out}`)));
  });
}

describe("concurrency: two processes, one session", () => {
  it("while one process holds a session, a second process fails with session in use and the file is unchanged", async () => {
    const file = await sessionFile("held");
    const holder = await holdInChild(file);
    const before = fs.readFileSync(file);

    const second = await runNode(child, [file]);
    expect(second.code).toBe(3);
    expect(second.stdout).toMatch(/^failed session_in_use session in use: .* locked by process/m);
    expect(second.stdout).toContain(String(holder.pid));
    expect(fs.readFileSync(file).equals(before)).toBe(true);

    // This process too.
    expect(() => Session.open(JsonlStorage.open(file))).toThrow(
      expect.objectContaining({ code: "session_in_use" }),
    );
    expect(fs.readFileSync(file).equals(before)).toBe(true);

    // A holder killed with SIGKILL leaves a stale lock: the next open takes it over.
    const exited = new Promise((resolve) => holder.once("exit", resolve));
    holder.kill("SIGKILL");
    await exited;
    const third = await runNode(child, [file]);
    expect(third.stdout).toMatch(/^opened /m);
    expect(third.code).toBe(0);
    const reopened = Session.open(JsonlStorage.open(file));
    expect(reopened.buildContext().messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    reopened.close();
  }, 120_000);

  it("two processes racing to open one session: exactly one wins, the other is told it is in use", async () => {
    const races = 4;
    for (let race = 0; race < races; race++) {
      const file = await sessionFile(`race-${race}`);
      const before = fs.readFileSync(file);
      const spawnHolder = () => {
        const racer = spawn(process.execPath, [child, file, "hold"], {
          stdio: ["ignore", "pipe", "inherit"],
        });
        holders.push(racer);
        return new Promise<{ racer: ChildProcess; line: string }>((resolve) => {
          let out = "";
          racer.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
            out += chunk;
            if (out.includes("\n")) resolve({ racer, line: out.trim() });
          });
        });
      };
      const results = await Promise.all([spawnHolder(), spawnHolder()]);
      const winners = results.filter((r) => r.line.startsWith("opened"));
      const losers = results.filter((r) => r.line.startsWith("failed session_in_use"));
      expect(winners).toHaveLength(1);
      expect(losers).toHaveLength(1);
      expect(losers[0]?.line).toContain("session in use");
      expect(fs.readFileSync(file).equals(before)).toBe(true);
      for (const { racer } of results) {
        // The loser may have exited already: its "exit" event will not come again.
        if (racer.exitCode !== null || racer.signalCode !== null) continue;
        const gone = new Promise((resolve) => racer.once("exit", resolve));
        racer.kill("SIGKILL");
        await gone;
      }
    }
  }, 120_000);
});
