/**
 * A throwaway PostgreSQL cluster for tests: initdb into a fresh temp dir, serve on
 * 127.0.0.1 on a free port with its unix sockets in that dir, and on stop kill it
 * (`-m immediate`: nothing in it is worth a checkpoint) and remove the dir.
 * The server refuses to run as root, so as root every server command runs as the
 * `postgres` system user (Debian's postgresql package creates it) and the dir is
 * owned by that user. Durability settings are off: tests crash clients, never the server.
 */
import { execFile, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { appendFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { TestPostgresError, TestPostgresErrorCode } from "./errors.js";

export interface RunningCluster {
  /** `postgresql://postgres@127.0.0.1:<port>/postgres`, trust auth. */
  readonly url: string;
  /** The temp dir holding the data dir, the sockets and `server.log`; removed by stop. */
  readonly dir: string;
}

interface Account {
  uid: number;
  gid: number;
}

const SETTINGS = [
  "listen_addresses = '127.0.0.1'",
  "fsync = off",
  "synchronous_commit = off",
  "full_page_writes = off",
  "max_connections = 300",
  "shared_buffers = 32MB",
  "log_min_messages = warning",
];

/** The dir of initdb/pg_ctl/psql: `REIN_PG_BIN`, else the newest /usr/lib/postgresql/<ver>/bin, else PATH. */
export function postgresBinDir(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env.REIN_PG_BIN;
  if (explicit) {
    if (!existsSync(join(explicit, "pg_ctl")))
      throw new TestPostgresError(
        TestPostgresErrorCode.binariesMissing,
        `REIN_PG_BIN=${explicit} has no pg_ctl`,
      );
    return explicit;
  }
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => /^\d+$/.test(v) && existsSync(join(root, v, "bin", "initdb")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions[0] !== undefined) return join(root, versions[0], "bin");
  for (const dir of (env.PATH ?? "").split(":")) {
    if (dir && existsSync(join(dir, "initdb")) && existsSync(join(dir, "pg_ctl"))) return dir;
  }
  throw new TestPostgresError(
    TestPostgresErrorCode.binariesMissing,
    "PostgreSQL server binaries (initdb, pg_ctl) not found under /usr/lib/postgresql/<version>/bin or on PATH: " +
      "install Debian's postgresql package (`bash scripts/system-packages.sh` as root), set REIN_PG_BIN to their dir, " +
      "or set REIN_PG_URL to a server the tests may create databases in",
  );
}

/** As root, the `postgres` system user; otherwise undefined (run as ourselves). */
function serverAccount(): Account | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => spawnSync("id", [flag, "postgres"], { encoding: "utf8" });
  const uid = id("-u");
  const gid = id("-g");
  if (uid.status !== 0 || gid.status !== 0)
    throw new TestPostgresError(
      TestPostgresErrorCode.userMissing,
      "running as root, and PostgreSQL refuses root, but there is no `postgres` system user to run it as: " +
        "install Debian's postgresql package (it creates the user)",
    );
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

function run(bin: string, args: string[], account: Account | undefined, cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(bin, args, { cwd, ...account, encoding: "utf8", timeout: 120_000 }, (error, stdout, stderr) => {
      if (error) {
        reject(
          new TestPostgresError(
            TestPostgresErrorCode.commandFailed,
            `${bin} ${args.join(" ")} failed: ${(stderr || error.message).trim()}`,
          ),
        );
      } else resolve(stdout);
    });
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function logTail(dir: string): string {
  try {
    return readFileSync(join(dir, "server.log"), "utf8").split("\n").slice(-15).join("\n");
  } catch {
    return "";
  }
}

/** initdb + pg_ctl start; retries on another port when the free one was taken meanwhile. */
export async function startCluster(): Promise<RunningCluster> {
  const binDir = postgresBinDir();
  const account = serverAccount();
  const dir = mkdtempSync(join(tmpdir(), "rein-pg-"));
  try {
    if (account) chownSync(dir, account.uid, account.gid);
    const data = join(dir, "data");
    await run(
      join(binDir, "initdb"),
      ["-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync"],
      account,
      dir,
    );
    await appendFile(join(data, "postgresql.conf"), `\n# rein test cluster\n${SETTINGS.join("\n")}\n`);
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      try {
        await run(
          join(binDir, "pg_ctl"),
          [
            "-D",
            data,
            "-l",
            join(dir, "server.log"),
            "-w",
            "-t",
            "60",
            "-o",
            `-p ${port} -k ${dir}`,
            "start",
          ],
          account,
          dir,
        );
        return { url: `postgresql://postgres@127.0.0.1:${port}/postgres`, dir };
      } catch (error) {
        const log = logTail(dir);
        if (attempt < 3 && /could not bind|Address already in use/i.test(log)) continue;
        throw new TestPostgresError(
          TestPostgresErrorCode.commandFailed,
          `${(error as Error).message}\nserver.log:\n${log}`,
        );
      }
    }
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/**
 * Stop the cluster in `dir` (started by startCluster) and remove the dir. Synchronous
 * so it also works from an `exit` handler; a cluster already gone is not an error.
 */
export function stopCluster(dir: string): void {
  // Only ever remove what startCluster made (the CLI takes this dir from a shell).
  if (!/^rein-pg-/.test(basename(dir)))
    throw new TypeError(`stopCluster: ${dir} is not a cluster dir made by startCluster`);
  const data = join(dir, "data");
  if (existsSync(join(data, "postmaster.pid"))) {
    const account = serverAccount();
    spawnSync(join(postgresBinDir(), "pg_ctl"), ["-D", data, "-m", "immediate", "-w", "stop"], {
      cwd: dir,
      stdio: "ignore",
      ...account,
    });
  }
  rmSync(dir, { recursive: true, force: true });
}

/**
 * Restart the cluster in `dir` (`-m fast`: every backend is terminated, 57P01, as in a
 * server restart or failover), on the same port; resolves once it accepts connections.
 */
export async function restartCluster(dir: string): Promise<void> {
  if (!/^rein-pg-/.test(basename(dir)))
    throw new TypeError(`restartCluster: ${dir} is not a cluster dir made by startCluster`);
  await run(
    join(postgresBinDir(), "pg_ctl"),
    ["-D", join(dir, "data"), "-l", join(dir, "server.log"), "-m", "fast", "-w", "-t", "60", "restart"],
    serverAccount(),
    dir,
  );
}

/** psql from the cluster's binaries, for database-level setup (CREATE/DROP DATABASE). */
export function psql(url: string, sql: string): Promise<string> {
  return run(
    join(postgresBinDir(), "psql"),
    ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", sql],
    undefined,
    tmpdir(),
  );
}
