/**
 * The files a loaded stack's decisions rest on besides the modules it loaded:
 * every config layer, the trust record and the files it holds, the grant key,
 * the plugin lock, and every config name a search from `searchFrom` would find
 * before the project's. The hook daemon and the worker's shared stack check
 * these by stat identity (watched-files.ts) before they reuse a stack, so both
 * read the same list from here.
 */

import { dirname, join } from "node:path";
import { CONFIG_FILE_NAMES, reinConfigDir } from "@rein/sdk";
import { entryFiles } from "../trust/project-trust.js";
import { trustFile } from "../trust/trust-store.js";
import type { LoadedConfig } from "./load-config.js";

export function stackFiles(
  config: LoadedConfig,
  searchFrom: string,
  explicitConfig: boolean,
  env: NodeJS.ProcessEnv,
): string[] {
  const project = config.trust.project;
  const local = config.files.local ?? join(config.dir, ".rein", "local.json");
  const files = [
    ...Object.values(config.files).filter((file): file is string => file !== undefined),
    ...config.layers.flatMap((layer) => (layer.file ? [layer.file] : [])),
    ...entryFiles(project, local, env),
    ...entryFiles(config.dir, local, env),
    trustFile(project, env),
    join(reinConfigDir(env), "grant-key"),
    join(config.dir, ".rein-plugins"),
    ...config.trust.files(),
  ];
  // A config file appearing between the search's start and the project's folder is found first next time.
  if (!explicitConfig) {
    for (let dir = searchFrom; ; dir = dirname(dir)) {
      for (const name of CONFIG_FILE_NAMES) files.push(join(dir, name));
      if (dir === config.dir || dirname(dir) === dir) break;
    }
  }
  return files;
}
