/**
 * The store's failures are HarnessErrors, so the harness and the CLI treat a
 * PostgreSQL session exactly like a JSONL one: code `session` (cannot read, write,
 * connect, migrate; a bad stored row), `session_in_use` (another writer holds the
 * session's advisory lock), `invalid_argument` (bad options or ids). Every message
 * names the session (and the row's `seq` when a row is at fault).
 */
import { describeError, HarnessError, HarnessErrorCode, maskConnectionStrings } from "@rein/harness";

/** Masked: a driver message may quote the connection string. */
export const storeError = (message: string, cause?: unknown) =>
  new HarnessError(
    HarnessErrorCode.session,
    maskConnectionStrings(cause === undefined ? message : `${message}: ${describeError(cause)}`),
    cause === undefined ? {} : { cause },
  );

export const sessionLocked = (sessionId: string, holder: string) =>
  new HarnessError(
    HarnessErrorCode.sessionInUse,
    `session in use: postgres session ${sessionId} is locked by ${holder}`,
  );

export const badArgument = (message: string) => new HarnessError(HarnessErrorCode.invalidArgument, message);

/** A row that cannot be an entry: names the session and the row. */
export const badRow = (sessionId: string, seq: number | string, problem: string) =>
  storeError(`invalid postgres session ${sessionId} row seq ${seq}: ${problem}`);
