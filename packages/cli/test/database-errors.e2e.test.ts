/**
 * Connection strings are secrets, and a database that cannot be used is one error:
 * through the built binary, every command that touches the session store or the
 * queue (run, sessions list, approvals list, submit, worker, doctor) on four unusable
 * PostgreSQL targets - a closed port, an unknown database, an unknown role, a wrong
 * password - written with the secret in every form (userinfo with `@`, `?password=`,
 * odd characters): exit 2, `cannot use the <store> database <masked target>: <reason>`,
 * no stack trace, and the secret nowhere in the output; `rein config` and a working
 * worker's ready line mask it too; `rein doctor` checks the configured store for real.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { psql, type RunningCluster, startCluster, stopCluster } from "@rein/test-postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanup, project, rein, scriptedConfig } from "./support/rein-process.js";
import { killWorkers, spawnWorker, until } from "./support/workers.js";

let cluster: RunningCluster;
let port: number;
let closedPort: number;

const SECRETS = ["p@ss:w/rd#1", "hunter2", "wr0ng-Pa$$", "s3cr3t&x"];

beforeAll(async () => {
  cluster = await startCluster();
  port = Number(new URL(cluster.url).port);
  // A role that must give its password (the cluster trusts everyone else on 127.0.0.1).
  await psql(cluster.url, "CREATE ROLE pwuser LOGIN PASSWORD 'right-one'");
  const hba = join(cluster.dir, "data", "pg_hba.conf");
  writeFileSync(hba, `host all pwuser 127.0.0.1/32 scram-sha-256\n${readFileSync(hba, "utf8")}`);
  await psql(cluster.url, "SELECT pg_reload_conf()");
  closedPort = await new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const address = server.address() as { port: number };
      server.close(() => resolve(address.port));
    });
  });
}, 60_000);

afterAll(() => {
  killWorkers();
  cleanup();
  if (cluster) stopCluster(cluster.dir);
});

/** Each unusable target, the reason the error must give, and the secret it carries. */
const TARGETS = [
  {
    name: "a closed port (a password holding @ : / #)",
    url: () =>
      `postgresql://rein:${encodeURIComponent("p@ss:w/rd#1").replace("%40", "@")}@127.0.0.1:${closedPort}/app`,
    reason: /connection refused/,
    secret: "p@ss",
  },
  {
    name: "an unknown database",
    url: () => `postgresql://postgres:hunter2@127.0.0.1:${port}/no_such_db`,
    reason: /database "no_such_db" does not exist/,
    secret: "hunter2",
  },
  {
    name: "an unknown role (?password= in the query)",
    url: () => `postgresql://nobody@127.0.0.1:${port}/postgres?sslmode=disable&password=s3cr3t%26x`,
    reason: /role "nobody" does not exist/,
    secret: "s3cr3t",
  },
  {
    name: "a wrong password",
    url: () => `postgres://pwuser:wr0ng-Pa$$@127.0.0.1:${port}/postgres`,
    reason: /password authentication failed for user "pwuser"/,
    secret: "wr0ng",
  },
];

const commands: [string, string[], RegExp][] = [
  ["run", ["run", "hello"], /session store/],
  ["sessions list", ["sessions", "list"], /session store/],
  ["approvals list", ["approvals", "list"], /session store/],
  ["submit", ["submit", "hello"], /queue|session store/],
  ["worker", ["worker"], /queue/],
];

const configFor = (url: string) =>
  scriptedConfig(["hi"], `session: { store: "postgres", url: ${JSON.stringify(url)} },`);

describe("an unusable database", { timeout: 240_000 }, () => {
  it.each(TARGETS.map((t) => [t.name, t] as const))(
    "%s: every command exits 2 naming the store and the reason, the secret masked",
    async (_, target) => {
      const dir = project({ "rein.config.ts": configFor(target.url()) });
      for (const [name, args, store] of commands) {
        const result = await rein(args, dir, { env: { REIN_QUEUE_URL: "" } });
        const output = result.stdout + result.stderr;
        expect(result.code, `${name}: ${output}`).toBe(2);
        expect(result.stderr, name).toMatch(/^rein: cannot use the (session store|queue) database /);
        expect(result.stderr, name).toMatch(store);
        expect(result.stderr, name).toMatch(target.reason);
        expect(result.stderr, name).toContain("***");
        expect(output, name).not.toContain(target.secret);
        expect(output, name).not.toMatch(/\n\s+at /);
      }
      const doctor = await rein(["doctor"], dir);
      expect(doctor.code).toBe(2);
      expect(doctor.stdout).toMatch(/✗ sessions +cannot use the session store database/);
      expect(doctor.stdout).toMatch(target.reason);
      expect(doctor.stdout + doctor.stderr).not.toContain(target.secret);
      for (const secret of SECRETS) expect(doctor.stdout + doctor.stderr).not.toContain(secret);
    },
  );

  it("rein config, rein doctor and a worker's ready line mask a working URL's password", async () => {
    await psql(cluster.url, "ALTER ROLE pwuser PASSWORD 'p@ss:w/rd#1'");
    await psql(cluster.url, "CREATE DATABASE masked OWNER pwuser");
    const url = `postgresql://pwuser:${encodeURIComponent("p@ss:w/rd#1")}@127.0.0.1:${port}/masked?application_name=x&password=${encodeURIComponent("p@ss:w/rd#1")}`;
    const dir = project({ "rein.config.ts": configFor(url) });
    const config = await rein(["config"], dir);
    expect(config.code, config.stderr).toBe(0);
    expect(config.stdout).toContain("session.url");
    expect(config.stdout).toContain("pwuser:***@127.0.0.1");
    const json = await rein(["config", "--json"], dir);
    expect(json.code).toBe(0);
    const doctor = await rein(["doctor"], dir);
    expect(doctor.stdout).toMatch(
      /✓ sessions +postgres postgresql:\/\/pwuser:\*\*\*@127\.0\.0\.1:\d+\/masked/,
    );
    const worker = spawnWorker(["--poll", "1"], dir);
    await until("the worker to be ready", () => worker.stderr.includes("ready"), 60_000);
    worker.child.kill("SIGTERM");
    expect(await worker.exit).toBe(0);
    for (const output of [config.stdout, json.stdout, doctor.stdout, worker.stderr]) {
      expect(output).not.toContain("p@ss");
      expect(output).not.toContain(encodeURIComponent("p@ss:w/rd#1"));
    }
  });

  it("rein doctor names the JSONL folder the config uses", async () => {
    const dir = project({
      "rein.config.ts": scriptedConfig(["hi"], `session: { dir: "elsewhere/sessions" },`),
    });
    const doctor = await rein(["doctor"], dir);
    expect(doctor.stdout).toContain(`✓ sessions jsonl ${join(dir, "elsewhere/sessions")}`);
  });
});
