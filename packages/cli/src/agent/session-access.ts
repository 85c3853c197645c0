/** Opens sessions for the inspection commands: read-only, without a lock, so a running agent is never disturbed. */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { JsonlStorage, Session } from "@rein/harness";
import { loadConfig } from "../config/load-config.js";
import { sessionNotFound } from "../errors.js";
import type { GlobalOptions } from "../globals.js";
import { sessionBackend } from "./session-backend.js";

export async function openReadOnly(idOrPath: string, globals: GlobalOptions): Promise<Session> {
  let file: string;
  if (idOrPath.endsWith(".jsonl") && existsSync(resolve(globals.cwd, idOrPath))) {
    file = resolve(globals.cwd, idOrPath);
  } else {
    const loaded = await loadConfig({ cwd: globals.cwd, configPath: globals.config });
    const store = await sessionBackend(loaded);
    try {
      return await store.openReadOnly(idOrPath);
    } catch (error) {
      throw sessionNotFound((error as Error).message, error);
    }
  }
  try {
    return Session.open(JsonlStorage.open(file, { readOnly: true }));
  } catch (error) {
    throw sessionNotFound(`cannot read session ${file}: ${(error as Error).message}`, error);
  }
}
