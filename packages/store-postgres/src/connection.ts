/**
 * How the store reaches PostgreSQL: a connection string or pg client options, and
 * the one place clients are made, so every connection carries an application name
 * that says which process holds it (shown to a second writer that is refused).
 */
import os from "node:os";
import { maskConnectionStrings } from "@rein/harness";
import pg from "pg";
import { badArgument, storeError } from "./errors.js";

export type PostgresTarget = string | pg.ClientConfig;

/** Connection options for `target`, tagged with this process. */
export function clientConfig(target: PostgresTarget, role: string): pg.ClientConfig {
  const base: pg.ClientConfig = typeof target === "string" ? { connectionString: target } : { ...target };
  if (typeof target === "string" && !/^postgres(ql)?:\/\//.test(target)) {
    throw badArgument(`postgres url must start with postgres:// or postgresql://, got "${redact(target)}"`);
  }
  base.application_name ??= `rein ${role} pid ${process.pid} on ${os.hostname()}`.slice(0, 63);
  return base;
}

export async function connect(
  target: PostgresTarget,
  role: string,
  extra: Partial<pg.ClientConfig> = {},
): Promise<pg.Client> {
  const client = new pg.Client({ ...clientConfig(target, role), ...extra });
  // An idle client whose server goes away emits `error`; without a listener that kills the process.
  client.on("error", () => {});
  try {
    await client.connect();
  } catch (error) {
    throw storeError(`cannot connect to postgres at ${where(target)}`, error);
  }
  return client;
}

/** The target without its password, for messages. */
export function where(target: PostgresTarget): string {
  if (typeof target === "string") return redact(target);
  return `${target.host ?? "localhost"}:${target.port ?? 5432}/${target.database ?? ""}`;
}

const redact = maskConnectionStrings;
