/**
 * One error for every database the CLI cannot use (the PostgreSQL session store, the
 * worker queue), whatever the command: `database` (exit 2), naming the store, its
 * target with every secret masked (maskConnectionStrings) and the reason in words -
 * nothing listening, unknown host, unknown database or role, wrong password, a server
 * starting or shutting down. Failures that are not about reaching the database pass
 * through unchanged.
 */
import { maskConnectionStrings } from "@rein/harness";
import { CliError, CliErrorCode } from "../errors.js";

export type DatabaseRole = "session store" | "queue";

interface DriverError {
  code?: string;
  message?: string;
  address?: string;
  port?: number;
  hostname?: string;
  cause?: unknown;
  errors?: unknown[];
}

/** SQLSTATEs and socket codes that say the database cannot be used at all, and how to say it. */
const REASONS: Record<string, (error: DriverError) => string> = {
  ECONNREFUSED: (e) =>
    `nothing accepts connections at ${e.address ?? "the host"}${e.port ? `:${e.port}` : ""} (connection refused: is the server running, on that port?)`,
  ENOTFOUND: (e) => `unknown host ${e.hostname ?? ""}`.trim(),
  EAI_AGAIN: (e) => `cannot resolve host ${e.hostname ?? ""}`.trim(),
  ETIMEDOUT: () => "the connection timed out",
  EHOSTUNREACH: () => "the host is unreachable",
  ECONNRESET: () => "the server closed the connection",
  "3D000": (e) => String(e.message), // database "x" does not exist
  "28000": (e) => String(e.message), // role "x" does not exist / no pg_hba.conf entry
  "28P01": (e) => String(e.message), // password authentication failed for user "x"
  "42501": (e) => `permission denied: ${e.message}`,
  "57P03": () => "the server is starting up or shutting down",
  "53300": () => "the server has too many connections",
};

/** The driver error at the root of `error` that says why the database cannot be used, if any. */
function rootCause(error: unknown, depth = 0): DriverError | undefined {
  if (error === null || typeof error !== "object" || depth > 8) return undefined;
  const e = error as DriverError;
  if (typeof e.code === "string" && e.code in REASONS) return e;
  // A host with several addresses fails as an AggregateError of one error per address.
  for (const inner of e.errors ?? []) {
    const found = rootCause(inner, depth + 1);
    if (found) return found;
  }
  return rootCause(e.cause, depth + 1);
}

/** `error` as the `database` error when it says the database cannot be used; else undefined. */
export function unusableDatabase(role: DatabaseRole, target: string, error: unknown): CliError | undefined {
  if (error instanceof CliError) return error.code === CliErrorCode.database ? error : undefined;
  const cause = rootCause(error);
  if (!cause) return undefined;
  const reason = (REASONS[cause.code as string] as (e: DriverError) => string)(cause);
  return new CliError(
    CliErrorCode.database,
    maskConnectionStrings(`cannot use the ${role} database ${target}: ${reason}`),
    {
      cause: error,
      hint:
        role === "queue"
          ? "check --db, REIN_QUEUE_URL or session.url in rein.config.ts"
          : "check session.url in rein.config.ts",
    },
  );
}

/** Runs `work`; a failure to use the database becomes the `database` error. */
export async function usingDatabase<T>(
  role: DatabaseRole,
  target: string,
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw unusableDatabase(role, target, error) ?? error;
  }
}
