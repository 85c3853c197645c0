/**
 * The queue routes over real HTTP, a real PostgreSQL and a real `rein worker`
 * process, with sessions in PostgreSQL and in a shared directory: a prompt posted to
 * the server runs on the worker and its events come back as server-sent events.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createDatabase, dropDatabase, startPostgres, type TestPostgres } from "@rein/test-postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createQueueServer } from "../src/queue-server.js";

const REIN = fileURLToPath(new URL("../../../packages/cli/dist/bin.js", import.meta.url));

let postgres: TestPostgres;
const databases: string[] = [];

beforeAll(async () => {
  postgres = await startPostgres();
}, 60_000);
afterAll(async () => {
  for (const db of databases) await dropDatabase(db).catch(() => undefined);
  await postgres?.stop();
});

/** Starts `rein worker` in `dir`; resolves once it is ready. */
async function startWorker(dir: string, args: string[]): Promise<ChildProcess> {
  const worker = spawn(process.execPath, [REIN, "worker", ...args, "--poll", "0.5"], {
    cwd: dir,
    // The test trusts its own throwaway project (a deployment runs `rein trust` once instead).
    env: { ...process.env, NO_COLOR: "1", REIN_CACHE_DIR: join(dir, ".cache"), REIN_TRUST_PROJECT: "1" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  await new Promise<void>((resolve, reject) => {
    let err = "";
    worker.stderr?.on("data", (chunk) => {
      err += chunk;
      if (err.includes("ready")) resolve();
    });
    worker.once("exit", (code) => reject(new Error(`worker exited ${code}: ${err}`)));
  });
  return worker;
}

/**
 * Sessions in PostgreSQL (the queue's database; workers get no --db, the queue defaults
 * to their session store's) or in a session directory the server and workers share.
 */
const STORES = [
  { name: "postgres", session: (url: string) => ({ store: "postgres", url }), workerArgs: () => [] },
  { name: "jsonl", session: () => ({ dir: "sessions" }), workerArgs: (url: string) => ["--db", url] },
] as const;

describe.each(STORES)(
  "queue routes with $name sessions: prompts run on rein worker, events stream back",
  {
    timeout: 60_000,
  },
  (store) => {
    let url: string;
    let dir: string;
    let worker: ChildProcess;

    beforeAll(async () => {
      url = await createDatabase(postgres.url, "rein_embed");
      databases.push(url);
      dir = mkdtempSync(join(tmpdir(), "rein-queue-server-"));
      writeFileSync(
        join(dir, "rein.config.json"),
        JSON.stringify({
          model: { script: ["Answered by a worker.", "Again."] },
          session: store.session(url),
        }),
      );
      worker = await startWorker(dir, store.workerArgs(url));
    }, 60_000);

    afterAll(async () => {
      if (worker && worker.exitCode === null) {
        worker.kill("SIGTERM");
        await new Promise((resolve) => worker.once("exit", resolve));
      }
      rmSync(dir, { recursive: true, force: true });
    });

    it("creates a session, queues a prompt, and streams the run until its end notice", async () => {
      const server = await createQueueServer(
        store.name === "jsonl" ? { url, sessionsDir: join(dir, "sessions") } : { url },
      );
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      try {
        const created = await fetch(`${base}/sessions`, { method: "POST" });
        expect(created.status).toBe(201);
        const { sessionId } = (await created.json()) as { sessionId: string };

        const events = await fetch(`${base}/sessions/${sessionId}/events`);
        expect(events.headers.get("content-type")).toBe("text/event-stream");
        const reader = (events.body as ReadableStream<Uint8Array>).getReader();
        const decoder = new TextDecoder();
        let text = "";
        while (!text.includes(": following")) text += decoder.decode((await reader.read()).value);

        const posted = await fetch(`${base}/sessions/${sessionId}/prompts`, {
          method: "POST",
          body: JSON.stringify({ prompt: "hello worker" }),
        });
        expect(posted.status).toBe(202);
        const { requestId } = (await posted.json()) as { requestId: string };

        while (!text.includes("event: end")) text += decoder.decode((await reader.read()).value);
        await reader.cancel();
        const notices = text
          .split("\n\n")
          .filter((block) => block.includes("data: "))
          .map((block) => JSON.parse(block.slice(block.indexOf("data: ") + 6)) as Record<string, unknown>);
        expect(notices.every((n) => n.requestId === requestId)).toBe(true);
        const types = notices
          .filter((n) => n.kind === "event")
          .map((n) => (n.event as { type: string }).type);
        expect(types).toContain("agent_start");
        expect(types).toContain("message_end");
        expect(JSON.stringify(notices)).toContain("Answered by a worker.");
        expect(notices.at(-1)).toMatchObject({ kind: "end", status: "completed" });

        const missing = await fetch(`${base}/sessions/nope/prompts`, { method: "POST", body: "{}" });
        expect(missing.status).toBe(404);
        // A unique prefix names the session; the request runs under its full id.
        const again = await fetch(`${base}/sessions/${sessionId.slice(0, 8)}/prompts`, {
          method: "POST",
          body: JSON.stringify({ prompt: "and again" }),
        });
        expect(again.status).toBe(202);
        expect(await again.json()).toMatchObject({ sessionId });
        const empty = await fetch(`${base}/sessions/${sessionId}/prompts`, { method: "POST", body: "{}" });
        expect(empty.status).toBe(400);
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    });
  },
);
