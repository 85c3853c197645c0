/** The runtime values of @rein/store-postgres, pinned: an API change is a deliberate edit here. */
import { describe, expect, it } from "vitest";
import * as store from "../src/index.js";

describe("entry points", () => {
  it("@rein/store-postgres exports exactly these runtime values", () => {
    expect(Object.keys(store).sort()).toEqual([
      "AdvisoryLock",
      "DEFAULT_LEASE_MS",
      "DEFAULT_LOCK_WAIT_MS",
      "PostgresSessionStore",
      "PostgresStorage",
      "lockKey",
      "migrate",
      "shippedMigrations",
    ]);
  });
});
