/**
 * Every failure of the test cluster is a `TestPostgresError` with a stable `code`;
 * the message says what to install or set, since the reader is someone whose test
 * run just stopped.
 */

export const TestPostgresErrorCode = {
  /** No PostgreSQL server binaries (initdb, pg_ctl) were found. */
  binariesMissing: "pg_binaries_missing",
  /** Running as root but there is no `postgres` system user to run the server as. */
  userMissing: "pg_user_missing",
  /** initdb, pg_ctl or psql failed. */
  commandFailed: "pg_command_failed",
} as const;

export type TestPostgresErrorCode = (typeof TestPostgresErrorCode)[keyof typeof TestPostgresErrorCode];

export class TestPostgresError extends Error {
  override readonly name = "TestPostgresError";
  readonly code: TestPostgresErrorCode;
  constructor(code: TestPostgresErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}
