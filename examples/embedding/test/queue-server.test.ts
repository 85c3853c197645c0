/**
 * The queue routes over real HTTP, a real PostgreSQL and a real `rein worker`
 * process: a prompt posted to the server runs on the worker and its events come
 * back as server-sent events.
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
let url: string;
let dir: string;
let worker: ChildProcess;

beforeAll(async () => {
  postgres = await startPostgres();
  url = await createDatabase(postgres.url, "rein_embed");
  dir = mkdtempSync(join(tmpdir(), "rein-queue-server-"));
  writeFileSync(
    join(dir, "rein.config.json"),
    JSON.stringify({ model: { script: ["Answered by a worker."] }, session: { dir: "sessions" } }),
  );
  worker = spawn(process.execPath, [REIN, "worker", "--db", url, "--poll", "0.5"], {
    cwd: dir,
    env: { ...process.env, NO_COLOR: "1", REIN_CACHE_DIR: join(dir, ".cache") },
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
}, 60_000);

afterAll(async () => {
  if (worker && worker.exitCode === null) {
    worker.kill("SIGTERM");
    await new Promise((resolve) => worker.once("exit", resolve));
  }
  await dropDatabase(url).catch(() => undefined);
  await postgres?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("queue routes: prompts run on rein worker, events stream back", { timeout: 60_000 }, () => {
  it("creates a session, queues a prompt, and streams the run until its end notice", async () => {
    const server = await createQueueServer({ url, sessionsDir: join(dir, "sessions") });
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
      const types = notices.filter((n) => n.kind === "event").map((n) => (n.event as { type: string }).type);
      expect(types).toContain("agent_start");
      expect(types).toContain("message_end");
      expect(JSON.stringify(notices)).toContain("Answered by a worker.");
      expect(notices.at(-1)).toMatchObject({ kind: "end", status: "completed" });

      const missing = await fetch(`${base}/sessions/nope/prompts`, { method: "POST", body: "{}" });
      expect(missing.status).toBe(404);
      const empty = await fetch(`${base}/sessions/${sessionId}/prompts`, { method: "POST", body: "{}" });
      expect(empty.status).toBe(400);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
