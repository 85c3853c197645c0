/**
 * Usage and cost totals through the built binary: every total the CLI shows (the
 * `--json` end event, the last line, `sessions list`, the Markdown export) equals
 * the sum of the usage recorded in the session file, summed here independently
 * from the raw JSONL; a custom model's declared prices give a cost, and a cost
 * budget fires on it.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startOpenAICompatibleServer } from "@rein/sdk/testing";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, project, rein, scriptedConfig, TOOLS_PLUGIN } from "./support/rein-process.js";

afterAll(cleanup);

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const guardDist = join(repo, "packages", "plugins", "plugin-guard", "dist", "index.js");

interface Totals {
  requests: number;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens: number;
  cost: { total: number };
}

/** The assistant messages' usage in a session file, in file order (JSONL lines). */
function recordedUsage(dir: string): { usage: Record<string, number> & { cost: { total: number } } }[] {
  const folder = join(dir, ".rein/sessions");
  const files = readdirSync(folder).filter((f) => f.endsWith(".jsonl"));
  expect(files).toHaveLength(1);
  return readFileSync(join(folder, files[0] as string), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line))
    .filter((entry) => entry.type === "message" && entry.message.role === "assistant")
    .map((entry) => entry.message);
}

function sum(messages: ReturnType<typeof recordedUsage>) {
  const totals = { requests: 0, input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: 0 };
  for (const { usage } of messages) {
    totals.requests++;
    for (const key of ["input", "output", "cacheRead", "cacheWrite", "totalTokens"] as const)
      totals[key] += usage[key] ?? 0;
    totals.cost += usage.cost?.total ?? 0;
  }
  return totals;
}

function expectTotals(actual: Totals, expected: ReturnType<typeof sum>) {
  expect({ ...actual, cost: undefined }).toEqual({ ...expected, cost: undefined });
  expect(actual.cost.total).toBeCloseTo(expected.cost, 12);
}

const endEvent = (stdout: string) => {
  const last = JSON.parse(stdout.trimEnd().split("\n").at(-1) as string);
  expect(last.type).toBe("end");
  return last as { usage: { run: Totals; session: Totals }; exitCode: number; status: string };
};

const shown = (t: { input: number; cacheRead: number; cacheWrite: number; output: number }) =>
  `${(t.input + t.cacheRead + t.cacheWrite).toLocaleString("en-US")} in${t.cacheRead > 0 ? ` (${t.cacheRead.toLocaleString("en-US")} cached)` : ""} · ${t.output.toLocaleString("en-US")} out`;

describe("usage totals", { timeout: 90_000 }, () => {
  it("the end event, last line, sessions list and export each equal the sum of the recorded usage", async () => {
    const dir = project({
      "rein.config.ts": scriptedConfig(
        [{ toolCalls: [{ name: "echo", args: { text: "one" } }] }, "first done", "second done", "third"],
        'plugins: ["./tools.ts"],',
      ),
      "tools.ts": TOOLS_PLUGIN,
    });
    const first = await rein(["run", "--json", "start the work"], dir);
    expect(first.code).toBe(0);
    const afterFirst = recordedUsage(dir);
    expect(afterFirst).toHaveLength(2);
    const end1 = endEvent(first.stdout);
    expect(end1.status).toBe("completed");
    expect(end1.exitCode).toBe(0);
    expectTotals(end1.usage.run, sum(afterFirst));
    expectTotals(end1.usage.session, sum(afterFirst));
    // The scripted model reports real token estimates: totals that are all zero would prove nothing.
    expect(end1.usage.session.input + end1.usage.session.cacheWrite).toBeGreaterThan(0);
    expect(end1.usage.session.output).toBeGreaterThan(0);

    const second = await rein(["run", "--continue", "--json", "go on"], dir);
    expect(second.code).toBe(0);
    const afterSecond = recordedUsage(dir);
    expect(afterSecond).toHaveLength(3);
    const end2 = endEvent(second.stdout);
    expectTotals(end2.usage.run, sum(afterSecond.slice(2)));
    expectTotals(end2.usage.session, sum(afterSecond));

    const third = await rein(["run", "--continue", "once more"], dir);
    expect(third.code).toBe(0);
    const all = recordedUsage(dir);
    const lastLine = third.stderr.trimEnd().split("\n").at(-1) as string;
    expect(lastLine).toContain(`run ${shown(sum(all.slice(3)))}`);
    expect(lastLine).toContain(`session ${shown(sum(all))}`);

    const listed = await rein(["sessions", "list", "--json"], dir);
    expect(listed.code).toBe(0);
    const [summary] = listed.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expectTotals(summary.usage, sum(all));
    const table = await rein(["sessions", "list"], dir);
    expect(table.stdout).toContain(shown(sum(all)));

    const show = await rein(["sessions", "show", summary.id.slice(0, 8)], dir);
    expect(show.stdout).toContain(`usage ${shown(sum(all))}`);
    const exported = await rein(["sessions", "export", summary.id.slice(0, 8)], dir);
    expect(exported.code).toBe(0);
    expect(exported.stdout).toContain(`Usage: ${shown(sum(all))} over ${all.length} model requests`);
  });

  it("a fork's totals leave out the copied branch (it is counted in its source)", async () => {
    const dir = project({ "rein.config.ts": scriptedConfig(["one", "two"]) });
    expect((await rein(["run", "first"], dir)).code).toBe(0);
    const list = async () =>
      (await rein(["sessions", "list", "--json"], dir)).stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { id: string; forkedFrom?: unknown; usage: Totals });
    const [source] = await list();
    const forked = await rein(["sessions", "fork", source?.id as string], dir);
    expect(forked.code).toBe(0);
    const forkId = forked.stdout.trim();
    const before = (await list()).find((s) => s.id === forkId);
    expect(before?.usage.requests).toBe(0);
    expect(before?.usage.totalTokens).toBe(0);
    const run = await rein(["run", "--json", "--session", forkId.slice(0, 8), "second"], dir);
    expect(run.code).toBe(0);
    const after = (await list()).find((s) => s.id === forkId);
    const end = endEvent(run.stdout);
    expect(after?.usage.requests).toBe(1);
    expect(after?.usage).toEqual(end.usage.run);
    expect(end.usage.session).toEqual(end.usage.run);
    expect((await list()).find((s) => s.id === source?.id)?.usage).toEqual(source?.usage);
  });

  it("a custom model's declared prices give the cost, summed exactly as recorded", async () => {
    const server = await startOpenAICompatibleServer([
      {
        toolCall: { name: "echo", args: { text: "x" }, id: "call_1" },
        usage: { prompt_tokens: 1000, completion_tokens: 200 },
      },
      { text: "priced answer", usage: { prompt_tokens: 1500, completion_tokens: 100, cached_tokens: 500 } },
    ]);
    try {
      const dir = project({
        "rein.config.ts": `export default {
  model: "priced",
  models: [{ id: "priced", baseUrl: "${server.baseUrl}", cost: { input: 3, output: 15, cacheRead: 0.3 } }],
  plugins: ["./tools.ts"],
};
`,
        "tools.ts": TOOLS_PLUGIN,
      });
      const result = await rein(["run", "--json", "price it"], dir);
      expect(result.stderr).not.toContain("rein:");
      expect(result.code).toBe(0);
      const end = endEvent(result.stdout);
      // By hand: (1000×3 + 200×15) / 1e6 + (1000×3 + 500×0.3 + 100×15) / 1e6.
      expect(end.usage.session.cost.total).toBeCloseTo(0.006 + 0.00465, 12);
      expect(end.usage.session).toMatchObject({ requests: 2, input: 2000, cacheRead: 500, output: 300 });
      expectTotals(end.usage.session, sum(recordedUsage(dir)));
      const text = await rein(["sessions", "list"], dir);
      expect(text.stdout).toMatch(/ · \$0\.010[67] {2}price it/);
    } finally {
      await server.close();
    }
  });

  it("plugin-guard's cost budget fires for a custom model with prices", async () => {
    const server = await startOpenAICompatibleServer([
      {
        toolCall: { name: "echo", args: { text: "x" }, id: "call_1" },
        usage: { prompt_tokens: 1000, completion_tokens: 200 },
      },
      { text: "never asked", usage: { prompt_tokens: 10, completion_tokens: 10 } },
    ]);
    try {
      const dir = project({
        "rein.config.ts": `import guard from ${JSON.stringify(guardDist)};
export default {
  model: "priced",
  models: [{ id: "priced", baseUrl: "${server.baseUrl}", cost: { input: 3, output: 15 } }],
  plugins: ["./tools.ts", [guard, { perRun: { maxCost: 0.005 } }]],
};
`,
        "tools.ts": TOOLS_PLUGIN,
      });
      const result = await rein(["run", "price it"], dir);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/budget exhausted: 0\.006\d* of max 0\.005/);
      // Stopped before the model was asked again.
      expect(server.requests).toHaveLength(1);
    } finally {
      await server.close();
    }
  });
});
