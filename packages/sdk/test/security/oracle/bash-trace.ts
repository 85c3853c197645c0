/**
 * Runs a script in real bash with every program execution and every file opened for
 * writing traced (`strace -f`), in a throwaway folder, inside a bubblewrap sandbox:
 * generated scripts run as whoever runs the tests (root in CI) and may name any path
 * (`rm -f nothing /dev/null` once removed the machine's /dev/null), so the root file
 * system is read-only, `/dev` and `/tmp` are private, and only the folder is writable.
 *
 * Invariant: what is reported is what the kernel saw: each successful `execve`
 * (the program's path) and each successful open for writing or creating, attributed
 * to bash itself when the process had not executed another program. bash runs
 * without rc files, with standard input from /dev/null and a small fixed
 * environment, and is killed after `timeoutMs`.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

export interface Trace {
  /** Programs executed (paths as given to execve), bash itself excluded. */
  executed: string[];
  /** The argument vector of each of `executed`, in the same order. */
  argv: string[][];
  /** The throwaway folder the script ran in (gone once the trace is returned). */
  dir: string;
  /** Files in the folder opened for writing by bash itself (redirections), relative to it. */
  shellWrites: string[];
  timedOut: boolean;
}

const BASH = "/bin/bash";
const WRITE_FLAGS = /O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|O_APPEND/;
const LINE = /^(\d+)\s+(execve|openat|open|creat)\((.*)\)\s+=\s+(-?\d+)/;

/** A file put in the folder before the script runs (a planted program, a startup file). */
export interface PlantedFile {
  content: string | Uint8Array;
  mode?: number;
}

export async function traceBash(
  script: string,
  timeoutMs = 5000,
  planted: Readonly<Record<string, PlantedFile>> = {},
): Promise<Trace> {
  const dir = await mkdtemp(path.join(tmpdir(), "rein-oracle-"));
  const log = path.join(dir, ".trace");
  try {
    for (const [name, file] of Object.entries(planted)) {
      const at = path.join(dir, name);
      await mkdir(path.dirname(at), { recursive: true });
      await writeFile(at, file.content, { mode: file.mode ?? 0o644 });
    }
    const timedOut = await new Promise<boolean>((resolve, reject) => {
      const child = spawn(
        "bwrap",
        [
          ...["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"],
          ...["--bind", dir, dir, "--chdir", dir, "--unshare-all", "--die-with-parent", "--new-session"],
          ...[
            "strace",
            "-f",
            "-qq",
            "-e",
            "trace=execve,open,openat,creat",
            "-e",
            "signal=none",
            "-s",
            "256",
          ],
          ...["-o", log, BASH, "--norc", "--noprofile", "-c", script],
        ],
        {
          cwd: dir,
          stdio: ["ignore", "ignore", "ignore"],
          env: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: dir, TMPDIR: "/tmp", LC_ALL: "C" },
          detached: true,
        },
      );
      let killed = false;
      const timer = setTimeout(() => {
        killed = true;
        try {
          process.kill(-(child.pid as number), "SIGKILL");
        } catch {}
      }, timeoutMs);
      child.on("error", (error) => {
        clearTimeout(timer);
        reject(
          new Error(
            `${error.message} (cwd ${dir} exists: ${existsSync(dir)}; script ${JSON.stringify(script.slice(0, 200))})`,
          ),
        );
      });
      child.on("close", () => {
        clearTimeout(timer);
        resolve(killed);
      });
    });
    return { ...parseTrace(await readFile(log, "utf8").catch(() => ""), dir), dir, timedOut };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export function parseTrace(text: string, dir: string): Omit<Trace, "timedOut" | "dir"> {
  const executed: string[] = [];
  const argv: string[][] = [];
  const shellWrites: string[] = [];
  /** Processes that executed a program other than bash: their writes are that program's. */
  const program = new Map<string, string>();
  let first = true;
  /** `strace -f` splits a call another process interrupted: `<unfinished ...>`, then `<... call resumed>`. */
  const pending = new Map<string, string>();
  for (const raw of text.split("\n")) {
    let line = raw;
    const unfinished = /^(\d+)\s+(.*) <unfinished \.\.\.>$/.exec(line);
    if (unfinished) {
      pending.set(unfinished[1] as string, unfinished[2] as string);
      continue;
    }
    const resumed = /^(\d+)\s+<\.\.\. \w+ resumed>(.*)$/.exec(line);
    if (resumed) line = `${resumed[1]} ${pending.get(resumed[1] as string) ?? ""}${resumed[2]}`;
    const m = LINE.exec(line);
    if (!m) continue;
    const [, pid, call, args, result] = m as unknown as [string, string, string, string, string];
    if (Number(result) < 0) continue;
    const target = cUnescape(/^(?:AT_FDCWD,\s*)?"((?:[^"\\]|\\.)*)"/.exec(args)?.[1] ?? "");
    if (call === "execve") {
      if (first) {
        first = false; // the traced bash itself
        continue;
      }
      executed.push(target);
      argv.push(argvOf(args));
      program.set(pid, target);
      continue;
    }
    if (call !== "creat" && !WRITE_FLAGS.test(args)) continue;
    const owner = program.get(pid);
    if (owner !== undefined && path.basename(owner) !== "bash") continue;
    const absolute = path.resolve(dir, target);
    if (!absolute.startsWith(`${dir}/`) || absolute === path.join(dir, ".trace")) continue;
    shellWrites.push(path.relative(dir, absolute));
  }
  return { executed, argv, shellWrites };
}

const QUOTED = /"((?:[^"\\]|\\.)*)"/g;

/** `"/usr/bin/ls", ["ls", "a"], 0x...`: the strings of the bracketed vector. */
function argvOf(args: string): string[] {
  const vector = /^"(?:[^"\\]|\\.)*",\s*\[((?:[^\]"]|"(?:[^"\\]|\\.)*")*)\]/.exec(args)?.[1] ?? "";
  return [...vector.matchAll(QUOTED)].map((m) => cUnescape(m[1] as string));
}

const C_ESCAPES: Record<string, string> = {
  n: "\n",
  t: "\t",
  r: "\r",
  v: "\v",
  f: "\f",
  a: "\x07",
  b: "\b",
  e: "\x1b",
};

/** strace prints strings with C escapes (`\t`, `\"`, `\\`, octal, `\x`). */
function cUnescape(text: string): string {
  return text.replace(/\\(x[0-9a-fA-F]{2}|[0-7]{1,3}|.)/g, (_, e: string) => {
    if (e.startsWith("x")) return String.fromCharCode(Number.parseInt(e.slice(1), 16));
    if (/^[0-7]/.test(e)) return String.fromCharCode(Number.parseInt(e, 8));
    return C_ESCAPES[e] ?? e;
  });
}
