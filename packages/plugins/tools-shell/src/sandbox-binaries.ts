/**
 * The sandbox's programs, found once per command without spawning anything: the runtime
 * would otherwise run `which` (a synchronous child process, 3-10 ms each in a ~110 MiB
 * process) for bubblewrap and socat at every dependency check.
 *
 * Invariant: what is returned is an absolute path to an executable regular file, found the
 * way `which` finds it (the first `PATH` entry that has it) but only in absolute `PATH`
 * entries, so the process's working directory never decides which `bwrap` runs; an
 * explicit path is used as given and must be absolute and executable. Anything else is a
 * reason the sandbox cannot start, never a fallback.
 */
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";

export interface RuntimeBinaries {
  bwrapPath?: string | undefined;
  socatPath?: string | undefined;
}

/** The programs as absolute paths of executable files (on macOS, only those given: Seatbelt needs neither). */
export interface ResolvedBinaries {
  bwrapPath: string | undefined;
  socatPath: string | undefined;
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The first absolute `PATH` entry holding an executable `name`, as `which` answers. */
export function findOnPath(name: string, path: string | undefined = process.env.PATH): string | undefined {
  for (const dir of (path ?? "").split(delimiter)) {
    if (!isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    if (executable(candidate)) return candidate;
  }
  return undefined;
}

/**
 * Resolves the options' binaries, or returns what is wrong (one entry per problem,
 * worded for the person who installs them).
 */
export function resolveBinaries(
  binaries: RuntimeBinaries,
  path: string | undefined = process.env.PATH,
  platform: NodeJS.Platform = process.platform,
): ResolvedBinaries | { problems: string[] } {
  const problems: string[] = [];
  const one = (option: keyof RuntimeBinaries, program: string, label: string): string | undefined => {
    const given = binaries[option];
    if (given === undefined) {
      // Only Linux runs them (bubblewrap, and socat for the network bridge).
      if (platform !== "linux") return undefined;
      const found = findOnPath(program, path);
      if (found === undefined) problems.push(`${label} not found on PATH`);
      return found;
    }
    if (!given.startsWith("/")) problems.push(`${option} must be an absolute path`);
    else if (!executable(given)) problems.push(`${option} ${given} is not an executable file`);
    return given;
  };
  const bwrapPath = one("bwrapPath", "bwrap", "bubblewrap (bwrap)");
  const socatPath = one("socatPath", "socat", "socat");
  return problems.length > 0 ? { problems } : { bwrapPath, socatPath };
}
