/**
 * Durable approvals through the built binary, with sessions in JSONL files and in
 * PostgreSQL: a run parks on an `ask` nobody can answer (exit 4), a second process
 * answers with `rein approvals`, and `rein run --session <id> --resume` runs exactly
 * the approved call and completes. An answer waits for no lock it cannot take: a
 * session another writer holds is refused, in either store.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { callHash, JsonlStorage, type RecordedToolResult, Session, SessionStore } from "@rein/harness";
import { PostgresSessionStore } from "@rein/store-postgres";
import { createDatabase, dropDatabase, startPostgres, type TestPostgres } from "@rein/test-postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanup, project, rein, scriptedConfig } from "./support/rein-process.js";

let server: TestPostgres | undefined;
const databases: string[] = [];

beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(async () => {
  cleanup();
  for (const db of databases) await dropDatabase(db).catch(() => undefined);
  await server?.stop();
});

/** Where a test project keeps its sessions, and how the test reads (and holds) them there. */
interface StoreCase {
  name: "jsonl" | "postgres";
  /** The config line selecting the store (a fresh database per project for PostgreSQL). */
  configLine(): Promise<string>;
  /** Opens a session of the project read-only. */
  read(dir: string, sessionId: string): Promise<Session>;
  /** Opens a session of the project for writing: this process holds its one-writer lock. */
  hold(dir: string, sessionId: string): Promise<Session>;
}

const jsonlStore = (dir: string) => new SessionStore(join(dir, ".rein/sessions"));
/** The database URL a project's config names. */
const databaseOf = (dir: string) =>
  (/url: "([^"]+)"/.exec(readFileSync(join(dir, "rein.config.ts"), "utf8")) as RegExpExecArray)[1] as string;

const STORES: StoreCase[] = [
  {
    name: "jsonl",
    configLine: async () => "",
    read: async (dir, id) => Session.open(JsonlStorage.open(jsonlStore(dir).pathOf(id), { readOnly: true })),
    hold: async (dir, id) => jsonlStore(dir).open(id),
  },
  {
    name: "postgres",
    configLine: async () => {
      const db = await createDatabase((server as TestPostgres).url, "rein_approvals");
      databases.push(db);
      return `session: { store: "postgres", url: ${JSON.stringify(db)} },`;
    },
    read: (dir, id) => new PostgresSessionStore(databaseOf(dir)).open(id, { readOnly: true }),
    hold: (dir, id) => new PostgresSessionStore(databaseOf(dir)).open(id),
  },
];

/** A push tool that appends "<call id> <remote>" to pushes.log, and a gate asking about every push. */
const PLUGIN = `import { definePlugin, defineTool, Type } from "@rein/sdk";
import { appendFileSync } from "node:fs";
import { join } from "node:path";

export default definePlugin({
  name: "deploy",
  setup(rein) {
    rein.registerTool(defineTool({
      name: "push",
      description: "Push to a remote",
      parameters: Type.Object({ remote: Type.String() }),
      risk: "exec",
      execute: async (args, ctx) => {
        appendFileSync(join(ctx.cwd, "pushes.log"), ctx.toolCallId + " " + args.remote + "\\n");
        return { content: [{ type: "text", text: "pushed to " + args.remote }] };
      },
    }));
    rein.hooks.toolGate.tapPromise("deploy", async (call) =>
      call.name === "push" ? { decision: "ask", reason: "pushing needs a person", rule: "push" } : undefined);
  },
});
`;

async function parkingProject(store: StoreCase) {
  return project({
    "rein.config.ts": scriptedConfig(
      [{ toolCalls: [{ name: "push", args: { remote: "origin" } }] }, "Pushed, all done."],
      `plugins: ["./deploy.ts"], approvals: { park: true }, ${await store.configLine()}`,
    ),
    "deploy.ts": PLUGIN,
  });
}

interface ListedApproval {
  approvalId: string;
  sessionId: string;
  toolName: string;
  args: Record<string, unknown>;
  argsHash: string;
  status: string;
  done: boolean;
}

async function listed(dir: string, all = false): Promise<ListedApproval[]> {
  const result = await rein(["approvals", "list", "--json", ...(all ? ["--all"] : [])], dir);
  expect(result.code).toBe(0);
  return result.stdout
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as ListedApproval);
}

/** Runs until parked; returns the one pending approval. */
async function parkRun(dir: string): Promise<ListedApproval> {
  const run = await rein(["run", "push the release"], dir);
  expect(run.code).toBe(4);
  expect(run.stderr).toContain("parked");
  expect(existsSync(join(dir, "pushes.log"))).toBe(false);
  const pending = await listed(dir);
  expect(pending).toHaveLength(1);
  const [approval] = pending as [ListedApproval];
  expect(approval).toMatchObject({ toolName: "push", args: { remote: "origin" }, status: "pending" });
  expect(approval.argsHash).toBe(callHash("push", { remote: "origin" }));
  return approval;
}

async function toolResults(store: StoreCase, dir: string, sessionId: string): Promise<RecordedToolResult[]> {
  const session = await store.read(dir, sessionId);
  try {
    return session
      .branch()
      .flatMap((e) => (e.type === "message" && e.message.role === "toolResult" ? [e.message] : []));
  } finally {
    await session.close();
  }
}

/** The only session of a JSONL project (the tests that run on JSONL alone). */
function onlyJsonlSession(dir: string): string {
  const [summary] = jsonlStore(dir).list();
  return summary?.id as string;
}

const text = (result: RecordedToolResult | undefined) =>
  result?.content.map((block) => (block.type === "text" ? block.text : "")).join("");

describe.each(STORES)("rein approvals with $name sessions", { timeout: 90_000 }, (store) => {
  it("a run parked on ask, approved from a second process later, resumes and completes with exactly that call", async () => {
    const dir = await parkingProject(store);
    const approval = await parkRun(dir);
    // A new prompt on the parked session is refused with a hint; so is a resume before the answer.
    const early = await rein(["run", "--session", approval.sessionId, "--resume"], dir);
    expect(early.code).toBe(2);
    expect(early.stderr).toContain("pending");
    const other = await rein(["run", "--session", approval.sessionId, "something else"], dir);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain("rein approvals");

    const approve = await rein(
      ["approvals", "approve", approval.approvalId, "--hash", approval.argsHash, "--by", "person:alice"],
      dir,
    );
    expect(approve.stderr).not.toContain("rein:");
    expect(approve.code).toBe(0);
    expect(approve.stdout).toContain("approved");

    const resumed = await rein(["run", "--session", approval.sessionId, "--resume"], dir);
    expect(resumed.stderr).not.toContain("rein:");
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain("Pushed, all done.");
    const pushes = readFileSync(join(dir, "pushes.log"), "utf8").trim().split("\n");
    expect(pushes).toEqual([expect.stringMatching(/ origin$/)]);
    const [result] = await toolResults(store, dir, approval.sessionId);
    expect(text(result)).toBe("pushed to origin");
    expect(result?.decision).toMatchObject({
      decision: "allow",
      by: "person:alice",
      askedBy: "deploy:push",
      approvalId: approval.approvalId,
    });
    expect(await listed(dir)).toEqual([]);
    expect(await listed(dir, true)).toMatchObject([{ status: "approved", done: true }]);
    // Resuming again finds nothing parked and runs nothing twice.
    const again = await rein(["run", "--session", approval.sessionId, "--resume"], dir);
    expect(again.code).toBe(2);
    expect(readFileSync(join(dir, "pushes.log"), "utf8").trim().split("\n")).toHaveLength(1);
  });

  it("a denied call ends with the person's reason as its result, and the run completes", async () => {
    const dir = await parkingProject(store);
    const approval = await parkRun(dir);
    const deny = await rein(
      ["approvals", "deny", approval.approvalId, "--reason", "release freeze until Monday"],
      dir,
    );
    expect(deny.code).toBe(0);
    const resumed = await rein(["run", "--session", approval.sessionId, "--resume"], dir);
    expect(resumed.code).toBe(0);
    expect(existsSync(join(dir, "pushes.log"))).toBe(false);
    const [result] = await toolResults(store, dir, approval.sessionId);
    expect(result?.isError).toBe(true);
    expect(text(result)).toContain("release freeze until Monday");
    expect(result?.decision).toMatchObject({ decision: "deny", reason: "release freeze until Monday" });
  });

  it("an approval for changed arguments is refused and records nothing", async () => {
    const dir = await parkingProject(store);
    const approval = await parkRun(dir);
    const changed = callHash("push", { remote: "production --force" });
    const refused = await rein(["approvals", "approve", approval.approvalId, "--hash", changed], dir);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("does not match");
    expect(await listed(dir)).toMatchObject([{ approvalId: approval.approvalId, status: "pending" }]);
    // An unknown id is refused too, and answering twice is not possible.
    expect((await rein(["approvals", "deny", "nope"], dir)).code).toBe(2);
    expect((await rein(["approvals", "deny", approval.approvalId], dir)).code).toBe(0);
    const twice = await rein(["approvals", "approve", approval.approvalId], dir);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain("already answered");
    expect(existsSync(join(dir, "pushes.log"))).toBe(false);
  });

  it("an answer needs the session's one-writer lock: refused while another process holds it, accepted once released", async () => {
    const dir = await parkingProject(store);
    const approval = await parkRun(dir);
    const held = await store.hold(dir, approval.sessionId);
    try {
      const refused = await rein(["approvals", "approve", approval.approvalId], dir);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain("in use");
      expect(refused.stderr).not.toMatch(/^\s+at /m);
    } finally {
      await held.close();
    }
    expect(await listed(dir)).toMatchObject([{ approvalId: approval.approvalId, status: "pending" }]);
    const approve = await rein(["approvals", "approve", approval.approvalId], dir);
    expect(approve.code).toBe(0);
    expect(await listed(dir, true)).toMatchObject([{ approvalId: approval.approvalId, status: "approved" }]);
  });

  it("lists only this store's approvals, filtered by --session", async () => {
    const dir = await parkingProject(store);
    const approval = await parkRun(dir);
    const one = await rein(["approvals", "list", "--json", "--session", approval.sessionId.slice(0, 8)], dir);
    expect(one.code).toBe(0);
    expect(JSON.parse(one.stdout.trim())).toMatchObject({ approvalId: approval.approvalId });
    const missing = await rein(["approvals", "list", "--session", "ffffffff"], dir);
    expect(missing.code).toBe(2);
    // Sessions live where the config says: no JSONL directory with PostgreSQL.
    expect(existsSync(join(dir, ".rein/sessions"))).toBe(store.name === "jsonl");
  });
});

describe("rein approvals (store-independent)", { timeout: 90_000 }, () => {
  it("without approvals.park a push nobody can answer is denied as before (exit 0, nothing parked)", async () => {
    const dir = project({
      "rein.config.ts": scriptedConfig(
        [{ toolCalls: [{ name: "push", args: { remote: "origin" } }] }, "Could not push."],
        'plugins: ["./deploy.ts"],',
      ),
      "deploy.ts": PLUGIN,
    });
    const run = await rein(["run", "push"], dir);
    expect(run.code).toBe(0);
    expect(await listed(dir, true)).toEqual([]);
    expect(
      (await toolResults(STORES[0] as StoreCase, dir, onlyJsonlSession(dir)))[0]?.decision,
    ).toMatchObject({ decision: "deny", unanswered: true });
  });

  it("a bad approvals option is a config error naming it", async () => {
    const dir = project({
      "rein.config.ts": scriptedConfig(["hi"], 'approvals: { park: "yes" },'),
    });
    const run = await rein(["run", "hi"], dir);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("approvals.park: expected a boolean");
  });
});
