/**
 * The shortcuts that make reopening a long session cheap change no verdict and no
 * message. `messageAccepted` (the quick accept) never accepts a message the full check
 * `explainMessage` refuses, over seeded damage to every field of every message shape;
 * and the JSONL reader, which indexes each line before its checks and finds a parent
 * on the line before without a lookup, refuses exactly the lines a plain reader
 * (a Map of the lines before, `entryProblem`) refuses, with the same message.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseSessionFile } from "../src/session/jsonl-format.js";
import { explainMessage, messageAccepted, messageProblem } from "../src/session/message-checks.js";
import { createSessionHeader } from "../src/session/storage.js";
import { entryProblem } from "../src/session/validation.js";
import { random } from "./reliability/crash-scenario.mjs";

type Rng = () => number;
const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)] as T;

const usage = {
  input: 1,
  output: 2,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 3,
  cost: { input: 0, output: 0.5, cacheRead: 0, cacheWrite: 0, total: 0.5 },
};
/** One valid message of each shape the quick accept knows, and some it leaves to the full check. */
const VALID: Record<string, unknown>[] = [
  { role: "user", content: "hello", timestamp: 1 },
  {
    role: "user",
    content: [
      { type: "text", text: "q" },
      { type: "image", data: "AA", mimeType: "image/png" },
    ],
  },
  {
    role: "assistant",
    content: [
      { type: "thinking", thinking: "hm", thinkingSignature: "s", redacted: false },
      { type: "text", text: "a", textSignature: "t" },
      { type: "toolCall", id: "c1", name: "read", arguments: { path: "x" }, thoughtSignature: "u" },
    ],
    api: "faux",
    provider: "faux",
    model: "faux-1",
    usage,
    stopReason: "toolUse",
    errorMessage: "none",
    timestamp: 2,
  },
  {
    role: "toolResult",
    toolCallId: "c1",
    toolName: "read",
    content: [{ type: "text", text: "ok" }],
    isError: false,
    timestamp: 3,
  },
  {
    role: "toolResult",
    toolCallId: "c1",
    toolName: "read",
    content: [],
    isError: true,
    decision: { decision: "deny", by: "policy", reason: "no" },
  },
];

const ODD_VALUES: unknown[] = [
  undefined,
  null,
  0,
  -1,
  1.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  "",
  "text",
  "toolUse",
  true,
  [],
  ["x"],
  {},
  { type: "text" },
  { type: "text", text: "x" },
];

/** A deep copy of `value` with one field somewhere in it replaced, removed or added. */
function damage(value: unknown, rng: Rng): unknown {
  const copy = structuredClone(value) as Record<string, unknown>;
  const holders: Record<string, unknown>[] = [];
  const visit = (node: unknown) => {
    if (typeof node !== "object" || node === null) return;
    holders.push(node as Record<string, unknown>);
    for (const child of Object.values(node)) visit(child);
  };
  visit(copy);
  const holder = pick(rng, holders);
  const keys = Object.keys(holder);
  const roll = rng();
  if (roll < 0.1 || keys.length === 0)
    holder[pick(rng, ["extra", "type", "role", "decision", "usage"])] = pick(rng, ODD_VALUES);
  else if (roll < 0.25) delete holder[pick(rng, keys)];
  else holder[pick(rng, keys)] = pick(rng, ODD_VALUES);
  return rng() < 0.2 ? damage(copy, rng) : copy;
}

describe("the quick accept of a message", () => {
  it("accepts the valid shapes it knows, so opening takes the short path", () => {
    for (const message of VALID.slice(0, 4)) {
      expect(explainMessage(message)).toBeUndefined();
      expect(messageAccepted(message)).toBe(true);
    }
  });

  it("never accepts what the full check refuses, and messageProblem always says what the full check says", () => {
    const seed = 20261201;
    const rng = random(seed);
    let refused = 0;
    let acceptedDamaged = 0;
    for (let i = 0; i < 20_000; i++) {
      const message = damage(pick(rng, VALID), rng);
      const full = explainMessage(message);
      if (messageAccepted(message)) {
        expect(full, `seed ${seed} case ${i}: ${JSON.stringify(message)}`).toBeUndefined();
        acceptedDamaged++;
      }
      expect(messageProblem(message)).toBe(full);
      if (full !== undefined) refused++;
    }
    // The damage reaches both sides: plenty refused, and harmless damage (extra fields) still accepted.
    expect(refused).toBeGreaterThan(10_000);
    expect(acceptedDamaged).toBeGreaterThan(100);
  });
});

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** What a plain reader makes of the same lines: one JSON.parse, `entryProblem` over a Map of the lines before. */
function plainRead(file: string, text: string): { ids: string[] } | { error: string } {
  const lines = text.split("\n").slice(1, -1); // whole lines after the header
  const byId = new Map<string, never>();
  for (let index = 0; index < lines.length; index++) {
    const line = index + 2;
    let value: unknown;
    try {
      value = JSON.parse(lines[index] as string);
    } catch (error) {
      return {
        error: `invalid session file ${file} line ${line}: expected one JSON entry per line (${(error as Error).message})`,
      };
    }
    const problem = entryProblem(value, (id) => byId.get(id));
    if (problem !== undefined) return { error: `invalid session file ${file} line ${line}: ${problem}` };
    byId.set((value as { id: string }).id, value as never);
  }
  return { ids: [...byId.keys()] };
}

function fastRead(file: string): { ids: string[] } | { error: string } {
  const fd = fs.openSync(file, "r");
  try {
    const parsed = parseSessionFile(file, (buffer, offset, length, position) =>
      fs.readSync(fd, buffer, offset, length, position),
    );
    expect([...parsed.byId.values()]).toEqual(parsed.entries);
    return { ids: parsed.entries.map((entry) => entry.id) };
  } catch (error) {
    return { error: (error as Error).message };
  } finally {
    fs.closeSync(fd);
  }
}

const entry = (id: string, parentId: string | null, fields: Record<string, unknown> = {}) => ({
  type: "custom",
  customType: "x",
  id,
  parentId,
  timestamp: 1,
  ...fields,
});

/** A small tree: a chain, a side branch, a leaf move, a label and a journal record. */
function treeLines(): Record<string, unknown>[] {
  return [
    entry("a", null),
    entry("b", "a"),
    entry("c", "b"),
    entry("d", "b"),
    { type: "leaf", id: "m", parentId: "d", targetId: "c", timestamp: 1 },
    entry("e", "c"),
    { type: "label", id: "f", parentId: "e", targetId: "a", label: "start", timestamp: 1 },
    { type: "journal", id: "g", parentId: "f", event: "run_start", runId: "r", timestamp: 1 },
    entry("h", "f"),
    { type: "message", id: "i", parentId: "h", timestamp: 1, message: VALID[0] },
  ];
}

const LINE_DAMAGE: ((lines: Record<string, unknown>[], rng: Rng) => void)[] = [
  (lines, rng) => {
    const at = Math.floor(rng() * lines.length);
    lines.splice(at + 1, 0, structuredClone(lines[at] as Record<string, unknown>)); // a line twice
  },
  (lines, rng) => {
    const line = pick(rng, lines);
    line.parentId = line.id; // its own parent
  },
  (lines, rng) => {
    const line = pick(rng, lines);
    line.id = (pick(rng, lines) as { id: string }).id; // an id taken before or after
  },
  (lines, rng) => {
    const line = pick(rng, lines);
    line.parentId = pick(rng, [...lines.map((l) => l.id), null, "zz", 5]);
  },
  (lines, rng) => {
    const line = pick(rng, lines);
    line[pick(rng, ["type", "timestamp", "id", "targetId"])] = pick(rng, ODD_VALUES);
  },
  (lines, rng) => {
    const at = Math.floor(rng() * (lines.length - 1));
    const [moved] = lines.splice(at, 1);
    lines.splice(at + 1, 0, moved as Record<string, unknown>); // swapped with the next line
  },
  (lines, rng) => {
    const line = pick(rng, lines);
    if (line.message !== undefined) line.message = damage(line.message, rng);
  },
];

describe("the JSONL reader's shortcuts", () => {
  it("refuse exactly the lines a plain reader refuses, with the same message, and keep exactly the rest", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rein-fast-paths-"));
    dirs.push(dir);
    const file = path.join(dir, "session.jsonl");
    const header = JSON.stringify(createSessionHeader());
    const seed = 1201;
    const rng = random(seed);
    const outcomes = { opened: 0, refused: 0 };
    for (let i = 0; i < 2000; i++) {
      const lines = treeLines();
      const rounds = 1 + Math.floor(rng() * 2);
      for (let r = 0; r < rounds; r++) pick(rng, LINE_DAMAGE)(lines, rng);
      const text = `${[header, ...lines.map((line) => JSON.stringify(line))].join("\n")}\n`;
      fs.writeFileSync(file, text);
      const expected = plainRead(file, text);
      expect(fastRead(file), `seed ${seed} case ${i}: ${text}`).toEqual(expected);
      outcomes["error" in expected ? "refused" : "opened"]++;
    }
    expect(outcomes.refused).toBeGreaterThan(600);
    expect(outcomes.opened).toBeGreaterThan(60);
  });
});
