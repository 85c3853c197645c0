/**
 * Where the config layers live, lowest precedence first:
 *
 * | layer     | file                                                                 |
 * |-----------|----------------------------------------------------------------------|
 * | `user`    | `config.{ts,mts,js,mjs,json}` in `$REIN_CONFIG_DIR`, else `$XDG_CONFIG_HOME/rein`, else `~/.config/rein` |
 * | `project` | `rein.config.*` found from the working directory upward, or `--config` |
 * | `local`   | `.rein/local.json` beside the project config (kept out of git; persistent grants go here) |
 * | `flags`   | `--model`, `--allow`, `--deny`, `--ask`, `--permission-mode`, `--sandbox` |
 * | `managed` | `$REIN_MANAGED_CONFIG`, else `/etc/rein/managed.json`                 |
 *
 * Invariant: the managed layer is read whenever its file exists, and a managed
 * file that exists but cannot be read or parsed stops the run (fail closed): an
 * administrator's rules never silently drop out.
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { reinConfigDir } from "@rein/sdk";
import { CONFIG_FILE_NAMES } from "./find-config.js";

/** The user's Rein config directory (the grant key lives there too). */
export function userConfigDir(env: NodeJS.ProcessEnv = process.env): string {
  return reinConfigDir(env);
}

/** The user layer's file, if there is one. */
export function userConfigFile(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const dir = userConfigDir(env);
  return CONFIG_FILE_NAMES.map((name) => join(dir, name.replace(/^rein\./, ""))).find((file) =>
    existsSync(file),
  );
}

/** The local layer: `.rein/local.json` in the project folder (the project config's folder, else the working directory). */
export const LOCAL_CONFIG = join(".rein", "local.json");
export const localConfigFile = (projectDir: string) => join(projectDir, LOCAL_CONFIG);

/** The managed layer's path (read when it exists). */
export function managedConfigFile(env: NodeJS.ProcessEnv = process.env): string {
  return env.REIN_MANAGED_CONFIG ? resolve(env.REIN_MANAGED_CONFIG) : "/etc/rein/managed.json";
}
