import { existsSync, readFileSync, statSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createDatabase,
  dropDatabase,
  psql,
  restartCluster,
  startCluster,
  startPostgres,
  stopCluster,
  type TestPostgres,
} from "../src/index.js";

const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });

describe("a throwaway cluster (REIN_PG_URL unset)", () => {
  let pg: TestPostgres;
  beforeAll(async () => {
    pg = await startPostgres({});
  }, 60_000);
  afterAll(() => pg?.stop());

  it("listens on 127.0.0.1 and answers queries", async () => {
    const url = new URL(pg.url);
    expect(url.hostname).toBe("127.0.0.1");
    expect(await psql(pg.url, "SELECT 40 + 2")).toContain("42");
  });

  it("runs the server as a non-root user that owns its temp data dir", async () => {
    const dataDir = (await psql(pg.url, "SHOW data_directory")).match(/\/\S+/)?.[0] ?? "";
    expect(dataDir).toMatch(/\/rein-pg-[^/]+\/data$/);
    expect(statSync(dataDir).uid).not.toBe(0);
    const pid = readFileSync(join(dataDir, "postmaster.pid"), "utf8").split("\n")[0];
    const uid = readFileSync(`/proc/${pid}/status`, "utf8").match(/^Uid:\s+(\d+)/m)?.[1];
    expect(uid).toBeDefined();
    expect(Number(uid)).not.toBe(0);
  });

  it("gives each test a database of its own", async () => {
    const a = await createDatabase(pg.url);
    const b = await createDatabase(pg.url);
    expect(a).not.toBe(b);
    await psql(a, "CREATE TABLE t (x int)");
    await expect(psql(b, "SELECT * FROM t")).rejects.toMatchObject({ code: "pg_command_failed" });
    await dropDatabase(a);
    await expect(psql(a, "SELECT 1")).rejects.toMatchObject({ code: "pg_command_failed" });
    await dropDatabase(b);
  });

  it("restart terminates every connection and serves again on the same port", async () => {
    const cluster = await startCluster();
    try {
      const before = await psql(cluster.url, "SELECT pg_postmaster_start_time()");
      await restartCluster(cluster.dir);
      expect(await psql(cluster.url, "SELECT 40 + 2")).toContain("42");
      expect(await psql(cluster.url, "SELECT pg_postmaster_start_time()")).not.toBe(before);
    } finally {
      stopCluster(cluster.dir);
    }
  }, 60_000);

  it("stop kills the server and removes the temp dir", async () => {
    const own = await startPostgres({});
    const port = Number(new URL(own.url).port);
    const dataDir = (await psql(own.url, "SHOW data_directory")).match(/\/\S+/)?.[0] ?? "";
    expect(await portOpen(port)).toBe(true);
    await own.stop();
    expect(await portOpen(port)).toBe(false);
    expect(existsSync(dataDir)).toBe(false);
    await own.stop(); // idempotent
  }, 60_000);
});

describe("a shared server (REIN_PG_URL set)", () => {
  it("is used as given and never stopped by a test", async () => {
    const pg = await startPostgres({ REIN_PG_URL: "postgresql://postgres@127.0.0.1:1/postgres" });
    expect(pg.url).toBe("postgresql://postgres@127.0.0.1:1/postgres");
    await expect(pg.stop()).resolves.toBeUndefined();
  });
});
