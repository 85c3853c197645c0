import { mkdtempSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";

const require = createRequire(import.meta.url);

/** The entry script of an MCP server package installed as a devDependency (never fetched). */
export const serverScript = (pkg: "server-everything" | "server-filesystem"): string =>
  require.resolve(`@modelcontextprotocol/${pkg}/dist/index.js`);

export const everythingServer = () => ({
  command: process.execPath,
  args: [serverScript("server-everything"), "stdio"],
});

export const filesystemServer = (root: string) => ({
  command: process.execPath,
  args: [serverScript("server-filesystem"), root],
  cwd: root,
});

export const fixtureServer = (...args: string[]) => ({
  command: process.execPath,
  args: [join(import.meta.dirname, "fixtures", "changing-server.mjs"), ...args],
});

export const tempDir = (): string => realpathSync(mkdtempSync(join(tmpdir(), "rein-mcp-")));

/** Whether a process exists and is not a zombie. */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/^\d+ \(.*\) [ZX] /s.test(stat);
  } catch {
    return false;
  }
}

/** Every live process whose process group is `pgid` (a stdio server and what it started). */
export function groupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) === pgid && fields[0] !== "Z") members.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return members;
}

export async function until(check: () => boolean, timeoutMs = 10_000, what = "condition"): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A process's parent pid and state, from /proc (undefined when gone). */
function statOf(pid: number): { ppid: number; state: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { ppid: Number(fields[1]), state: fields[0] as string };
  } catch {
    return undefined;
  }
}

/** Whether `pid` is a stdio server's launcher (the bash job-control wrapper) started by this process. */
function isOurLauncher(pid: number): boolean {
  if (statOf(pid)?.ppid !== process.pid) return false;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").includes("rein-mcp");
  } catch {
    return false;
  }
}

/**
 * Live processes whose command line contains `needle` and that this process
 * started: its children, or the child of its launcher (a stdio server runs under
 * a small bash launcher that gives it a process group of its own).
 */
export function childrenRunning(needle: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const stat = statOf(Number(name));
    if (stat === undefined || stat.state === "Z") continue;
    if (stat.ppid !== process.pid && !isOurLauncher(stat.ppid)) continue;
    if (isOurLauncher(Number(name))) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, "utf8").includes(needle)) found.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** This process's live launcher children (each should end with its server). */
export function launchersRunning(): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => statOf(pid)?.state !== "Z" && isOurLauncher(pid));
}

/** A process's group and session ids. */
export function groupAndSession(pid: number): { pgid: number; sid: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { pgid: Number(fields[2]), sid: Number(fields[3]) };
}

/** A `node:http` listener serving a web-standard fetch handler (what `createMcpHandler` returns). */
export function nodeListener(
  fetch: (request: Request) => Promise<Response>,
): (req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse) => void {
  return (req, res) => {
    void (async () => {
      const headers = new Headers();
      for (const [key, value] of Object.entries(req.headers)) {
        if (typeof value === "string") headers.set(key, value);
        else if (Array.isArray(value)) for (const item of value) headers.append(key, item);
      }
      const hasBody = req.method !== "GET" && req.method !== "HEAD";
      const abort = new AbortController();
      res.on("close", () => abort.abort());
      const response = await fetch(
        new Request(`http://${req.headers.host ?? "127.0.0.1"}${req.url ?? "/"}`, {
          method: req.method ?? "GET",
          headers,
          signal: abort.signal,
          ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream, duplex: "half" } : {}),
        } as RequestInit),
      );
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (response.body) for await (const chunk of response.body) res.write(chunk);
      res.end();
    })().catch(() => res.destroy());
  };
}
