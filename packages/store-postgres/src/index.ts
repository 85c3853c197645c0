/**
 * @rein/store-postgres: Rein sessions in PostgreSQL. Every export is named here on
 * purpose; test/entry-points.test.ts pins the list.
 */
export { AdvisoryLock, DEFAULT_LEASE_MS, DEFAULT_LOCK_WAIT_MS, lockKey } from "./advisory-lock.js";
export type { PostgresTarget } from "./connection.js";
export { type Migration, migrate, shippedMigrations } from "./migrations.js";
export { PostgresSessionStore, type PostgresStoreOptions } from "./postgres-session-store.js";
export { type PostgresOpenOptions, PostgresStorage } from "./postgres-storage.js";
