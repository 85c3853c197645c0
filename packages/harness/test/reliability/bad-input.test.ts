/**
 * Bad input: seeded fuzzing of session files, harness options and plugin input.
 *
 * Session files: valid files (a scripted run with tool calls, queues, pending writes
 * and journal records; a branched tree with labels, summaries, a compaction and leaf
 * moves) are mutated - truncation, bit flips, bad JSON lines, wrong types, cycles,
 * missing parents, duplicated, swapped and deleted lines, header damage, garbage, and
 * damage below the line to content blocks, usage figures, message fields and journal
 * payloads - and every case is opened with a harness. Open must either succeed (repairing a torn tail
 * with a warning, and then the file is whole again) or fail with a `session` error
 * naming the file and line; it never throws anything else. Every case that opens then
 * runs a prompt on the faux provider, which must complete.
 *
 * REIN_FUZZ_CASES (default 6000) and REIN_FUZZ_SEED (default random, printed) steer it.
 */
import fs from "node:fs";
import path from "node:path";
import { createModels, fauxAssistantMessage, fauxProvider, fauxToolCall } from "@earendil-works/pi-ai";
import { Type } from "typebox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HarnessError } from "../../src/errors.js";
import { AgentHarness, type AgentHarnessOptions } from "../../src/harness/agent-harness.js";
import type { AgentMessage } from "../../src/session/entries.js";
import { JsonlStorage } from "../../src/session/jsonl-storage.js";
import { Session } from "../../src/session/session.js";
import { createSessionHeader } from "../../src/session/storage.js";
import type { AnyAgentTool } from "../../src/tools.js";
import { crashTools, random, respond, runScript } from "./crash-scenario.mjs";
import { tempDir } from "./support.js";

const pi = { fauxAssistantMessage, fauxToolCall, Type };
const cases = Number(process.env.REIN_FUZZ_CASES ?? 6000);
const seed = Number(process.env.REIN_FUZZ_SEED ?? Math.floor(Math.random() * 1e9));

let work: string;
const faux = fauxProvider({ tokenSize: { min: 50, max: 50 } });
const model = faux.getModel();
const models = createModels();
models.setProvider(faux.provider);
const replyAlways = (context: { messages: unknown[] }) => respond(context, pi);

beforeAll(() => {
  work = tempDir("rein-fuzz-");
});
afterAll(() => {
  faux.setResponses([]);
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

const user = (text: string): AgentMessage => ({ role: "user", content: text, timestamp: 1 });

/** Valid session files to mutate. */
async function corpus(): Promise<Buffer[]> {
  const scripted = path.join(work, "scripted.jsonl");
  const session = Session.create(JsonlStorage.create(scripted, createSessionHeader({ cwd: work })));
  faux.setResponses(Array.from({ length: 32 }, () => replyAlways));
  const harness = new AgentHarness({ session, model, models, tools: crashTools(pi) });
  await runScript(harness, () => undefined);
  harness.nextTurn("left queued");
  session.close();

  const tree = path.join(work, "tree.jsonl");
  const t = Session.create(JsonlStorage.create(tree, createSessionHeader()));
  const a = t.appendMessage(user("root question"));
  const b = t.appendMessage({ ...user("second"), content: [{ type: "text", text: "second" }] });
  t.appendMessage(fauxAssistantMessage("an answer with usage figures"));
  t.append({ type: "model_change", provider: "faux", modelId: "m" });
  t.setLabel(a.id, "start");
  // A leaf move with its branch summary, as tree navigation writes it: one write group.
  t.appendAll([
    { type: "leaf", targetId: a.id },
    { type: "branch_summary", fromId: b.id, summary: "tried something" },
  ]);
  t.append({ type: "custom_message", customType: "note", content: "visible", display: true });
  t.append({ type: "compaction", summary: "sum", firstKeptEntryId: a.id, tokensBefore: 100 });
  t.append({ type: "session_info", name: "fuzz" });
  t.appendJournal({ event: "run_start", runId: "r1" });
  t.appendJournal({ event: "queue_push", queue: "steer", queueId: "q1", message: user("queued") });
  t.appendJournal({ event: "pending_write", pendingId: "p1", input: { type: "custom", customType: "x" } });
  t.appendJournal({ event: "tool_start", runId: "r1", toolCallId: "c1", toolName: "read_value" });
  t.moveLeaf(null);
  t.appendMessage(user("fresh start"));
  t.close();
  return [fs.readFileSync(scripted), fs.readFileSync(tree)];
}

type Rng = () => number;
const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)] as T;
/** A wrong-typed value, fresh each time (mutations must never alias one another). */
const wrongValue = (rng: Rng): unknown => structuredClone(pick(rng, WRONG_VALUES));
const WRONG_VALUES: unknown[] = [
  null,
  0,
  -1,
  1e308,
  "",
  "x",
  true,
  [],
  {},
  [null],
  [{}],
  { type: 1 },
  "\u0000",
  "a".repeat(300),
];

function lines(bytes: Buffer): string[] {
  const text = bytes.toString("utf8");
  const parts = text.split("\n");
  if (parts.at(-1) === "") parts.pop();
  return parts;
}
const join = (parts: string[]) => Buffer.from(parts.map((line) => `${line}\n`).join(""), "utf8");

/** Sets a random (possibly nested) field of a JSON value to a wrong-typed value. */
function corruptField(value: unknown, rng: Rng): unknown {
  if (typeof value !== "object" || value === null) return wrongValue(rng);
  const keys = Object.keys(value);
  if (keys.length === 0) return wrongValue(rng);
  const key = pick(rng, keys);
  const record = value as Record<string, unknown>;
  record[key] = rng() < 0.5 ? corruptField(record[key], rng) : wrongValue(rng);
  if (rng() < 0.1) delete record[key];
  return value;
}

const MUTATIONS = {
  truncate: (b: Buffer, rng: Rng) => b.subarray(0, Math.floor(rng() * b.length)),
  bitFlips: (b: Buffer, rng: Rng) => {
    const copy = Buffer.from(b);
    const flips = 1 + Math.floor(rng() * 4);
    for (let i = 0; i < flips; i++) {
      const at = Math.floor(rng() * copy.length);
      copy[at] = (copy[at] as number) ^ (1 << Math.floor(rng() * 8));
    }
    return copy;
  },
  badJsonLine: (b: Buffer, rng: Rng) => {
    const parts = lines(b);
    const bad = pick(rng, [
      "{not json",
      "",
      "null",
      "[]",
      "42",
      '"text"',
      "{}",
      '{"type":"message"',
      "\u00ff\u00fe",
      "}{",
    ]);
    parts.splice(1 + Math.floor(rng() * parts.length), 0, bad);
    return join(parts);
  },
  wrongType: (b: Buffer, rng: Rng) => {
    const parts = lines(b);
    const at = Math.floor(rng() * parts.length);
    parts[at] = JSON.stringify(corruptField(JSON.parse(parts[at] as string), rng)) ?? "null";
    return join(parts);
  },
  cycle: (b: Buffer, rng: Rng) => {
    const parts = lines(b);
    if (parts.length < 3) return b;
    const at = 1 + Math.floor(rng() * (parts.length - 1));
    const entry = JSON.parse(parts[at] as string);
    const later = JSON.parse(parts[Math.min(parts.length - 1, at + 1 + Math.floor(rng() * 3))] as string);
    entry.parentId = rng() < 0.5 ? entry.id : later.id;
    if (entry.type === "leaf" && rng() < 0.5) entry.targetId = entry.id;
    parts[at] = JSON.stringify(entry);
    return join(parts);
  },
  missingParent: (b: Buffer, rng: Rng) => {
    const parts = lines(b);
    if (parts.length < 2) return b;
    const at = 1 + Math.floor(rng() * (parts.length - 1));
    const entry = JSON.parse(parts[at] as string);
    if (rng() < 0.7) entry.parentId = `gone-${Math.floor(rng() * 1e6)}`;
    else if (entry.type === "leaf") entry.targetId = "gone";
    else entry.firstKeptEntryId = "gone";
    parts[at] = JSON.stringify(entry);
    return join(parts);
  },
  duplicateLine: (b: Buffer, rng: Rng) => {
    const parts = lines(b);
    const at = 1 + Math.floor(rng() * Math.max(1, parts.length - 1));
    parts.splice(at + 1, 0, parts[Math.min(at, parts.length - 1)] as string);
    return join(parts);
  },
  swapLines: (b: Buffer, rng: Rng) => {
    const parts = lines(b);
    const i = Math.floor(rng() * parts.length);
    const j = Math.floor(rng() * parts.length);
    [parts[i], parts[j]] = [parts[j] as string, parts[i] as string];
    return join(parts);
  },
  deleteLine: (b: Buffer, rng: Rng) => {
    const parts = lines(b);
    parts.splice(Math.floor(rng() * parts.length), 1);
    return join(parts);
  },
  header: (b: Buffer, rng: Rng) => {
    const parts = lines(b);
    const header = JSON.parse(parts[0] as string);
    const change = pick(rng, ["version", "id", "type", "createdAt", "forkedFrom", "array", "drop"]);
    if (change === "array") parts[0] = "[]";
    else if (change === "drop") parts.shift();
    else {
      header[change] = wrongValue(rng);
      parts[0] = JSON.stringify(header);
    }
    return join(parts);
  },
  garbage: (_b: Buffer, rng: Rng) => {
    const length = Math.floor(rng() * 200);
    return Buffer.from(Array.from({ length }, () => Math.floor(rng() * 256)));
  },
  deepNesting: (b: Buffer, rng: Rng) => {
    const parts = lines(b);
    const depth = 1000 + Math.floor(rng() * 20_000);
    parts.splice(1 + Math.floor(rng() * parts.length), 0, `${"[".repeat(depth)}${"]".repeat(depth)}`);
    return join(parts);
  },
} satisfies Record<string, (b: Buffer, rng: Rng) => Buffer>;

/** Lines (index, parsed) of `parts` that satisfy `match`; the header is never one. */
function linesWhere(parts: string[], match: (value: Record<string, unknown>) => boolean) {
  const found: { at: number; value: Record<string, unknown> }[] = [];
  for (let at = 1; at < parts.length; at++) {
    const value = JSON.parse(parts[at] as string) as Record<string, unknown>;
    if (match(value)) found.push({ at, value });
  }
  return found;
}
/** The message a line carries: a message entry's, or a queue push's. */
const carried = (value: Record<string, unknown>) => value.message as Record<string, unknown> | undefined;
const BLOCK_DAMAGE: ((block: Record<string, unknown>, rng: Rng) => unknown)[] = [
  () => null,
  (_b, rng) => wrongValue(rng),
  (block) => ({ ...block, type: undefined }),
  (block, rng) => ({ ...block, type: pick(rng, ["text", "image", "thinking", "toolCall", "audio", ""]) }),
  (block, rng) => corruptField(structuredClone(block), rng),
  (block, rng) => {
    const copy = { ...block };
    delete copy[pick(rng, Object.keys(copy))];
    return copy;
  },
];

/** Mutations aimed below the line: content blocks, usage figures and journal payloads. */
const DEEP_MUTATIONS = {
  contentBlock: (b: Buffer, rng: Rng) => {
    const parts = lines(b);
    const found = linesWhere(parts, (v) => Array.isArray(carried(v)?.content) || Array.isArray(v.content));
    if (found.length === 0) return b;
    const { at, value } = pick(rng, found);
    const owner = (carried(value) ?? value) as { content: unknown[] };
    const blocks = owner.content;
    const index = Math.floor(rng() * (blocks.length + 1));
    const block = (blocks[Math.min(index, blocks.length - 1)] ?? { type: "text", text: "x" }) as Record<
      string,
      unknown
    >;
    const damaged = pick(rng, BLOCK_DAMAGE)(block, rng);
    if (index === blocks.length) blocks.push(damaged);
    else blocks[index] = damaged;
    parts[at] = JSON.stringify(value);
    return join(parts);
  },
  usage: (b: Buffer, rng: Rng) => {
    const parts = lines(b);
    const found = linesWhere(parts, (v) => carried(v)?.role === "assistant");
    if (found.length === 0) return b;
    const { at, value } = pick(rng, found);
    const message = carried(value) as { usage: Record<string, unknown> };
    const usage = message.usage;
    const field = pick(rng, ["input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost", "usage"]);
    const bad = pick(rng, ["x", "12", -5, null, true, {}, [], undefined, 1e308]);
    if (field === "usage") message.usage = bad as never;
    else if (field === "cost" && rng() < 0.5) (usage.cost as Record<string, unknown>).total = bad;
    else usage[field] = bad;
    parts[at] = JSON.stringify(value);
    return join(parts);
  },
  messageFields: (b: Buffer, rng: Rng) => {
    const parts = lines(b);
    const found = linesWhere(parts, (v) => carried(v) !== undefined);
    if (found.length === 0) return b;
    const { at, value } = pick(rng, found);
    const message = carried(value) as Record<string, unknown>;
    const field = pick(rng, [
      "role",
      "toolName",
      "toolCallId",
      "isError",
      "stopReason",
      "api",
      "model",
      "timestamp",
    ]);
    if (rng() < 0.4) delete message[field];
    else message[field] = wrongValue(rng);
    parts[at] = JSON.stringify(value);
    return join(parts);
  },
  journalPayload: (b: Buffer, rng: Rng) => {
    const parts = lines(b);
    const found = linesWhere(parts, (v) => v.event === "queue_push" || v.event === "pending_write");
    if (found.length === 0) return b;
    const { at, value } = pick(rng, found);
    if (value.event === "queue_push") {
      const others = linesWhere(parts, (v) => v.type === "message").map((line) => carried(line.value));
      value.message = rng() < 0.5 && others.length > 0 ? pick(rng, others) : corruptField(value.message, rng);
    } else {
      value.input =
        rng() < 0.3
          ? { type: pick(rng, ["message", "leaf", "compaction", "nope"]) }
          : corruptField(value.input, rng);
    }
    parts[at] = JSON.stringify(value);
    return join(parts);
  },
} satisfies Record<string, (b: Buffer, rng: Rng) => Buffer>;

const ALL_MUTATIONS = { ...MUTATIONS, ...DEEP_MUTATIONS };
type MutationName = keyof typeof ALL_MUTATIONS;
type Outcome = "opened" | "repaired" | "rejected";

describe("bad input", () => {
  it(`${cases} mutated session files either open (torn tails repaired with a warning) and can be prompted, or fail with a session error naming file and line`, async () => {
    const files = await corpus();
    const rng = random(seed);
    const names = Object.keys(ALL_MUTATIONS) as MutationName[];
    const counts: Record<Outcome, number> = { opened: 0, repaired: 0, rejected: 0 };
    const byMutation: Record<string, { opened: number; rejected: number }> = {};
    const failures: string[] = [];
    let prompts = 0;
    const file = path.join(work, "case.jsonl");
    for (let i = 0; i < cases; i++) {
      let bytes = pick(rng, files);
      const applied: MutationName[] = [];
      const stack = 1 + (rng() < 0.25 ? 1 : 0);
      for (let m = 0; m < stack; m++) {
        const name = pick(rng, names);
        applied.push(name);
        try {
          bytes = ALL_MUTATIONS[name](bytes, rng);
        } catch {
          // A mutation that needs valid JSON met an earlier mutation's damage: keep the bytes.
        }
      }
      const tally = (outcome: "opened" | "rejected") => {
        for (const name of applied) {
          byMutation[name] ??= { opened: 0, rejected: 0 };
          (byMutation[name] as { opened: number; rejected: number })[outcome]++;
        }
      };
      fs.writeFileSync(file, bytes);
      const describeCase = `case ${i} (REIN_FUZZ_SEED=${seed}, mutations ${applied.join("+")})`;
      try {
        const session = Session.open(JsonlStorage.open(file));
        try {
          faux.setResponses(Array.from({ length: 8 }, () => replyAlways));
          const harness = new AgentHarness({ session, model, models, tools: crashTools(pi) });
          session.buildContext();
          session.branch();
          session.children(null);
          const repaired = session.warnings.some((w) => w.includes("torn"));
          counts[repaired ? "repaired" : "opened"]++;
          tally("opened");
          // Every file that opens can be prompted: nothing accepted at open breaks a run.
          prompts++;
          try {
            const outcome = await harness.prompt("after the fuzz");
            if (outcome.status !== "completed")
              failures.push(`${describeCase}: a prompt ended ${outcome.status}: ${outcome.reason}`);
          } catch (error) {
            failures.push(
              `${describeCase}: a prompt threw ${error instanceof Error ? error.message : String(error)}`,
            );
          }
        } finally {
          session.close();
        }
        // A repaired file is whole again: reopening finds nothing to repair.
        const again = Session.open(JsonlStorage.open(file));
        if (again.warnings.some((w) => w.includes("torn")))
          failures.push(`${describeCase}: the repair did not stick`);
        again.close();
      } catch (error) {
        if (
          error instanceof HarnessError &&
          error.code === "session" &&
          error.file === file &&
          /^invalid session file .* line \d+: /.test(error.message)
        ) {
          counts.rejected++;
          tally("rejected");
        } else {
          failures.push(`${describeCase}: threw ${error instanceof Error ? error.stack : String(error)}`);
        }
      }
    }
    console.log(`bad input: ${JSON.stringify({ cases, seed, ...counts, prompts, byMutation })}`);
    expect(failures).toEqual([]);
    expect(counts.rejected).toBeGreaterThan(0);
    expect(counts.repaired).toBeGreaterThan(0);
    expect(prompts).toBe(counts.opened + counts.repaired);
    // The deep mutations produce both outcomes: damage that is refused, and damage to
    // optional fields that a prompt then survives.
    for (const name of Object.keys(DEEP_MUTATIONS))
      expect(byMutation[name]?.rejected ?? 0).toBeGreaterThan(0);
  }, 600_000);

  it("fuzzed harness options are accepted or refused with an invalid_argument error naming the option", () => {
    const rng = random(seed + 1);
    const session = Session.create(
      JsonlStorage.create(path.join(work, "options.jsonl"), createSessionHeader()),
    );
    const keys = [
      "model",
      "thinkingLevel",
      "tools",
      "activeTools",
      "systemPrompt",
      "resources",
      "requestOptions",
      "queueModes",
      "cwd",
      "defaultToolVerdict",
      "failurePolicy",
      "maxStopContinuations",
      "durability",
      "streamFn",
      "compaction",
      "retry",
      "recover",
    ] as const;
    const values: unknown[] = [
      ...WRONG_VALUES,
      undefined,
      () => undefined,
      { steer: "sideways" },
      { gate: "allow" },
      { tapTimeoutMs: -5 },
      { transform: "ignore" },
      { reserveTokens: -1 },
      { maxAttempts: 0 },
      { enabled: "yes" },
      ["read_value", "nope"],
      [{ name: "bad name!", execute: 1 }],
      [{ name: "t", description: "d", parameters: {}, execute: () => undefined, risk: "nuclear" }],
    ];
    let refused = 0;
    let accepted = 0;
    const failures: string[] = [];
    for (let i = 0; i < 2000; i++) {
      const key = pick(rng, keys);
      const value = pick(rng, values);
      const options = {
        session,
        model,
        tools: crashTools(pi),
        [key]: value,
      } as unknown as AgentHarnessOptions;
      try {
        new AgentHarness({ ...options, recover: options.recover ?? false });
        accepted++;
      } catch (error) {
        const named =
          key === "tools" || key === "activeTools"
            ? /tool/
            : key === "thinkingLevel"
              ? /thinking level/
              : new RegExp(key);
        if (error instanceof HarnessError && error.code === "invalid_argument" && named.test(error.message))
          refused++;
        else
          failures.push(
            `options.${key} = ${String(JSON.stringify(value))?.slice(0, 60)}: ${error instanceof Error ? error.message : String(error)}`,
          );
      }
    }
    session.close();
    console.log(`harness options: ${JSON.stringify({ cases: 2000, accepted, refused })}`);
    expect([...new Set(failures)]).toEqual([]);
    expect(refused).toBeGreaterThan(0);
  });

  it("fuzzed tool definitions from plugins are refused at registration with an invalid_argument error naming the tool", () => {
    const rng = random(seed + 2);
    const session = Session.create(
      JsonlStorage.create(path.join(work, "tools.jsonl"), createSessionHeader()),
    );
    const harness = new AgentHarness({ session, model, models });
    const fields = [
      "name",
      "description",
      "parameters",
      "execute",
      "risk",
      "executionMode",
      "idempotent",
      "owner",
    ] as const;
    let refused = 0;
    let accepted = 0;
    const failures: string[] = [];
    for (let i = 0; i < 1000; i++) {
      const tool = { ...(crashTools(pi)[0] as AnyAgentTool) } as Record<string, unknown>;
      const field = pick(rng, fields);
      tool[field] = rng() < 0.1 ? undefined : wrongValue(rng);
      try {
        harness.setTools([tool as unknown as AnyAgentTool]);
        accepted++;
      } catch (error) {
        if (error instanceof HarnessError && error.code === "invalid_argument" && /tool/.test(error.message))
          refused++;
        else failures.push(`${field}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    session.close();
    console.log(`tool definitions: ${JSON.stringify({ cases: 1000, accepted, refused })}`);
    expect([...new Set(failures)]).toEqual([]);
    expect(refused).toBeGreaterThan(0);
  });
});

describe("bad input: the CLI's config", () => {
  it("fuzzed rein configs are accepted or refused with a config error naming the option and file", async () => {
    // The CLI validates configs before building a harness; its validator is pure, so fuzz it here too.
    const { validateConfig } = await import("../../../cli/src/config/validate-config.js");
    const rng = random(seed + 3);
    const valid = {
      model: "faux/faux-1",
      models: [{ provider: "faux", id: "faux-1", baseUrl: "http://localhost" }],
      plugins: [],
      tools: [],
      session: { dir: ".rein/sessions" },
      systemPrompt: "be brief",
      thinkingLevel: "low",
      compaction: { enabled: true },
    };
    let accepted = 0;
    let refused = 0;
    const failures: string[] = [];
    for (let i = 0; i < 2000; i++) {
      const config = JSON.parse(JSON.stringify(valid)) as Record<string, unknown>;
      const mutations = 1 + Math.floor(rng() * 3);
      for (let m = 0; m < mutations; m++) corruptField(config, rng);
      if (rng() < 0.1) config[pick(rng, ["modle", "plugin", "extra"])] = 1;
      const text = JSON.stringify(config, null, 2);
      try {
        validateConfig(rng() < 0.05 ? wrongValue(rng) : config, { file: "rein.config.json", text });
        accepted++;
      } catch (error) {
        const e = error as { name?: string; code?: string; message?: string };
        if (e.code === "config" && typeof e.message === "string" && e.message.includes("rein.config.json"))
          refused++;
        else failures.push(`${text.slice(0, 80)}: ${e.name} ${e.code} ${e.message}`);
      }
    }
    console.log(`cli config: ${JSON.stringify({ cases: 2000, accepted, refused })}`);
    expect([...new Set(failures)]).toEqual([]);
    expect(refused).toBeGreaterThan(0);
  });
});
